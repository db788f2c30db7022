import GRDB
import RooftopSQL
import RooftopShared
import RooftopTestSupport
import Testing

@testable import RooftopServer

/// Counts read from a value index's keys alone, where the caller may read every object of the
/// class (``SQLQueryRunner/everyObjectReadable``): tombstones, other classes and other
/// datastores hold rows of the same field and must not count, and an object the caller may not
/// read turns the shortcut off.
@Suite("Counts from index keys")
struct SQLKeyCountTests {
    @Test("counts from keys agree with the evaluator, until an object is unreadable; then each match is tested")
    func countsFromKeys() async throws {
        try await withStorage(SQLiteFixture.factory) { storage, _ in
            let sqlite = try #require(storage as? SQLiteStorage)
            let main = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil)
            let other = try await storage.openOrCreateDatastore(id: .app, ownerId: nil, title: nil)
            var live: [ObjectSnapshot] = []
            func object(_ index: Int, className: String = "T", version: Int64 = 1, acl: ACL? = nil) throws -> ObjectSnapshot {
                ObjectSnapshot(
                    className: className, objectId: "o\(index)", datastore: main.id,
                    fields: [
                        "category": .string("c\(index % 3)"), "score": .int(Int64(index)),
                        "tags": .list([.string("t\(index % 4)"), .string("t\(index % 4)")]),
                        "loc": .geoPoint(try GeoPoint(latitude: 40 + Double(index % 10) / 100, longitude: -3)),
                    ],
                    acl: acl, version: version)
            }
            for index in 0..<90 {
                // Readable by everyone, and by u1 alone: both sets the caller holds.
                let snapshot = try object(index, acl: index % 5 == 0 ? .only("u1") : nil)
                try await StorageWrites.put(snapshot, datastoreKey: main.key, into: storage)
                if index % 7 == 0 {
                    try await StorageWrites.put(
                        StorageWrites.tombstone(of: snapshot), deleted: true, datastoreKey: main.key, into: storage)
                } else {
                    live.append(snapshot)
                }
                // The same rows in another class and another datastore.
                try await StorageWrites.put(try object(index, className: "U"), datastoreKey: main.key, into: storage)
                var elsewhere = try object(index)
                elsewhere.datastore = other.id
                try await StorageWrites.put(elsewhere, datastoreKey: other.key, into: storage)
            }
            let point = try GeoPoint(latitude: 40.03, longitude: -3)
            let predicates: [QueryPredicate] = [
                .comparison(field: "category", op: .equal, value: "c1"),
                .and([
                    .comparison(field: "score", op: .greaterOrEqual, value: 20),
                    .comparison(field: "score", op: .less, value: 61),
                ]),
                .in(field: "category", values: ["c0", "c2"]),
                .or([.comparison(field: "score", op: .less, value: 10), .comparison(field: "category", op: .equal, value: "c2")]),
                .listContains(field: "tags", value: "t1"),
                .near(field: "loc", point: point, maxDistanceMeters: 3000),
                .withinBox(
                    field: "loc", southwest: try GeoPoint(latitude: 40.02, longitude: -3.5),
                    northeast: try GeoPoint(latitude: 40.06, longitude: -2.5)),
                .startsWith(field: "category", prefix: "c2"),
                .exists(field: "category"),
            ]
            let caller: Set<String> = ["*", "u1"]
            func readable(_ by: Set<String>) async throws -> Bool {
                try await sqlite.pool.read { db in
                    let sets = try #require(try SQLiteStorage.readerSets(of: by, db))
                    return try SQLiteStorage.everyObjectReadable(by: Set(sets), datastoreKey: main.key, className: "T", db)
                }
            }
            func check(_ objects: [ObjectSnapshot], readers: Set<String>, fromKeys: Bool) async throws {
                for predicate in predicates {
                    let query = Query(className: "T", predicate: predicate)
                    let counted = try await Self.count(query, sqlite, datastoreKey: main.key, readers: readers)
                    #expect(counted.fromKeys == fromKeys, "\(predicate)")
                    let expected = QueryEvaluator.run(
                        query, over: objects.filter { DifferentialDataset.canRead($0, readers: readers) },
                        lookup: { _ in nil }, canRead: { _ in true }
                    ).totalCount
                    #expect(counted.count == expected, "\(predicate)")
                    #expect(try await storage.count(query, datastoreKey: main.key, readers: readers) == expected, "\(predicate)")
                    let page = try await storage.find(query, datastoreKey: main.key, readers: readers, limit: 5)
                    #expect(page.totalCount == expected, "\(predicate)")
                }
            }
            #expect(try await readable(caller))
            #expect(!(try await readable(["*"])))
            try await check(live, readers: caller, fromKeys: true)
            try await check(live, readers: ["*"], fromKeys: false)

            // One object only u2 may read: no longer every object.
            let hidden = try object(1000, acl: .only("u2"))
            try await StorageWrites.put(hidden, datastoreKey: main.key, into: storage)
            #expect(!(try await readable(caller)))
            try await check(live + [hidden], readers: caller, fromKeys: false)
            // One nobody but the server may read (no reader set).
            try await StorageWrites.put(
                StorageWrites.tombstone(of: hidden), deleted: true, datastoreKey: main.key, into: storage)
            #expect(try await readable(caller))
            let nobody = try object(1001, acl: ACL())
            try await StorageWrites.put(nobody, datastoreKey: main.key, into: storage)
            #expect(!(try await readable(caller)))
            try await check(live + [nobody], readers: caller, fromKeys: false)
            try await StorageWrites.put(
                StorageWrites.tombstone(of: nobody), deleted: true, datastoreKey: main.key, into: storage)
            #expect(try await readable(caller))

            // A readable object's ACL narrowed by an update to u2 alone, then widened again.
            let narrowed = try #require(live.first { $0.acl == nil })
            var update = narrowed
            update.acl = .only("u2")
            update.version += 1
            try await StorageWrites.put(update, datastoreKey: main.key, into: storage)
            #expect(!(try await readable(caller)))
            try await check(live.map { $0.objectId == update.objectId ? update : $0 }, readers: caller, fromKeys: false)
            update.acl = nil
            update.version += 1
            try await StorageWrites.put(update, datastoreKey: main.key, into: storage)
            try await check(live.map { $0.objectId == update.objectId ? update : $0 }, readers: caller, fromKeys: true)
        }
    }

    @Test("a class naming as many reader sets as are checked counts from keys; one naming more is tested match by match")
    func manyReaderSets() async throws {
        try await withStorage(SQLiteFixture.factory) { storage, _ in
            let sqlite = try #require(storage as? SQLiteStorage)
            let datastore = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil)
            let checked = SQLiteStorage.readableSetsChecked
            // Each object readable by its own user: one set each; the caller is every user (and,
            // as every caller, among everyone).
            let caller = Set((0...checked).map { "r\($0)" } + ["*"])
            var objects: [ObjectSnapshot] = []
            func add(_ index: Int) async throws {
                let snapshot = ObjectSnapshot(
                    className: "S", objectId: "s\(index)", datastore: datastore.id,
                    fields: ["n": .int(Int64(index % 4))], acl: .only("r\(index)"), version: 1)
                try await StorageWrites.put(snapshot, datastoreKey: datastore.key, into: storage)
                objects.append(snapshot)
            }
            func expectCounts(fromKeys: Bool, _ label: String) async throws {
                let query = Query(className: "S", predicate: .comparison(field: "n", op: .equal, value: 1))
                let ran = try await Self.count(query, sqlite, datastoreKey: datastore.key, readers: caller)
                #expect(ran.count == objects.count { $0.fields["n"] == .int(1) }, "\(label)")
                #expect(ran.fromKeys == fromKeys, "\(label)")
            }
            for index in 0..<checked { try await add(index) }
            try await expectCounts(fromKeys: true, "\(checked) sets")
            try await add(checked)
            try await expectCounts(fromKeys: false, "\(checked + 1) sets")
        }
    }
}

extension SQLKeyCountTests {
    @Test("the value index check finds rows of deleted objects, of no object, under another partition and under none")
    func faultsFound() async throws {
        try await withStorage(SQLiteFixture.factory) { storage, _ in
            let sqlite = try #require(storage as? SQLiteStorage)
            let datastore = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil)
            for index in 0..<3 {
                let snapshot = ObjectSnapshot(
                    className: "T", objectId: "o\(index)", datastore: datastore.id,
                    fields: ["n": .int(Int64(index)), "tags": .list(["a"])], acl: nil, version: 1)
                try await StorageWrites.put(snapshot, datastoreKey: datastore.key, into: storage)
            }
            #expect(try await sqlite.valueIndexFaults().isEmpty)
            let keys = try await sqlite.pool.read { db in
                try Int64.fetchAll(db, sql: "SELECT key FROM objects WHERE class_name = 'T' ORDER BY key")
            }
            try #require(keys.count == 3)
            // Another class's object, whose partition goes.
            try await StorageWrites.put(
                ObjectSnapshot(className: "V", objectId: "v", datastore: datastore.id, fields: ["n": 1], acl: nil, version: 1),
                datastoreKey: datastore.key, into: storage)
            let (expected, vPartition) = try await sqlite.pool.read { db in
                let rows = { (table: String, key: Int64) in
                    try String.fetchAll(db, sql: "SELECT field FROM \(table) WHERE object_key = ? ORDER BY field", arguments: [key])
                }
                let v = try #require(try Row.fetchOne(db, sql: "SELECT o.key, p.key AS partition FROM objects o JOIN object_partitions p ON p.datastore_key = o.datastore_key AND p.class_name = o.class_name WHERE o.class_name = 'V'"))
                let partition: Int64 = try #require(try Int64.fetchOne(db, sql: "SELECT partition FROM object_elements WHERE object_key = ?", arguments: [keys[1]]))
                var expected = try rows("object_fields", keys[0]).map { "object_fields: object \(keys[0]), \($0): a deleted object" }
                expected += try rows("object_elements", keys[0]).map { "object_elements: object \(keys[0]), \($0): a deleted object" }
                expected += try rows("object_elements", keys[1]).map {
                    "object_elements: object \(keys[1]), \($0): partition \(partition + 1), not \(partition)"
                }
                expected += try rows("object_fields", v["key"]).map {
                    "object_fields: object \(v["key"] as Int64), \($0): partition \(v["partition"] as Int64), not none"
                }
                expected.append("object_fields: object 999999, ghost: no such object")
                return (expected, v["partition"] as Int64)
            }
            try await sqlite.pool.write { db in
                try db.execute(sql: "UPDATE objects SET deleted = 1 WHERE key = ?", arguments: [keys[0]])
                try db.execute(sql: "UPDATE object_elements SET partition = partition + 1 WHERE object_key = ?", arguments: [keys[1]])
                try db.execute(sql: "DELETE FROM object_partitions WHERE key = ?", arguments: [vPartition])
            }
            // A row of no object at all (foreign keys off to write it).
            try await sqlite.pool.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA foreign_keys = OFF")
                defer { try? db.execute(sql: "PRAGMA foreign_keys = ON") }
                try db.execute(
                    sql: "INSERT INTO object_fields (object_key, field, kind, sort_key, partition) VALUES (999999, 'ghost', 1, x'01', 1)")
            }
            let faults = try await sqlite.valueIndexFaults()
            #expect(faults.sorted() == expected.sorted())
            #expect(expected.count >= 5)
            // Mended, for the check every test body ends with.
            try await sqlite.pool.write { db in
                try db.execute(sql: "DELETE FROM object_fields WHERE object_key IN (?, 999999)", arguments: [keys[0]])
                try db.execute(sql: "DELETE FROM object_elements WHERE object_key IN (?, ?)", arguments: [keys[0], keys[1]])
                try db.execute(sql: "DELETE FROM object_fields WHERE partition = ?", arguments: [vPartition])
            }
            #expect(try await sqlite.valueIndexFaults().isEmpty)
        }
    }
}

extension SQLKeyCountTests {
    /// The count of `query` by the storage's runner, and whether it ran the key count
    /// (``SQLQueryCompiler/keyCount(_:)``, which `query` must have) and no other statement.
    static func count(
        _ query: Query, _ sqlite: SQLiteStorage, datastoreKey: Int64, readers: Set<String>
    ) async throws -> (count: Int, fromKeys: Bool) {
        try await sqlite.pool.read { db in
            var runner = try SQLiteStorage.runner(db, datastoreKey: datastoreKey, className: query.className, readers: readers)
            let keys = try #require(runner.compiler.keyCount(query), "\(query.predicate.map(String.init(describing:)) ?? "")")
            let log = StatementLog()
            let count = runner.count
            runner.count = { statement in
                log.statements.append(statement.sql)
                return try count(statement)
            }
            return (try runner.count(query, readers: readers), log.statements == [keys.sql])
        }
    }
}

/// The statements a runner's counts ran, in order.
private final class StatementLog {
    var statements: [String] = []
}
