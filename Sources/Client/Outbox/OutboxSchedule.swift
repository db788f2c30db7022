import RooftopShared

/// Chooses what one push of the offline queue sends. Pure, so the rules are tested on their own.
///
/// - Rows go in queue (`seq`) order. All of an object's rows travel together and in order: the
///   object's first row decides whether the object is due, and its later rows (queued meanwhile,
///   with no retry time of their own) follow it.
/// - Due means: `sent` (left over from a crash: sent again at once with the same IDs), or pending
///   with its retry time passed, or any pending row when the send is forced (``Outbox/resume()``).
/// - A push stays within the server's limits (mutation count and push size); what does not fit
///   goes in the next push, at once. The first due row is always taken, even when too large, so
///   that the server's refusal can set it aside.
/// - After a push failed as a whole for a reason that is not passing, rows go one by one
///   (`isolate`) until the culprit is refused on its own.
enum OutboxSchedule {
    /// One push's rows and when to look again.
    struct Batch: Equatable {
        /// The rows to send now, in order.
        var rows: [OutboxRow]
        /// The earliest retry time of the rows left waiting (epoch milliseconds); `nil` when none
        /// waits for a time.
        var nextAttemptAt: Int64?
        /// Whether due rows were left for the next push (limits or isolation).
        var hasMore: Bool
    }

    /// Plans a push from whole rows (in queue order).
    static func plan(_ rows: [OutboxRow], now: Int64, force: Bool, isolate: Bool, limits: Limits = Limits()) -> Batch {
        plan(heads: rows.map(\.head), now: now, force: force, isolate: isolate, limits: limits) { rows[$0] }
    }

    /// Plans a push from the queue's heads (in queue order); `row` reads the whole row of the
    /// head at an index, asked only for the due rows the push may take (their sizes count).
    /// - Throws: What `row` throws.
    static func plan(
        heads: [OutboxHead], now: Int64, force: Bool, isolate: Bool, limits: Limits = Limits(),
        row: (Int) throws -> OutboxRow
    ) rethrows -> Batch {
        var dueObjects = Set<ObjectKey>()
        var decided = Set<ObjectKey>()
        var nextAttemptAt: Int64?
        for head in heads {
            guard decided.insert(head.key).inserted else { continue }
            let due = head.state == .sent || force || (head.nextAttemptAt ?? .min) <= now
            if due {
                dueObjects.insert(head.key)
            } else if let time = head.nextAttemptAt {
                nextAttemptAt = min(nextAttemptAt ?? time, time)
            }
        }
        let due = heads.indices.filter { dueObjects.contains(heads[$0].key) }
        var batch: [OutboxRow] = []
        var size = SizeAccounting.pushBaseBytes
        for index in due {
            if !batch.isEmpty, isolate || batch.count >= limits.maxMutationsPerPush { break }
            let next = try row(index)
            let rowSize = SizeAccounting.changeSize(next.mutation.change)
            if !batch.isEmpty, size + rowSize > limits.maxPushBytes { break }
            batch.append(next)
            size += rowSize
        }
        return Batch(rows: batch, nextAttemptAt: nextAttemptAt, hasMore: batch.count < due.count)
    }
}

extension OutboxRow {
    /// The row without its mutation.
    var head: OutboxHead { OutboxHead(seq: seq, key: key, state: state, nextAttemptAt: nextAttemptAt) }

    /// The object the row changes.
    var key: ObjectKey {
        ObjectKey(datastore: mutation.datastore, className: mutation.className, objectId: mutation.objectId)
    }

    /// Whether the server may have seen this row's mutation ID: it was handed to the network at
    /// least once. Such a row is never rewritten (its ID may already stand for its first content).
    var mayHaveReachedServer: Bool { state == .sent || attempts > 0 }
}
