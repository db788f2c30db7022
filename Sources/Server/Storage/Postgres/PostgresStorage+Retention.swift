import PostgresNIO
import RooftopShared

extension PostgresStorage {
    /// Rows deleted per transaction: a sweep never holds locks long.
    static let sweepBatch: Int64 = 2_000

    /// See ``RetentionStorage/sweepHistory(cutoff:now:)``.
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
            // older than the retention, so what is kept spans one to two retentions. The row keeps
            // it as its sequence too: the feed's head (``feedHead``) stays there when the sweep
            // deletes the newest tombstones.
            try session.execute(
                """
                UPDATE datastores SET mark_sequence = h.head, sequence = h.head, mark_at = \(now)
                FROM (SELECT d.key, \(unescaped: Self.feedHead) AS head FROM datastores d
                WHERE d.mark_at IS NULL OR d.mark_at <= \(cutoff)) AS h
                WHERE datastores.key = h.key
                """)
            return try rows.map { try $0.decode((Int64, Int64).self) }.map { ($0.0, $0.1) }
        }
        sweep.datastores = advanced.count
        let seed = try await lockSeed()
        for (key, historyFrom) in advanced {
            sweep.tombstones += try await deleteInBatches { session in
                // The datastore's lock, exclusively (``PostgresStatements/LockWrites``): its writes
                // in flight have read ahead the tombstones they bring back, and write them at
                // their end; they commit first, and those that start wait for this batch.
                try session.execute("SELECT pg_advisory_xact_lock(hashtextextended('d' || \(key)::text, \(seed)))")
                // The tombstones, and with them their own rows, which name them without a foreign
                // key: those of the objects the first clause deleted (every clause reads the same
                // snapshot), so no live object's rows can go.
                let deleted = try session.query(
                    """
                    WITH doomed AS (DELETE FROM objects WHERE key IN (SELECT key FROM objects
                    WHERE datastore_key = \(key) AND deleted AND sequence <= \(historyFrom) LIMIT \(Self.sweepBatch))
                    AND deleted AND sequence <= \(historyFrom) RETURNING key),
                    \(unescaped: PostgresStatements.objectRowDeletes)
                    SELECT count(*)::bigint FROM doomed
                    """
                ).first?.decode(Int64.self)
                return Int(deleted ?? 0)
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
        sweep.readerSets += try await sweepReaderSets(now: now)
        return sweep
    }

    /// How long a reader set stays marked unnamed before a sweep deletes it
    /// (``sweepReaderSets(now:)``): longer than the longest request (an hour at most) and than a
    /// process keeps a set's ID (``PostgresReaderSetCache/timeToLive``).
    static let readerSetGrace: Int64 = 2 * 3_600_000

    /// Deletes the reader sets no object names (invented ACLs, ACLs changed since), in two steps,
    /// as several processes' writers name sets without waiting for each other:
    ///
    /// 1. the sets no object names are read in one scan; those not marked yet are marked with
    ///    `now`, and marked ones that an object names again are unmarked;
    /// 2. those marked more than ``readerSetGrace`` ago are locked `FOR UPDATE` (a writer that
    ///    found one holds it `FOR KEY SHARE` until its commit, so the lock waits for it), and,
    ///    in a statement after the lock (which sees what committed meanwhile), those still
    ///    unnamed are deleted with their members, a batch per transaction.
    ///
    /// A process uses a cached set's ID without locking it, but caches only unmarked sets, each
    /// for five minutes at most: by the time a mark is old enough, no process uses it unlocked.
    /// - Returns: How many sets were deleted.
    /// - Throws: What the database answers.
    func sweepReaderSets(now: Int64) async throws -> Int {
        let unnamed: [Int64] = try await read { session in
            try session.query(
                "SELECT id FROM reader_sets s WHERE NOT EXISTS (SELECT 1 FROM objects o WHERE o.readers = s.id) ORDER BY id"
            ).map { try $0.decode(Int64.self) }
        }
        try await transaction { session in
            try session.execute(
                "UPDATE reader_sets SET unnamed_since = \(now) WHERE id = ANY(\(unnamed)) AND unnamed_since IS NULL")
            try session.execute(
                "UPDATE reader_sets SET unnamed_since = NULL WHERE unnamed_since IS NOT NULL AND NOT (id = ANY(\(unnamed)))")
        }
        let (due, overflow) = now.subtractingReportingOverflow(Self.readerSetGrace)
        guard !overflow else { return 0 }
        var deleted = 0
        for start in stride(from: 0, to: unnamed.count, by: Int(Self.sweepBatch)) {
            let batch = Array(unnamed[start..<min(start + Int(Self.sweepBatch), unnamed.count)])
            deleted += try await transaction { session in
                let locked = try session.query(
                    "SELECT id FROM reader_sets WHERE id = ANY(\(batch)) AND unnamed_since <= \(due) ORDER BY id FOR UPDATE"
                ).map { try $0.decode(Int64.self) }
                guard !locked.isEmpty else { return 0 }
                let named = Set(
                    try session.query("SELECT DISTINCT readers FROM objects WHERE readers = ANY(\(locked))").map {
                        try $0.decode(Int64.self)
                    })
                let doomed = locked.filter { !named.contains($0) }
                guard !doomed.isEmpty else { return 0 }
                // Members by key: a set's text lists them.
                try session.execute(
                    """
                    DELETE FROM reader_set_members m
                    USING reader_sets s, json_array_elements_text(s.principals::json) AS p(principal)
                    WHERE s.id = ANY(\(doomed)) AND m.reader_set = s.id AND m.principal = p.principal
                    """)
                return try session.execute("DELETE FROM reader_sets WHERE id = ANY(\(doomed))")
            }
        }
        // This process forgets them at once; the others within their cache's time to live, long
        // before a set marked after they kept it can be deleted.
        if deleted > 0 { readerSetCache.removeAll() }
        return deleted
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
