import PostgresNIO
import RooftopShared
import Synchronization

extension PostgresStorage {
    /// See ``ChangeFeedStorage/changes(datastoreKey:after:limit:classes:)``.
    ///
    /// Reads only changes below ``PostgresStatements/feedBound``: a transaction still running
    /// may number changes from there on, and commit after those above it. When changes above it
    /// had committed already (held back) and the page has room, the read waits until the
    /// transactions older than them have ended, reading again after pauses that grow from 1 to
    /// 100 ms, so that the page brings them (no later notification would). Changes that commit
    /// meanwhile are not waited for: their own notifications follow.
    /// - Throws: a storage fault (503 `retryLater`) when changes are still held back after
    ///   ``feedWait``; what the database answers.
    public func changes(datastoreKey: Int64, after sequence: Int64, limit: Int, classes: Set<String>?) async throws
        -> [FeedObject]
    {
        try await changes(datastoreKey: datastoreKey, after: sequence, limit: limit, classes: classes, waitingAtMost: Self.feedWait)
    }

    /// ``changes(datastoreKey:after:limit:classes:)``, waiting at most `wait` for changes held back.
    func changes(
        datastoreKey: Int64, after sequence: Int64, limit: Int, classes: Set<String>?, waitingAtMost wait: Duration
    ) async throws -> [FeedObject] {
        let clock = ContinuousClock()
        let deadline = clock.now + wait
        var pause = Duration.milliseconds(1)
        // The last change held back when the pull began.
        var awaited: Int64?
        while true {
            let (objects, bound, heldBack) = try await readSnapshot { session in
                // Statements of one snapshot, so of one bound.
                let bound = try session.query("SELECT \(unescaped: PostgresStatements.feedBound)").first?
                    .decode(Int64.self) ?? 0
                let names = classes.map { $0.sorted() } ?? []
                let objects = try Self.feedObjects(session.query(
                    """
                    \(unescaped: Self.feedObjectSelect)
                    WHERE o.datastore_key = \(datastoreKey) AND o.sequence > \(sequence) AND o.sequence < \(bound)
                    AND (\(classes == nil) OR o.class_name = ANY(\(names)))
                    ORDER BY o.sequence LIMIT \(Int64(limit))
                    """
                ))
                guard objects.count < limit else { return (objects, bound, Int64?.none) }
                let heldBack = try session.query(
                    """
                    SELECT max(o.sequence) FROM objects o
                    WHERE o.datastore_key = \(datastoreKey) AND o.sequence > \(sequence) AND o.sequence >= \(bound)
                    AND (\(classes == nil) OR o.class_name = ANY(\(names)))
                    """
                ).first?.decode(Int64?.self)
                return (objects, bound, heldBack)
            }
            if awaited == nil { awaited = heldBack }
            guard objects.count < limit, let awaited, bound <= awaited else { return objects }
            feedWaits.add(1, ordering: .relaxed)
            guard clock.now + pause < deadline else {
                throw FeedHeldBack(
                    message: "changes committed after a transaction still running after \(wait)")
            }
            try await Task.sleep(for: pause)
            pause = min(pause * 2, .milliseconds(100))
        }
    }

    /// How long a pull waits for the transactions that hold committed changes back
    /// (``changes(datastoreKey:after:limit:classes:)``).
    static let feedWait = Duration.seconds(5)

    /// Changes stayed held back behind a long transaction: a storage fault (503 `retryLater`),
    /// which the client retries.
    struct FeedHeldBack: StorageFaultReporting {
        var message: String
        var storageFault: String? { message }
    }

    /// See ``ChangeFeedStorage/recentChanges(datastoreKey:limit:)``.
    public func recentChanges(datastoreKey: Int64, limit: Int) async throws -> [FeedObject] {
        try await read { session in
            try Self.feedObjects(session.query(
                """
                \(unescaped: Self.feedObjectSelect)
                WHERE o.datastore_key = \(datastoreKey) ORDER BY o.sequence DESC LIMIT \(Int64(limit))
                """
            ))
        }
    }

    /// See ``ChangeFeedStorage/changeCount(datastoreKey:after:classes:readers:)``.
    public func changeCount(datastoreKey: Int64, after sequence: Int64, classes: Set<String>?, readers: Set<String>?)
        async throws -> Int
    {
        // Readable now (its set), or once (the readers' history: ended access, a tombstone's
        // readers, those a set of `*` alone does not name).
        let list = readers.map { $0.sorted() } ?? []
        return try await read { session in
            let count = try session.query(
                """
                SELECT count(*) FROM objects o WHERE o.datastore_key = \(datastoreKey) AND o.sequence > \(sequence)
                AND (\(classes == nil) OR o.class_name = ANY(\(classes.map { $0.sorted() } ?? [])))
                AND (\(readers == nil)
                    OR EXISTS (SELECT 1 FROM reader_set_members m WHERE m.principal = ANY(\(list)) AND m.reader_set = o.readers)
                    OR EXISTS (SELECT 1 FROM object_readers r WHERE r.object_key = o.key AND r.principal = ANY(\(list))))
                """
            ).first?.decode(Int64.self) ?? 0
            return Int(count)
        }
    }

    /// See ``ChangeFeedStorage/lostAccess(datastoreKey:atSequence:formerPrincipals:currentPrincipals:)``.
    public func lostAccess(
        datastoreKey: Int64, atSequence sequence: Int64, formerPrincipals: Set<String>,
        currentPrincipals: Set<String>
    ) async throws -> [Pointer] {
        guard !formerPrincipals.isEmpty else { return [] }
        let (former, current) = (formerPrincipals.sorted(), currentPrincipals.sorted())
        return try await read { session in
            try session.query(
                """
                WITH p AS (SELECT \(former)::text[] AS former_principals, \(formerPrincipals.contains("*")) AS former_all,
                    \(current)::text[] AS current_principals, \(currentPrincipals.contains("*")) AS current_all)
                SELECT o.class_name, o.object_id FROM objects o, p
                WHERE o.datastore_key = \(datastoreKey) AND NOT o.deleted AND o.sequence <= \(sequence)
                AND \(unescaped: Self.readable(by: "former")) AND NOT \(unescaped: Self.readable(by: "current"))
                ORDER BY o.sequence
                """
            ).map { row in
                let (className, objectId) = try row.decode((String, String).self)
                return Pointer(className: className, objectId: objectId)
            }
        }
    }

    /// See ``ChangeFeedStorage/gainedAccess(datastoreKey:atSequence:formerPrincipals:currentPrincipals:limit:)``.
    public func gainedAccess(
        datastoreKey: Int64, atSequence sequence: Int64, formerPrincipals: Set<String>,
        currentPrincipals: Set<String>, limit: Int
    ) async throws -> [FeedObject] {
        guard !currentPrincipals.isEmpty else { return [] }
        let (former, current, limit) = (formerPrincipals.sorted(), currentPrincipals.sorted(), Int64(limit))
        return try await read { session in
            try Self.feedObjects(session.query(
                """
                WITH p AS (SELECT \(former)::text[] AS former_principals, \(formerPrincipals.contains("*")) AS former_all,
                    \(current)::text[] AS current_principals, \(currentPrincipals.contains("*")) AS current_all)
                \(unescaped: Self.feedObjectSelect) CROSS JOIN p
                WHERE o.datastore_key = \(datastoreKey) AND NOT o.deleted AND o.sequence <= \(sequence)
                AND \(unescaped: Self.readable(by: "current")) AND NOT \(unescaped: Self.readable(by: "former"))
                ORDER BY o.sequence LIMIT \(limit)
                """
            ))
        }
    }

    /// Whether a live object (`o`) is readable now by the principals the statement's `p` (a
    /// `WITH` of one row, joined) names: `former` or `current`, its columns `<name>_principals`
    /// and `<name>_all` (whether they hold `*`). Never unknown: its reader set has one of them
    /// as a member (a probe of `reader_set_members`' key per principal, not a list of every set
    /// the caller is in) or, for principals without `*`, the readers its set does not name have
    /// one (rows of the readers' history without an end, ``ReaderHistoryWrite``).
    ///
    /// Access at a checkpoint (``lostAccess(datastoreKey:atSequence:formerPrincipals:currentPrincipals:)``,
    /// ``gainedAccess(datastoreKey:atSequence:formerPrincipals:currentPrincipals:limit:)``) is
    /// asked of live objects unchanged since it, whose readers then are those of now (as on
    /// SQLite, ``SQLiteStorage/readable(by:)``).
    private static func readable(by principals: String) -> String {
        """
        (EXISTS (SELECT 1 FROM reader_set_members m \
        WHERE m.principal = ANY(p.\(principals)_principals) AND m.reader_set = o.readers) \
        OR (NOT p.\(principals)_all AND EXISTS (SELECT 1 FROM object_readers r \
        WHERE r.object_key = o.key AND r.to_sequence IS NULL AND r.principal = ANY(p.\(principals)_principals))))
        """
    }
}
