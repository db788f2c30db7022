/// The merge of one field: rebases local operations over remote operations committed since their
/// common base. One pure function serves the server (a push whose base version is older than the
/// object's version) and the client (rebasing unsent changes over pulled ones), so both reach the
/// same result.
///
/// "Local value" is the base value with the local operations applied, "remote value" the base
/// with the remote operations applied; B, L and R below. An absent field loses to a present one
/// under `max` and `min`, and counts as 0 under `sum`.
///
/// - No remote operation on the field: the local operations apply unchanged.
/// - List operations on both sides: merged by `ListTransform` whatever the rule (lists are
///   conflict-free): inserts at the same index keep the remote element first, an element removed
///   on both sides is removed once, a replace or move of an element removed remotely is dropped,
///   appends stay appends.
/// - Relation additions and removals on both sides, for the same class: the set operations apply
///   remote then local, whatever the rule.
/// - Anything else is a conflict that the rule resolves by value:
///
/// | rule ↓ · concurrent remote op → | set | unset | increment | list ops | relation ops | delete |
/// |---|---|---|---|---|---|---|
/// | `remote` (default) | R ⁶ | absent ⁶ | R ⁶ | R ¹ | R ² | deleted ³ |
/// | `local` | L | L | L | L ¹ | L ² | deleted ³ |
/// | `max` | larger of L, R | L ⁴ | larger of L, R | larger ¹ | larger ² | deleted ³ |
/// | `min` | smaller of L, R | L ⁴ | smaller of L, R | smaller ¹ | smaller ² | deleted ³ |
/// | `sum` | R + (L − B) ⁵ | 0 + (L − B) ⁵ | R + (L − B) ⁵ | R ¹ ⁵ | R ² ⁵ | deleted ³ |
///
/// 1. When the local operations are list operations too, they are transformed instead (above).
/// 2. When the local operations are relation operations on the same class, they apply after the
///    remote ones instead (above).
/// 3. A delete on either side wins over concurrent updates on the other (see ``ObjectMerge``).
/// 4. When L is present; a local `unset` (L absent) loses to R under `max` and `min`.
/// 5. Only when L is a number and B and R are numbers or absent; otherwise `sum` acts as
///    `remote`. Local increments are re-applied as they are (so concurrent increments all count);
///    any other local change is applied as one increment of L − B. When the result would
///    overflow an int, R stands.
/// 6. Increments are atomic: when the local operations are all increments and R is a number or
///    absent, they are re-applied on R (R + the increments; on an absent field they start from
///    0), so concurrent increments all count. When R is not a number or the sum would overflow an
///    int, R stands. `local`, `max` and `min` pick a value instead.
///
/// A tie under `max`/`min` (equivalent values, such as `1` and `1.0`) keeps R. A rule that picks
/// R drops the local operations; one that picks L sets it (or unsets the field).
///
/// ```swift
/// let merged = try FieldMerge.rebase(
///     field: "score", base: 10, local: [.increment(5)], over: [.set(20)], rule: .sum)
/// merged.operations   // [.increment(5)]: applied to the remote 20 it gives 25
/// merged.decision     // score: base 10, local 15, remote 20, sum → 25
/// ```
public enum FieldMerge {
    /// The rebased local operations of one field and the decision made, if there was a conflict.
    public struct Result: Hashable, Sendable {
        /// The local operations rewritten to apply on top of the remote value (empty when the
        /// remote value stands).
        public var operations: [FieldOperation]
        /// What was decided, when both sides changed the field; `nil` otherwise.
        public var decision: MergeDecision?

        /// Creates a result.
        /// - Parameters:
        ///   - operations: The rebased local operations.
        ///   - decision: The decision, when both sides changed the field.
        public init(operations: [FieldOperation], decision: MergeDecision?) {
            self.operations = operations
            self.decision = decision
        }
    }

    /// Rebases one field's local operations over the remote operations committed since their
    /// common base.
    ///
    /// The server applies ``Result/operations`` to the object's current value of the field; the
    /// client applies them to the value it pulled and keeps them as its pending change. Both
    /// reach the value in the decision's ``MergeDecision/result``.
    ///
    /// - Parameters:
    ///   - field: The field's name (for the decision).
    ///   - base: The field's value at the local changes' base version, `nil` when absent.
    ///   - local: The local pending operations, in order.
    ///   - remote: The remote operations committed since the base, in commit order.
    ///   - rule: The field's merge rule.
    /// - Returns: The rebased operations, and a decision when both sides changed the field.
    /// - Throws: The error of an operation that does not apply to its own side's value (the
    ///   local operations on `base`, or the remote ones); a valid history never throws.
    public static func rebase(
        field: String, base: Value?, local: [FieldOperation], over remote: [FieldOperation], rule: MergeRule
    ) throws(RooftopError) -> Result {
        let localValue = try FieldOperation.apply(local, to: base)
        guard !remote.isEmpty, !local.isEmpty else { return Result(operations: local, decision: nil) }
        let remoteValue = try FieldOperation.apply(remote, to: base)

        let operations: [FieldOperation]
        let resolution: MergeDecision.Resolution
        if local.allSatisfy(\.isListOperation) && remote.allSatisfy(\.isListOperation) {
            operations = try ListTransform.rebase(local, over: remote, base: base?.listValue ?? [], rule: rule)
            resolution = .listTransform
        } else if let className = relationClass(of: local), relationClass(of: remote) == className {
            // Both sides succeeded on the base, so it is absent or a relation of this class.
            operations = local
            resolution = .relationSet
        } else {
            operations = rule.operations(base: base, local: localValue, remote: remoteValue, localOperations: local)
            resolution = .rule
        }
        let decision = MergeDecision(
            field: field, baseValue: base, localValue: localValue, remoteValue: remoteValue, rule: rule,
            result: try FieldOperation.apply(operations, to: remoteValue), resolution: resolution)
        return Result(operations: operations, decision: decision)
    }

    /// The class when every operation is a relation add or remove of that one class.
    private static func relationClass(of operations: [FieldOperation]) -> String? {
        var found: String?
        for operation in operations {
            switch operation {
            case .relationAdd(let className, _), .relationRemove(let className, _):
                guard found == nil || found == className else { return nil }
                found = className
            default:
                return nil
            }
        }
        return found
    }
}
