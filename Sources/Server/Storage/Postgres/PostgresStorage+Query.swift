import PostgresNIO
import RooftopSQL
import RooftopShared

extension PostgresStorage {
    private static let compiler = SQLQueryCompiler(dialect: .postgres, layout: .server)

    /// See ``ObjectStorage/findStored(_:datastoreKey:readers:limit:)``.
    public func findStored(_ query: Query, datastoreKey: Int64, readers: Set<String>?, limit: Int) async throws
        -> StoredQueryPage
    {
        try await readSnapshot { session in
            let page = try Self.runner(session, datastoreKey: datastoreKey, className: query.className, readers: readers)
                .find(query, readers: readers, limit: limit)
            return StoredQueryPage(objects: page.objects, totalCount: page.totalCount)
        }
    }

    /// See ``ObjectStorage/count(_:datastoreKey:readers:)``.
    public func count(_ query: Query, datastoreKey: Int64, readers: Set<String>?) async throws -> Int {
        try await readSnapshot { session in
            try Self.runner(session, datastoreKey: datastoreKey, className: query.className, readers: readers)
                .count(query, readers: readers)
        }
    }

    /// Runs `body`'s reads in one snapshot (a read-only, repeatable-read transaction), each
    /// statement stopped by PostgreSQL past the query timeout (``queryTimeoutMilliseconds``): the
    /// evaluator's candidates may be every object of a class, read while the server tests them.
    func readSnapshot<T: Sendable>(_ body: @escaping @Sendable (PostgresBlockingSession) throws -> T)
        async throws -> T
    {
        let timeout = queryTimeoutMilliseconds
        return try await pool.blockingTransaction(begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") { session in
            // An integer, not bound: `SET` takes no parameters.
            try session.execute(PostgresQuery(unsafeSQL: "SET LOCAL statement_timeout = \(timeout)"))
            return try body(session)
        }
    }

    /// The shared query runner over one session, for a caller who is one of `readers` (all when
    /// `nil`).
    private static func runner(
        _ session: PostgresBlockingSession, datastoreKey: Int64, className: String, readers: Set<String>?
    ) throws -> SQLQueryRunner<FeedObject> {
        var compiler = compiler
        compiler.readerSets = try readerSets(of: readers, session)
        // The fields with complete rows, read in the query's own snapshot: conditions on others
        // are the evaluator's (``SQLQueryCompiler/isUnreadable(_:)``).
        let queried = try rowFields(of: className, session).queried
        compiler.indexedFields = queried
        var runner = SQLQueryRunner(
            compiler: compiler, scope: .datastore(datastoreKey),
            unindexedFields: {
                Set(
                    try session.query(
                        """
                        SELECT field FROM unindexed_fields
                        WHERE datastore_key = \(datastoreKey) AND class_name = \(className) AND objects > 0
                        """
                    ).map { try $0.decode(String.self) }
                ).filter { queried?.contains($0) ?? true }
            },
            objects: { select in try session.query(select).map { try objectRow($0).feedObject(current: [], former: []) } },
            snapshot: { try $0.snapshot() },
            count: { count in Int(try session.query(count).first?.decode(Int64.self) ?? 0) })
        runner.eachObject = { select, body in
            try session.forEachRow(select) { try body(try objectRow($0).feedObject(current: [], former: [])) }
        }
        return runner
    }
}

extension PostgresStorage {
    /// The reader sets that have one of `readers` as a member, for ``SQLQueryCompiler/readerSets``
    /// (see ``SQLiteStorage/readerSets(of:_:)``): `nil` when the caller is not tested by sets
    /// (``SQLQueryCompiler/readerSetReadLimit(for:)``) or is a member of more than
    /// ``SQLQueryCompiler/maxReaderSets``.
    /// - Throws: What the database throws.
    static func readerSets(of readers: Set<String>?, _ session: PostgresBlockingSession) throws -> [Int64]? {
        guard let readers, let limit = SQLQueryCompiler.readerSetReadLimit(for: readers) else { return nil }
        let principals = readers.sorted()
        let rows = try session.query(
            "SELECT reader_set FROM reader_set_members WHERE principal = ANY(\(principals)::text[]) LIMIT \(Int64(limit))"
        ).map { try $0.decode(Int64.self) }
        return SQLQueryCompiler.readerSets(rows)
    }
}
