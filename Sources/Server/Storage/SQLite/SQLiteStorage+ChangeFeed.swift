import GRDB
import RooftopSQL
import RooftopShared

extension SQLiteStorage {
    /// See ``Storage/changes(datastoreKey:after:limit:classes:)``.
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
            return try Self.feedObjects(Row.fetchCursor(db.cachedStatement(sql: sql), arguments: arguments))
        }
    }

    /// See ``Storage/recentChanges(datastoreKey:limit:)``.
    public func recentChanges(datastoreKey: Int64, limit: Int) async throws -> [FeedObject] {
        try await pool.read { db in
            try Self.feedObjects(
                Row.fetchCursor(
                    db,
                    sql: """
                        SELECT \(Self.feedColumns) FROM \(Self.feedFrom) WHERE o.datastore_key = ?
                        ORDER BY o.sequence DESC LIMIT ?
                        """, arguments: [datastoreKey, limit]))
        }
    }

    /// See ``Storage/changeCount(datastoreKey:after:classes:readers:)``.
    public func changeCount(datastoreKey: Int64, after sequence: Int64, classes: Set<String>?, readers: Set<String>?)
        async throws -> Int
    {
        try await pool.read { db in
            let (classFilter, classArguments) = try Self.classFilter(classes)
            var readerFilter = ""
            var readerArguments: [String] = []
            if let readers {
                let (placeholders, arguments) = Self.principalList(readers)
                readerFilter =
                    " AND EXISTS (SELECT 1 FROM object_readers r WHERE r.object_key = o.key AND r.principal IN (\(placeholders)))"
                readerArguments = arguments
            }
            let arguments: [any DatabaseValueConvertible] = [datastoreKey, sequence] + classArguments + readerArguments
            return try Int.fetchOne(
                db,
                sql: "SELECT count(*) FROM objects o WHERE o.datastore_key = ? AND o.sequence > ?\(classFilter)\(readerFilter)",
                arguments: StatementArguments(arguments)) ?? 0
        }
    }

    /// See ``Storage/lostAccess(datastoreKey:atSequence:formerPrincipals:currentPrincipals:)``.
    public func lostAccess(
        datastoreKey: Int64, atSequence sequence: Int64, formerPrincipals: Set<String>,
        currentPrincipals: Set<String>
    ) async throws -> [Pointer] {
        guard !formerPrincipals.isEmpty else { return [] }
        return try await pool.read { db in
            let (former, formerArguments) = Self.principalList(formerPrincipals)
            let (current, currentArguments) = Self.principalList(currentPrincipals)
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT o.class_name, o.object_id FROM objects o
                    WHERE o.datastore_key = ? AND o.deleted = 0 AND o.sequence <= ?
                    AND EXISTS (SELECT 1 FROM object_readers r WHERE r.object_key = o.key
                        AND r.principal IN (\(former)) AND r.from_sequence <= ?
                        AND (r.to_sequence IS NULL OR r.to_sequence > ?))
                    AND NOT EXISTS (SELECT 1 FROM object_readers r WHERE r.object_key = o.key
                        AND r.to_sequence IS NULL AND r.principal IN (\(current)))
                    ORDER BY o.sequence
                    """,
                arguments: StatementArguments(
                    [datastoreKey, sequence] + formerArguments + [sequence, sequence] + currentArguments))
            return rows.map { Pointer(className: $0["class_name"], objectId: $0["object_id"]) }
        }
    }

    /// See ``Storage/gainedAccess(datastoreKey:atSequence:formerPrincipals:currentPrincipals:limit:)``.
    public func gainedAccess(
        datastoreKey: Int64, atSequence sequence: Int64, formerPrincipals: Set<String>,
        currentPrincipals: Set<String>, limit: Int
    ) async throws -> [FeedObject] {
        guard !currentPrincipals.isEmpty else { return [] }
        return try await pool.read { db in
            let (current, currentArguments) = Self.principalList(currentPrincipals)
            let (former, formerArguments) = Self.principalList(formerPrincipals)
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT \(Self.feedColumns) FROM \(Self.feedFrom)
                    WHERE o.datastore_key = ? AND o.deleted = 0 AND o.sequence <= ?
                    AND EXISTS (SELECT 1 FROM object_readers r WHERE r.object_key = o.key
                        AND r.to_sequence IS NULL AND r.principal IN (\(current)))
                    AND NOT EXISTS (SELECT 1 FROM object_readers r WHERE r.object_key = o.key
                        AND r.principal IN (\(former)) AND r.from_sequence <= ?
                        AND (r.to_sequence IS NULL OR r.to_sequence > ?))
                    ORDER BY o.sequence LIMIT ?
                    """,
                arguments: StatementArguments(
                    [datastoreKey, sequence] + currentArguments + formerArguments
                        + [sequence, sequence, Int64(limit)]))
            return try Self.feedObjects(rows)
        }
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
