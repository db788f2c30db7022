/// The merge of one object: rebases a client's pending changes over the changes committed since
/// their base version, field by field (``FieldMerge``), with deletes.
///
/// Used by the server for a push whose base version is older than the object's version, and by
/// the client to rebase its unsent changes over pulled ones; both get the same result.
///
/// **Deletes.** A delete is final: it must be the last change of its side. A delete on either side
/// wins over concurrent updates on the other:
///
/// | remote since base | local pending | rebased local change | decisions |
/// |---|---|---|---|
/// | nothing | anything | the local changes, combined | none |
/// | updates | updates | per-field merge | one per field both sides changed |
/// | updates | ends in a delete | `delete` | one per field remote changed: result absent |
/// | ends in a delete | updates | `nil`: the object stays deleted | one per field local changed: result absent |
/// | ends in a delete | ends in a delete | `nil` | none |
/// | a delete, then a re-creation | anything | as if remote ended in the delete | as above |
///
/// The last row is the history of an object deleted and created again since the base version:
/// the local changes were made on the deleted incarnation and lose to its delete, leaving the new
/// incarnation as it is. On the local side a change after a delete is refused.
///
/// **ACL.** A local ACL is kept unless a remote update also set one concurrently, in which case the
/// remote ACL stands (as under ``MergeRule/remote``); no decision is recorded for it.
///
/// Fields are independent, so the rebased change lists each field's operations together, fields
/// in the order the local changes first touched them.
///
/// ```swift
/// let merged = try ObjectMerge.rebase(
///     local: [.update([FieldUpdate("score", .increment(1))])],
///     over: [.update([FieldUpdate("score", .increment(2))])],
///     base: ["score": 10], className: "Game", rules: MergeRules(classes: ["Game": ["score": .sum]]))
/// merged.change      // .update([score: increment 1]): on top of the remote 12 it gives 13
/// ```
public enum ObjectMerge {
    /// The rebased local change of one object and the decisions made.
    public struct Result: Hashable, Sendable {
        /// The change to apply on top of the remote state: `nil` when nothing is left to apply,
        /// ``ObjectChange/delete`` when the local delete wins.
        public var change: ObjectChange?
        /// One decision per field where both sides' changes met.
        public var decisions: [MergeDecision]

        /// Creates a result.
        /// - Parameters:
        ///   - change: The rebased local change, `nil` when nothing is left to apply.
        ///   - decisions: The decisions made, one per field where both sides' changes met.
        public init(change: ObjectChange?, decisions: [MergeDecision]) {
            self.change = change
            self.decisions = decisions
        }
    }

    /// Rebases an object's local pending changes over the remote changes committed since their
    /// base version.
    ///
    /// - Parameters:
    ///   - local: The local pending changes, in order.
    ///   - remote: The remote changes committed since the base version, in commit order.
    ///   - base: The object's fields at the base version (empty when it did not exist then).
    ///   - className: The object's class, to look up its rules.
    ///   - rules: The merge rules.
    /// - Returns: The change to apply on top of the remote state and the decisions made.
    /// - Throws: ``RooftopError/Code/invalidOperation`` when a local change follows a local delete
    ///   or a field name is built in; what ``FieldMerge/rebase(field:base:local:over:rule:)``
    ///   throws for operations that do not apply to their own side (with the field named).
    public static func rebase(
        local: [ObjectChange], over remote: [ObjectChange], base: [String: Value], className: String,
        rules: MergeRules
    ) throws(RooftopError) -> Result {
        // A remote delete followed by a re-creation: the local changes were made on the
        // incarnation that the delete ended, so they lose to it; the new incarnation is not theirs.
        let remote = remote.firstIndex(where: { if case .delete = $0 { true } else { false } }).map { Array(remote[...$0]) } ?? remote
        let localSide = try Side(local)
        let remoteSide = try Side(remote)
        let localValues = try localSide.values(from: base)
        let remoteValues = try remoteSide.values(from: base)

        if remote.isEmpty { return Result(change: localSide.combined, decisions: []) }
        if local.isEmpty || (localSide.deleted && remoteSide.deleted) { return Result(change: nil, decisions: []) }
        if localSide.deleted || remoteSide.deleted {
            // The deleting side's values are all absent; list the fields the other side changed.
            let updater = remoteSide.deleted ? localSide : remoteSide
            let decisions = updater.fields.map { field in
                MergeDecision(
                    field: field, baseValue: base[field],
                    localValue: localSide.deleted ? nil : localValues[field],
                    remoteValue: remoteSide.deleted ? nil : remoteValues[field],
                    rule: rules.rule(forClass: className, field: field), result: nil, resolution: .objectDeleted)
            }
            return Result(change: localSide.deleted ? .delete : nil, decisions: decisions)
        }

        var updates: [FieldUpdate] = []
        var decisions: [MergeDecision] = []
        for field in localSide.fields {
            let merged = try withField(field) { () throws(RooftopError) in
                try FieldMerge.rebase(
                    field: field, base: base[field], local: localSide.operations[field] ?? [],
                    over: remoteSide.operations[field] ?? [], rule: rules.rule(forClass: className, field: field))
            }
            updates += merged.operations.map { FieldUpdate(field, $0) }
            if let decision = merged.decision { decisions.append(decision) }
        }
        // The object exists remotely (remote updated it), so an empty update would change nothing.
        return Result(change: combined(updates, acl: mergedACL(local: localSide, remote: remoteSide)), decisions: decisions)
    }

    /// Runs `body`, naming `field` in any error that does not name one.
    static func withField<T>(_ field: String, _ body: () throws(RooftopError) -> T) throws(RooftopError) -> T {
        do throws(RooftopError) {
            return try body()
        } catch {
            var error = error
            if error.field == nil { error.field = field }
            throw error
        }
    }
}
