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

    /// Whether a change of others meets the mutation's: a delete, an ACL set when the mutation
    /// sets one too, or a field both change.
    private func meets(_ other: ObjectChange) -> Bool {
        guard case .update(let updates, let acl) = other, case .update(let mine, let myACL) = mutation.change else {
            return true
        }
        if acl != nil, myACL != nil { return true }
        let fields = Set(mine.map(\.field))
        return updates.contains { fields.contains($0.field) }
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
        if chain.known == nil, let lastOwn = concurrent.lastIndex(where: isOwn),
            !concurrent[..<lastOwn].contains(where: { !isOwn($0) && meets($0.change) })
        {
            // The chain was answered again (its own changes were committed by an earlier push),
            // and every change of others to what the mutation changes came after them, made on
            // top of them: the mutation merges with those only, on the state the chain left.
            // (`rebaseStep` assumes the opposite order, the changes of others first; for a list
            // it would then write the whole list in that order, a `set` that later concurrent
            // list edits lose to.)
            let after = Array(concurrent[(lastOwn + 1)...])
            guard !after.isEmpty else { return ObjectMerge.Result(change: mutation.change, decisions: []) }
            return try ObjectMerge.rebase(
                local: [mutation.change], over: after.map(\.change),
                base: OperationRecord.fields(before: after, current: current.fields), className: mutation.className,
                rules: rules)
        }
        do {
            return try ObjectMerge.rebaseStep(
                local: mutation.change, after: chain.changes, over: remote, base: inputs.base, current: current.fields,
                className: mutation.className, rules: rules)
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
}
