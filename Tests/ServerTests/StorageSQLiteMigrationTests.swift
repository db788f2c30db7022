import Foundation
import GRDB
import RooftopSQL
import RooftopShared
import Testing

@testable import RooftopServer
import RooftopTestSupport

/// A server upgraded in place keeps its data: a database written in an older schema, as a server
/// of that version left it, is migrated and served.
@Suite("SQLite storage: migrations from earlier schemas")
struct StorageSQLiteMigrationTests {
    @Test("a file a newer server migrated is refused at start-up, clearly and without a change")
    func newerSchemaRefused() async throws {
        let fixture = try SQLiteFixture()
        defer { try? fixture.destroy() }
        let storage = try SQLiteStorage(path: fixture.path)
        try await storage.prepare()
        let future = "v99: a migration from a newer server"
        try await storage.pool.write { db in
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES (?)", arguments: [future])
        }
        let applied = try await storage.pool.read { try SQLiteMigrations.migrator.appliedIdentifiers($0) }
        let restarted = try SQLiteStorage(path: fixture.path)
        do {
            try await restarted.prepare()
            Issue.record("a newer server's file was opened")
        } catch let error as RooftopError {
            #expect(error.code == .badState)
            #expect(error.message.contains(future) && error.message.contains("newer"), "\(error.message)")
        }
        #expect(try await storage.pool.read { try SQLiteMigrations.migrator.appliedIdentifiers($0) } == applied)
        // A backup's check names it too (the same rule, ``SQLiteMigrations/unknown(_:)``).
        #expect {
            try SQLiteBackup.verify(fixture.path)
        } throws: { error in
            (error as? RooftopError)?.code == .illegalArgument && "\(error)".contains(future)
        }
    }

    @Test("a v3 database migrates to compact results, bounded indexes and bounded history with nothing lost")
    func fromV3() async throws {
        let fixture = try SQLiteFixture()
        defer { try? fixture.destroy() }
        let storage = try SQLiteStorage(path: fixture.path)
        try SQLiteMigrations.migrator.migrate(storage.pool, upTo: "v3: object readers indexed by object")

        let long = String(repeating: "x", count: 400)
        let tags: Value = .list([.string(long), "short"])
        let snapshot = StorageConformance.object(
            "a", fields: ["title": .string(long), "n": 1, "tags": tags], acl: StorageConformance.readable(by: .everyone))
        let mutation = try MutationID("m-1")
        let result = MutationResult.applied(mutationId: mutation, version: 1, object: snapshot)
        let creation = OperationRecord(
            version: 1, change: .update(snapshot.fields.map { FieldUpdate($0.key, .set($0.value)) }),
            priorValues: snapshot.fields.mapValues { _ in nil })
        try await storage.pool.write { db in
            // What a v3 server wrote for one created object in the private datastore of u1.
            try db.execute(
                sql: """
                    INSERT INTO datastores (key, id, scope, owner_id, created_at, sequence, record_count, size_bytes)
                    VALUES (1, 'default', 'u1', 'u1', 0, 1, 1, 1000)
                    """)
            let body = StoredObjectBody(fields: snapshot.fields, acl: snapshot.acl, fieldVersions: snapshot.fieldVersions)
            try db.execute(
                sql: """
                    INSERT INTO objects (key, datastore_key, class_name, object_id, body, created_at, updated_at, version,
                    sequence, deleted, size_bytes) VALUES (7, 1, 'T', 'a', ?, ?, ?, 1, 1, 0, 500)
                    """,
                arguments: [
                    try DocumentCoding.encode(body), snapshot.createdAt?.millisecondsSinceEpoch,
                    snapshot.updatedAt?.millisecondsSinceEpoch,
                ])
            var indexed = snapshot.fields
            indexed["objectId"] = "a"
            indexed["createdAt"] = .date(StorageConformance.time(1))
            indexed["updatedAt"] = .date(StorageConformance.time(1))
            for (field, value) in indexed {
                try db.execute(
                    sql: "INSERT INTO object_fields (object_key, field, kind, sort_key) VALUES (7, ?, ?, ?)",
                    arguments: [field, value.kind.rawValue, Data(value.sortKey)])
            }
            for element in [Value.string(long), "short"] {
                try db.execute(
                    sql: "INSERT INTO object_elements (object_key, field, element_key) VALUES (7, 'tags', ?)",
                    arguments: [Data(element.sortKey)])
            }
            try db.execute(sql: "INSERT INTO object_readers (object_key, principal, from_sequence) VALUES (7, '*', 1)")
            try db.execute(
                sql: "INSERT INTO object_operations (object_key, version, operation) VALUES (7, 1, ?)",
                arguments: [try DocumentCoding.encode(creation)])
            try db.execute(
                sql: "INSERT INTO mutations (scope, mutation_id, result, created_at) VALUES ('u1', 'm-1', ?, 0)",
                arguments: [try DocumentCoding.encode(result)])
        }
        try await storage.prepare()

        // The recorded result still answers a retry, whole, and the object is served as it was.
        #expect(try await storage.mutationResults(scope: "u1", ids: [mutation]) == [mutation: result])
        let stored = try await storage.object(datastoreKey: 1, className: "T", objectId: "a")
        #expect(stored?.snapshot == snapshot)
        #expect(stored?.readers == ["*"])
        #expect(try await storage.operations(datastoreKey: 1, className: "T", objectId: "a", after: 0) == [creation])
        // The long values left the index; queries on them, and on the rest, find the object.
        let unindexed = try await storage.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT field, objects FROM unindexed_fields ORDER BY field").map {
                "\($0["field"] as String)=\($0["objects"] as Int)"
            }
        }
        #expect(unindexed == ["tags=1", "title=1"])
        for predicate: QueryPredicate in [
            .comparison(field: "title", op: .equal, value: .string(long)),
            .startsWith(field: "title", prefix: "xx"),
            .listContains(field: "tags", value: "short"),
            .listContains(field: "tags", value: .string(long)),
            .comparison(field: "n", op: .equal, value: 1),
            .exists(field: "title"),
        ] {
            let query = Query(className: "T", predicate: predicate)
            let page = try await storage.find(query, datastoreKey: 1, readers: ["*"], limit: 10)
            #expect(page.objects == [snapshot], "\(predicate)")
            #expect(page.totalCount == 1, "\(predicate)")
            #expect(try await storage.count(query, datastoreKey: 1, readers: ["u2"]) == 0, "\(predicate): readers")
        }

        // Writes keep the counts: once no object holds a long value, SQL alone answers again.
        let shortened = StorageConformance.updated(snapshot, ["title": "short", "tags": ["short"]])
        let record = OperationRecord(
            version: 2, change: .update([FieldUpdate("title", .set("short")), FieldUpdate("tags", .set(["short"]))]),
            priorValues: ["title": .string(long), "tags": tags])
        _ = try await StorageConformance.write(storage, datastoreKey: 1, objectId: "a", base: 1) { _ in
            .write(snapshot: shortened, deleted: false, operation: record, merges: [])
        }
        let counts = try await storage.pool.read { db in
            try Int.fetchAll(db, sql: "SELECT objects FROM unindexed_fields ORDER BY field")
        }
        #expect(counts == [0, 0])
        let query = Query(className: "T", predicate: .comparison(field: "title", op: .equal, value: "short"))
        #expect(SQLQueryCompiler(dialect: .sqlite, layout: .server).evaluation(of: query, unindexed: []) == nil)
        #expect(try await storage.find(query, datastoreKey: 1, readers: nil, limit: 10).objects == [shortened])

        // v5: the operation written before it has no sequence; the first advance of the history
        // removes it with the ones below the mark, and the old result table is swept by age.
        let start = Timestamp(millisecondsSinceEpoch: 1_000_000)
        let later = Timestamp(millisecondsSinceEpoch: 2_000_000)
        var first = HistorySweep()
        first.mutationResults = 1  // recorded at time 0 by the v3 server: older than any cutoff
        #expect(try await storage.sweepHistory(cutoff: Timestamp(millisecondsSinceEpoch: 0), now: start) == first)
        let swept = try await storage.sweepHistory(cutoff: start, now: later)
        #expect(swept.datastores == 1)
        #expect(swept.operations == 2)
        #expect(try await storage.datastore(key: 1)?.historyFrom == 2)
        #expect(try await storage.operations(datastoreKey: 1, className: "T", objectId: "a", after: 0).isEmpty)
        #expect(try await storage.mutationResults(scope: "u1", ids: [mutation]).isEmpty)
        #expect(try await storage.object(datastoreKey: 1, className: "T", objectId: "a")?.snapshot == shortened)
        let faults = try await storage.valueIndexFaults()
        #expect(faults.isEmpty, "\(faults.prefix(5))")
        try await storage.close()
    }

    @Test("a v12 database migrates to counts from covering indexes and value indexes per datastore and class: the same answers")
    func fromV12() async throws {
        let fixture = try SQLiteFixture()
        defer { try? fixture.destroy() }
        let storage = try SQLiteStorage(path: fixture.path)
        try await storage.prepare()
        var rng = SeededGenerator(seed: 12)
        let dataset = try await DifferentialDataset.write(into: storage, using: &rng)
        // A class of objects with bodies as large as the benchmark's (5,000 of 1 KB), and the same
        // class in another datastore: the migration tells their rows apart.
        try await RawObjects.insert(storage, datastoreKey: dataset.datastoreKey, className: "W", count: 5000) { index in
            ["category": .string("c\(index % 20)")]
        }
        let other = try await storage.openOrCreateDatastore(id: .app, ownerId: nil, title: nil).key
        try await RawObjects.insert(storage, datastoreKey: other, className: "W", firstKey: 2_000_001, count: 500) { index in
            ["category": .string("c\(index % 20)")]
        }
        // What a v12 server left: the same objects and rows, the value indexes by field, and
        // `objects_by_readers` without `deleted`.
        try await storage.pool.write { db in
            try db.execute(
                sql: """
                    DROP INDEX object_fields_by_value;
                    DROP INDEX object_elements_by_value;
                    ALTER TABLE object_fields DROP COLUMN partition;
                    ALTER TABLE object_elements DROP COLUMN partition;
                    CREATE INDEX object_fields_by_value ON object_fields(field, sort_key);
                    CREATE INDEX object_elements_by_value ON object_elements(field, element_key);
                    DROP TABLE object_partitions;
                    DROP INDEX objects_live_by_key;
                    DROP INDEX objects_by_readers;
                    CREATE INDEX objects_by_readers ON objects(datastore_key, class_name, readers) WHERE deleted = 0;
                    DELETE FROM grdb_migrations WHERE identifier IN (
                        'v13: live objects counted from their indexes', 'v14: value indexes per datastore and class');
                    """)
        }
        try SQLiteMigrations.migrator.migrate(storage.pool)

        // Every row is in its object's partition.
        let (rows, misplaced, partitions) = try await storage.pool.read { db in
            let misplaced = { (table: String) in
                try Int.fetchOne(
                    db,
                    sql: """
                        SELECT count(*) FROM \(table) f JOIN objects o ON o.key = f.object_key
                        LEFT JOIN object_partitions p ON p.key = f.partition
                        WHERE p.key IS NULL OR p.datastore_key != o.datastore_key OR p.class_name != o.class_name
                        """) ?? -1
            }
            return (
                try Int.fetchOne(db, sql: "SELECT count(*) FROM object_fields") ?? 0,
                try misplaced("object_fields") + misplaced("object_elements"),
                try Int.fetchOne(db, sql: "SELECT count(*) FROM object_partitions") ?? 0
            )
        }
        #expect(rows > 5500)
        #expect(misplaced == 0)
        #expect(partitions >= 3, "W in two datastores, and the dataset's classes")
        let faults = try await storage.valueIndexFaults()
        #expect(faults.isEmpty, "\(faults.prefix(5))")

        // Every answer is the evaluator's, as before the migration.
        var mismatches: [String] = []
        for _ in 0..<150 {
            let query = DifferentialQueries.query(&rng)
            let readers = rng.pick(DifferentialDataset.readerSets)
            let outcome = try await DifferentialCheck.compare(query, readers: readers, dataset: dataset, storage: storage)
            if let report = outcome.mismatch { mismatches.append(report) }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(3))")
        let equal = Query(className: "W", predicate: .comparison(field: "category", op: .equal, value: "c7"))
        #expect(try await storage.count(equal, datastoreKey: dataset.datastoreKey, readers: ["*"]) == 250)
        #expect(try await storage.count(equal, datastoreKey: other, readers: ["*"]) == 25)

        // A count of the class, and one of a condition's matches, read indexes alone: the
        // condition's rows of this datastore's class only.
        let compiler = try await RawObjects.compiler(storage, datastoreKey: dataset.datastoreKey, className: "W")
        var plans: [String] = []
        for query in [Query(className: "W"), equal] {
            plans.append(
                try await RawObjects.plan(storage, compiler.count(query, scope: .datastore(dataset.datastoreKey), readers: ["*"])))
        }
        #expect(plans[0].contains("COVERING INDEX objects_by_readers"), "\(plans[0])")
        #expect(plans[1].contains("COVERING INDEX object_fields_by_value (partition=? AND field=? AND sort_key=?)"), "\(plans[1])")
        #expect(plans[1].contains("COVERING INDEX objects_live_by_key"), "\(plans[1])")
        try await storage.close()
    }

    @Test("a v6 database migrates to reserved role names: roles deleted before, still named by sharing or readers, stay taken")
    func fromV6() async throws {
        let fixture = try SQLiteFixture()
        defer { try? fixture.destroy() }
        let storage = try SQLiteStorage(path: fixture.path)
        try SQLiteMigrations.migrator.migrate(storage.pool, upTo: "v6: sessions by user")
        try await storage.pool.write { db in
            // What a v6 server left: role Kept exists; Shared and Readers were deleted, but a
            // datastore's sharing and an object's readers still name them.
            try db.execute(sql: "INSERT INTO roles (name, acl, created_at) VALUES ('Kept', '{}', 0)")
            try db.execute(
                sql: """
                    INSERT INTO datastores (key, id, scope, owner_id, created_at, sequence, record_count, size_bytes)
                    VALUES (1, '.team', '', 'u1', 0, 1, 1, 100)
                    """)
            try db.execute(
                sql: """
                    INSERT INTO datastore_roles (datastore_key, principal, role) VALUES
                    (1, 'role:Shared', 'editor'), (1, 'role:Kept', 'viewer'), (1, 'u2', 'viewer')
                    """)
            try db.execute(
                sql: """
                    INSERT INTO objects (key, datastore_key, class_name, object_id, body, created_at, updated_at, version,
                    sequence, deleted, size_bytes) VALUES (7, 1, 'T', 'a', '{}', 0, 0, 1, 1, 0, 100)
                    """)
            try db.execute(
                sql: """
                    INSERT INTO object_readers (object_key, principal, from_sequence) VALUES
                    (7, 'role:Readers', 1), (7, 'role:Kept', 1), (7, '*', 1)
                    """)
        }
        try await storage.prepare()
        for name in ["Shared", "Readers", "Kept"] {
            let taken = await StorageConformance.throwsCode(.exists) {
                try await storage.insertRole(RoleRecord(name: name, acl: ACL()))
            }
            #expect(taken, "\(name) is taken")
        }
        #expect(try await storage.role(named: "Kept") != nil)
        try await storage.insertRole(RoleRecord(name: "Fresh", acl: ACL()))
        try await storage.deleteRole(named: "Kept")
        let retired = await StorageConformance.throwsCode(.exists) {
            try await storage.insertRole(RoleRecord(name: "Kept", acl: ACL()))
        }
        #expect(retired)
        try await storage.close()
    }

    @Test("a v8 database migrates to user-name keys: look-alike users made before all stay and log in; new look-alikes are refused")
    func fromV8() async throws {
        let fixture = try SQLiteFixture()
        defer { try? fixture.destroy() }
        let storage = try SQLiteStorage(path: fixture.path)
        try SQLiteMigrations.migrator.migrate(storage.pool, upTo: "v8: dashboard sessions stored as hashes")
        try await storage.pool.write { db in
            // What a v8 server allowed: names that differ only in case or Unicode form.
            for user in LegacyUserNames.users {
                try db.execute(
                    sql: "INSERT INTO users (id, username, password_hash, created_at) VALUES (?, ?, 'unusable', ?)",
                    arguments: [user.id, user.username, user.createdAt])
            }
        }
        try await storage.prepare()
        let keys = try await storage.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT id, name_key FROM users").reduce(into: [String: String]()) {
                $0[$1["id"]] = $1["name_key"]
            }
        }
        try await LegacyUserNames.check(storage, keys: keys)
        try await storage.close()
    }

    @Test("a v9 database migrates to reader sets: each caller finds what it did; the sets made match the writer's")
    func fromV9() async throws {
        let fixture = try SQLiteFixture()
        defer { try? fixture.destroy() }
        let storage = try SQLiteStorage(path: fixture.path)
        try await storage.prepare()
        let key = try await storage.openOrCreateDatastore(id: .app, ownerId: nil, title: nil).key
        try await StorageConformance.ReaderSetCase.write(storage, datastoreKey: key)
        // What a v9 server left: the same objects and readers' history (with its rows of current
        // readers, as before v15), without sets.
        try await storage.pool.write { db in
            try db.execute(sql: Self.currentReaderRows)
            try db.execute(
                sql: """
                    DELETE FROM grdb_migrations WHERE identifier = 'v15: readers'' history without current readers';
                    DROP INDEX objects_by_readers;
                    DROP INDEX objects_live_by_key;
                    ALTER TABLE objects DROP COLUMN readers;
                    DROP TABLE reader_set_members;
                    DROP TABLE reader_sets;
                    DELETE FROM grdb_migrations WHERE identifier = 'v10: reader sets';
                    """)
        }
        try SQLiteMigrations.migrator.migrate(storage.pool)
        try await StorageConformance.ReaderSetCase.check(storage, datastoreKey: key)
        let sets = try await storage.pool.read { db in
            try [String: Int64](
                uniqueKeysWithValues: Row.fetchAll(
                    db,
                    sql: """
                        SELECT s.principals, count(m.principal) FROM reader_sets s
                        JOIN reader_set_members m ON m.reader_set = s.id GROUP BY s.id
                        """
                ).map { ($0[0], $0[1]) })
        }
        #expect(sets == StorageConformance.ReaderSetCase.migratedSets)
        // The writer names the sets the migration made: writing their ACLs makes none.
        try await StorageConformance.ReaderSetCase.writeAfterMigration(storage, datastoreKey: key)
        #expect(try await storage.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM reader_sets") } == 6)
        try await storage.close()
    }

    @Test("reader sets: a caller's sets are named up to the most a query names, and no further")
    func readerSetsNamed() async throws {
        let fixture = try SQLiteFixture()
        defer { try? fixture.destroy() }
        let storage = try SQLiteStorage(path: fixture.path)
        try await storage.prepare()
        try await storage.pool.write { db in
            for index in 0..<SQLQueryCompiler.maxReaderSets {
                _ = try SQLiteStorage.readerSetID(["u1", "other\(index)"], db)
            }
            #expect(try SQLiteStorage.readerSetID(["u1", "other0"], db) == 1, "found, not made again")
            #expect(try SQLiteStorage.readerSets(of: ["*", "u1"], db)?.count == SQLQueryCompiler.maxReaderSets)
            #expect(try SQLiteStorage.readerSets(of: ["*", "other3", "nobody"], db)?.count == 1)
            #expect(try SQLiteStorage.readerSets(of: ["*", "nobody"], db) == [])
            #expect(try SQLiteStorage.readerSets(of: nil, db) == nil)
            #expect(try SQLiteStorage.readerSets(of: ["other3"], db) == nil, "not among everyone: object by object")
            _ = try SQLiteStorage.readerSetID(["u1", "one more"], db)
            #expect(try SQLiteStorage.readerSets(of: ["*", "u1"], db) == nil, "past the most: tested object by object")
            #expect(try SQLiteStorage.readerSets(of: ["*", "u1", "other3"], db) == nil)
        }
        try await storage.close()
    }

    /// Adds the readers' history rows a server before v15 kept for each current reader of each
    /// live object (open, from its last change), besides those kept since.
    static let currentReaderRows = """
        INSERT INTO object_readers (object_key, principal, from_sequence)
            SELECT o.key, p.value, o.sequence FROM objects o JOIN reader_sets s ON s.id = o.readers,
            json_each(s.principals) p WHERE o.deleted = 0 AND NOT EXISTS (
                SELECT 1 FROM object_readers r WHERE r.object_key = o.key AND r.principal = p.value AND r.to_sequence IS NULL)
        """

    @Test("a v14 database migrates to a readers' history without current readers: every read of readers answers the same")
    func fromV14() async throws {
        let fixture = try SQLiteFixture()
        defer { try? fixture.destroy() }
        let storage = try SQLiteStorage(path: fixture.path)
        try await storage.prepare()
        let key = try await storage.openOrCreateDatastore(id: .app, ownerId: nil, title: nil).key
        let checkpoint = try await ReaderHistoryCase.write(storage, datastoreKey: key) {
            // A creation writes no history: its readers are its reader set.
            let rowsOfCreations = try await storage.pool.read { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM object_readers") ?? -1
            }
            #expect(rowsOfCreations == 1, "only u1 of publicOwned, whose set is `*` alone")
        }
        let expected = try await ReaderHistoryCase.answers(storage, datastoreKey: key, checkpoint: checkpoint)

        // What a v14 server kept besides: a history row, open, for each current reader of each
        // live object.
        try await storage.pool.write { db in
            try db.execute(sql: Self.currentReaderRows)
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v15: readers'' history without current readers'")
        }
        try SQLiteMigrations.migrator.migrate(storage.pool)

        let (open, tombstoneRows) = try await storage.pool.read { db in
            (
                try Int.fetchOne(
                    db,
                    sql: """
                        SELECT count(*) FROM object_readers r JOIN objects o ON o.key = r.object_key
                        LEFT JOIN reader_sets s ON s.id = o.readers
                        WHERE o.deleted = 0 AND r.to_sequence IS NULL AND (r.principal = '*' OR s.principals IS NOT '["*"]')
                        """) ?? -1,
                try String.fetchAll(
                    db,
                    sql: """
                        SELECT r.principal FROM object_readers r JOIN objects o ON o.key = r.object_key
                        WHERE o.object_id = 'deleted' AND r.to_sequence IS NULL ORDER BY r.principal
                        """)
            )
        }
        #expect(open == 0, "live objects' current readers are their sets, and those a set does not name")
        #expect(tombstoneRows == ["u2", "u3"], "a tombstone keeps its readers")
        let migrated = try await ReaderHistoryCase.answers(storage, datastoreKey: key, checkpoint: checkpoint)
        #expect(migrated == expected)
        ReaderHistoryCase.checkExpected(expected)
        try await storage.close()
    }
}
