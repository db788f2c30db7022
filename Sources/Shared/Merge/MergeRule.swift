/// How a conflict on one field is resolved when local and remote changes touched it concurrently
/// (the Dropbox Datastore API's resolution rules).
///
/// Rules act on values: "local value" is the field at the common base with the local operations
/// applied, "remote value" the same with the remote operations applied. Lists and relations
/// changed by list or relation operations on both sides merge without a rule (see
/// ``FieldMerge``, which also holds the full table of each rule against each kind of operation).
///
/// Wire form: the rule's name, `"remote"`, `"local"`, `"max"`, `"min"` or `"sum"`.
///
/// ```swift
/// var rules = MergeRules()
/// rules.setRule(.sum, forClass: "Game", field: "score")
/// ```
public enum MergeRule: String, Hashable, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// The remote value wins; local changes to the field are dropped, except increments: local
    /// increments are atomic and add to the remote value when it is a number (or absent), so
    /// concurrent increments all count, as in Parse. The default.
    case remote
    /// The local value wins; it is set over the remote value.
    case local
    /// The larger of the two values in the value order (``Value/compare(_:_:)``) wins; a present
    /// value beats an absent one.
    case max
    /// The smaller of the two values in the value order wins; a present value beats an absent one.
    case min
    /// For numbers, the local change is kept as a difference: the result is the remote value plus
    /// (local value − base value), so concurrent increments all count. For anything else it
    /// behaves as ``remote``.
    case sum

    /// The rule's wire name, e.g. `sum`.
    public var description: String { rawValue }
}
