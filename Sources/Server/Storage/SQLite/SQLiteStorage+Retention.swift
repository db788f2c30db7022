import GRDB
import RooftopShared

extension SQLiteStorage {
    /// Rows deleted per transaction: a sweep never holds the writer long.
    static let sweepBatch = 2_000

    /// See ``RetentionStorage/sweepHistory(cutoff:now:)``.
    public func sweepHistory(cutoff: Timestamp, now: Timestamp) async throws -> HistorySweep {
        // A rebuild of index rows stopped by a failure resumes (nothing happens when none is due).
        startRowRebuild()
        var sweep = HistorySweep()
        let cutoffMillis = cutoff.millisecondsSinceEpoch
        let advanced: [(key: Int64, historyFrom: Int64)] = try await pool.write { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT key, mark_sequence FROM datastores
                    WHERE mark_at IS NOT NULL AND mark_at <= ? AND mark_sequence > history_from
                    """,
                arguments: [cutoffMillis])
            try db.execute(
                sql: """
                    UPDATE datastores SET history_from = mark_sequence
                    WHERE mark_at IS NOT NULL AND mark_at <= ? AND mark_sequence > history_from
                    """,
                arguments: [cutoffMillis])
            // A new mark wherever none is pending: it becomes the history's start once it is
            // older than the retention, so what is kept spans one to two retentions.
            try db.execute(
                sql: "UPDATE datastores SET mark_sequence = sequence, mark_at = ? WHERE mark_at IS NULL OR mark_at <= ?",
                arguments: [now.millisecondsSinceEpoch, cutoffMillis])
            return rows.map { ($0["key"], $0["mark_sequence"]) }
        }
        sweep.datastores = advanced.count
        for (key, historyFrom) in advanced {
            sweep.tombstones += try await deleteInBatches(
                sql: """
                    DELETE FROM objects WHERE key IN (
                        SELECT key FROM objects WHERE datastore_key = ? AND deleted = 1 AND sequence <= ? LIMIT ?)
                    """,
                arguments: [key, historyFrom])
            let (operations, readers) = try await sweepLiveObjects(datastoreKey: key, historyFrom: historyFrom)
            sweep.operations += operations
            sweep.readerRows += readers
        }
        sweep.mutationResults += try await sweepMutationResults(cutoff: cutoffMillis)
        // Results recorded before schema v4.
        sweep.mutationResults += try await deleteInBatches(
            sql: "DELETE FROM mutations WHERE rowid IN (SELECT rowid FROM mutations WHERE created_at <= ? LIMIT ?)",
            arguments: [cutoffMillis])
        sweep.readerSets += try await sweepReaderSets()
        return sweep
    }

    /// Deletes the mutation results recorded at or before `cutoff` (``ResultSweep``).
    private func sweepMutationResults(cutoff: Int64) async throws -> Int {
        try await ResultSweep.run { start in
            try await pool.write { db -> (ResultSweep.Key?, Int) in
                let rows = try Row.fetchAll(
                    db.cachedStatement(
                        sql: """
                            SELECT scope, mutation_id, created_at FROM mutation_results
                            WHERE (scope, mutation_id) > (?, ?) ORDER BY scope, mutation_id LIMIT ?
                            """),
                    arguments: [start.scope, start.id, Self.sweepBatch])
                guard let last = rows.last else { return (nil, 0) }
                var removed = 0
                for row in rows where (row["created_at"] as Int64) <= cutoff {
                    try db.cachedStatement(sql: "DELETE FROM mutation_results WHERE scope = ? AND mutation_id = ?")
                        .execute(arguments: [row["scope"] as String, row["mutation_id"] as String])
                    removed += db.changesCount
                }
                return ((last["scope"], last["mutation_id"]), removed)
            }
        }
    }

    /// Runs a `DELETE` whose last argument is the batch size until a batch deletes fewer rows.
    private func deleteInBatches(sql: String, arguments: [Int64]) async throws -> Int {
        var total = 0
        while true {
            let deleted = try await pool.write { db in
                try db.execute(sql: sql, arguments: StatementArguments(arguments + [Int64(Self.sweepBatch)]))
                return db.changesCount
            }
            total += deleted
            if deleted < Self.sweepBatch { return total }
        }
    }

    /// Removes the operations and the ended reader history at or below `historyFrom` of a
    /// datastore's objects, a batch of objects (in sequence order) per transaction.
    private func sweepLiveObjects(datastoreKey: Int64, historyFrom: Int64) async throws -> (Int, Int) {
        var operations = 0
        var readers = 0
        var after: Int64 = -1
        while true {
            let start = after
            let (last, removed) = try await pool.write { db -> (Int64?, (Int, Int)) in
                let keys = try Row.fetchAll(
                    db.cachedStatement(
                        sql: """
                            SELECT key, sequence FROM objects WHERE datastore_key = ? AND sequence > ?
                            ORDER BY sequence LIMIT ?
                            """),
                    arguments: [datastoreKey, start, Self.sweepBatch])
                guard let last = keys.last else { return (nil, (0, 0)) }
                var removed = (0, 0)
                for row in keys {
                    let key: Int64 = row["key"]
                    try db.cachedStatement(
                        sql: "DELETE FROM object_operations WHERE object_key = ? AND (sequence IS NULL OR sequence <= ?)"
                    ).execute(arguments: [key, historyFrom])
                    removed.0 += db.changesCount
                    try db.cachedStatement(
                        sql: """
                            DELETE FROM object_readers
                            WHERE object_key = ? AND to_sequence IS NOT NULL AND to_sequence <= ?
                            """
                    ).execute(arguments: [key, historyFrom])
                    removed.1 += db.changesCount
                }
                return (last["sequence"], removed)
            }
            operations += removed.0
            readers += removed.1
            guard let last else { return (operations, readers) }
            after = last
        }
    }
}
