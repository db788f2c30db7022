import RooftopShared
import Synchronization

/// A client's earlier mutations of one object in the same push, all made on the same base
/// version: the client made them one after the other, so they are not concurrent with each
/// other, but each of them is concurrent with what others committed since that base.
struct WriteChain: Sendable {
    /// The changes as the client made them, oldest first (applied ones only).
    var changes: [ObjectChange]
    /// The origins (``OperationRecord/origin``) of the operations they committed.
    var origins: Set<String>
    /// The object's version after the chain's last mutation.
    var lastVersion: Int64
    /// What the chain's last decision knew, when it was decided now (not replayed): the fields at
    /// the base and the changes of others through ``lastVersion``. With it, the next write only
    /// loads the changes committed after ``lastVersion`` instead of all since the base.
    var known: MergeInputs?
}

/// What a merge starts from: the object's fields at the mutation's base version, and the changes
/// others committed since then, oldest first.
struct MergeInputs: Sendable {
    var base: [String: Value]
    var remote: [OperationRecord]
}

/// Carries the ``MergeInputs`` a decision used out of the storage's transaction.
final class MergeInputsRecorder: Sendable {
    private let state = Mutex<MergeInputs?>(nil)

    /// The inputs recorded, if a decision was made.
    var recorded: MergeInputs? { state.withLock { $0 } }

    func record(_ inputs: MergeInputs) { state.withLock { $0 = inputs } }
}

extension WriteDecider {
    /// Whether a committed operation is one of this push's own chain.
    func isOwn(_ record: OperationRecord) -> Bool {
        guard let chain, let origin = record.origin else { return false }
        return chain.origins.contains(origin)
    }

    /// The base fields and the changes of others the mutation did not see.
    func mergeInputs(_ write: ObjectWriteContext) -> MergeInputs {
        let fresh = chain == nil ? write.concurrentChanges : write.concurrentChanges.filter { !isOwn($0) }
        if let known = chain?.known {
            // Only the changes after the chain's last version were loaded.
            return MergeInputs(base: known.base, remote: known.remote + fresh)
        }
        let current = write.current?.snapshot.fields ?? [:]
        return MergeInputs(base: OperationRecord.fields(before: write.concurrentChanges, current: current), remote: fresh)
    }

    /// Whether the tombstone is the chain's own delete: the client then re-creates the object.
    func deletedByChain(_ tombstone: StoredObject, concurrent: [OperationRecord]) -> Bool {
        if let chain, chain.changes.last == .delete, chain.lastVersion == tombstone.snapshot.version { return true }
        return concurrent.last.map { isOwn($0) } ?? false
    }

    /// The mutation's change rebased over the changes of others.
    func rebase(current: ObjectSnapshot, inputs: MergeInputs, concurrent: [OperationRecord]) throws(RooftopError)
        -> ObjectMerge.Result
    {
        let remote = inputs.remote.map(\.change)
        guard let chain, !chain.changes.isEmpty else {
            return try ObjectMerge.rebase(
                local: [mutation.change], over: remote, base: inputs.base, className: mutation.className, rules: rules)
        }
        do {
            return try chainStep(current: current, base: inputs.base, remote: remote, chain: chain)
        } catch {
            // The changes of others interleave with the chain's in a way that does not replay on
            // the base (a delete and re-creation, list indices that moved): merge with what was
            // committed after the chain's last change only, as if the mutation were based on it.
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
    /// mutation makes of it, field by field: a field nobody else changed takes the mutation's
    /// operations as they are; a field others changed too is merged with the chain's earlier
    /// operations on it as one local sequence (so its rule sees the client's final value against
    /// the remote one), and the step is the difference: the new operations when the longer merge
    /// only adds some (increments stay increments, list edits stay list edits), else a `set` of
    /// the merged value.
    /// - Throws: When a concurrent change is a delete (the object was deleted and re-created), or
    ///   the operations do not replay on the base; the caller then falls back.
    private func chainStep(
        current: ObjectSnapshot, base: [String: Value], remote: [ObjectChange], chain: WriteChain
    ) throws(RooftopError) -> ObjectMerge.Result {
        var remoteOperations: [String: [FieldOperation]] = [:]
        var remoteSetsACL = false
        for change in remote {
            guard case .update(let updates, let acl) = change else {
                throw RooftopError(.invalidOperation, "a concurrent delete interleaves with the chain")
            }
            if acl != nil { remoteSetsACL = true }
            for update in updates { remoteOperations[update.field, default: []].append(update.operation) }
        }
        var touched: [String] = []
        for update in mutation.change.updates where !touched.contains(update.field) { touched.append(update.field) }

        var updates: [FieldUpdate] = []
        var decisions: [MergeDecision] = []
        for field in touched {
            let own = mutation.change.updates.filter { $0.field == field }.map(\.operation)
            guard let theirs = remoteOperations[field] else {
                updates += own.map { FieldUpdate(field, $0) }
                continue
            }
            let earlier = chain.changes.flatMap { change in
                change.updates.filter { $0.field == field }.map(\.operation)
            }
            let rule = rules.rule(forClass: mutation.className, field: field)
            let before = try FieldMerge.rebase(field: field, base: base[field], local: earlier, over: theirs, rule: rule)
            let after = try FieldMerge.rebase(
                field: field, base: base[field], local: earlier + own, over: theirs, rule: rule)
            if let decision = after.decision { decisions.append(decision) }
            let goal = try FieldOperation.apply(after.operations, to: try FieldOperation.apply(theirs, to: base[field]))
            let step = Array(after.operations.dropFirst(before.operations.count))
            if after.operations.starts(with: before.operations),
                let reached = try? FieldOperation.apply(step, to: current.fields[field]), reached == goal
            {
                updates += step.map { FieldUpdate(field, $0) }
            } else if current.fields[field] != goal {
                updates.append(FieldUpdate(field, goal.map(FieldOperation.set) ?? .unset))
            }
        }
        // As in ObjectMerge: a local ACL stands unless a concurrent change set one.
        let acl: ACL? = if case .update(_, let own?) = mutation.change, !remoteSetsACL { own } else { nil }
        let change: ObjectChange? = updates.isEmpty && acl == nil ? nil : .update(updates, acl: acl)
        return ObjectMerge.Result(change: change, decisions: decisions)
    }
}
