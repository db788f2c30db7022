import RooftopShared

extension ClientCore {
    /// The version the server last confirmed for an object, as stored locally; `fallback` when
    /// the object is not stored.
    func syncedVersion(of key: ObjectKey, fallback: Int64) throws(RooftopError) -> Int64? {
        let version = try store.object(key, scope: scope)?.server?.version ?? fallback
        return version > 0 ? version : nil
    }

    /// Records a state the server confirmed (a save, a fetch): when the object is stored, its
    /// server state is replaced and its local view recomputed with its queued changes.
    func storeServerState(_ snapshot: ObjectSnapshot) throws(RooftopError) {
        let key = ObjectKey(snapshot)
        try store.write(scope: scope) { transaction in
            guard try transaction.object(key) != nil else { return }
            try transaction.recomputeLocalView(key, server: snapshot)
        }
    }

    /// Queues a change of an object: the mutation and the new local view (the object has the
    /// `_pending` label while it has queued changes) in one transaction, durable before it returns (shared with the changes other callers queue
    /// at the same time: ``LocalStore/writeGrouped(scope:_:committed:)``); then the object reads
    /// its new local view.
    func enqueue(
        _ change: ObjectChange, for object: RooftopObject, count: Int
    ) async throws(RooftopError) -> MutationID? {
        let key = object.key
        // The fetched state without the unsaved changes (those are what is being queued).
        let fallbackBase = object.storedBase
        let mutationId = MutationID.generate()
        // A round of the outbox under way may read the change once committed, before `queued`
        // is published here: its events wait for that one.
        outboxEngine.events.expect(mutationId)
        defer { outboxEngine.events.forget(mutationId) }
        let limits = configuration.limits
        let view = try await store.writeGrouped(scope: scope) { transaction -> ObjectSnapshot? in
            let row = try transaction.object(key)
            // A fetched object that was not stored: its fetched state is the base.
            let server = row?.server ?? (row == nil ? fallbackBase.flatMap { $0.version > 0 ? $0 : nil } : nil)
            let version = server?.version ?? 0
            // All of an object's queued mutations carry the version last synced: the server
            // applies them in order on top of each other. With no server state but changes still
            // queued (the object is being created, or a delete by someone else won over changes
            // in flight), the new change joins them on their base: with none it would be a blind
            // write, which re-creates a deleted object.
            let queued = try transaction.queued(for: key).map(\.mutation)
            let queuedBase = server == nil ? queued.first?.baseVersion : nil
            let mutation = Mutation(
                mutationId: mutationId, datastore: key.datastore, className: key.className, objectId: key.objectId,
                baseVersion: version > 0 ? version : queuedBase, change: change)
            try transaction.enqueue(mutation)
            // The view the object's index rows were made from: the stored one, or the fetched state
            // stored here.
            var previous = row.flatMap { $0.deleted ? nil : $0.local }
            if row == nil, let server {
                try transaction.put(key, server: server, local: server, deleted: false)
                previous = server
            }
            let view = try transaction.storeLocalView(key, server: server, queued: queued + [mutation], previous: previous)
            // A change that makes the record larger than the limit would be refused by the
            // server: it is not queued (this throw rolls the transaction back), as a bad field
            // name is not. One that leaves a record already over it (saved directly, written
            // over REST) no larger is let through: the server decides on those.
            if let view {
                let size = SizeAccounting.recordSize(view)
                if size > limits.maxRecordBytes, size > row?.local.map({ SizeAccounting.recordSize($0) }) ?? 0 {
                    try limits.checkRecordSize(size, className: key.className, objectId: key.objectId)
                }
            }
            return view
        }
        object.clearSaved(count: count, base: view)
        outboxEngine.events.announce(OutboxEvent(mutationId: mutationId, key: key, kind: .queued))
        outboxSignal.yield()
        return mutationId
    }

    /// Pins objects (recursively through the pointers known locally) under a label.
    func pin(_ objects: [RooftopObject], label: String) throws(RooftopError) {
        var seen = Set<ObjectKey>()
        var frontier = objects.map { ($0.key, $0.snapshot, $0.storedBase) }
        try store.write(scope: scope) { transaction in
            while let (key, snapshot, base) = frontier.popLast() {
                guard seen.insert(key).inserted else { continue }
                if try transaction.object(key) == nil {
                    // The server state is the fetched one, without the unsaved changes: those
                    // are in the local view only (and come back as unsaved when reloaded).
                    let server = base.flatMap { $0.version > 0 ? $0 : nil }
                    try transaction.put(key, server: server, local: snapshot, deleted: false)
                }
                try transaction.pin(key, label: label)
                for value in snapshot.fields.values {
                    guard case .pointer(let pointer) = value else { continue }
                    let target = ObjectKey(datastore: key.datastore, className: pointer.className, objectId: pointer.objectId)
                    if let live = registry.existing(target) {
                        frontier.append((target, live.snapshot, live.storedBase))
                    } else if let row = try transaction.object(target), let local = row.local {
                        frontier.append((target, local, row.server))
                    }
                }
            }
        }
    }

    /// Removes a label from objects.
    func unpin(_ objects: [RooftopObject], label: String) throws(RooftopError) {
        try store.write(scope: scope) { transaction in
            for object in objects { try transaction.unpin(object.key, label: label) }
        }
    }

    /// Has the offline queue send this object's queued changes now and waits for their answers
    /// (so that a direct save comes after them); without queued changes it returns at once.
    /// - Throws: The send's failure (`noConnection`...), `badState` without an account.
    func flushQueue(for key: ObjectKey) async throws(RooftopError) {
        try await outboxEngine.flush(.object(key))
    }
}
