import Foundation
import GRDB
import RooftopSQL
import RooftopSQLite
import RooftopShared
import Synchronization

extension SQLiteStorage {
    private static let compiler = SQLQueryCompiler(dialect: .sqlite, layout: .serverSQLite)

    /// See ``ObjectStorage/findStored(_:datastoreKey:readers:limit:)``.
    public func findStored(_ query: Query, datastoreKey: Int64, readers: Set<String>?, limit: Int) async throws
        -> StoredQueryPage
    {
        try await pool.read { db in
            var runner = try Self.runner(db, datastoreKey: datastoreKey, className: query.className, readers: readers)
            runner.pagePlan = pagePlan.withLock { $0 }
            runner.boundedObjects = { [self] select, budget in
                // Overflowing: no bound worth keeping (a walk is then never cheaper anyway).
                let (work, overflow) = budget.multipliedReportingOverflow(by: Self.instructionsPerObject)
                let instructions = overflow ? .max : min(work, .max - Self.instructionsPerPage) + Self.instructionsPerPage
                let objects = try RooftopSQLite.bounded(db, instructions: instructions) { try Self.objects(select, db) }
                pageWalks.withLock { objects == nil ? ($0.abandoned += 1) : ($0.completed += 1) }
                return objects
            }
            let page = try runner.find(query, readers: readers, limit: limit)
            return StoredQueryPage(objects: page.objects, totalCount: page.totalCount)
        }
    }

    /// See ``ObjectStorage/count(_:datastoreKey:readers:)``.
    public func count(_ query: Query, datastoreKey: Int64, readers: Set<String>?) async throws -> Int {
        try await pool.read { db in
            try Self.runner(db, datastoreKey: datastoreKey, className: query.className, readers: readers)
                .count(query, readers: readers)
        }
    }

    /// The shared query runner over one read transaction.
    static func runner(
        _ db: Database, datastoreKey: Int64, className: String, readers: Set<String>?
    ) throws -> SQLQueryRunner<FeedObject> {
        var compiler = compiler
        compiler.readerSets = try readerSets(of: readers, db)
        // The fields with complete rows, read in the query's own transaction: others are read
        // from the stored bodies.
        let queried = try rowFields(of: className, db).queried
        compiler.indexedFields = queried
        // No partition: no object of the class here has rows, and no row has partition 0.
        compiler.valuePartition = try existingPartition(datastoreKey: datastoreKey, className: className, db) ?? 0
        var runner = SQLQueryRunner(
            compiler: compiler, scope: .datastore(datastoreKey),
            unindexedFields: {
                Set(
                    try String.fetchAll(
                        db.cachedStatement(
                            sql: """
                                SELECT field FROM unindexed_fields
                                WHERE datastore_key = ? AND class_name = ? AND objects > 0
                                """),
                        arguments: [datastoreKey, className])
                ).filter { queried?.contains($0) ?? true }
            },
            objects: { select in try objects(select, db) },
            snapshot: { try $0.snapshot() },
            count: { count in try Int.fetchOne(db, sql: count.sql, arguments: arguments(count.arguments)) ?? 0 })
        let readerSets = compiler.readerSets
        runner.everyObjectReadable = {
            try readerSets.map { try everyObjectReadable(by: Set($0), datastoreKey: datastoreKey, className: className, db) }
                ?? false
        }
        runner.scopeSize = {
            // The datastore's live objects, kept by every write (``SQLPagePlan/cheapest``).
            try Int.fetchOne(
                db.cachedStatement(sql: "SELECT record_count FROM datastores WHERE key = ?"), arguments: [datastoreKey]
            ) ?? 0
        }
        return runner
    }

    /// Whether every live object of `className` in the datastore names one of `readerSets` as its
    /// readers (``SQLQueryRunner/everyObjectReadable``): the distinct sets its objects name, read
    /// one index seek each (`objects_by_readers`), the next after the last, up to
    /// ``readableSetsChecked`` of them and one seek more, which finds none unless the class names
    /// more (then: not known, so no). An object readable by
    /// nobody but the server (no set) makes it no.
    static func everyObjectReadable(
        by readerSets: Set<Int64>, datastoreKey: Int64, className: String, _ db: Database
    ) throws -> Bool {
        let unreadable = try Bool.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT EXISTS (SELECT 1 FROM objects WHERE datastore_key = ? AND class_name = ? AND deleted = 0
                    AND readers IS NULL)
                    """),
            arguments: [datastoreKey, className]) ?? true
        guard !unreadable else { return false }
        var last = Int64.min
        // One read past the last set checked: it finds none when the class names no more.
        for checked in 0...readableSetsChecked {
            let next = try Int64.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT min(readers) FROM objects WHERE datastore_key = ? AND class_name = ? AND deleted = 0
                        AND readers > ?
                        """),
                arguments: [datastoreKey, className, last])
            guard let next else { return true }
            guard checked < readableSetsChecked, readerSets.contains(next) else { return false }
            last = next
        }
        return false
    }

    /// The most distinct reader sets a class may name for
    /// ``everyObjectReadable(by:datastoreKey:className:_:)`` to say yes.
    static let readableSetsChecked = 32

    /// The work an order-first page may do per object the matches-first plan would read
    /// (``SQLQueryRunner/boundedObjects``), in SQLite's instructions: what a match read first and
    /// sorted takes (about 22 in `category = ? limit 100` at 100,000 objects, where a walked
    /// object takes about 10 and an entry of a condition's list 5). Each walked object and each
    /// match is one lookup of an object's row, the cost that dominates: a walk that gives up has
    /// done about the work of the other plan, which then reads the page.
    static let instructionsPerObject = 20
    /// The work an order-first page may do whatever its matches.
    static let instructionsPerPage = 10_000

    /// The objects `select` reads (the layout's columns), as stored.
    private static func objects(_ select: SQLFragment, _ db: Database) throws -> [FeedObject] {
        let rows = try Row.fetchCursor(db, sql: select.sql, arguments: arguments(select.arguments))
        var objects: [FeedObject] = []
        while let row = try rows.next() { objects.append(ObjectRow(row).feedObject(current: [], former: [])) }
        return objects
    }

    static func arguments(_ arguments: [SQLArgument]) -> StatementArguments {
        RooftopSQLite.arguments(arguments)
    }
}

extension SQLiteStorage {
    /// The tables of an object's value index rows (fields, and elements of lists and relations):
    /// what a rebuild rewrites, a tombstone drops and ``valueIndexFaults(_:)`` checks.
    static let valueRowTables = ["object_fields", "object_elements"]

    /// The value index rows that break what counts from keys rely on
    /// (``SQLQueryRunner/everyObjectReadable``): each row of `object_fields` and `object_elements`
    /// belongs to a live object, under that object's partition (its datastore and class). Empty
    /// when the index is sound; each fault names a table, an object key, a field and what is
    /// wrong (at most 100 a table). It reads every index row: tests read it after each body run
    /// by their `withStorage` (the conformance suites and most storage tests), between the
    /// batches of rebuilds, and after migrations.
    /// - Throws: What the reads throw.
    static func valueIndexFaults(_ db: Database) throws -> [String] {
        var faults: [String] = []
        for table in valueRowTables {
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT r.object_key, r.field, r.partition, o.key IS NULL AS missing, o.deleted, p.key AS expected
                    FROM \(table) r
                    LEFT JOIN objects o ON o.key = r.object_key
                    LEFT JOIN object_partitions p ON p.datastore_key = o.datastore_key AND p.class_name = o.class_name
                    WHERE o.key IS NULL OR o.deleted != 0 OR p.key IS NULL OR p.key != r.partition
                    LIMIT 100
                    """)
            for row in rows {
                let object: Int64 = row["object_key"]
                let field: String = row["field"]
                let partition: Int64 = row["partition"]
                let what =
                    if row["missing"] as Bool {
                        "no such object"
                    } else if (row["deleted"] as Int64? ?? 0) != 0 {
                        "a deleted object"
                    } else {
                        "partition \(partition), not \((row["expected"] as Int64?).map(String.init) ?? "none")"
                    }
                faults.append("\(table): object \(object), \(field): \(what)")
            }
        }
        return faults
    }

    /// ``valueIndexFaults(_:)`` of this storage's database.
    /// - Throws: What the reads throw.
    func valueIndexFaults() async throws -> [String] {
        try await pool.read { db in try Self.valueIndexFaults(db) }
    }
}
