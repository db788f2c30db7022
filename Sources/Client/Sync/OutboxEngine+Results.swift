import RooftopShared

extension OutboxEngine {
    /// Handles a push that failed as a whole (see the type's documentation).
    func failed(_ error: RooftopError, batch: OutboxSchedule.Batch, scope: String, core: ClientCore, now: Int64)
        -> RoundOutcome
    {
        let rows = batch.rows
        if error.isTransient {
            let attempt = (rows.map(\.attempts).max() ?? 0) + 1
            let delay = retry.delay(beforeAttempt: attempt, random: random())
            let retryAt = now + EngineClock.milliseconds(delay)
            do {
                try core.store.write(scope: scope) { transaction in
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
                _ = try settle(refusal, rows: rows, scope: scope, core: core, now: now)
            } catch {
                return .failed(error, retryAt: nil)
            }
            isolate = false
            return .sent(answered: 1)
        }
        do {
            try core.store.write(scope: scope) { transaction in
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
        return .sent(answered: 0)
    }

    /// Applies a push's answers in one transaction: acknowledged rows leave the queue and give
    /// their object its new server state; refused rows are set aside with the object's local
    /// view; every touched object's local view is recomputed from its server state and remaining
    /// queued changes. Then live objects, statuses, events and merge decisions follow.
    ///
    /// Changes of an acknowledged object queued while the push was in flight move on to the
    /// acknowledged version, rebased over the changes others committed in between when
    /// `histories` has the object (``inFlightHistories(_:rows:scope:core:)``).
    /// - Returns: How many rows were answered.
    func settle(
        _ response: PushResponse, rows: [OutboxRow], scope: String, core: ClientCore, now: Int64,
        histories: [ObjectKey: InFlightHistory] = [:]
    ) throws(RooftopError) -> Int {
        var answered = 0
        var rebased: [(ObjectKey, [MergeDecision])] = []
        var settledByRebase: [(OutboxRow, Int64, [MutationID])] = []
        var acknowledged: [(OutboxRow, Int64, [MergeDecision])] = []
        var refused: [(OutboxRow, RooftopError)] = []
        var views: [(ObjectKey, ObjectSnapshot?)] = []
        var gone: [ObjectKey] = []
        let retryAt = now + EngineClock.milliseconds(retry.delay(beforeAttempt: 1, random: random()))
        // The server's word is recorded first, so that a status asked as the rows go reads it.
        var folded: [MutationID: [MutationID]] = [:]
        for row in rows {
            let id = row.mutation.mutationId
            switch response.result(for: id) {
            case .applied(_, let version, _, _)?: folded[id] = core.services.ledger.acknowledge(id, version: version)
            case .rejected?: folded[id] = core.services.ledger.settle(id)
            case nil: break
            }
        }
        try core.store.write(scope: scope) { transaction in
            var applied: [ObjectKey: AppliedState] = [:]
            var touched: [ObjectKey] = []
            for row in rows {
                let id = row.mutation.mutationId
                guard try transaction.outboxRow(id) != nil else { continue }  // discarded meanwhile
                guard let result = response.result(for: id) else {
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
                    let earlier = applied[row.key]
                    var isDelete = false
                    if case .delete = row.mutation.change { isDelete = true }
                    applied[row.key] = AppliedState(
                        sentBase: earlier?.sentBase ?? row.mutation.baseVersion, version: version, object: object,
                        endsInDelete: isDelete, changes: (earlier?.changes ?? []) + [row.mutation.change],
                        origins: (earlier?.origins ?? []).union([
                            OperationOrigin.make(mutationId: id, scope: OperationOrigin.scope(userId: scope))
                        ]))
                    acknowledged.append((row, version, merges))
                case .rejected(_, let error):
                    try transaction.reject(row.mutation, error: error, localState: try transaction.object(row.key)?.local)
                    refused.append((row, error))
                }
            }
            for key in touched {
                guard let stored = try transaction.object(key) else {
                    // A pull removed the object while these rows were in flight (a tombstone, or the
                    // user lost read access): the answer describes a state the feed has moved past,
                    // and must not put the object back. The next pull brings it if it is readable.
                    continue
                }
                var server = stored.server
                if let done = applied[key] {
                    // A pull may already have stored a newer state: never go back.
                    if (server?.version ?? 0) <= done.version { server = done.object }
                    // Changes queued while these were in flight were made on the state they produced,
                    // unless someone else's delete won over them (no object, and not this client's
                    // delete): then the queued changes were made on the object before that delete,
                    // keep their base version and lose to the delete on the server too. Moved to the
                    // tombstone's version they would re-create the object with only their fields.
                    let deletedByOthers = done.object == nil && !done.endsInDelete
                    let waiting = try transaction.queued(for: key).filter {
                        !deletedByOthers && !$0.mayHaveReachedServer && $0.mutation.baseVersion == done.sentBase
                    }
                    let rebase = histories[key].flatMap { history in
                        done.object.flatMap { object in
                            Rebase.afterAcknowledged(
                                queued: waiting.map(\.mutation.change), acknowledged: done.changes,
                                ownOrigins: done.origins, records: history.records, sentBase: done.sentBase ?? 0,
                                object: object, rules: history.rules)
                        }
                    }
                    for (index, rest) in waiting.enumerated() {
                        var mutation = rest.mutation
                        mutation.baseVersion = done.version
                        if let rebase {
                            guard let change = rebase.changes[index] else {
                                // Nothing left of it: done, as the server would have answered.
                                try transaction.removeFromQueue(mutation.mutationId)
                                let folded = core.services.ledger.acknowledge(mutation.mutationId, version: done.version)
                                settledByRebase.append((rest, done.version, folded))
                                continue
                            }
                            mutation.change = change
                        }
                        try transaction.replaceQueued(mutation.mutationId, with: mutation)
                    }
                    if let rebase, !rebase.decisions.isEmpty { rebased.append((key, rebase.decisions)) }
                    if server == nil, try transaction.queued(for: key).isEmpty {
                        // Deleted on the server, nothing left to send: the local copy goes.
                        try transaction.remove(key)
                        gone.append(key)
                        continue
                    }
                    if server != nil, try transaction.isSynced(key.datastore) {
                        try transaction.pin(key, label: LocalStore.syncLabel)
                    }
                }
                views.append((key, try core.recomputeLocalView(key, server: server, in: transaction)))
            }
        }
        for (key, view) in views { core.registry.existing(key)?.replaceBase(view) }
        for key in gone { core.registry.existing(key)?.markDeleted() }
        publish(acknowledged: acknowledged, refused: refused, folded: folded, core: core)
        for (key, decisions) in rebased {
            for decision in decisions { core.services.merges.publish(MergeEvent(key: key, decision: decision, source: .rebase)) }
        }
        for (row, version, folded) in settledByRebase {
            for id in [row.mutation.mutationId] + folded {
                events.publish(OutboxEvent(mutationId: id, key: row.key, kind: .acknowledged(version: version, merges: [])))
            }
        }
        return answered
    }

    private func publish(
        acknowledged: [(OutboxRow, Int64, [MergeDecision])], refused: [(OutboxRow, RooftopError)],
        folded: [MutationID: [MutationID]], core: ClientCore
    ) {
        for (row, version, merges) in acknowledged {
            let id = row.mutation.mutationId
            for other in [id] + (folded[id] ?? []) {
                let kind = OutboxEvent.Kind.acknowledged(version: version, merges: other == id ? merges : [])
                events.publish(OutboxEvent(mutationId: other, key: row.key, kind: kind))
            }
            for decision in merges {
                core.services.merges.publish(MergeEvent(key: row.key, decision: decision, source: .push(id)))
            }
        }
        for (row, error) in refused {
            let id = row.mutation.mutationId
            for other in [id] + (folded[id] ?? []) {
                events.publish(OutboxEvent(mutationId: other, key: row.key, kind: .rejected(error)))
            }
        }
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
    /// Their changes, as the client made them, in order.
    var changes: [ObjectChange]
    /// The origins of the operations they committed (``OperationOrigin``).
    var origins: Set<String>
}
