import RooftopShared

/// The offline queue as the app sees it (`client.outbox`): what is queued, what happened to each
/// change, the changes the server refused, and waiting for the queue to empty.
///
/// Changes enter the queue through ``RooftopObject/saveEventually()`` and
/// ``RooftopObject/deleteEventually()``, durably, before those return. The client sends them in
/// order, exactly once, whenever a user is signed in and the server can be reached. Changes made
/// without an account wait for one: at sign-in they move to the user and are sent.
///
/// ```swift
/// let id = try await note.saveEventually()
/// try await client.outbox.waitUntilIdle()
/// if let id, case .rejected(let code, let message)? = try client.outbox.status(of: id) { ... }
/// for change in try client.outbox.rejected() { try client.outbox.discard(change) }
/// ```
public struct Outbox: Sendable {
    let core: ClientCore

    /// Every event of the queue from now on (queued, sent, acknowledged, rejected, retrying,
    /// stalled). Each call gives a new stream; it ends when the client shuts down.
    public var events: AsyncStream<OutboxEvent> { core.outboxEngine.events.stream() }

    /// Where a queued change is: pending, sent, acknowledged (remembered while the client lives),
    /// or rejected; `nil` for an ID the queue does not know (or no longer remembers). A change a
    /// rebase folded into an earlier one of the same object reads as that one, across restarts
    /// too (``RejectedChange/foldedMutationIds``).
    /// - Throws: `cache` when the local datastore cannot be read.
    public func status(of id: MutationID) throws -> OutboxStatus? {
        let scope = core.scope
        // The rows first, then the refusals, then the ledger: a row leaves the queue in the
        // transaction that records its refusal, and the ledger learns of an acknowledgement just
        // before its row goes (and keeps it should that transaction fail: the rows, and a
        // refusal the rows later get, are read before it). A change a rebase folded into an
        // earlier one of its object is listed by that one's row, then by its refusal (its
        // acknowledgement is the ledger's, as its own).
        if let row = try core.store.outboxRow(id, scope: scope) ?? core.store.outboxRow(folding: id, scope: scope) {
            return row.state == .sent ? .sent : .pending
        }
        let rejected = try core.store.rejected(scope: scope)
        if let refusal = rejected.first(where: { $0.mutation.mutationId == id })
            ?? rejected.first(where: { $0.folded.contains(id) })
        {
            return .rejected(code: refusal.error.code, message: refusal.error.message)
        }
        if let version = core.services.ledger.acknowledgedVersion(id) { return .acknowledged(version: version) }
        return nil
    }

    /// Whether changes are queued and not yet answered by the server (refused ones, set aside,
    /// do not count).
    /// - Throws: `cache` when the local datastore cannot be read.
    public var hasPendingWrites: Bool {
        get throws { try core.store.outboxCount(scope: core.scope) > 0 }
    }

    /// Returns once nothing is queued any more (every change acknowledged or refused). Without an
    /// account, queued changes wait for one, and so does this.
    /// - Throws: `cancelled` when the waiting task is cancelled while changes are queued; `closed`
    ///   when the client shuts down. (The last wait, for the commit that emptied the queue to
    ///   reach live objects, is short and bounded, and is not cut short by cancellation.)
    public func waitUntilIdle() async throws {
        // Subscribe before looking, so that no change slips between the look and the wait.
        let changes = core.store.changes.stream()
        var iterator = changes.makeAsyncIterator()
        core.outboxEngine.poke()
        while try hasPendingWrites {
            var outboxChanged = false
            while !outboxChanged {
                guard let change = await iterator.next() else {
                    if Task.isCancelled { throw RooftopError(.cancelled, "waiting for the offline queue was cancelled") }
                    throw RooftopError(.closed, "the client was shut down")
                }
                outboxChanged = change.outbox
            }
        }
        // The commit that emptied the queue may be seen a moment before its live objects take
        // what it stored (their new versions, which the next save is based on): that moment
        // is waited out (a publication is short and never waits for a write).
        await core.store.waitForPublications()
    }

    /// The changes the server refused, oldest first, each with the object's local state when it
    /// was refused.
    /// - Throws: `cache`.
    public func rejected() throws -> [RejectedChange] {
        try core.store.rejected(scope: core.scope).map(RejectedChange.init)
    }

    /// Forgets a refused change.
    /// - Throws: `cache`.
    public func discard(_ change: RejectedChange) throws {
        try core.store.write(scope: core.scope) { transaction in try transaction.removeRejected(change.mutationId) }
    }

    /// Queues a refused change again, under a new mutation ID, once the app has repaired what
    /// made the server refuse it (a permission granted, a conflicting object fixed).
    ///
    /// The refused change's ID, and the IDs folded into it (``RejectedChange/foldedMutationIds``),
    /// go with the new change: ``status(of:)`` reads them as the new one, and their answer comes
    /// with its answer (one event each), as for changes a rebase folded.
    ///
    /// - Parameters:
    ///   - change: The refused change.
    ///   - replacement: The change to send instead (default: the refused change as it was).
    /// - Returns: The new mutation ID.
    /// - Throws: `notFound` when the refusal is no longer set aside; `cache`.
    @discardableResult
    public func requeue(_ change: RejectedChange, with replacement: ObjectChange? = nil) throws
        -> MutationID
    {
        let key = change.key
        let id = MutationID.generate()
        let scope = core.scope
        guard try core.store.rejected(scope: scope).contains(where: { $0.mutation.mutationId == change.mutationId }) else {
            throw RooftopError(.notFound, "the refused change \(change.mutationId) is no longer set aside")
        }
        core.outboxEngine.events.expect(id)
        defer { core.outboxEngine.events.forget(id) }
        let view = try core.store.write(scope: scope) { transaction -> ObjectSnapshot? in
            try transaction.removeRejected(change.mutationId)
            let server = try transaction.object(key)?.server
            // Queued changes of one object share the base version they were made on.
            let queuedBase = try transaction.queued(for: key).first?.mutation.baseVersion
            let version = server?.version ?? 0
            let mutation = Mutation(
                mutationId: id, datastore: key.datastore, className: key.className, objectId: key.objectId,
                baseVersion: queuedBase ?? (version > 0 ? version : nil), change: replacement ?? change.change)
            try transaction.enqueue(mutation)
            // Apps keep the IDs their saves returned: those of the refused change follow it.
            try transaction.setFolded(id, [change.mutationId] + change.foldedMutationIds)
            return try transaction.recomputeLocalView(key, server: server)
        }
        core.registry.existing(key)?.replaceBase(view)
        core.outboxEngine.events.announce(OutboxEvent(mutationId: id, key: key, kind: .queued))
        core.outboxSignal.yield()
        return id
    }

    /// Sends the queue now, ignoring retry delays (call it when connectivity returns; continuous
    /// sync calls it whenever the live connection comes up).
    public func resume() {
        let engine = core.outboxEngine
        Task { await engine.resume() }
    }
}
