import Foundation
@testable import Rooftop
import RooftopShared

extension FakeServerState {
    /// Applies one mutation of a push with the server's rules: idempotent by mutation ID, merged
    /// with what others committed since its base version, chained with the same push's earlier
    /// mutations of the object on the same base.
    mutating func apply(_ mutation: Mutation, user: String?, chains: inout [String: Chain]) -> MutationResult {
        let idempotency = "\(user ?? "")|\(mutation.mutationId)"
        if let first = results[idempotency] { return first }
        let result: MutationResult
        do {
            result = try decide(mutation, user: user, chains: &chains)
        } catch {
            result = .rejected(mutationId: mutation.mutationId, error: error)
        }
        results[idempotency] = result
        return result
    }

    private mutating func decide(_ mutation: Mutation, user: String?, chains: inout [String: Chain]) throws(RooftopError)
        -> MutationResult
    {
        let datastore = try datastore(mutation.datastore, user: user)
        let objectKey = "\(mutation.className)/\(mutation.objectId)"
        let chainKey = datastore + "/" + objectKey
        let chain = chains[chainKey].flatMap { $0.sentBase == mutation.baseVersion ? $0 : nil }
        let current = datastores[datastore]?.objects[objectKey]
        let rules = MergeRules()
        let id = mutation.mutationId
        let origin = id.rawValue
        let all = mutation.baseVersion.map { base in current?.operations.filter { $0.version > base } ?? [] } ?? []
        let others = all.filter { !(chain?.origins.contains($0.origin ?? "") ?? false) }

        func remember() {
            var next = chain ?? Chain(sentBase: mutation.baseVersion, changes: [], origins: [])
            next.changes.append(mutation.change)
            next.origins.insert(origin)
            chains[chainKey] = next
        }

        guard let live = current, !live.deleted else {
            // Absent or deleted.
            guard case .update(let updates, let acl) = mutation.change else {
                remember()
                return .applied(mutationId: id, version: current?.snapshot.version ?? 0, object: nil)
            }
            if let tombstone = current, let base = mutation.baseVersion, base < tombstone.snapshot.version,
                !(chain?.changes.last == .delete)
            {
                // A change from before a concurrent delete loses to it.
                let fields = OperationRecord.fields(before: all, current: [:])
                let merged = try ObjectMerge.rebase(
                    local: [mutation.change], over: others.map(\.change), base: fields, className: mutation.className,
                    rules: rules)
                remember()
                return .applied(mutationId: id, version: tombstone.snapshot.version, object: nil, merges: merged.decisions)
            }
            let fields = try FieldUpdate.apply(updates, to: [:])
            var snapshot = ObjectSnapshot(
                className: mutation.className, objectId: mutation.objectId, datastore: mutation.datastore, fields: fields,
                acl: acl, version: (current?.snapshot.version ?? 0) + 1)
            snapshot.createdAt = Timestamp(millisecondsSinceEpoch: 1_700_000_000_000 + sequence)
            snapshot.updatedAt = snapshot.createdAt
            let prior = Dictionary(uniqueKeysWithValues: fields.keys.map { ($0, Value?.none) })
            commit(snapshot, deleted: false, in: datastore, key: objectKey,
                   record: OperationRecord(version: snapshot.version, change: mutation.change, priorValues: prior, origin: origin))
            remember()
            return .applied(mutationId: id, version: snapshot.version, object: snapshot)
        }

        var change: ObjectChange? = mutation.change
        var merges: [MergeDecision] = []
        if !others.isEmpty {
            let base = OperationRecord.fields(before: all, current: live.snapshot.fields)
            if let chain, !chain.changes.isEmpty, others.allSatisfy({ $0.change != .delete }) {
                // The chain's step: merge the chain so far and this mutation as one local side,
                // then write what moves the object from its state now to the merged goal.
                let merged = try ObjectMerge.rebase(
                    local: chain.changes + [mutation.change], over: others.map(\.change), base: base,
                    className: mutation.className, rules: rules)
                merges = merged.decisions
                change = try step(from: live.snapshot.fields, base: base, others: others, merged: merged.change)
            } else {
                let merged = try ObjectMerge.rebase(
                    local: [mutation.change], over: others.map(\.change), base: base, className: mutation.className,
                    rules: rules)
                merges = merged.decisions
                change = merged.change
            }
        }
        guard let change else {
            remember()
            return .applied(mutationId: id, version: live.snapshot.version, object: live.snapshot, merges: merges)
        }
        var snapshot = live.snapshot
        let record: OperationRecord
        let deleted: Bool
        if case .delete = change {
            deleted = true
            record = OperationRecord(
                version: snapshot.version + 1, change: .delete, priorValues: snapshot.fields.mapValues { Optional($0) },
                origin: origin)
            snapshot.fields = [:]
        } else {
            deleted = false
            let touched = Set(change.updates.map(\.field))
            record = OperationRecord(
                version: snapshot.version + 1, change: change,
                priorValues: Dictionary(uniqueKeysWithValues: touched.map { ($0, live.snapshot.fields[$0]) }), origin: origin)
            guard let applied = try snapshot.applying(change) else {
                throw RooftopError(.internal, "an update deleted the object")
            }
            snapshot = applied
        }
        snapshot.version += 1
        snapshot.updatedAt = Timestamp(millisecondsSinceEpoch: 1_700_000_000_000 + sequence + 1)
        commit(snapshot, deleted: deleted, in: datastore, key: objectKey, record: record)
        remember()
        return .applied(mutationId: id, version: snapshot.version, object: deleted ? nil : snapshot, merges: merges)
    }

    /// The change that takes `fields` to the merged goal (others' changes, then the merged local
    /// change, on the base), as sets and unsets of the fields that differ.
    private func step(
        from fields: [String: Value], base: [String: Value], others: [OperationRecord], merged: ObjectChange?
    ) throws(RooftopError) -> ObjectChange? {
        guard let merged else { return nil }
        if case .delete = merged { return .delete }
        var goal = base
        for record in others { goal = try FieldUpdate.apply(record.change.updates, to: goal) }
        goal = try FieldUpdate.apply(merged.updates, to: goal)
        let names = Set(fields.keys).union(goal.keys).sorted()
        let updates = names.compactMap { name -> FieldUpdate? in
            guard fields[name] != goal[name] else { return nil }
            return FieldUpdate(name, goal[name].map(FieldOperation.set) ?? .unset)
        }
        guard case .update(_, let acl) = merged, !updates.isEmpty || acl != nil else { return nil }
        return .update(updates, acl: acl)
    }

    private mutating func commit(
        _ snapshot: ObjectSnapshot, deleted: Bool, in datastore: String, key: String, record: OperationRecord
    ) {
        sequence += 1
        var stored = datastores[datastore]?.objects[key] ?? StoredObject(snapshot: snapshot, sequence: sequence)
        stored.snapshot = snapshot
        stored.deleted = deleted
        stored.sequence = sequence
        stored.operations.append(record)
        datastores[datastore]?.objects[key] = stored
    }
}
