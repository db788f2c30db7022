import GRDB
import RooftopSQL
import RooftopShared

extension SQLiteStorage {
    /// See ``ChangeFeedStorage/changes(datastoreKey:after:limit:classes:)``.
    public func changes(datastoreKey: Int64, after sequence: Int64, limit: Int, classes: Set<String>?) async throws
        -> [FeedObject]
    {
        try await pool.read { db in
            // Prepared once per connection (the classes as one JSON array), read by position.
            var sql = "SELECT \(Self.feedColumns) FROM \(Self.feedFrom) WHERE o.datastore_key = ? AND o.sequence > ?"
            var arguments: StatementArguments = [datastoreKey, sequence]
            let (classFilter, classArguments) = try Self.classFilter(classes)
            sql += classFilter
            arguments += StatementArguments(classArguments)
            sql += " ORDER BY o.sequence LIMIT ?"
            arguments += [limit]
            return try Self.feedObjects(db.cachedStatement(sql: sql), arguments: arguments)
        }
    }

    /// See ``ChangeFeedStorage/recentChanges(datastoreKey:limit:)``.
    public func recentChanges(datastoreKey: Int64, limit: Int) async throws -> [FeedObject] {
        try await pool.read { db in
            try Self.feedObjects(
                db.makeStatement(
                    sql: """
                        SELECT \(Self.feedColumns) FROM \(Self.feedFrom) WHERE o.datastore_key = ?
                        ORDER BY o.sequence DESC LIMIT ?
                        """), arguments: [datastoreKey, limit])
        }
    }

    /// See ``ChangeFeedStorage/changeCount(datastoreKey:after:classes:readers:)``.
    public func changeCount(datastoreKey: Int64, after sequence: Int64, classes: Set<String>?, readers: Set<String>?)
        async throws -> Int
    {
        try await pool.read { db in
            let (classFilter, classArguments) = try Self.classFilter(classes)
            var readerFilter = ""
            var readerArguments: [String] = []
            if let readers {
                // Readable now (its set), or once (the readers' history: ended access, a
                // tombstone's readers).
                let (placeholders, arguments) = Self.principalList(readers)
                readerFilter = """
                     AND (o.readers IN (SELECT m.reader_set FROM reader_set_members m WHERE m.principal IN (\(placeholders))) \
                    OR EXISTS (SELECT 1 FROM object_readers r WHERE r.object_key = o.key AND r.principal IN (\(placeholders))))
                    """
                readerArguments = arguments + arguments
            }
            let arguments: [any DatabaseValueConvertible] = [datastoreKey, sequence] + classArguments + readerArguments
            return try Int.fetchOne(
                db,
                sql: "SELECT count(*) FROM objects o WHERE o.datastore_key = ? AND o.sequence > ?\(classFilter)\(readerFilter)",
                arguments: StatementArguments(arguments)) ?? 0
        }
    }

    /// See ``ChangeFeedStorage/lostAccess(datastoreKey:atSequence:formerPrincipals:currentPrincipals:)``.
    public func lostAccess(
        datastoreKey: Int64, atSequence sequence: Int64, formerPrincipals: Set<String>,
        currentPrincipals: Set<String>
    ) async throws -> [Pointer] {
        guard !formerPrincipals.isEmpty else { return [] }
        return try await pool.read { db in
            let (formerTest, currentTest) = (Self.readable(by: formerPrincipals), Self.readable(by: currentPrincipals))
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT o.class_name, o.object_id FROM objects o
                    WHERE o.datastore_key = ? AND o.deleted = 0 AND o.sequence <= ?
                    AND \(formerTest.sql) AND NOT \(currentTest.sql)
                    ORDER BY o.sequence
                    """,
                arguments: StatementArguments([datastoreKey, sequence] + formerTest.arguments + currentTest.arguments))
            return rows.map { Pointer(className: $0["class_name"], objectId: $0["object_id"]) }
        }
    }

    /// See ``ChangeFeedStorage/gainedAccess(datastoreKey:atSequence:formerPrincipals:currentPrincipals:limit:)``.
    public func gainedAccess(
        datastoreKey: Int64, atSequence sequence: Int64, formerPrincipals: Set<String>,
        currentPrincipals: Set<String>, limit: Int
    ) async throws -> [FeedObject] {
        guard !currentPrincipals.isEmpty else { return [] }
        return try await pool.read { db in
            let (currentTest, formerTest) = (Self.readable(by: currentPrincipals), Self.readable(by: formerPrincipals))
            let statement = try db.makeStatement(
                sql: """
                    SELECT \(Self.feedColumns) FROM \(Self.feedFrom)
                    WHERE o.datastore_key = ? AND o.deleted = 0 AND o.sequence <= ?
                    AND \(currentTest.sql) AND NOT \(formerTest.sql)
                    ORDER BY o.sequence LIMIT ?
                    """)
            return try Self.feedObjects(
                statement,
                arguments: StatementArguments(
                    [datastoreKey, sequence] + currentTest.arguments + formerTest.arguments + [Int64(limit)]))
        }
    }

    /// Whether a live object (`o`) is readable now by one of `principals`, never unknown: its
    /// reader set has one of them as a member or, for principals without `*`, the readers its set
    /// does not name have one (current rows of the readers' history, schema v15).
    ///
    /// Access at a checkpoint (``lostAccess(datastoreKey:atSequence:formerPrincipals:currentPrincipals:)``,
    /// ``gainedAccess(datastoreKey:atSequence:formerPrincipals:currentPrincipals:limit:)``) is
    /// asked of live objects unchanged since it, whose readers then are those of now: the ended
    /// access the history keeps ended at or before the object's last change.
    static func readable(by principals: Set<String>) -> (sql: String, arguments: [String]) {
        let (list, arguments) = principalList(principals)
        let sets = "coalesce(o.readers IN (SELECT m.reader_set FROM reader_set_members m WHERE m.principal IN (\(list))), 0)"
        guard !principals.contains("*") else { return ("(\(sets))", arguments) }
        return (
            """
            (\(sets) OR EXISTS (SELECT 1 FROM object_readers r WHERE r.object_key = o.key AND r.to_sequence IS NULL \
            AND r.principal IN (\(list))))
            """, arguments + arguments
        )
    }

    /// The change feed's filter on classes (none when `nil`): one JSON array, so that the
    /// statement's text, and its preparation, is the same whatever the classes (an empty list
    /// matches nothing).
    static func classFilter(_ classes: Set<String>?) throws -> (String, [String]) {
        guard let classes else { return ("", []) }
        return (" AND o.class_name IN (SELECT value FROM json_each(?))", [try DocumentCoding.encode(classes.sorted())])
    }

    /// The SQL and arguments for `IN (...)` over principals (``SQLTextSet``: one `?` each, or one
    /// JSON array for many). No principal is the empty string, so an empty set becomes `IN (?)`
    /// with `""`, which matches nothing.
    static func principalList(_ principals: Set<String>) -> (placeholders: String, arguments: [String]) {
        guard !principals.isEmpty else { return ("?", [""]) }
        let set = SQLTextSet.list(principals, dialect: .sqlite)
        return (set.sql, set.arguments)
    }
}
