import RooftopShared

/// A client's earlier mutations of one object in the same push, all made on the same base
/// version: the client made them one after the other, so they are not concurrent with each
/// other, but each of them is concurrent with what others committed since that base.
struct WriteChain: Sendable {
    /// The changes as the client made them, oldest first (applied ones only).
    var changes: [ObjectChange]
    /// The origins (``OperationRecord/origin``) of the operations they committed.
    var origins: Set<String>
}

extension WriteDecider {
    /// Whether a committed operation is one of this push's own chain.
    func isOwn(_ record: OperationRecord) -> Bool {
        guard let chain, let origin = record.origin else { return false }
        return chain.origins.contains(origin)
    }

    /// The changes committed since the mutation's base that it did not see: all but its chain's.
    func remoteChanges(_ concurrent: [OperationRecord]) -> [OperationRecord] {
        chain == nil ? concurrent : concurrent.filter { !isOwn($0) }
    }

    /// The mutation's change rebased over the `remote` changes, given every change committed
    /// since its base (`concurrent`, its chain's included) and the object now.
    func rebase(
        current: ObjectSnapshot, concurrent: [OperationRecord], remote: [OperationRecord]
    ) throws(RooftopError)
        -> ObjectMerge.Result
    {
        let base = OperationRecord.fields(before: concurrent, current: current.fields)
        guard let chain, !chain.changes.isEmpty else {
            return try ObjectMerge.rebase(
                local: [mutation.change], over: remote.map(\.change), base: base, className: mutation.className,
                rules: rules)
        }
        do {
            return try chainStep(current: current, base: base, remote: remote.map(\.change), chain: chain)
        } catch {
            // The remote changes interleave with the chain's in a way that does not replay on the
            // base (list indices that moved): merge with what was committed after the chain's
            // last change only, as if the mutation were based on it.
            let lastOwn = concurrent.lastIndex(where: isOwn).map { $0 + 1 } ?? 0
            let after = Array(concurrent[lastOwn...])
            guard !after.isEmpty else { return ObjectMerge.Result(change: mutation.change, decisions: []) }
            return try ObjectMerge.rebase(
                local: [mutation.change], over: after.map(\.change),
                base: OperationRecord.fields(before: after, current: current.fields), className: mutation.className,
                rules: rules)
        }
    }

    /// The step from what the chain so far made of the object to what the chain with this
    /// mutation makes of it: both merged as one local sequence over the remote changes, so each
    /// field's rule sees the client's final value against the remote one.
    ///
    /// A field keeps its own operations when the longer merge only adds some (increments stay
    /// increments, list edits stay list edits); otherwise it is set to the merged value.
    private func chainStep(
        current: ObjectSnapshot, base: [String: Value], remote: [ObjectChange], chain: WriteChain
    )
        throws(RooftopError) -> ObjectMerge.Result
    {
        let className = mutation.className
        let before = try ObjectMerge.rebase(
            local: chain.changes, over: remote, base: base, className: className, rules: rules)
        let after = try ObjectMerge.rebase(
            local: chain.changes + [mutation.change], over: remote, base: base, className: className, rules: rules)
        var touched: [String] = []
        for update in mutation.change.updates where !touched.contains(update.field) { touched.append(update.field) }
        let decisions = after.decisions.filter { touched.contains($0.field) }
        guard let target = after.change, case .update(let targetUpdates, let targetACL) = target else {
            return ObjectMerge.Result(change: after.change, decisions: decisions)
        }
        var remoteFields = base
        for change in remote { remoteFields = try FieldUpdate.apply(change.updates, to: remoteFields) }

        var updates: [FieldUpdate] = []
        for field in touched {
            let earlier = before.change?.updates.filter { $0.field == field }.map(\.operation) ?? []
            let all = targetUpdates.filter { $0.field == field }.map(\.operation)
            let goal = try FieldOperation.apply(all, to: remoteFields[field])
            let step = Array(all.dropFirst(earlier.count))
            if all.starts(with: earlier), let reached = try? FieldOperation.apply(step, to: current.fields[field]),
                reached == goal
            {
                updates += step.map { FieldUpdate(field, $0) }
            } else if current.fields[field] != goal {
                updates.append(FieldUpdate(field, goal.map(FieldOperation.set) ?? .unset))
            }
        }
        let acl: ACL? = if case .update(_, let own?) = mutation.change, targetACL != nil { own } else { nil }
        let change: ObjectChange? = updates.isEmpty && acl == nil ? nil : .update(updates, acl: acl)
        return ObjectMerge.Result(change: change, decisions: decisions)
    }
}
