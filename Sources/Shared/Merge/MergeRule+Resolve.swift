/// Resolving a conflict by value under a rule: what the local side must apply on top of the
/// remote value. Shared by field merges and by list elements replaced on both sides.
extension MergeRule {
    /// The operations to apply on top of `remote` so the field holds this rule's result.
    ///
    /// An empty array means the remote value stands. The operations always apply without error
    /// to `remote`: when a `sum` cannot be represented (an int overflow), the remote value stands.
    ///
    /// - Parameters:
    ///   - base: The value both sides started from.
    ///   - local: The value with the local operations applied.
    ///   - remote: The value with the remote operations applied.
    ///   - localOperations: The local operations themselves; when they are all increments,
    ///     `remote` and `sum` re-apply them as they are (increments are atomic; doubles add exactly
    ///     as the client added them).
    func operations(base: Value?, local: Value?, remote: Value?, localOperations: [FieldOperation]) -> [FieldOperation]
    {
        switch self {
        case .remote:
            // Increments are atomic: they add to whatever the remote value is.
            return Self.reappliedIncrements(localOperations, on: remote) ?? []
        case .local:
            guard local != remote else { return [] }
            return [local.map(FieldOperation.set) ?? .unset]
        case .max, .min:
            return Self.localWins(local, over: remote, larger: self == .max)
                ? [local.map(FieldOperation.set) ?? .unset] : []
        case .sum:
            return Self.sumOperations(base: base, local: local, remote: remote, localOperations: localOperations) ?? []
        }
    }

    /// The value this rule gives, for a conflict on a single value (a list element).
    func resolvedValue(base: Value, local: Value, remote: Value) -> Value {
        let operations = operations(base: base, local: local, remote: remote, localOperations: [.set(local)])
        // The operations are checked to apply, and with a present local value they never unset.
        return Self.result(of: operations, on: remote) ?? remote
    }

    /// For max and min: whether the local value beats the remote one. A present value beats an
    /// absent one; on a tie (equivalent values, or both absent) the remote value stands, so the
    /// outcome never depends on which side runs the merge.
    private static func localWins(_ local: Value?, over remote: Value?, larger: Bool) -> Bool {
        switch (local, remote) {
        case (nil, _): false
        case (.some, nil): true
        case (let local?, let remote?):
            larger ? Value.compare(local, remote) > 0 : Value.compare(local, remote) < 0
        }
    }

    /// `remote + (local − base)` as operations, or `nil` when `sum` falls back to `remote`: a
    /// non-number on any side (absent counts as 0 for base and remote, but a local unset is not a
    /// number), or an int overflow.
    private static func sumOperations(
        base: Value?, local: Value?, remote: Value?, localOperations: [FieldOperation]
    ) -> [FieldOperation]? {
        guard let local, local.kind == .number, base?.kind ?? .number == .number, remote?.kind ?? .number == .number
        else { return nil }
        if isIncrements(localOperations) { return reappliedIncrements(localOperations, on: remote) }
        guard let delta = difference(local, base ?? .int(0)) else { return nil }
        // A zero difference adds nothing; skipping it also keeps an int remote an int.
        if delta.isEquivalent(to: .int(0)) { return [] }
        let operations: [FieldOperation] = [.increment(delta)]
        guard result(of: operations, on: remote) != nil else { return nil }
        return operations
    }

    /// The local operations, when they are all increments and apply to `remote` (a number or
    /// absent, without overflow); `nil` otherwise.
    private static func reappliedIncrements(_ localOperations: [FieldOperation], on remote: Value?) -> [FieldOperation]? {
        guard isIncrements(localOperations), result(of: localOperations, on: remote) != nil else { return nil }
        return localOperations
    }

    private static func isIncrements(_ operations: [FieldOperation]) -> Bool {
        !operations.isEmpty && operations.allSatisfy { if case .increment = $0 { true } else { false } }
    }

    /// `lhs − rhs` for two numbers: an int when both are ints (`nil` on overflow), else a double.
    private static func difference(_ lhs: Value, _ rhs: Value) -> Value? {
        if case .int(let l) = lhs, case .int(let r) = rhs {
            let (delta, overflow) = l.subtractingReportingOverflow(r)
            return overflow ? nil : .int(delta)
        }
        guard let l = lhs.doubleValue, let r = rhs.doubleValue else { return nil }
        return .double(l - r)
    }

    /// The value `operations` give on `value`, or `nil` when they fail or leave the field absent.
    private static func result(of operations: [FieldOperation], on value: Value?) -> Value? {
        do { return try FieldOperation.apply(operations, to: value) } catch { return nil }
    }
}
