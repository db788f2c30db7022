import PostgresNIO
import RooftopShared

extension PostgresStorage {
    /// Rows deleted per transaction: a sweep never holds locks long.
    static let sweepBatch: Int64 = 2_000

    /// See ``Storage/sweepHistory(cutoff:now:)``.
    public func sweepHistory(cutoff: Timestamp, now: Timestamp) async throws -> HistorySweep {
        var sweep = HistorySweep()
        let (cutoff, now) = (cutoff.millisecondsSinceEpoch, now.millisecondsSinceEpoch)
        let advanced: [(key: Int64, historyFrom: Int64)] = try await transaction { session in
            let rows = try session.query(
                """
                UPDATE datastores SET history_from = mark_sequence
                WHERE mark_at IS NOT NULL AND mark_at <= \(cutoff) AND mark_sequence > history_from
                RETURNING key, history_from
                """)
            // A new mark wherever none is pending: it becomes the history's start once it is
            // older than the retention, so what is kept spans one to two retentions.
            try session.execute(
                "UPDATE datastores SET mark_sequence = sequence, mark_at = \(now) WHERE mark_at IS NULL OR mark_at <= \(cutoff)")
            return try rows.map { try $0.decode((Int64, Int64).self) }.map { ($0.0, $0.1) }
        }
        sweep.datastores = advanced.count
        for (key, historyFrom) in advanced {
            sweep.tombstones += try await deleteInBatches { session in
                try session.execute(
                    """
                    DELETE FROM objects WHERE key IN (SELECT key FROM objects
                    WHERE datastore_key = \(key) AND deleted AND sequence <= \(historyFrom) LIMIT \(Self.sweepBatch))
                    """)
            }
            var after: Int64 = -1
            while true {
                let start = after
                let (last, operations, readers) = try await transaction { session -> (Int64?, Int, Int) in
                    // A batch of objects in sequence order: their old operations and ended readers.
                    guard
                        let last = try session.query(
                            """
                            SELECT max(sequence) FROM (SELECT sequence FROM objects
                            WHERE datastore_key = \(key) AND sequence > \(start) ORDER BY sequence LIMIT \(Self.sweepBatch)) b
                            """
                        ).first?.decode(Int64?.self)
                    else { return (nil, 0, 0) }
                    let operations = try session.execute(
                        """
                        DELETE FROM object_operations p USING objects o WHERE o.key = p.object_key
                        AND o.datastore_key = \(key) AND o.sequence > \(start) AND o.sequence <= \(last)
                        AND (p.sequence IS NULL OR p.sequence <= \(historyFrom))
                        """)
                    let readers = try session.execute(
                        """
                        DELETE FROM object_readers r USING objects o WHERE o.key = r.object_key
                        AND o.datastore_key = \(key) AND o.sequence > \(start) AND o.sequence <= \(last)
                        AND r.to_sequence IS NOT NULL AND r.to_sequence <= \(historyFrom)
                        """)
                    return (last, operations, readers)
                }
                sweep.operations += operations
                sweep.readerRows += readers
                guard let last else { break }
                after = last
            }
        }
        sweep.mutationResults += try await sweepMutationResults(cutoff: cutoff)
        return sweep
    }

    /// Deletes the mutation results recorded at or before `cutoff` (``ResultSweep``), each batch
    /// in one statement.
    private func sweepMutationResults(cutoff: Int64) async throws -> Int {
        try await ResultSweep.run { start in
            try await transaction { session -> (ResultSweep.Key?, Int) in
                guard
                    let row = try session.query(
                        """
                        WITH batch AS (SELECT scope, mutation_id, created_at FROM mutation_results
                            WHERE (scope, mutation_id) > (\(start.scope), \(start.id))
                            ORDER BY scope, mutation_id LIMIT \(Self.sweepBatch)),
                        gone AS (DELETE FROM mutation_results m USING batch b
                            WHERE m.scope = b.scope AND m.mutation_id = b.mutation_id AND b.created_at <= \(cutoff)
                            RETURNING 1),
                        last AS (SELECT scope, mutation_id FROM batch ORDER BY scope DESC, mutation_id DESC LIMIT 1)
                        SELECT last.scope, last.mutation_id, (SELECT count(*) FROM gone) FROM last
                        """
                    ).first
                else { return (nil, 0) }
                let (scope, id, count) = try row.decode((String, String, Int64).self)
                return ((scope, id), Int(count))
            }
        }
    }

    /// Runs a batch `DELETE` until a batch deletes fewer rows than ``sweepBatch``; returns how
    /// many it deleted.
    private func deleteInBatches(_ batch: @escaping @Sendable (PostgresBlockingSession) throws -> Int) async throws -> Int {
        var total = 0
        while true {
            let deleted = try await transaction(batch)
            total += deleted
            if deleted < Self.sweepBatch { return total }
        }
    }
}
