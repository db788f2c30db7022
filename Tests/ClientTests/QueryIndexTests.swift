import Foundation
import GRDB
import RooftopSQL
import RooftopSQLite
import RooftopShared
import Synchronization
import Testing

@_spi(Testing) @testable import Rooftop
import RooftopTestSupport

/// Local queries run in SQL over the local index (the server's layout and compiler), with live
/// objects' unsaved changes merged in: every local query must answer exactly what the shared
/// evaluator answers over all objects as they read now, page and total count.
/// Serialized: each test holds a thread with synchronous SQLite work for seconds, and the
/// suites running beside it need the other one (their waits have real deadlines).
@Suite("Local queries in SQL", .serialized, .timeLimit(.minutes(5)))
struct QueryIndexTests {
    /// Seeds 4 to 6 declare compound indexes: some before the objects are stored (kept by each
    /// write), some after (built from what is stored), one dropped half-way; their entries must
    /// stay what the field index holds. Seed 6 names only `a` and `b`, then only `c`: conditions on
    /// and orders by the other fields read each object's document (the store keeps no rows of
    /// them). Seeds 7 and 8 load the datastore in bulk (``LocalStore/BulkLoading``): from before
    /// the first object (7) or half-way through them (8); passes build the entries of what was
    /// stored since at rounds 30 and 90, and the load ends at round 130 (7) or 110 (8), after a
    /// declaration changed.
    @Test("random local queries over random objects answer as the evaluator over every object", arguments: 1...8)
    func differential(seed: UInt64) async throws {
        var random = SeededGenerator(seed: seed)
        // Seeds 2 and 5 store in a file: its reads run on several connections, and a full
        // page's total is counted beside it (``LocalStore/countAside(_:version:)``).
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("differential-\(UUID().uuidString).sqlite").path
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        let (client, _) = try offlineClient(storage: [2, 5].contains(seed) ? .file(path: path) : .inMemory)
        let declares = seed > 3
        let narrow = seed == 6
        let bulk = seed >= 7
        let store = client.core.store
        // Each full page takes its count beside it, whichever thread runs first.
        store.countsAsidePatiently.store(true, ordering: .relaxed)
        if declares { try store.declareIndexes([["a", "b"]], of: "Thing") }
        // Objects are stored offline: queued, with their local views indexed. Their ACLs vary,
        // and alice's roles change half-way: readable flags are kept, then computed again.
        try client.signInLocally("alice", roles: ["Staff"])
        let scope = client.core.scope
        // A load begins in a datastore holding fewer than a pass's objects; then every object waits for one.
        store.bulkLoading.withLock { settings in
            settings.thresholds.passSize = 1_000
            settings.thresholds.growth = 0
        }
        func beginLoad() async throws {
            #expect(try await store.beginBulkLoad(scope: scope, datastore: .app))
            store.bulkLoading.withLock { $0.thresholds.passSize = 1 }
        }
        if seed == 7 { try await beginLoad() }
        var staff = ACL()
        staff.setReadAccess(true, for: .role("Staff"))
        var everyone = ACL()
        everyone.setReadAccess(true, for: .everyone)
        let acls: [ACL?] = [nil, everyone, ACL.only("alice"), ACL.only("bob"), staff]
        var objects: [RooftopObject] = []
        for index in 0..<120 {
            if seed == 8, index == 60 { try await beginLoad() }
            let object = client.object("Thing", id: "t\(index)")
            for field in ["a", "b", "c"] where random.next() % 5 != 0 {
                // With declared indexes, keys that all fit: queries run in SQL, by the indexes.
                // Seed 6 keeps no rows of `c` at first: its values may be of any length, each
                // read whole from the object's document.
                object[field] = random.value(indexable: declares && !(narrow && field == "c"))
            }
            // An object without a field would not be saved at all.
            if object.snapshot.fields.isEmpty { object["b"] = .int(1) }
            if let acl = acls[Int(random.next() % UInt64(acls.count))] { object.acl = acl }
            try await object.saveEventually()
            objects.append(object)
        }
        // Unsaved changes the index cannot know about: queries see them.
        for object in objects where random.next() % 6 == 0 {
            object["a"] = random.value(indexable: declares)
        }
        // Deleted and re-stored objects leave no stale index rows.
        for object in objects.prefix(10) where random.next() % 2 == 0 {
            try await object.deleteEventually()
        }

        if declares && !narrow {
            try store.declareIndexes([["a", "b"], ["b"], ["c", "a"], ["a", "c", "b"]], of: "Thing")
            // Seed 7's objects are all waiting for a pass: none has entries.
            try expectEntriesCurrent(store, "after declaring", written: seed != 7)
        }
        if declares { try expectValueFlagsCurrent(store, "after declaring") }

        let orders: [[QueryOrder]] = [
            [QueryOrder("objectId")], [QueryOrder("a")], [QueryOrder("b", descending: true)],
            [QueryOrder("c"), QueryOrder("a", descending: true)], [], [QueryOrder("c"), QueryOrder("b")],
        ]
        if bulk {
            let unbuilt = try store.read { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM objects o JOIN bulk_loads b ON o.key >= b.built_to") ?? 0
            }
            #expect(unbuilt > 0, "objects are stored without their entries")
        }
        for round in 0..<150 {
            if bulk, round == 60 {
                // Stored during the load, after the first pass: the next one builds theirs.
                for index in 120..<130 {
                    let object = client.object("Thing", id: "t\(index)")
                    object["a"] = random.value(indexable: true)
                    object["b"] = random.value(indexable: true)
                    try await object.saveEventually()
                    objects.append(object)
                }
            }
            if bulk, [30, 90].contains(round) {
                #expect(try await store.buildBulkEntries(scope: scope, datastore: .app, finishing: false))
                try expectEntriesCurrent(store, "after a pass at round \(round)")
            }
            if bulk, round == (seed == 7 ? 130 : 110) {
                #expect(try await store.buildBulkEntries(scope: scope, datastore: .app, finishing: true))
                #expect(try store.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM bulk_loads") } == 0)
                try expectEntriesCurrent(store, "after the load at round \(round)")
            }
            if declares, round == 120 {
                // No unsaved changes left: counts read the index entries alone.
                for object in objects where !object.isDeleted { try await object.saveEventually() }
            }
            if declares, round == 100 {
                try store.declareIndexes(narrow ? [["c"]] : [["a", "b"], ["c", "a"], ["a", "c", "b"]], of: "Thing")
                try expectEntriesCurrent(store, "after dropping an index")
                try expectValueFlagsCurrent(store, "after dropping an index")
            }
            if round == 40 {
                // Written while the flags are kept: each write sets its object's flag.
                for object in objects where !object.isDeleted && random.next() % 3 == 0 {
                    if let acl = acls[Int(random.next() % UInt64(acls.count))] { object.acl = acl } else { object.acl = nil }
                    try await object.saveEventually()
                }
            }
            if round == 75 { try client.core.updateUser(UserInfo(objectId: "alice", username: "alice", roles: [])) }
            let context = client.core.accessContext
            let predicate = random.predicate()
            var query = Query(className: "Thing", predicate: predicate, order: orders[Int(random.next() % 6)])
            query.offset = Int(random.next() % 4)
            query.limit = random.next() % 3 == 0 ? nil : Int(random.next() % 20)
            let local = try await client.query(query).fromLocalDatastore().find()
            let states = objects.filter { !$0.isDeleted }.map(\.snapshot)
            let expected = QueryEvaluator.run(
                query, over: states, lookup: { _ in nil }, canRead: { ACL.allowsRead($0.acl, for: context) })
            #expect(
                local.objects.map(\.objectId) == expected.objects.map(\.objectId),
                "round \(round): \(predicate) order \(query.order) offset \(query.offset) limit \(String(describing: query.limit))")
            #expect(local.totalCount == expected.totalCount)
            #expect(try await client.query(query).fromLocalDatastore().count() == expected.totalCount)
        }
        if declares {
            try expectEntriesCurrent(store, "at the end")
            try expectValueFlagsCurrent(store, "at the end")
        }
        // (Seed 2 declares no index: its values may be too long to be keyed, and the shared
        // evaluator counts as it reads the candidates.)
        if seed == 5 { #expect(store.countedAside.load(ordering: .relaxed) > 0) }
        await client.shutdown()
    }

    /// Rows are kept exactly of the fields in the value indexes (a class that declares no index:
    /// every field; else the fields its indexes name), all with the value flag; the other fields
    /// of the objects are read from their documents.
    private func expectValueFlagsCurrent(_ store: LocalStore, _ moment: String) throws {
        let (wrong, missing, valueIndexed, byDocument) = try store.read { db in
            var wrong = 0
            let named = """
                (NOT EXISTS (SELECT 1 FROM class_indexes d WHERE d.class_name = o.class_name)
                    OR EXISTS (SELECT 1 FROM class_indexes d WHERE d.class_name = o.class_name
                        AND n.field IN (d.field1, d.field2, d.field3, d.field4)))
                """
            // A field's rows are in the value index (`by_value`), but for the rows of a field that
            // leads a declared index, whose entries and element entries find its values.
            let leads = "EXISTS (SELECT 1 FROM class_indexes d WHERE d.class_name = o.class_name AND d.field1 = n.field)"
            for table in ["object_fields", "object_elements"] {
                wrong += try Int.fetchOne(
                    db,
                    sql: """
                        SELECT count(*) FROM \(table) n JOIN objects o ON o.key = n.object_key
                        WHERE n.by_value != (NOT \(leads)) OR NOT \(named)
                        """) ?? -1
            }
            // The fields of the live objects' documents, with whether each has its row.
            let fields = """
                SELECT o.key, o.class_name, n.value AS field,
                    EXISTS (SELECT 1 FROM object_fields f WHERE f.object_key = o.key AND f.field = n.value) AS kept
                FROM objects o, json_each('["a","b","c","objectId"]') n
                WHERE o.deleted = 0 AND rooftop_field(\(LocalStore.queryLayout.document ?? ""), n.value, 'kind') IS NOT NULL
                """
            let counts = try Row.fetchOne(
                db,
                sql: """
                    SELECT coalesce(sum(NOT n.kept AND \(named)), -1), coalesce(sum(n.kept), 0), coalesce(sum(NOT n.kept), 0)
                    FROM (\(fields)) n JOIN objects o ON o.key = n.key
                    """)
            return (wrong, counts?[0] as Int? ?? -1, counts?[1] as Int? ?? 0, counts?[2] as Int? ?? 0)
        }
        #expect(wrong == 0, "\(moment): only value-indexed fields have rows, all flagged")
        #expect(missing == 0, "\(moment): every value-indexed field has its row")
        #expect(valueIndexed > 0 && byDocument > 0, "\(moment): some fields have rows, some are read from documents")
    }

    /// The declared indexes' entries are those computed again from the field index and flags, but
    /// for the objects a bulk load has not built yet.
    private func expectEntriesCurrent(_ store: LocalStore, _ moment: String, written: Bool = true) throws {
        let built =
            "NOT EXISTS (SELECT 1 FROM bulk_loads b WHERE b.scope = o.scope AND b.datastore = o.datastore AND o.key >= b.built_to)"
        let (kept, computed) = try store.read { db in
            let key = { (field: String) in
                "coalesce((SELECT f.sort_key FROM object_fields f WHERE f.object_key = o.key AND f.field = d.\(field)), X'')"
            }
            return (
                try Row.fetchAll(
                    db, sql: "SELECT partition, hex(k1), hex(k2), hex(k3), hex(k4), object_key, readable FROM index_entries ORDER BY 1, 6, 2"
                ).map { $0.databaseValues.map(\.description).joined(separator: " ") },
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT p.id, hex(\(key("field1"))), hex(\(key("field2"))), hex(\(key("field3"))), hex(\(key("field4"))),
                            o.key, o.readable
                        FROM objects o JOIN class_indexes d ON d.class_name = o.class_name
                        JOIN index_partitions p ON p.class_index = d.id AND p.scope = o.scope AND p.datastore = o.datastore
                        WHERE o.deleted = 0 AND \(built)
                        UNION ALL
                        SELECT -p.id, hex(e.element_key), hex(\(key("field2"))), hex(\(key("field3"))), hex(\(key("field4"))),
                            o.key, o.readable
                        FROM objects o JOIN class_indexes d ON d.class_name = o.class_name
                        JOIN index_partitions p ON p.class_index = d.id AND p.scope = o.scope AND p.datastore = o.datastore
                        JOIN object_elements e ON e.object_key = o.key AND e.field = d.field1
                        WHERE o.deleted = 0 AND \(built) ORDER BY 1, 6, 2
                        """
                ).map { $0.databaseValues.map(\.description).joined(separator: " ") }
            )
        }
        #expect(kept.isEmpty != written, "\(moment): entries were written, or none")
        #expect(kept == computed, "\(moment)")
        try expectKeyCountsCurrent(store, moment)
    }

    @Test("a class's count comes from the counts the store keeps, which follow writes, deletions, roles and uncaching")
    func classCounts() async throws {
        var random = SeededGenerator(seed: 7)
        let (client, _) = try offlineClient()
        var objects: [RooftopObject] = []
        // Before signing in: objects of the local scope, adopted by alice's at sign-in.
        for index in 0..<5 {
            let object = client.object("Thing", id: "early\(index)")
            object["a"] = .int(Int64(index))
            try await object.saveEventually()
            objects.append(object)
        }
        try client.signInLocally("alice", roles: ["Staff"])
        var staff = ACL()
        staff.setReadAccess(true, for: .role("Staff"))
        let acls: [ACL?] = [nil, ACL.only("alice"), ACL.only("bob"), staff]
        for index in 0..<60 {
            let object = client.object(index % 4 == 0 ? "Other" : "Thing", id: "t\(index)")
            object["a"] = .int(Int64(index))
            if let acl = acls[Int(random.next() % UInt64(acls.count))] { object.acl = acl }
            try await object.saveEventually()
            objects.append(object)
        }
        func check(_ moment: String) async throws {
            let context = client.core.accessContext
            for className in ["Thing", "Other"] {
                let states = objects.filter { !$0.isDeleted && $0.className == className }.map(\.snapshot)
                let expected = QueryEvaluator.run(
                    Query(className: className), over: states, lookup: { _ in nil },
                    canRead: { ACL.allowsRead($0.acl, for: context) })
                #expect(
                    try await client.query(className).fromLocalDatastore().count() == expected.totalCount,
                    "\(className) \(moment)")
            }
            // The kept counts are what the rows hold, for every scope and class.
            let (kept, rows) = try client.core.store.read { db in
                (
                    try Row.fetchAll(
                        db,
                        sql: "SELECT scope, datastore, class_name, live, readable FROM class_counts WHERE live != 0 OR readable != 0 ORDER BY 1, 2, 3"
                    ).map { "\($0)" },
                    try Row.fetchAll(
                        db,
                        sql: """
                            SELECT scope, datastore, class_name, sum(deleted = 0) AS live, sum(deleted = 0 AND readable = 1) AS readable
                            FROM objects GROUP BY 1, 2, 3 HAVING live != 0 OR readable != 0 ORDER BY 1, 2, 3
                            """
                    ).map { "\($0)" }
                )
            }
            #expect(kept == rows, "\(moment)")
        }
        try await check("after saves")
        for object in objects where random.next() % 4 == 0 { try await object.deleteEventually() }
        try await check("after deletions")
        for object in objects where !object.isDeleted && random.next() % 3 == 0 {
            object.acl = acls[Int(random.next() % UInt64(acls.count))]
            try await object.saveEventually()
        }
        try await check("after ACL changes")
        try client.core.updateUser(UserInfo(objectId: "alice", username: "alice", roles: []))
        try await check("after a role is lost")
        try client.datastores.uncache(.app)
        objects.removeAll()
        try await check("after uncaching")
        await client.shutdown()
    }

    @Test("a count of an index's range reads the entries' readable flags only while some object of the class is unreadable, through saves and role changes")
    func rangeCountsSkipFlagsWhenAllReadable() async throws {
        let (client, _) = try offlineClient()
        try client.core.store.declareIndexes([["score"]], of: "Thing")
        try client.signInLocally("alice")
        var objects: [RooftopObject] = []
        for index in 0..<40 {
            let object = client.object("Thing", id: "t\(index)")
            object["score"] = .int(Int64(index))
            object.acl = index % 2 == 0 ? ACL.publicReadWrite : ACL.only("alice")
            try await object.saveEventually()
            objects.append(object)
        }
        let range = Field("score") >= 10 && Field("score") < 30
        func count() async throws -> Int { try await client.query("Thing").where(range).fromLocalDatastore().count() }
        func countTexts() -> [String] {
            client.core.store.queryStatements.givenTexts.filter {
                $0.hasPrefix("SELECT (SELECT count(*) FROM index_entries c")
            }
        }
        // Every object readable by alice: the entries' keys alone, no flag.
        #expect(try await count() == 20)
        #expect(!countTexts().isEmpty && countTexts().allSatisfy { !$0.contains("c.readable") }, "\(countTexts())")
        // One made unreadable: the flags count, and the count follows.
        objects[15].acl = ACL.only("bob")
        try await objects[15].saveEventually()
        let evaluated = QueryEvaluator.run(
            Query(className: "Thing", predicate: range), over: objects.map(\.snapshot), lookup: { _ in nil },
            canRead: { ACL.allowsRead($0.acl, for: client.core.accessContext) }
        ).totalCount
        #expect(evaluated == 19)
        #expect(try await count() == evaluated)
        #expect(countTexts().contains { $0.contains("c.readable = 1") }, "\(countTexts())")
        // Readable again: every object counted.
        objects[15].acl = ACL.publicReadWrite
        try await objects[15].saveEventually()
        #expect(try await count() == 20)
        // Readable through a role alice does not hold, then does: the flags are kept again for
        // her new principals, and the count follows both ways.
        var staff = ACL()
        staff.setReadAccess(true, for: .role("Staff"))
        objects[16].acl = staff
        try await objects[16].saveEventually()
        #expect(try await count() == 19)
        try client.core.updateUser(UserInfo(objectId: "alice", username: "alice", roles: ["Staff"]))
        #expect(try await count() == 20)
        try client.core.updateUser(UserInfo(objectId: "alice", username: "alice", roles: []))
        #expect(try await count() == 19)
        // What this trusts, as the convergence harness checks it after every run: the kept counts
        // and the entries' flags agree with the objects' rows, and the check tells when not.
        let store = client.core.store
        let before = try store.inconsistencies()
        #expect(before.isEmpty, "\(before)")
        let scope = client.core.identity.scope
        try store.write(scope: scope) { transaction in
            try transaction.db.execute(sql: "UPDATE class_counts SET readable = readable + 1 WHERE class_name = 'Thing'")
        }
        #expect(try store.inconsistencies().count == 1)
        try store.write(scope: scope) { transaction in
            try transaction.db.execute(
                sql: """
                    UPDATE class_counts SET readable = readable - 1 WHERE class_name = 'Thing';
                    UPDATE index_entries SET readable = 1 - readable
                    WHERE object_key = (SELECT key FROM objects WHERE object_id = 't16');
                    """)
        }
        #expect(try store.inconsistencies().map { $0.contains("object deleted 0, flagged") } == [true])
        await client.shutdown()
    }

    /// Pages of an `in` (or an `or` of `=`) of an index's first field, ordered by its second,
    /// read the entries alone when they are exact: every arm's first entries, ties included, and
    /// only the union's first are looked up. Scores tie often, some objects lack one, some are
    /// unreadable, and some have unsaved changes (left out of the entries, merged in Swift).
    @Test("pages of several keys of a compound index read its entries alone and answer as the evaluator")
    func entryArms() async throws {
        var random = SeededGenerator(seed: 41)
        let (client, _) = try offlineClient()
        try client.core.store.declareIndexes([["a", "b"]], of: "Thing")
        try client.signInLocally("alice")
        let acls: [ACL?] = [nil, ACL.only("alice"), ACL.only("bob")]
        var objects: [RooftopObject] = []
        for index in 0..<160 {
            let object = client.object("Thing", id: "t\(String(format: "%03d", (index * 37) % 160))")
            object["a"] = .int(Int64(random.next() % 4))
            if random.next() % 7 != 0 { object["b"] = .int(Int64(random.next() % 9)) }
            if let acl = acls[Int(random.next() % UInt64(acls.count))] { object.acl = acl }
            try await object.saveEventually()
            objects.append(object)
        }
        let predicates: [QueryPredicate] = [
            .in(field: "a", values: [0, 2]),
            .or([.comparison(field: "a", op: .equal, value: 1), .comparison(field: "a", op: .equal, value: 3)]),
            .in(field: "a", values: [0, 1, 3]),
            .and([.in(field: "a", values: [1, 2]), .comparison(field: "b", op: .greaterOrEqual, value: 4)]),
            // An arm no object has.
            .in(field: "a", values: [2, 7]),
        ]
        let context = client.core.accessContext
        for round in 0..<160 {
            // Unsaved changes from round 80: those objects are left out of the entries.
            if round == 80 {
                for object in objects where random.next() % 9 == 0 { object["b"] = .int(Int64(random.next() % 9)) }
            }
            var query = Query(
                className: "Thing", predicate: predicates[round % predicates.count],
                order: [QueryOrder("b", descending: random.next() % 2 == 0)])
            query.offset = Int(random.next() % 30)
            query.limit = Int(random.next() % 40) + 1
            let local = try await client.query(query).fromLocalDatastore().find()
            let expected = QueryEvaluator.run(
                query, over: objects.map(\.snapshot), lookup: { _ in nil },
                canRead: { ACL.allowsRead($0.acl, for: context) })
            #expect(
                local.objects.map(\.objectId) == expected.objects.map(\.objectId),
                "round \(round): \(query.predicate.map { "\($0)" } ?? "") offset \(query.offset) limit \(query.limit ?? -1)")
            #expect(local.totalCount == expected.totalCount, "round \(round)")
        }
        // The pages above were read by the entries-only form, and the compiler gives it only
        // when the entries are exact and decide every condition.
        #expect(client.core.store.queryStatements.givenTexts.contains { $0.hasPrefix("WITH u AS") })
        let indexes = [SQLCompoundIndex(partition: 1, fields: ["a", "b"])]
        func statement(_ predicate: QueryPredicate, entries: SQLIndexEntries?, descending: Bool = true) -> SQLFragment {
            var query = Query(className: "Thing", predicate: predicate, order: [QueryOrder("b", descending: descending)])
            query.limit = 10
            return LocalStore.queryCompiler.select(
                query, scope: SQLFragment("o.scope = ?", [.text("")]), readers: nil, limit: 10, indexes: indexes,
                entries: entries)
        }
        func sql(_ predicate: QueryPredicate, entries: SQLIndexEntries?) -> String {
            statement(predicate, entries: entries).sql
        }
        let exact = SQLIndexEntries(readableOnly: true)
        #expect(sql(predicates[0], entries: exact).hasPrefix("WITH u AS"))
        // Each arm reads a range of the index up to its bound, both ways, not the whole arm.
        for descending in [true, false] {
            let statement = statement(predicates[0], entries: exact, descending: descending)
            let plan = try client.core.store.read { db in
                try Row.fetchAll(
                    db, sql: "EXPLAIN QUERY PLAN " + statement.sql, arguments: RooftopSQLite.arguments(statement.arguments)
                ).map { $0["detail"] as String }
            }
            let ranges = plan.filter { $0.contains("(partition=? AND k1=? AND k2") }
            #expect(ranges.count == 2, "descending \(descending): \(plan)")
        }
        #expect(!sql(predicates[0], entries: nil).hasPrefix("WITH u AS"), "entries not known exact: objects are read")
        #expect(
            !sql(.and([predicates[0], .comparison(field: "c", op: .equal, value: 1)]), entries: exact).hasPrefix("WITH u AS"),
            "a condition the entries do not decide is the objects'")
        await client.shutdown()
    }

    @Test("a count naming only the first key of a compound index reads the counts kept per key")
    func keyCountPlans() {
        let indexes = [SQLCompoundIndex(partition: 1, fields: ["a", "b"]), SQLCompoundIndex(partition: 2, fields: ["c"])]
        func sql(_ predicate: QueryPredicate, excluding: Bool = false, keyCounts: Bool = true) -> String {
            LocalStore.queryCompiler.count(
                Query(className: "Thing", predicate: predicate), scope: SQLFragment("o.scope = ?", [.text("")]),
                readers: nil, indexes: indexes,
                entries: SQLIndexEntries(
                    readableOnly: true, excluded: excluding ? SQLFragment("SELECT 7") : nil, keyCounts: keyCounts)
            ).sql
        }
        func reads(_ text: String, _ table: String) -> Int { text.components(separatedBy: table).count - 1 }
        let a1 = QueryPredicate.comparison(field: "a", op: .equal, value: 1)
        let one = sql(a1)
        #expect(reads(one, "index_key_counts k") == 1 && reads(one, "FROM index_entries") == 0, "\(one)")
        #expect(one.contains("k.readable"), "the readable count, as the flags are kept")
        let either = sql(.or([a1, .comparison(field: "a", op: .equal, value: 2)]))
        #expect(reads(either, "index_key_counts k") == 2, "an `or` of keys adds their counts: \(either)")
        let left = sql(a1, excluding: true)
        #expect(
            reads(left, "index_key_counts k") == 1 && left.contains("c.object_key IN ("),
            "the objects left out that match are taken away: \(left)")
        for predicate: QueryPredicate in [
            .and([a1, .comparison(field: "b", op: .greater, value: 2)]),
            .and([a1, .comparison(field: "b", op: .equal, value: 2)]),
            .comparison(field: "c", op: .equal, value: 1),
        ] {
            let counted = sql(predicate)
            #expect(reads(counted, "index_key_counts") == 0 && reads(counted, "FROM index_entries") == 1, "\(counted)")
        }
        #expect(reads(sql(a1, keyCounts: false), "index_key_counts") == 0, "a store without them counts entries")
        // Between an index of `a` alone and one of `(a, b)`, a count takes the one with counts.
        let both = LocalStore.queryCompiler.count(
            Query(className: "Thing", predicate: a1), scope: SQLFragment("o.scope = ?", [.text("")]), readers: nil,
            indexes: [SQLCompoundIndex(partition: 3, fields: ["a"]), SQLCompoundIndex(partition: 1, fields: ["a", "b"])],
            entries: SQLIndexEntries(readableOnly: false, keyCounts: true))
        #expect(reads(both.sql, "index_key_counts k") == 1 && both.sql.contains("k.live"), "\(both.sql)")
    }

    /// A store of `count` (default 50) `Thing`s in `:app`, without an account, with the fields
    /// `fields` gives each (by index), after declaring `indexes`.
    private static func things(
        declaring indexes: [[String]], count: Int = 50, fields: (Int) -> [String: Value]
    ) throws -> LocalStore {
        let store = try LocalStore(.inMemory)
        try store.declareIndexes(indexes, of: "Thing")
        try store.write(scope: "") { transaction in
            for index in 0..<count {
                let key = ObjectKey(datastore: .app, className: "Thing", objectId: "t\(index)")
                let object = ObjectSnapshot(
                    className: "Thing", objectId: key.objectId, datastore: .app, fields: fields(index), acl: nil, version: 1)
                try transaction.put(key, server: object, local: object, deleted: false, fresh: true)
            }
        }
        return store
    }

    /// The page `SELECT` of a `Thing` query with `predicate` in those objects' scope.
    private static func select(_ predicate: QueryPredicate, _ compiler: SQLQueryCompiler) -> SQLFragment {
        compiler.select(
            Query(className: "Thing", predicate: predicate),
            scope: SQLFragment("o.scope = ? AND o.datastore = ?", [.text(""), .text(DatastoreID.app.rawValue)]),
            readers: nil, limit: 10)
    }

    /// SQLite's plan of ``select(_:_:)``, its steps one per line.
    private static func plan(of predicate: QueryPredicate, _ compiler: SQLQueryCompiler, _ store: LocalStore) throws -> String {
        let select = select(predicate, compiler)
        return try store.read { db in
            try Row.fetchAll(
                db, sql: "EXPLAIN QUERY PLAN " + select.sql, arguments: RooftopSQLite.arguments(select.arguments)
            ).map { $0["detail"] as String }.joined(separator: "\n")
        }
    }

    @Test("what a query compiles against is read in one statement, as the three reads it replaces answer")
    func declaredIndexingInOneRead() throws {
        let store = try Self.things(declaring: [["a", "b"], ["c"], ["b", "c"]]) { ["a": .int(Int64($0))] }
        defer { store.close() }
        try store.declareIndexes([["x", "y"]], of: "Other")
        // Partitions of the same class in another scope and another datastore, which a query of
        // `:app` in scope "" must not see.
        let elsewhere = try DatastoreID(".elsewhere")
        for (scope, datastore) in [("u1", DatastoreID.app), ("", elsewhere)] {
            try store.write(scope: scope) { transaction in
                let key = ObjectKey(datastore: datastore, className: "Thing", objectId: "t0")
                let object = ObjectSnapshot(
                    className: "Thing", objectId: "t0", datastore: datastore, fields: ["a": 1], acl: nil, version: 1)
                try transaction.put(key, server: object, local: object, deleted: false, fresh: true)
            }
        }
        try store.read { db in
            #expect(try LocalStore.declaredIndexing(scope: "", datastore: elsewhere, className: "Thing", db).indexes.count == 3)
            #expect(try LocalStore.declaredIndexing(scope: "u1", datastore: .app, className: "Thing", db).indexes.count == 3)
            for (className, datastore) in [("Thing", DatastoreID.app), ("Other", .app), ("Thing", elsewhere), ("None", .app)] {
                let one = try LocalStore.declaredIndexing(scope: "", datastore: datastore, className: className, db)
                let indexes = try LocalStore.compoundIndexes(scope: "", datastore: datastore, className: className, db)
                #expect(one.indexes.map(\.partition) == indexes.map(\.partition), "\(className) in \(datastore)")
                #expect(one.indexes.map(\.fields) == indexes.map(\.fields), "\(className) in \(datastore)")
                #expect(one.valueIndexed == (try StoreTransaction.valueIndexedFields(of: className, db)))
                #expect(one.leading == (try StoreTransaction.leadingFields(of: className, db)))
            }
            let thing = try LocalStore.declaredIndexing(scope: "", datastore: .app, className: "Thing", db)
            #expect(thing.indexes.map(\.fields) == [["a", "b"], ["c"], ["b", "c"]] && thing.leading == ["a", "c", "b"])
            let none = try LocalStore.declaredIndexing(scope: "", datastore: .app, className: "None", db)
            #expect(none.indexes.isEmpty && none.valueIndexed == nil && none.leading.isEmpty)
        }
    }

    @Test("a contains of a list that leads an index reads its element entries; its count, them alone; its order, the next field")
    func elementEntryPlans() throws {
        // Lists of one to three tags of six, some repeated; a fifth of the objects hold a string.
        let store = try Self.things(declaring: [["tags", "b"]], count: 60) { index in
            let tags: Value =
                index % 5 == 0
                ? .string("t\(index % 6)") : .list((0...(index % 3)).map { .string("t\((index + $0 * $0) % 6)") })
            return ["tags": tags, "b": .int(Int64(60 - index))]
        }
        defer { store.close() }
        let (compiler, indexes, entries) = try store.read { db in
            let declared = try LocalStore.declaredIndexing(scope: "", datastore: .app, className: "Thing", db)
            var compiler = LocalStore.queryCompiler
            compiler.indexedFields = declared.valueIndexed
            compiler.entryKeyed["tags"] = declared.indexes.first?.partition
            return (compiler, declared.indexes + declared.indexes.map(\.elementEntries), SQLIndexEntries(readableOnly: false))
        }
        let scope = SQLFragment("o.scope = ? AND o.datastore = ?", [.text(""), .text(DatastoreID.app.rawValue)])
        func explain(_ fragment: SQLFragment) throws -> String {
            try store.read { db in
                try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + fragment.sql, arguments: RooftopSQLite.arguments(fragment.arguments))
                    .map { $0["detail"] as String }.joined(separator: "\n")
            }
        }
        let contains = QueryPredicate.listContains(field: "tags", value: "t1")
        let page = try explain(Self.select(contains, compiler))
        #expect(page.contains("USING PRIMARY KEY (partition=? AND k1=?)") && !page.contains("object_elements"), "\(page)")
        let count = compiler.count(
            Query(className: "Thing", predicate: contains), scope: scope, readers: nil, indexes: indexes, entries: entries)
        #expect(!count.sql.contains("objects") && count.sql.contains("c.partition = ?"), "\(count.sql)")
        let ordered = compiler.select(
            Query(className: "Thing", predicate: contains, order: [QueryOrder("b")]), scope: scope, readers: nil, limit: 5,
            indexes: indexes, entries: entries)
        #expect(ordered.sql.contains("ORDER BY c.k2 ASC"), "\(ordered.sql)")
        // Two elements' arms would meet one object twice: no plan reads them.
        let either = compiler.count(
            Query(className: "Thing", predicate: .or([contains, .listContains(field: "tags", value: "t2")])), scope: scope,
            readers: nil, indexes: indexes, entries: entries)
        #expect(!either.sql.contains("SELECT count(*) FROM index_entries c WHERE"), "\(either.sql)")

        let objects = try store.read { db in
            try Row.fetchAll(db, sql: "SELECT server FROM objects ORDER BY object_id").map {
                try DocumentCoding.decode(ObjectSnapshot.self, from: $0["server"] as String)
            }
        }
        for predicate in [
            contains, .listContains(field: "tags", value: "t5"), .listContains(field: "tags", value: "t9"),
            .or([contains, .listContains(field: "tags", value: "t2")]), .not(contains),
            .containsAll(field: "tags", values: ["t1", "t2"]), .and([contains, .comparison(field: "b", op: .less, value: 30)]),
        ] {
            for order in [[], [QueryOrder("b")], [QueryOrder("b", descending: true)]] {
                var query = Query(className: "Thing", predicate: predicate, order: order)
                query.limit = 4
                let expected = QueryEvaluator.run(query, over: objects, lookup: { _ in nil }, canRead: { _ in true })
                let found = try store.find(query, scope: "", datastore: .app, pinnedWith: nil, readers: nil, excluding: [])
                #expect(found.rows.map(\.key.objectId) == expected.objects.map(\.objectId), "\(predicate) \(order)")
                #expect(found.totalCount == expected.totalCount, "\(predicate) \(order)")
                let counted = try store.count(query, scope: "", datastore: .app, pinnedWith: nil, readers: nil, excluding: [])
                #expect(counted == expected.totalCount, "\(predicate)")
            }
        }
    }

    @Test("a key condition on a field that leads an index reads the index's entries; other tests, the object's own row")
    func entryKeyedPlans() throws {
        let store = try Self.things(declaring: [["a", "b"]]) { index in
            var fields: [String: Value] = ["b": .int(Int64(index))]
            if index % 10 != 0 { fields["a"] = .int(Int64(index)) }
            return fields
        }
        defer { store.close() }
        // `a` leads: its rows are kept, out of the value index; `b`'s are in it.
        let flags = try store.read { db in
            try Row.fetchAll(db, sql: "SELECT field, by_value, count(*) AS n FROM object_fields GROUP BY field, by_value ORDER BY field")
                .map { "\($0["field"] as String)=\($0["by_value"] as Int)x\($0["n"] as Int)" }
        }
        #expect(flags == ["a=0x45", "b=1x50"])
        var compiler = LocalStore.queryCompiler
        compiler.indexedFields = ["a", "b"]
        compiler.entryKeyed["a"] = try store.read { db in
            try #require(LocalStore.compoundIndexes(scope: "", datastore: .app, className: "Thing", db).first?.partition)
        }
        let plan = try Self.plan(of: .comparison(field: "a", op: .greaterOrEqual, value: 40), compiler, store)
        #expect(plan.contains("SEARCH c USING PRIMARY KEY (partition=? AND k1>?)"), "\(plan)")
        #expect(!plan.contains("object_fields_by_value"), "\(plan)")
        func ids(_ predicate: QueryPredicate) throws(RooftopError) -> [String] {
            try store.find(
                Query(className: "Thing", predicate: predicate, order: [QueryOrder("b")]), scope: "", datastore: .app,
                pinnedWith: nil, readers: nil, excluding: []
            ).rows.map(\.key.objectId)
        }
        #expect(try ids(.comparison(field: "a", op: .greaterOrEqual, value: 47)) == ["t47", "t48", "t49"])
        #expect(try ids(.comparison(field: "a", op: .less, value: 3)) == ["t1", "t2"], "absent is not below")
        #expect(try ids(.in(field: "a", values: [5, 10, 15])) == ["t5", "t15"])
        #expect(try ids(.notExists(field: "a")) == ["t0", "t10", "t20", "t30", "t40"], "presence from the own rows")
        #expect(try ids(.not(.comparison(field: "a", op: .greaterOrEqual, value: 3))).count == 7)
    }

    @Test("a point near another or in a box, on a field that leads an index, reads a band of its entries and answers as the evaluator")
    func pointBands() throws {
        // Points about a few places: the equator, either side of the antimeridian, near a pole;
        // some exactly on whole degrees (box corners fall on them), some objects without a point.
        var random = SeededGenerator(seed: 11)
        let centers: [(Double, Double)] = [(0, 0), (10, 179.5), (-10, -179.5), (88.5, 40), (-45, -120)]
        func coordinate(_ center: Double, _ limit: Double, _ random: inout SeededGenerator) -> Double {
            let jitter = random.next() % 4 == 0 ? Double(Int(random.next() % 5) - 2) : Double.random(in: -2...2, using: &random)
            return min(max(center + jitter, -limit), limit)
        }
        func point(_ random: inout SeededGenerator) throws -> GeoPoint {
            let center = centers[Int(random.next() % UInt64(centers.count))]
            return try GeoPoint(latitude: coordinate(center.0, 90, &random), longitude: coordinate(center.1, 180, &random))
        }
        var points: [Int: GeoPoint] = [:]
        for index in 0..<400 where index % 9 != 0 { points[index] = try point(&random) }
        let store = try Self.things(declaring: [["p", "n"]], count: 400) { index in
            var fields: [String: Value] = ["n": .int(Int64(index % 7))]
            if let point = points[index] { fields["p"] = .geoPoint(point) } else if index % 2 == 0 { fields["p"] = "not a point" }
            return fields
        }
        defer { store.close() }
        let snapshots = try store.read { db in
            try (0..<400).compactMap { index in
                try StoreTransaction.object(
                    ObjectKey(datastore: .app, className: "Thing", objectId: "t\(index)"), scope: "", db)?.local
            }
        }
        #expect(snapshots.count == 400)
        var matched = 0
        for round in 0..<300 {
            let predicate: QueryPredicate
            if round % 2 == 0 {
                predicate = .near(
                    field: "p", point: try point(&random), maxDistanceMeters: Double(random.next() % 400_000))
            } else {
                predicate = .withinBox(field: "p", southwest: try point(&random), northeast: try point(&random))
            }
            var query = Query(className: "Thing", predicate: round % 3 == 0 ? .and([predicate, .comparison(field: "n", op: .less, value: 5)]) : predicate)
            query.limit = Int(random.next() % 30) + 1
            query.offset = Int(random.next() % 5)
            let local = try store.find(query, scope: "", datastore: .app, pinnedWith: nil, readers: nil, excluding: [])
            let expected = QueryEvaluator.run(query, over: snapshots, lookup: { _ in nil }, canRead: { _ in true })
            #expect(local.rows.map(\.key.objectId) == expected.objects.map(\.objectId), "round \(round): \(predicate)")
            #expect(local.totalCount == expected.totalCount, "round \(round): \(predicate)")
            matched += expected.totalCount
        }
        #expect(matched > 1000, "the conditions matched points")
        // Read as a band of the index's entries, not by testing every object's own row.
        var compiler = LocalStore.queryCompiler
        compiler.indexedFields = ["p", "n"]
        compiler.entryKeyed["p"] = try store.read { db in
            try #require(LocalStore.compoundIndexes(scope: "", datastore: .app, className: "Thing", db).first?.partition)
        }
        let center = try GeoPoint(latitude: 10, longitude: 179.5)
        for predicate in [
            QueryPredicate.near(field: "p", point: center, maxDistanceMeters: 50_000),
            .withinBox(field: "p", southwest: try GeoPoint(latitude: 9, longitude: 179), northeast: try GeoPoint(latitude: 11, longitude: -179)),
        ] {
            let plan = try Self.plan(of: predicate, compiler, store)
            #expect(plan.contains("SEARCH c USING PRIMARY KEY (partition=? AND k1>? AND k1<?)"), "\(plan)")
            #expect(!plan.contains("CORRELATED"), "\(plan)")
            // Longitudes out of reach are left out from the keys, before any row is read.
            #expect(Self.select(predicate, compiler).sql.contains("substr(c.k1, 10) >= ?"))
        }
        // A box whose south is north of its north reads nothing.
        let inverted = QueryPredicate.withinBox(
            field: "p", southwest: try GeoPoint(latitude: 11, longitude: 0), northeast: try GeoPoint(latitude: 9, longitude: 1))
        #expect(Self.select(inverted, compiler).sql.contains("SELECT 0 WHERE 0 = 1"))
        #expect(try store.find(Query(className: "Thing", predicate: inverted), scope: "", datastore: .app, pinnedWith: nil,
            readers: nil, excluding: []).totalCount == 0)
    }

    @Test("a condition on a field in the value index reads the index; on another field, the object's document")
    func valueIndexPlans() throws {
        // `a` is named second: its rows are in the value index (a field that leads an index is
        // found by its entries instead, ``entryKeyedPlans()``); `z` is no object's.
        let store = try Self.things(declaring: [["z", "a"]]) { index in
            ["a": .int(Int64(index)), "b": .int(Int64(index)), "c": .list([.int(Int64(index))])]
        }
        defer { store.close() }
        // Rows are kept of `a` alone.
        let fields = try store.read { db in try String.fetchSet(db, sql: "SELECT DISTINCT field FROM object_fields") }
        #expect(fields == ["a"])
        #expect(try store.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM object_elements") } == 0)
        var compiler = LocalStore.queryCompiler
        compiler.indexedFields = ["a"]
        func sqlOf(_ predicate: QueryPredicate) -> SQLFragment { Self.select(predicate, compiler) }
        func plan(_ predicate: QueryPredicate) throws -> String { try Self.plan(of: predicate, compiler, store) }
        let indexed = try plan(.comparison(field: "a", op: .equal, value: 3))
        // Covering: the partial index answers `by_value = 1` without reading the table.
        #expect(indexed.contains("USING COVERING INDEX object_fields_by_value"), "\(indexed)")
        for (predicate, readsIndex) in [
            (QueryPredicate.comparison(field: "b", op: .equal, value: 3), false),
            (.listContains(field: "c", value: 3), false),
            (.or([.comparison(field: "a", op: .equal, value: 3), .comparison(field: "b", op: .equal, value: 3)]), true),
        ] {
            let other = try plan(predicate)
            #expect(sqlOf(predicate).sql.contains("rooftop_field"), "\(predicate) reads a field without rows from documents")
            // Never a walk of every field row or element row.
            #expect(!other.contains("SCAN f") && !other.contains("SCAN e"), "\(predicate): \(other)")
            #expect(other.contains("_by_value") == readsIndex, "\(predicate): \(other)")
        }
        func find(_ predicate: QueryPredicate) throws(RooftopError) -> [String] {
            try store.find(
                Query(className: "Thing", predicate: predicate, order: [QueryOrder("b", descending: true)]), scope: "",
                datastore: .app, pinnedWith: nil, readers: nil, excluding: []
            ).rows.map(\.key.objectId)
        }
        #expect(try find(.listContains(field: "c", value: 7)) == ["t7"])
        #expect(try find(.comparison(field: "b", op: .greaterOrEqual, value: 47)) == ["t49", "t48", "t47"])
        // A stored document that is not an object fails the query: it never answers wrongly.
        try store.write(scope: "") { transaction in
            try transaction.db.execute(sql: "UPDATE objects SET server = '{\"fields\":', local = NULL WHERE object_id = 't3'")
        }
        #expect(throws: RooftopError.self) { try find(.comparison(field: "b", op: .equal, value: 3)) }
    }

    @Test("a save rewrites only the index rows that differ, and leaves the rows a full rewrite would make")
    func incrementalRows() async throws {
        var random = SeededGenerator(seed: 11)
        let (client, _) = try offlineClient()
        let store = client.core.store
        try store.declareIndexes([["a", "b"], ["c"]], of: "Thing")
        try client.signInLocally("alice", roles: ["Staff"])
        var staff = ACL()
        staff.setReadAccess(true, for: .role("Staff"))
        let acls: [ACL?] = [nil, ACL.only("alice"), staff]
        var objects: [RooftopObject] = []
        for index in 0..<30 {
            let object = client.object("Thing", id: "t\(index)")
            for field in ["a", "b", "c", "d"] where random.next() % 4 != 0 || index < 2 {
                // The first two hold values short enough to index: a change to another field
                // leaves their rows.
                object[field] = index < 2 ? .int(Int64(index)) : random.value()
            }
            try await object.saveEventually()
            objects.append(object)
        }
        // The writer counts the field rows and entries written from here on.
        try store.write(scope: "") { transaction in
            try transaction.db.execute(
                sql: """
                    CREATE TEMP TABLE written (rows INTEGER NOT NULL, entries INTEGER NOT NULL);
                    INSERT INTO written VALUES (0, 0);
                    CREATE TEMP TRIGGER written_rows AFTER INSERT ON main.object_fields BEGIN
                        UPDATE written SET rows = rows + 1;
                    END;
                    CREATE TEMP TRIGGER written_entries AFTER INSERT ON main.index_entries BEGIN
                        UPDATE written SET entries = entries + 1;
                    END;
                    """)
        }
        func written() throws -> (rows: Int, entries: Int) {
            try store.write(scope: "") { transaction in
                let row = try Row.fetchOne(transaction.db, sql: "SELECT rows, entries FROM written")
                try transaction.db.execute(sql: "UPDATE written SET rows = 0, entries = 0")
                return (row?["rows"] ?? -1, row?["entries"] ?? -1)
            }
        }
        _ = try written()
        // A field no index names: it has no row, and no entry changes.
        objects[0]["d"] = .string("changed")
        try await objects[0].saveEventually()
        let one = try written()
        #expect(one.rows == 0, "one field changed: \(one)")
        #expect(one.entries == 0, "one field changed: \(one)")
        // A field an index names: its row, and the object's entries.
        objects[1]["c"] = .int(99)
        try await objects[1].saveEventually()
        let named = try written()
        #expect(named.rows == 1 && named.entries == 2, "an indexed field changed: \(named)")

        // Random changes (fields set, removed, too long to index; lists; ACLs; deletions and
        // objects stored again): the rows are those a full rewrite makes.
        for round in 0..<120 {
            let object = objects[Int(random.next() % UInt64(objects.count))]
            switch random.next() % 6 {
            case 0: try object.unset(["a", "b", "c", "d"][Int(random.next() % 4)])
            case 1: object.acl = acls[Int(random.next() % UInt64(acls.count))]
            case 2 where round % 10 == 0:
                try await object.deleteEventually()
                let again = client.object("Thing", id: object.objectId)
                again["a"] = random.value()
                objects[objects.firstIndex { $0 === object } ?? 0] = again
                try await again.saveEventually()
                continue
            default: object[["a", "b", "c", "d"][Int(random.next() % 4)]] = random.value()
            }
            try await object.saveEventually()
        }
        let tables = ["object_fields", "object_elements", "index_entries"]
        func rows() throws -> [String] {
            try store.read { db in
                try tables.flatMap { table in
                    try Row.fetchAll(db, sql: "SELECT * FROM \(table)").map { row in
                        "\(table) "
                            + row.databaseValues.map { value in
                                // Blobs (keys) by their bytes: their description is their size.
                                if case .blob(let bytes) = value.storage { return bytes.map { String($0, radix: 16) }.joined(separator: ".") }
                                return value.description
                            }.joined(separator: " ")
                    }.sorted()
                }
            }
        }
        let kept = try rows()
        // Each live object names the reader set of its local view's ACL; a deleted one none.
        try store.read { db in
            for row in try Row.fetchAll(db, sql: "SELECT * FROM objects") {
                let object = try StoreTransaction.row(row)
                let members = try Set(
                    String.fetchAll(
                        db, sql: "SELECT principal FROM reader_set_members WHERE reader_set = ?", arguments: [row["readers"] as Int64?]))
                if object.deleted {
                    #expect(row["readers"] as Int64? == nil)
                } else {
                    #expect(members == SQLIndexRows.readers(of: object.local?.acl), "\(object.key)")
                }
            }
        }
        try store.write(scope: "alice") { transaction in
            let db = transaction.db
            for table in tables { try db.execute(sql: "DELETE FROM \(table)") }
            let live = try Row.fetchAll(db, sql: "SELECT * FROM objects WHERE deleted = 0")
            for row in live {
                let object = try StoreTransaction.row(row)
                try StoreTransaction.index(objectKey: row["key"], local: object.local, replacing: false, db)
            }
        }
        let rewritten = try rows()
        #expect(kept.count > 100)
        #expect(kept == rewritten)
        await client.shutdown()
    }

    @Test("index rows follow saves, deletions and uncaching")
    func maintenance() async throws {
        let (client, _) = try offlineClient()
        let thing = client.object("Thing", id: "t1")
        thing["size"] = 3
        try await thing.saveEventually()
        let small = try client.query("Thing").text("where size < ?", [5]).fromLocalDatastore()
        #expect(try await small.find().objectIds == ["t1"])
        thing["size"] = 7
        try await thing.saveEventually()
        #expect(try await small.find().objectIds == [])
        #expect(try await client.query("Thing").text("where size = ?", [7.0]).fromLocalDatastore().find().objectIds == ["t1"])
        try await thing.deleteEventually()
        let rows = try client.core.store.read { db in
            try Int.fetchOne(
                db,
                sql: "SELECT (SELECT COUNT(*) FROM object_fields) + (SELECT COUNT(*) FROM object_elements) + (SELECT COUNT(*) FROM objects WHERE readers IS NOT NULL)"
            ) ?? -1
        }
        #expect(rows == 0, "a deleted object leaves no index rows")
        let other = client.object("Thing", id: "t2")
        other["size"] = 1
        try await other.saveEventually()
        #expect(try await small.find().objectIds == ["t2"])
        try client.datastores.uncache(.app)
        let left = try client.core.store.read { db in
            try Int.fetchOne(
                db,
                sql: "SELECT (SELECT COUNT(*) FROM object_fields) + (SELECT COUNT(*) FROM object_elements) + (SELECT COUNT(*) FROM objects WHERE readers IS NOT NULL)"
            ) ?? -1
        }
        #expect(left == 0, "uncaching drops the datastore's index rows")
        await client.shutdown()
    }
}

/// Values and predicates over the fields `a`, `b`, `c`.
extension SeededGenerator {
    /// Values that collide across kinds (1 and 1.0), sort near each other, or are too long to
    /// index.
    mutating func value(indexable: Bool = false) -> Value {
        switch next() % 10 {
        case 9: point().map(Value.geoPoint) ?? .null
        case 4 where indexable: .string("x")
        case 0: .int(Int64(next() % 5))
        case 1: .double(Double(next() % 5))
        case 2: .double(Double(next() % 50) / 10)
        case 3: .string(["", "a", "ab", "b"][Int(next() % 4)])
        case 4: .string(String(repeating: "x", count: 300) + String(next() % 3))
        case 5: .bool(next() % 2 == 0)
        case 6: .null
        case 7:
            // One to three elements, some repeated.
            .list((0..<(next() % 3 + 1)).map { _ in .int(Int64(next() % 3)) })
        default: .date(Timestamp(millisecondsSinceEpoch: Int64(next() % 3)))
        }
    }

    /// A point on a small grid, so that distances tie and boxes catch several.
    mutating func point() -> GeoPoint? {
        try? GeoPoint(latitude: Double(Int(next() % 5) - 2), longitude: Double(Int(next() % 5) - 2))
    }

    mutating func condition() -> QueryPredicate {
        let field = ["a", "b", "c"][Int(next() % 3)]
        switch next() % 15 {
        case 10, 11:
            guard let point = point() else { break }
            return .near(field: field, point: point, maxDistanceMeters: next() % 2 == 0 ? nil : Double(next() % 300_000))
        case 12:
            guard let southwest = point(), let northeast = point() else { break }
            return .withinBox(field: field, southwest: southwest, northeast: northeast)
        case 13: return .containsAll(field: field, values: [.int(Int64(next() % 3))])
        case 14: return next() % 2 == 0 ? .notExists(field: field) : .notIn(field: field, values: [value()])
        case 0, 1: return .in(field: field, values: (0..<Int(next() % 3 + 1)).map { _ in value() })
        case 2: return .exists(field: field)
        case 3: return .startsWith(field: field, prefix: ["", "a", "x"][Int(next() % 3)])
        case 4: return .listContains(field: field, value: .int(Int64(next() % 3)))
        default: break
        }
        let ops: [QueryPredicate.ComparisonOperator] = [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual]
        return .comparison(field: field, op: ops[Int(next() % 6)], value: value())
    }

    mutating func predicate() -> QueryPredicate {
        switch next() % 4 {
        case 0: condition()
        case 1: .and([condition(), condition()])
        case 2: .and([condition(), .or([condition(), condition()]), condition()])
        default: .and([condition(), .not(condition())])
        }
    }
}

/// The counts kept per first key are those of the entries, for indexes of two fields or more
/// (`counted`: there are some).
func expectKeyCountsCurrent(_ store: LocalStore, _ moment: String, counted: Bool = false) throws {
    let (keyCounts, entryCounts) = try store.read { db in
        (
            try Row.fetchAll(db, sql: "SELECT partition, hex(k1), live, readable FROM index_key_counts ORDER BY 1, 2")
                .map { $0.databaseValues.map(\.description).joined(separator: " ") },
            try Row.fetchAll(
                db,
                sql: """
                    SELECT c.partition, hex(c.k1), count(*), sum(c.readable = 1) FROM index_entries c
                    JOIN index_partitions p ON p.id = c.partition JOIN class_indexes d ON d.id = p.class_index
                    WHERE d.field2 != '' GROUP BY 1, 2 ORDER BY 1, 2
                    """
            ).map { $0.databaseValues.map(\.description).joined(separator: " ") }
        )
    }
    if counted { #expect(!entryCounts.isEmpty, "\(moment): counted entries were written") }
    #expect(keyCounts == entryCounts, "\(moment): counts per first key")
}
