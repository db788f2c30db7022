/// What a merge did to one field that both sides changed: the record apps observe to show or
/// audit merges.
///
/// Values are `nil` when the field is absent (or the object deleted). The same decision is made,
/// with the same values, whether the server or the client ran the merge.
///
/// Wire form: `{"field": "score", "base": 10, "local": 15, "remote": 20, "rule": "sum",
/// "result": 25, "resolution": "rule"}`; an absent value has no member, so `"local": null` is a
/// field set to ``Value/null`` and a missing `"local"` an absent field.
public struct MergeDecision: Hashable, Sendable {
    /// How a decision was reached.
    public enum Resolution: String, Hashable, Sendable, Codable, CaseIterable {
        /// The field's ``MergeRule`` chose between (or combined) the local and remote values.
        case rule
        /// List operations on both sides were merged by transforming the local indices; no rule
        /// was needed (an element replaced on both sides takes the rule's value).
        case listTransform
        /// Relation additions and removals on both sides were applied, remote then local.
        case relationSet
        /// One side deleted the object; a delete wins over concurrent updates on either side.
        case objectDeleted
    }

    /// The field's name.
    public var field: String
    /// The field's value at the common base, before either side's changes.
    public var baseValue: Value?
    /// The field's value with the local changes alone.
    public var localValue: Value?
    /// The field's value with the remote changes alone.
    public var remoteValue: Value?
    /// The rule configured for the field (consulted only when ``resolution`` is ``Resolution/rule``
    /// or a list element was replaced on both sides).
    public var rule: MergeRule
    /// The field's value after the merge.
    public var result: Value?
    /// How the result was reached.
    public var resolution: Resolution

    /// Creates a decision.
    /// - Parameters:
    ///   - field: The field's name.
    ///   - baseValue: The value at the common base (`nil` = absent).
    ///   - localValue: The value with the local changes alone.
    ///   - remoteValue: The value with the remote changes alone.
    ///   - rule: The field's configured rule.
    ///   - result: The value after the merge.
    ///   - resolution: How the result was reached.
    public init(
        field: String, baseValue: Value?, localValue: Value?, remoteValue: Value?, rule: MergeRule,
        result: Value?, resolution: Resolution
    ) {
        self.field = field
        self.baseValue = baseValue
        self.localValue = localValue
        self.remoteValue = remoteValue
        self.rule = rule
        self.result = result
        self.resolution = resolution
    }
}

extension MergeDecision: Codable {
    private enum CodingKeys: String, CodingKey {
        case field
        case baseValue = "base"
        case localValue = "local"
        case remoteValue = "remote"
        case rule, result, resolution
    }

    /// Decodes the wire form; a missing value member is an absent value.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        // `decodeIfPresent` would read `null` as absent; a present member is always a value.
        // (`Value` is `ExpressibleByNilLiteral`, so a bare `nil` here would be `.null`.)
        func value(_ key: CodingKeys) throws -> Value? {
            guard container.contains(key) else { return Value?.none }
            return try container.decode(Value.self, forKey: key)
        }
        self.init(
            field: try container.decode(String.self, forKey: .field),
            baseValue: try value(.baseValue),
            localValue: try value(.localValue),
            remoteValue: try value(.remoteValue),
            rule: try container.decode(MergeRule.self, forKey: .rule),
            result: try value(.result),
            resolution: try container.decode(Resolution.self, forKey: .resolution))
    }

    /// Encodes the wire form, leaving out absent values.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(field, forKey: .field)
        try container.encodeIfPresent(baseValue, forKey: .baseValue)
        try container.encodeIfPresent(localValue, forKey: .localValue)
        try container.encodeIfPresent(remoteValue, forKey: .remoteValue)
        try container.encode(rule, forKey: .rule)
        try container.encodeIfPresent(result, forKey: .result)
        try container.encode(resolution, forKey: .resolution)
    }
}
