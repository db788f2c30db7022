import Logging
import RooftopShared

extension OutboxEngine {
    /// Handles a push that failed as a whole (see the type's documentation).
    func failed(_ error: RooftopError, batch: OutboxSchedule.Batch, scope: String, now: Int64)
        -> RoundOutcome
    {
        let rows = batch.rows
        if error.isTransient {
            let attempt = (rows.map(\.attempts).max() ?? 0) + 1
            let delay = retry.delay(beforeAttempt: attempt, random: random())
            let retryAt = now + EngineClock.milliseconds(delay)
            do {
                try dependencies.store.write(scope: scope) { transaction in
                    for row in rows {
                        try transaction.markPending(
                            row.mutation.mutationId, error: error, nextAttemptAt: retryAt, countAttempt: true)
                    }
                }
            } catch {
                return .failed(error, retryAt: nil)
            }
            for row in rows {
                events.publish(OutboxEvent(
                    mutationId: row.mutation.mutationId, key: row.key, kind: .retrying(attempt: attempt, after: delay)))
            }
            return .failed(error, retryAt: min(retryAt, batch.nextAttemptAt ?? retryAt))
        }
        if error.code != .auth, rows.count == 1, let row = rows.first {
            // Refused on its own: this change is the culprit. Set it aside like a refusal.
            let refusal = PushResponse(results: [.rejected(mutationId: row.mutation.mutationId, error: error)])
            do {
                _ = try settle(refusal, rows: rows, scope: scope, now: now)
            } catch {
                return .failed(error, retryAt: nil)
            }
            isolate = false
            return .sent(answered: 1, more: true)
        }
        do {
            try dependencies.store.write(scope: scope) { transaction in
                for row in rows {
                    // Counted as an attempt: a push refused as a whole may still have applied some of
                    // its mutations first (a server error after them), so these rows may have reached
                    // the server and must never be rewritten by a rebase (their IDs may already stand
                    // for their first content, and a rewrite would be answered by a replay).
                    try transaction.markPending(row.mutation.mutationId, error: error, nextAttemptAt: nil, countAttempt: true)
                }
            }
        } catch {
            return .failed(error, retryAt: nil)
        }
        if error.code == .auth {
            for row in rows {
                events.publish(OutboxEvent(mutationId: row.mutation.mutationId, key: row.key, kind: .stalled(error)))
            }
            return .failed(error, retryAt: batch.nextAttemptAt)
        }
        // The server refused the push as a whole: find the culprit by sending rows one by one.
        isolate = true
        return .sent(answered: 0, more: true)
    }

    /// Applies a push's answers in one transaction: acknowledged rows leave the queue and give
    /// their object its new server state; refused rows are set aside with the object's local
    /// view; every touched object's local view is recomputed from its server state and remaining
    /// queued changes. Then live objects, statuses, events and merge decisions follow.
    ///
    /// Changes of an acknowledged object queued while the push was in flight were made on the
    /// state the push's changes produced locally. When nobody else wrote the object in between,
    /// they move on to the acknowledged version. When others did (``concurrentlyWritten(_:rows:)``),
    /// the queued changes never saw those writes: moved past them, they would overwrite them
    /// unmerged. So with `mayHold` the object's acknowledged rows are not settled yet: they go
    /// again, with the same IDs, together with the queued ones, and the server answers them as
    /// before and merges the queued ones as a chain after them (``OutboxEngine`` sends an
    /// object's rows in order, all in one push when they fit).
    /// - Parameter mayHold: Whether acknowledged rows may be held back to go again (not when
    ///   rows go one by one to find a culprit: they would never travel together).
    /// - Returns: How many rows were answered (held rows are not).
    func settle(
        _ response: PushResponse, rows: [OutboxRow], scope: String, now: Int64, mayHold: Bool = false
    ) throws(RooftopError) -> Int {
        var answered = 0
        var acknowledged: [(OutboxRow, Int64, [MergeDecision])] = []
        var refused: [(OutboxRow, RooftopError)] = []
        var views: [(ObjectKey, ObjectSnapshot?)] = []
        var gone: [ObjectKey] = []
        let retryAt = now + EngineClock.milliseconds(retry.delay(beforeAttempt: 1, random: random()))
        let answers = response.resultsByMutationID()
        let concurrent = mayHold ? Self.concurrentlyWritten(answers, rows: rows) : [:]
        let registry = dependencies.registry
        let store = dependencies.store
        let durability = try Self.durability(of: response) { () throws(RooftopError) in
            try store.outboxHasDue(scope: scope, now: now)
        }
        let ledger = dependencies.ledger
        try store.write(scope: scope, durability: durability) { transaction in
            let held = try heldBack(concurrent, rows: rows, in: transaction)
            // The server's word is noted first, so that a status asked as the rows go reads it
            // (a status reads the rows before the ledger: noted for a transaction that fails,
            // it is not read, and the rows are settled again, with the mutations folded into
            // them, which their rows list).
            // A row's folds are as the round read it before sending it: a rebase folds only into
            // rows that never reached the network.
            for row in rows where !held.contains(row.key) {
                if case .applied(_, let version, _, _)? = answers[row.mutation.mutationId] {
                    ledger.acknowledge(row.mutation.mutationId, version: version, folded: row.folded)
                }
            }
            var applied: [ObjectKey: AppliedState] = [:]
            var touched: [ObjectKey] = []
            for row in rows {
                let id = row.mutation.mutationId
                guard try transaction.isQueued(id) else { continue }  // discarded meanwhile
                if held.contains(row.key) {
                    // Goes again with the changes queued meanwhile (its answer will be the same).
                    try transaction.markPending(id, error: nil, nextAttemptAt: nil, countAttempt: true)
                    continue
                }
                guard let result = answers[id] else {
                    // Not answered: pending again; the same ID gets its answer next time.
                    try transaction.markPending(
                        id, error: RooftopError(.response, "the push's answer had no result for \(id)"),
                        nextAttemptAt: retryAt, countAttempt: true)
                    continue
                }
                answered += 1
                if !touched.contains(row.key) { touched.append(row.key) }
                switch result {
                case .applied(_, let version, let object, let merges):
                    try transaction.removeFromQueue(id)
                    let base = applied[row.key]?.sentBase ?? row.mutation.baseVersion
                    var isDelete = false
                    if case .delete = row.mutation.change { isDelete = true }
                    applied[row.key] = AppliedState(sentBase: base, version: version, object: object, endsInDelete: isDelete)
                    acknowledged.append((row, version, merges))
                case .rejected(_, let error):
                    try transaction.reject(
                        row.mutation, error: error, localState: try transaction.object(row.key)?.local,
                        folded: row.folded)
                    refused.append((row, error))
                }
            }
            var syncedDatastores: [DatastoreID: Bool] = [:]
            for key in touched {
                // The object's rows left, read once: rebased, then its view's changes.
                var rest = try transaction.queued(for: key)
                if let done = applied[key] { rest = try Self.rebaseQueued(rest, after: done, in: transaction) }
                guard let stored = try transaction.object(key) else {
                    // A pull removed the object while these rows were in flight (a tombstone, or the
                    // user lost read access): the answer describes a state the feed has moved past,
                    // and must not put the object back. The next pull brings it if it is readable.
                    continue
                }
                var server = stored.server
                var synced = false
                if let done = applied[key] {
                    // A pull may already have stored a newer state: never go back.
                    if (server?.version ?? 0) <= done.version { server = done.object }
                    if server == nil, rest.isEmpty {
                        // Deleted on the server, nothing left to send: the local copy goes.
                        try transaction.remove(key)
                        gone.append(key)
                        continue
                    }
                    if server != nil {
                        if syncedDatastores[key.datastore] == nil {
                            syncedDatastores[key.datastore] = try transaction.isSynced(key.datastore)
                        }
                        synced = syncedDatastores[key.datastore] ?? false
                    }
                }
                // The stored view is what the object's index rows were made from: they are updated
                // from it, not read back.
                let previous = stored.deleted ? nil : stored.local
                views.append(
                    (
                        key,
                        try transaction.storeLocalView(
                            key, server: server, queued: rest.map(\.mutation), synced: synced, previous: previous)
                    ))
            }
        } committed: {
            for (key, view) in views { registry.existing(key)?.replaceBase(view) }
            for key in gone { registry.existing(key)?.markDeleted() }
        }
        publish(acknowledged: acknowledged, refused: refused)
        return answered
    }

    /// How a settle commits. Acknowledgements are what the server recorded under the rows' IDs
    /// and gives again: their commit need not wait for the disk (``Durability/deferred``) when a
    /// synced commit follows at once — the next round's, marking the rows due now as sent, which
    /// syncs the log with it. Lost with a power loss before that, the rows go again and are
    /// answered as recorded; every write of a settle keeps a row's content and ID (a base version
    /// moved, a row pending again), so what goes again is what went. A refusal waits for the disk
    /// (the client makes some from an HTTP status, which the server never recorded; sent again,
    /// the change could be applied after the app was told it was refused), and so does a settle
    /// that leaves nothing due: nothing would sync it soon, and the server keeps its answers for a
    /// limited time only.
    /// - Parameter rowsDue: Whether rows of the queue are due now (asked only when needed).
    /// - Throws: What `rowsDue` throws.
    static func durability(
        of response: PushResponse, rowsDue: () throws(RooftopError) -> Bool
    ) throws(RooftopError) -> Durability {
        guard response.results.allSatisfy({ $0.error == nil }) else { return .synced }
        return try rowsDue() ? .deferred : .synced
    }

    /// Tells each answered row's change, and the changes folded into it (its row's list), its answer.
    private func publish(acknowledged: [(OutboxRow, Int64, [MergeDecision])], refused: [(OutboxRow, RooftopError)]) {
        for (row, version, merges) in acknowledged {
            let id = row.mutation.mutationId
            for other in [id] + row.folded {
                let kind = OutboxEvent.Kind.acknowledged(version: version, merges: other == id ? merges : [])
                events.publish(OutboxEvent(mutationId: other, key: row.key, kind: kind))
            }
            for decision in merges {
                dependencies.merges.publish(MergeEvent(key: row.key, decision: decision, source: .push(id)))
            }
        }
        for (row, error) in refused {
            let id = row.mutation.mutationId
            for other in [id] + row.folded {
                events.publish(OutboxEvent(mutationId: other, key: row.key, kind: .rejected(error)))
            }
        }
    }
}

extension OutboxEngine {
    /// Moves the changes queued while an object's rows were in flight onto the state those rows
    /// produced: they were made on it. Unless someone else's delete won over the rows (no
    /// object, and not this client's delete): then the queued changes were made on the object
    /// before that delete and lose to it on the server too. Moved to the tombstone's version they
    /// would re-create the object with only their fields. Those with a base keep it; those made on
    /// this client's own creation (no base) are based on the version before the tombstone: with
    /// no base, the server could not tell them from a deliberate re-creation when the delete came
    /// from the same user on another device. Done whether or not a pull removed the object
    /// meanwhile: the queued changes still go.
    /// - Parameter queued: The object's queued rows, in order, as read in `transaction`.
    /// - Returns: Those rows as they are now.
    static func rebaseQueued(_ queued: [OutboxRow], after done: AppliedState, in transaction: StoreTransaction) throws
        -> [OutboxRow]
    {
        let deletedByOthers = done.object == nil && !done.endsInDelete
        var rows = queued
        for index in rows.indices where rows[index].mutation.baseVersion == done.sentBase {
            let rest = rows[index]
            if rest.mayHaveReachedServer {
                // It goes again as it went. The rows behind it go with it, and the server chains
                // those with no base to it: moved, they would break that chain.
                if deletedByOthers { break }
                continue
            }
            if deletedByOthers && rest.mutation.baseVersion != nil { continue }
            var mutation = rest.mutation
            mutation.baseVersion = deletedByOthers ? max(done.version - 1, 0) : done.version
            try transaction.replaceQueued(mutation.mutationId, with: mutation)
            rows[index].mutation = mutation
        }
        return rows
    }
}

extension OutboxEngine {
    /// The objects whose acknowledged rows show that others wrote them between the version the
    /// rows were sent on and the version they reached (a row did not make the next version, or a
    /// merge was reported), with that sent version (0 for none). Objects the push left deleted
    /// are not included: changes queued behind a delete are handled by its rules.
    static func concurrentlyWritten(_ answers: [MutationID: MutationResult], rows: [OutboxRow]) -> [ObjectKey: Int64?] {
        var expected: [ObjectKey: Int64] = [:]
        var sentBase: [ObjectKey: Int64?] = [:]
        var written: Set<ObjectKey> = []
        var deleted: Set<ObjectKey> = []
        for row in rows {
            guard case .applied(_, let version, let object, let merges)? = answers[row.mutation.mutationId]
            else { continue }
            let key = row.key
            if sentBase[key] == nil { sentBase[key] = .some(row.mutation.baseVersion) }
            let previous = expected[key] ?? row.mutation.baseVersion ?? 0
            if version != previous &+ 1 || !merges.isEmpty { written.insert(key) }
            if object == nil { deleted.insert(key) } else { deleted.remove(key) }
            expected[key] = version
        }
        return sentBase.filter { written.contains($0.key) && !deleted.contains($0.key) }
    }

    /// Of `concurrent`, the objects whose acknowledged rows are held back to go again: those with
    /// changes queued on the same base that never went out, when all of the object's queued rows
    /// fit in one push (else they could never travel together, and the queued changes move on
    /// unmerged, as a notice says).
    private func heldBack(_ concurrent: [ObjectKey: Int64?], rows: [OutboxRow], in transaction: StoreTransaction)
        throws -> Set<ObjectKey>
    {
        guard !concurrent.isEmpty else { return [] }
        let sent = Set(rows.map(\.mutation.mutationId))
        let limits = Limits()
        var held: Set<ObjectKey> = []
        for (key, base) in concurrent {
            let queued = try transaction.queued(for: key)
            let waiting = queued.filter {
                !sent.contains($0.mutation.mutationId) && !$0.mayHaveReachedServer && $0.mutation.baseVersion == base
            }
            guard !waiting.isEmpty else { continue }
            let bytes = queued.reduce(SizeAccounting.pushBaseBytes) { $0 + SizeAccounting.changeSize($1.mutation.change) }
            guard queued.count <= limits.maxMutationsPerPush, bytes <= limits.maxPushBytes else {
                SyncEngine.logger.notice(
                    "changes queued during a push move on unmerged with concurrent changes: the object's queue is too long to go again in one push",
                    metadata: ["object": "\(key)", "queued": "\(queued.count)"])
                continue
            }
            held.insert(key)
        }
        return held
    }
}

/// What the acknowledged rows of one object in a push did.
struct AppliedState {
    /// The base version the rows were sent with.
    var sentBase: Int64?
    /// The object's version after the last of them.
    var version: Int64
    /// The object after the last of them (`nil`: it does not exist on the server).
    var object: ObjectSnapshot?
    /// Whether the last of them was this client's delete.
    var endsInDelete: Bool
}
