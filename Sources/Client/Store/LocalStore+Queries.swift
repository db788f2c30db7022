import GRDB
import RooftopSQL
import RooftopSQLite
import RooftopShared

/// Local queries in SQL: the server's compiler (``SQLQueryCompiler``) and query runner over the
/// same index layout, scoped to the account, the datastore and (for `fromPin`) a pin label.
/// Conditions, order, offset, limit and counts run in SQLite; the rows of the page are read as
/// stored texts (``StoredObjectRow``), decoded when their objects are read. Where the index lacks
/// some values (keys past `Value.indexedKeyLimit`) the shared
/// evaluator decides over SQL's candidates, as on the server.
extension LocalStore {
    /// The layout the local store has: pages select the columns ``pageRow(_:)`` reads, by
    /// position (looking each up by name was a tenth of a page's time).
    static let queryLayout = SQLIndexLayout(
        source: "objects o",
        columns: "o.datastore, o.class_name, o.object_id, o.server, o.local, o.local_is_server, o.deleted",
        readers: .sets, valueFlag: "by_value",
        document: "CASE WHEN o.local_is_server = 1 THEN o.server ELSE o.local END")
    /// The compiler for it (SQLite, with the `rooftop_distance` function the store registers).
    static let queryCompiler = SQLQueryCompiler(dialect: .sqlite, layout: queryLayout)

    /// A page of `query`'s matches (its offset and limit, no includes) among the stored objects
    /// of `datastore` (pinned with `label` when given), readable by one of `readers` (all when
    /// `nil`; by the objects' `readable` flags when they are kept for `readers`, see
    /// ``keepReadableFlags(scope:for:)``), leaving out the objects named in `excluded`; and the
    /// total count of matches. The rows are read as stored, not decoded (``StoredObjectRow``).
    /// `keepingFlags` (default `true`): makes the flags those of `readers` first when they are
    /// kept for other principals; `false` leaves them, and the readers are then tested object by
    /// object (tests compare both ways).
    /// - Throws: `cache` when the store cannot be read.
    func find(
        _ query: Query, scope: String, datastore: DatastoreID, pinnedWith label: String?, readers: Set<String>?,
        excluding excluded: [String], keepingFlags: Bool = true
    ) throws(RooftopError) -> (rows: [StoredObjectRow], totalCount: Int) {
        try readFlagged(scope: scope, readers: readers, keeping: keepingFlags) { db, readable, version in
            let tested = readable == nil ? readers : nil
            let parts = try LocalStore.loadParts(scope: scope, datastore: datastore, db)
            guard parts.count > 1 else {
                var runner = try runner(
                    query, scope: scope, datastore: datastore, label: label, excluded: excluded, readers: readers,
                    readable: readable, db)
                // A full page's total counted beside it, in another read of this snapshot.
                if let version, countsAside {
                    runner.countAside = { [self] fragment in countAside(fragment, version: version) }
                }
                let page = try runner.find(query, readers: tested, limit: query.limit ?? Int.max)
                return (page.objects, page.totalCount)
            }
            // A bulk load under way: each part a page from the start to this page's end, merged
            // in the query's order.
            let (end, overflow) = max(query.offset, 0).addingReportingOverflow(query.limit ?? Int.max)
            var window = query
            window.offset = 0
            window.limit = query.limit == nil || overflow ? nil : end
            var pages: [[StoredObjectRow]] = []
            var total = 0
            for part in parts {
                let runner = try runner(
                    query, scope: scope, datastore: datastore, label: label, excluded: excluded, readers: readers,
                    readable: readable, part: part, db)
                let page = try runner.find(window, readers: tested, limit: window.limit ?? Int.max)
                pages.append(page.objects)
                total = total.addingReportingOverflow(page.totalCount).partialValue
            }
            return (try LocalStore.merged(pages, query), total)
        }
    }

    /// The parts of a datastore a query reads one after the other: all of it (`nil`), or under a
    /// bulk load (``BulkLoading``) the objects with entries and those without.
    private static func loadParts(scope: String, datastore: DatastoreID, _ db: Database) throws -> [LoadPart?] {
        guard let bound = try bulkBound(scope: scope, datastore: datastore, db) else { return [nil] }
        return [.built(below: bound), .unbuilt(from: bound)]
    }

    /// Which objects of a datastore under a bulk load (``BulkLoading``) a runner reads: those
    /// whose entries are built (row keys below the load's bound), or the others, read without
    /// the declared indexes.
    private enum LoadPart {
        case built(below: Int64)
        case unbuilt(from: Int64)
    }

    /// The page of `query` (its offset and limit) among `parts`, the pages of its parts from their
    /// start, each in the query's order: ordered again by the shared evaluator (by the query's
    /// keys, or its `near` anchor's distance, then by object ID), then its offset and limit.
    /// - Throws: `cache` for a stored object that cannot be decoded.
    private static func merged(_ parts: [[StoredObjectRow]], _ query: Query) throws -> [StoredObjectRow] {
        let found = parts.filter { !$0.isEmpty }
        guard found.count > 1 else {
            // One part's page, already in order.
            let rows = found.first ?? []
            let start = min(max(query.offset, 0), rows.count)
            return Array(rows[start...].prefix(max(query.limit ?? Int.max, 0)))
        }
        let rows = found.flatMap { $0 }
        var ordering = query
        ordering.includes = []
        // The matches are known: only their order is worked out (a distance's needs its anchor).
        ordering.predicate = nil
        if query.order.isEmpty, let anchor = QueryEvaluator.distanceAnchor(query.predicate) {
            ordering.predicate = .near(field: anchor.field, point: anchor.point, maxDistanceMeters: nil)
        }
        // By the IDs' bytes: two IDs Swift holds equal (canonically equivalent) are two objects.
        var byId: [[UInt8]: StoredObjectRow] = [:]
        byId.reserveCapacity(rows.count)
        var snapshots: [ObjectSnapshot] = []
        snapshots.reserveCapacity(rows.count)
        for row in rows {
            guard let snapshot = try row.localSnapshot() else {
                throw RooftopError(.cache, "the stored object \(row.key) has no local view")
            }
            byId[Array(snapshot.objectId.utf8)] = row
            snapshots.append(snapshot)
        }
        let page = QueryEvaluator.run(ordering, over: snapshots, lookup: { _ in nil }, canRead: { _ in true })
        return page.objects.compactMap { byId[Array($0.objectId.utf8)] }
    }

    /// How many stored objects match `query`'s predicate, as ``find(_:scope:datastore:pinnedWith:readers:excluding:keepingFlags:)``
    /// counts them, without reading any (from the index, unless some values are not indexed; a
    /// whole class from the counts the store keeps, `class_counts`). `keepingFlags` as for
    /// ``find(_:scope:datastore:pinnedWith:readers:excluding:keepingFlags:)``.
    /// - Throws: `cache` when the store cannot be read.
    func count(
        _ query: Query, scope: String, datastore: DatastoreID, pinnedWith label: String?, readers: Set<String>?,
        excluding excluded: [String], keepingFlags: Bool = true
    ) throws(RooftopError) -> Int {
        try readFlagged(scope: scope, readers: readers, keeping: keepingFlags, versioned: false) { db, readable, _ in
            // The whole class, by everyone or by the readers the flags are kept for: its kept count.
            if query.predicate == nil, label == nil, excluded.isEmpty, readers == nil || readable != nil {
                return try Int.fetchOne(
                    db.cachedStatement(
                        sql: "SELECT \(readers == nil ? "live" : "readable") FROM class_counts"
                            + " WHERE scope = ? AND datastore = ? AND class_name = ?"),
                    arguments: [scope, datastore.rawValue, query.className]) ?? 0
            }
            var total = 0
            for part in try LocalStore.loadParts(scope: scope, datastore: datastore, db) {
                let counted = try runner(
                    query, scope: scope, datastore: datastore, label: label, excluded: excluded, readers: readers,
                    readable: readable, part: part, db
                )
                .count(query, readers: readable == nil ? readers : nil)
                total = total.addingReportingOverflow(counted).partialValue
            }
            return total
        }
    }

    /// Runs `body` in a read with the condition on the `readable` flags when they are kept for
    /// `readers` (``readableCondition(scope:readers:_:)``). When they are kept for other
    /// principals (the user's roles changed, or no query ran yet), they are made those of
    /// `readers` first (``keepReadableFlags(scope:for:)``, a write) and `body` runs in a new
    /// read; `body` without the condition tests readers object by object, so an answer is right
    /// either way. Reading the kept principals in the query's own read spares every query a
    /// read of its own.
    /// `versioned` (default `true`): `body` is also given the number of commits its read's
    /// snapshot holds, when known (``versionedRead(_:)``; a page's count beside it needs it, a
    /// count alone does not).
    /// - Throws: `cache` when the store cannot be read or written; what `body` throws.
    private func readFlagged<T>(
        scope: String, readers: Set<String>?, keeping: Bool, versioned: Bool = true,
        _ body: (Database, SQLFragment?, Int?) throws -> T
    ) throws(RooftopError) -> T {
        func reading<R>(_ run: (Database, Int?) throws -> R) throws(RooftopError) -> R {
            if versioned { return try versionedRead(run) }
            return try read { db in try run(db, nil) }
        }
        // `nil` until the first read answers (an optional `T` answers `.some(nil)`).
        var answer: T?
        try reading { db, version in
            let readable = try LocalStore.readableCondition(scope: scope, readers: readers, db)
            // Flags kept for other principals: made right first, then read again.
            guard readers == nil || readable != nil || !keeping else { return }
            answer = try body(db, readable, version)
        }
        if let answer { return answer }
        if let readers { try keepReadableFlags(scope: scope, for: readers) }
        return try reading { db, version in
            try body(db, try LocalStore.readableCondition(scope: scope, readers: readers, db), version)
        }
    }

    /// The shared runner over the local store, in one read; its rows are read as stored, and
    /// decoded only where the shared evaluator decides.
    ///
    /// `part`: under a bulk load, which of the datastore's objects it reads (``LoadPart``): those
    /// without entries are read with no declared index, their conditions and orders from their
    /// documents, or their value rows.
    private func runner(
        _ query: Query, scope: String, datastore: DatastoreID, label: String?, excluded: [String],
        readers: Set<String>?, readable: SQLFragment?, part: LoadPart? = nil, _ db: Database
    ) throws -> SQLQueryRunner<StoredObjectRow> {
        var keys = SQLFragment()
        switch part {
        case .built(let bound): keys = SQLFragment(" AND o.key < ?", [.integer(bound)])
        case .unbuilt(let bound): keys = SQLFragment(" AND o.key >= ?", [.integer(bound)])
        case nil: break
        }
        var runner = SQLQueryRunner(
            compiler: LocalStore.queryCompiler,
            scope: LocalStore.queryScope(scope: scope, datastore: datastore, label: label, excluded: excluded)
                + keys + (readable ?? SQLFragment()),
            unindexedFields: {
                // Only the fields whose keys the query uses matter; each is looked up in the
                // partial index of incomplete rows (empty for fields that always fit). Named: left
                // to itself, the planner walks every object of the class instead.
                let incomplete = try db.cachedStatement(
                    sql: """
                        SELECT EXISTS (
                            SELECT 1 FROM object_fields f INDEXED BY object_fields_incomplete
                            JOIN objects o ON o.key = f.object_key
                            WHERE f.complete = 0 AND f.field = ? AND o.scope = ? AND o.datastore = ? AND o.class_name = ?)
                        """)
                return try SQLQueryCompiler.keyedFields(of: query).filter { field in
                    try Bool.fetchOne(incomplete, arguments: [field, scope, datastore.rawValue, query.className]) ?? false
                }
            },
            objects: { [queryStatements] fragment in
                // Read through a cursor: each row is read where it stands (copying every row,
                // with its column names, first was a tenth of a page's time).
                let rows = try Row.fetchCursor(
                    queryStatements.statement(fragment.sql, db), arguments: RooftopSQLite.arguments(fragment.arguments))
                var objects: [StoredObjectRow] = []
                while let row = try rows.next() {
                    let object = try LocalStore.pageRow(row)
                    if object.localText != nil { objects.append(object) }
                }
                return objects
            },
            snapshot: { row in
                guard let snapshot = try row.localSnapshot() else {
                    throw RooftopError(.cache, "the stored object \(row.key) has no local view")
                }
                return snapshot
            },
            count: { [queryStatements] fragment in
                try Int.fetchOne(
                    queryStatements.statement(fragment.sql, db), arguments: RooftopSQLite.arguments(fragment.arguments)) ?? 0
            })
        let declared = try LocalStore.declaredIndexing(
            scope: scope, datastore: datastore, className: query.className, db)
        if case .unbuilt = part {
            // No entries: the fields that lead an index (whose rows are out of the value index)
            // are read from the documents; the other declared fields from the value index.
            runner.compiler.indexedFields = declared.valueIndexed.map { $0.subtracting(declared.leading) }
            return runner
        }
        // Each index, and its element entries for `contains` of a list that leads it.
        runner.indexes = declared.indexes + declared.indexes.map(\.elementEntries)
        runner.compiler.indexedFields = declared.valueIndexed
        // The fields whose values the entries of the index they lead find (``StoreTransaction/ValueFlags``).
        for field in declared.leading {
            runner.compiler.entryKeyed[field] = .some(declared.indexes.first { $0.fields.first == field }?.partition)
        }
        // A partition's entries are the datastore's live objects of the class, with their
        // readable flags: a count needs nothing else unless it is narrowed to a pin's objects or
        // tests readers without the flags. The objects left out (few: those with unsaved
        // changes) are looked up once.
        if !runner.indexes.isEmpty, label == nil, readable != nil || readers == nil {
            // When every live object of the class is flagged readable (as after most syncs: a
            // pull brings what the user may read), the flag tests nothing: counts read the
            // entries' keys alone (reading each entry's flag too took a third of the time of a
            // count of 10,000 matches). Pages still test it.
            let allReadable = try readable != nil && LocalStore.everyObjectReadable(
                scope: scope, datastore: datastore, className: query.className, db)
            var entries = SQLIndexEntries(readableOnly: readable != nil, keyCounts: true, allReadable: allReadable)
            if !excluded.isEmpty {
                let set = SQLTextSet.list(Set(excluded), dialect: .sqlite)
                entries.excluded = SQLFragment(
                    "SELECT key FROM objects WHERE scope = ? AND datastore = ? AND class_name = ? AND object_id IN (\(set.sql))",
                    [.text(scope), .text(datastore.rawValue), .text(query.className)] + set.arguments.map { .text($0) })
            }
            runner.entries = entries
        }
        return runner
    }

    /// Whether every live object of `className` in a scope's datastore is flagged readable by
    /// the kept readers (``keepReadableFlags(scope:for:)``), by the counts the store keeps with
    /// them (`class_counts`, in the same read). `false` for a class with no live object.
    /// - Throws: the database's error.
    static func everyObjectReadable(scope: String, datastore: DatastoreID, className: String, _ db: Database) throws
        -> Bool
    {
        try Bool.fetchOne(
            db.cachedStatement(
                sql: "SELECT live > 0 AND live = readable FROM class_counts WHERE scope = ? AND datastore = ? AND class_name = ?"
            ),
            arguments: [scope, datastore.rawValue, className]) ?? false
    }

    /// What the kept counts and copies say that the rows do not (``SyncEngine/storeInconsistencies()``):
    /// each class's `class_counts` against its objects (live, and live and flagged readable), and
    /// each index entry against its object (live, the same readable flag). Queries trust both:
    /// counts of a whole class and of entries read the counts, and counts of entries skip the
    /// flag when the class's counts say every object is readable.
    /// - Throws: `cache` when the store cannot be read.
    func inconsistencies() throws(RooftopError) -> [String] {
        try read { db in
            let counts = try Row.fetchAll(
                db,
                sql: """
                    WITH rows AS (
                        SELECT scope, datastore, class_name, sum(deleted = 0) AS live,
                            sum(deleted = 0 AND readable = 1) AS readable
                        FROM objects GROUP BY scope, datastore, class_name)
                    SELECT r.scope, r.datastore, r.class_name, r.live, r.readable, k.live, k.readable
                    FROM rows r LEFT JOIN class_counts k
                        ON k.scope = r.scope AND k.datastore = r.datastore AND k.class_name = r.class_name
                    WHERE coalesce(k.live, 0) != r.live OR coalesce(k.readable, 0) != r.readable
                    UNION ALL
                    SELECT k.scope, k.datastore, k.class_name, 0, 0, k.live, k.readable FROM class_counts k
                    WHERE (k.live != 0 OR k.readable != 0) AND NOT EXISTS (
                        SELECT 1 FROM objects o
                        WHERE o.scope = k.scope AND o.datastore = k.datastore AND o.class_name = k.class_name)
                    """)
            var found = counts.map { row in
                "class \(row[2] as String) in \(row[1] as String) (scope '\(row[0] as String)'): "
                    + "\(row[3] as Int64) live and \(row[4] as Int64) readable objects, "
                    + "counted \(row[5] as Int64? ?? 0) and \(row[6] as Int64? ?? 0)"
            }
            let entries = try Row.fetchAll(
                db,
                sql: """
                    SELECT c.partition, c.object_key, c.readable, o.deleted, o.readable
                    FROM index_entries c LEFT JOIN objects o ON o.key = c.object_key
                    WHERE o.key IS NULL OR o.deleted != 0 OR o.readable != c.readable
                    LIMIT 20
                    """)
            found += entries.map { row in
                "entry of object \(row[1] as Int64) in partition \(row[0] as Int64), flagged \(row[2] as Int64): "
                    + (row[3] as Int64? == nil
                        ? "no such object"
                        : "object deleted \(row[3] as Int64), flagged \(row[4] as Int64)")
            }
            return found
        }
    }

    /// The condition on `objects o` of a local query's scope.
    private static func queryScope(scope: String, datastore: DatastoreID, label: String?, excluded: [String])
        -> SQLFragment
    {
        var fragment = SQLFragment("o.scope = ? AND o.datastore = ?", [.text(scope), .text(datastore.rawValue)])
        if let label {
            let pinned = StoreTransaction.pinned(with: label)
            fragment = fragment + SQLFragment(" AND " + pinned.sql, pinned.arguments.map { .text($0) })
        }
        if !excluded.isEmpty {
            let set = SQLTextSet.list(Set(excluded), dialect: .sqlite)
            fragment = fragment + SQLFragment(" AND o.object_id NOT IN (\(set.sql))", set.arguments.map { .text($0) })
        }
        return fragment
    }

    /// A row of a page, its columns in ``queryLayout``'s order, not decoded.
    /// - Throws: `cache` for an invalid datastore ID.
    private static func pageRow(_ row: Row) throws -> StoredObjectRow {
        guard let datastore = try? DatastoreID(row[0] as String) else {
            throw RooftopError(.cache, "a stored object has an invalid datastore ID")
        }
        let form = try StoredForm(stored: row[5])
        return StoredObjectRow(
            key: ObjectKey(datastore: datastore, className: row[1], objectId: row[2]), server: row[3],
            local: form == .localIsServer ? nil : row[4], form: form, deleted: (row[6] as Int64) != 0)
    }
}
