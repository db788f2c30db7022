import Foundation
import GRDB
import RooftopSQL
import RooftopShared
import Testing

@testable import RooftopServer
import RooftopTestSupport

/// A class that declares indexes keeps index rows only of the fields they name on SQLite
/// (``RowFields``); a change of what it declares is applied by a rebuild in the background, while
/// writes and queries go on. At every moment queries agree with the evaluator, and once a rebuild
/// has finished every object's rows are exactly those of the fields kept.
@Suite("SQLite: index rows of declared fields")
struct SQLiteRowFieldsTests {
    @Test("a declaration's change: what writers keep, what queries read, when a rebuild is due")
    func transitions() {
        let every = RowFields.every
        #expect(every.kept(objectKey: 5) == nil && every.queried == nil)
        #expect(every.declaring(nil) == nil, "no declaration, no change")

        // Declaring fields: they were complete (every field was), nothing to add; the rebuild
        // only removes the others' rows.
        let declared = every.declaring(["a", "b"])
        #expect(declared == RowFields(written: ["a", "b"], complete: ["a", "b"], rebuiltTo: 0))
        #expect(declared?.declaring(["a", "b"]) == nil)

        // Adding a field: kept by writers behind the rebuild, read by queries once it is complete.
        let added = RowFields(written: ["a", "b"], complete: ["a", "b"]).declaring(["a", "c"])
        #expect(added == RowFields(written: ["a", "c"], complete: ["a"], rebuiltTo: 0))
        var moving = added ?? every
        moving.rebuiltTo = 10
        #expect(moving.kept(objectKey: 10) == ["a", "c"] && moving.kept(objectKey: 11) == ["a"])
        #expect(moving.kept(objectKey: nil) == ["a"], "a new object is past the rebuild")
        #expect(moving.queried == ["a"], "built-in fields too only when kept: else read from their columns")

        // Declaring nothing again: every field, complete only once rebuilt.
        let undeclared = RowFields(written: ["a"], complete: ["a"]).declaring(nil)
        #expect(undeclared == RowFields(written: nil, complete: ["a"], rebuiltTo: 0))
        #expect(RowFields.declared(by: []) == nil && RowFields.declared(by: [["x", "y"], ["y"]]) == ["x", "y"])
    }

    @Test("random declarations, changed and rebuilt batch by batch: queries agree with the evaluator between batches, rows are exact after each rebuild")
    func differential() async throws {
        for seed in TestSeeds.seeds(fixed: [11, 12, 13]) {
            try await Self.withStorage(batch: 3) { storage in
                try await RowFieldsDifferential(
                    storage: storage, declareWithoutRebuild: { try await Self.declareWithoutRebuild($0, storage) },
                    expectExactRows: { try await Self.expectExactRows(storage, $0) },
                    expectSound: { try await Self.expectSoundValueIndex(storage, $0) }
                ).run(seed: seed)
            }
        }
    }

    @Test("ten times a batch of objects rebuilt batch by batch, written, created, deleted and re-created between the batches, in two datastores, keys used again behind the rebuild; three declarations in turn")
    func rebuildUnderWrites() async throws {
        let batch = 10
        try await Self.withStorage(batch: batch) { storage in
            let first = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil)
            var rng = SeededGenerator(seed: 7)
            var objects: [String: (datastore: DatastoreRecord, object: ObjectSnapshot)] = [:]
            var tombstones: [String: (datastore: DatastoreRecord, object: ObjectSnapshot)] = [:]
            func object(_ id: String, in datastore: DatastoreRecord, version: Int64, _ rng: inout SeededGenerator)
                -> ObjectSnapshot
            {
                ObjectSnapshot(
                    className: "W", objectId: id, datastore: datastore.id,
                    fields: [
                        "a": .int(Int64(rng.int(0...20))), "b": .string(rng.pick(["x", "y", "z"])),
                        "t": .string(String(repeating: rng.pick(["p", "q"]), count: 300)),
                        "tags": .list([.string(rng.pick(["red", "blue"])), .string(String(repeating: "l", count: 300))]),
                    ], version: version)
            }
            func put(_ id: String, in datastore: DatastoreRecord, _ rng: inout SeededGenerator) async throws {
                let version = (objects[id]?.object.version ?? tombstones[id]?.object.version ?? 0) + 1
                let next = object(id, in: datastore, version: version, &rng)
                _ = try await StorageWrites.put(next, datastoreKey: datastore.key, into: storage)
                objects[id] = (datastore, next)
                tombstones[id] = nil
            }
            /// Some writes of every kind: updates, creations, deletions, re-creations over tombstones.
            /// (Creations go to `creating`.)
            func writes(_ label: String, creating: DatastoreRecord, _ rng: inout SeededGenerator) async throws {
                for round in 0..<6 {
                    switch round % 3 {
                    case 0:
                        try await put("\(label)-\(round)", in: creating, &rng)
                    case 1:
                        guard let id = Array(objects.keys).sorted().randomElement(using: &rng), let entry = objects[id] else {
                            continue
                        }
                        if rng.chance(30) {
                            let tombstone = StorageWrites.tombstone(of: entry.object)
                            _ = try await StorageWrites.put(
                                tombstone, deleted: true, datastoreKey: entry.datastore.key, into: storage)
                            objects[id] = nil
                            tombstones[id] = (entry.datastore, tombstone)
                        } else {
                            try await put(id, in: entry.datastore, &rng)
                        }
                    default:
                        if let id = Array(tombstones.keys).sorted().randomElement(using: &rng), let entry = tombstones[id] {
                            try await put(id, in: entry.datastore, &rng)
                        }
                    }
                }
            }
            for index in 0..<(6 * batch) { try await put("w\(index)", in: first, &rng) }
            for (step, indexes) in [[["a"]], [["a"], ["tags", "b"]], []].enumerated() {
                // The objects with the largest keys, in a datastore of their own.
                let second = try await storage.openOrCreateDatastore(
                    id: try DatastoreID("tail\(step)"), ownerId: "u1", title: nil)
                for index in 0..<(4 * batch) { try await put("t\(step)-\(index)", in: second, &rng) }
                try await Self.declareWithoutRebuild(ClassSettings(className: "W", indexes: indexes), storage)
                var batches = 0
                var tailDeleted = false
                repeat {
                    batches += 1
                    // Creations go to the tail while it is there, so that it keeps the largest keys.
                    try await writes("s\(step)-b\(batches)", creating: tailDeleted ? first : second, &rng)
                    try await Self.expectSoundValueIndex(storage, "step \(step), batch \(batches)")
                    let rebuiltTo = try await storage.pool.read { db in try SQLiteStorage.rowFields(of: "W", db).rebuiltTo }
                    let tailStart = try await storage.pool.read { db in
                        try Int64.fetchOne(db, sql: "SELECT min(key) FROM objects WHERE datastore_key = ?", arguments: [second.key])
                    }
                    if !tailDeleted, let rebuiltTo, let tailStart, rebuiltTo > tailStart {
                        // The rebuild is inside the tail: deleting it makes new objects take keys it passed.
                        try await storage.deleteDatastore(key: second.key)
                        objects = objects.filter { $0.value.datastore.key != second.key }
                        tombstones = tombstones.filter { $0.value.datastore.key != second.key }
                        tailDeleted = true
                        try await writes("s\(step)-reused", creating: first, &rng)
                        let reused = try await storage.pool.read { db in
                            try Int64.fetchOne(db, sql: "SELECT max(key) FROM objects") ?? 0
                        }
                        #expect(reused <= rebuiltTo, "step \(step): new objects took keys \(reused), past \(rebuiltTo)")
                    }
                } while try await storage.rebuildRowsBatch()
                #expect(tailDeleted, "step \(step): the rebuild was never seen inside the tail")
                #expect(batches >= 5, "step \(step): \(batches) batches")
                try await Self.expectExactRows(storage, "step \(step)")
                let live = DifferentialDataset(
                    datastoreKey: first.key, live: objects.values.filter { $0.datastore.key == first.key }.map(\.object))
                for text in ["where b = 'y'", "where tags contains 'red' order by a", "where a >= 5 order by b desc, a"] {
                    let query = try Query.parse(className: "W", text: text)
                    let outcome = try await DifferentialCheck.compare(query, readers: nil, dataset: live, storage: storage)
                    #expect(outcome.mismatch == nil, "step \(step), \(text): \(outcome.mismatch ?? "")")
                }
            }
        }
    }

    @Test("an object deleted ahead of a rebuild leaves no rows of the fields the class no longer keeps")
    func deletedAheadOfRebuild() async throws {
        try await Self.withStorage(batch: 2) { storage in
            let datastore = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil)
            var last: ObjectSnapshot?
            for index in 0..<6 {
                let object = ObjectSnapshot(
                    className: "D", objectId: "d\(index)", datastore: .default,
                    fields: ["a": .int(Int64(index)), "b": .string("b"), "tags": .list(["x", "y"])], version: 1)
                _ = try await StorageWrites.put(object, datastoreKey: datastore.key, into: storage)
                last = object
            }
            try await Self.declareWithoutRebuild(ClassSettings(className: "D", indexes: [["a"]]), storage)
            // The last object, which the rebuild has not reached, deleted; then one behind it.
            let tombstone = StorageWrites.tombstone(of: try #require(last))
            _ = try await StorageWrites.put(tombstone, deleted: true, datastoreKey: datastore.key, into: storage)
            try await Self.expectSoundValueIndex(storage, "deleted ahead of the rebuild")
            #expect(try await storage.rebuildRowsBatch())
            let first = ObjectSnapshot(
                className: "D", objectId: "d0", datastore: .default, fields: ["a": 0, "b": "b", "tags": ["x", "y"]], version: 1)
            _ = try await StorageWrites.put(
                StorageWrites.tombstone(of: first), deleted: true, datastoreKey: datastore.key, into: storage)
            try await Self.expectSoundValueIndex(storage, "deleted behind the rebuild")
            while try await storage.rebuildRowsBatch() {}
            try await Self.expectExactRows(storage, "rebuilt")
        }
    }

    @Test("four declarations in a row, each made while the last one's rebuild may run, end with the last one's rows, complete")
    func noLostStart() async throws {
        try await Self.withStorage(batch: 2) { storage in
            let datastore = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil)
            for index in 0..<40 {
                _ = try await StorageWrites.put(
                    ObjectSnapshot(
                        className: "W", objectId: "w\(index)", datastore: .default,
                        fields: ["a": .int(Int64(index)), "b": .string("b"), "c": .bool(true)], version: 1),
                    datastoreKey: datastore.key, into: storage)
            }
            for indexes in [[["a"]], [["b"]], [["c"]], [["a"], ["c"]]] {
                try await storage.saveClassSettings(ClassSettings(className: "W", indexes: indexes))
            }
            await storage.rowRebuildFinished()
            try await Self.expectExactRows(storage, "after four declarations")
            let state = try await storage.pool.read { db in try SQLiteStorage.rowFields(of: "W", db) }
            #expect(state == RowFields(written: ["a", "c"], complete: ["a", "c"]))
        }
    }

    @Test("a class whose rebuild fails (a body that cannot be read) waits for the next start; the other classes' rebuilds go on")
    func failingClass() async throws {
        try await Self.withStorage(batch: 3) { storage in
            let datastore = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil)
            for className in ["A", "B"] {
                for index in 0..<10 {
                    _ = try await StorageWrites.put(
                        ObjectSnapshot(
                            className: className, objectId: "o\(index)", datastore: .default,
                            fields: ["a": .int(Int64(index)), "b": .string("b")], version: 1),
                        datastoreKey: datastore.key, into: storage)
                }
            }
            try await storage.pool.write { db in
                try db.execute(sql: "UPDATE objects SET body = '{' WHERE class_name = 'A' AND object_id = 'o4'")
            }
            for className in ["A", "B"] {
                try await storage.saveClassSettings(ClassSettings(className: className, indexes: [["a"]]))
            }
            await storage.rowRebuildFinished()
            let states = try await storage.pool.read { db in
                (try SQLiteStorage.rowFields(of: "A", db), try SQLiteStorage.rowFields(of: "B", db))
            }
            #expect(states.0.rebuiltTo != nil, "A's rebuild stopped at the unreadable body")
            #expect(states.1 == RowFields(written: ["a"], complete: ["a"]), "B's went on: \(states.1)")
            // Mended, A's rebuild ends at the next start.
            try await storage.pool.write { db in
                try db.execute(
                    sql: "UPDATE objects SET body = ? WHERE class_name = 'A' AND object_id = 'o4'",
                    arguments: [try StoredObjectBody(fields: ["a": .int(4), "b": .string("b")]).encodedDocument()])
            }
            storage.startRowRebuild()
            await storage.rowRebuildFinished()
            try await Self.expectExactRows(storage, "mended")
        }
    }

    @Test("a database whose classes declared indexes before v11 drops the other fields' rows when it opens")
    func migration() async throws {
        let fixture = try SQLiteFixture()
        defer { try? fixture.destroy() }
        // Written with rows of every field, as storage before v11 wrote them (no class declares).
        let old = try SQLiteStorage(path: fixture.path)
        try await old.prepare()
        let datastore = try await old.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil)
        for index in 0..<25 {
            _ = try await StorageWrites.put(
                ObjectSnapshot(
                    className: "W", objectId: "w\(index)", datastore: .default,
                    fields: ["a": .int(Int64(index)), "b": .string("b\(index % 3)")], version: 1),
                datastoreKey: datastore.key, into: old)
        }
        // Then the database as v10 left it, with a class that declares an index.
        try await old.pool.write { db in
            try db.execute(sql: "DROP TABLE class_rows")
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v11: rows of declared fields'")
            try db.execute(
                sql: "INSERT INTO class_settings (class_name, settings) VALUES (?, ?)",
                arguments: ["W", try DocumentCoding.encode(ClassSettings(className: "W", indexes: [["a"]]))])
        }
        let before = try await old.pool.read { db in
            try Set(String.fetchAll(db, sql: "SELECT DISTINCT field FROM object_fields"))
        }
        #expect(before.isSuperset(of: ["a", "b"]))
        try await old.close()

        let storage = try SQLiteStorage(path: fixture.path, rowRebuildBatch: 4)
        try await storage.prepare()
        await storage.rowRebuildFinished()
        let fields = try await storage.pool.read { db in
            try Set(String.fetchAll(db, sql: "SELECT DISTINCT field FROM object_fields"))
        }
        #expect(fields == ["a"], "the declared field's only: the built-in ones are read from their columns")
        let page = try await storage.find(
            try Query.parse(className: "W", text: "where b = 'b1' order by a"), datastoreKey: datastore.key, readers: nil, limit: 100)
        #expect(page.objects.map(\.objectId) == ["w1", "w4", "w7", "w10", "w13", "w16", "w19", "w22"])
        try await storage.close()
    }

    @Test("a database from before v12 loses its objectId rows, and its dates' rows where a declaring class does not name them")
    func builtInsMigration() async throws {
        let fixture = try SQLiteFixture()
        defer { try? fixture.destroy() }
        let old = try SQLiteStorage(path: fixture.path)
        try await old.prepare()
        let datastore = try await old.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil)
        // `D` names no date, `E` names `createdAt`, `U` declares nothing.
        try await old.saveClassSettings(ClassSettings(className: "D", indexes: [["a"]]))
        try await old.saveClassSettings(ClassSettings(className: "E", indexes: [["createdAt"]]))
        await old.rowRebuildFinished()
        for className in ["D", "E", "U"] {
            for index in 0..<12 {
                _ = try await StorageWrites.put(
                    ObjectSnapshot(
                        className: className, objectId: "\(className.lowercased())\(index)", datastore: .default,
                        fields: ["a": .int(Int64(index))],
                        createdAt: Timestamp(millisecondsSinceEpoch: Int64(1_000 * ((index * 5) % 12))),
                        updatedAt: Timestamp(millisecondsSinceEpoch: Int64(1_000 * ((index * 7) % 12))), version: 1),
                    datastoreKey: datastore.key, into: old)
            }
        }
        // The built-in fields' rows, as storage before v12 wrote them for every object.
        try await old.pool.write { db in
            for row in try Row.fetchAll(db, sql: "SELECT o.*, d.id AS datastore_id FROM objects o JOIN datastores d ON d.key = o.datastore_key") {
                let object = ObjectRow(row)
                let rows = SQLIndexRows.diff(snapshot: try object.snapshot(), previous: nil).added
                try db.execute(sql: "DELETE FROM object_fields WHERE object_key = ? AND field IN ('objectId', 'createdAt', 'updatedAt')", arguments: [object.key])
                try SQLiteStorage.insertRows(
                    rows.filter { SQLIndexRows.builtInFields.contains($0.field) }, objectKey: object.key,
                    datastoreKey: datastore.key, className: object.className, db)
            }
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v12: built-in fields read from their columns'")
        }
        try await old.close()

        let storage = try SQLiteStorage(path: fixture.path, rowRebuildBatch: 5)
        try await storage.prepare()
        await storage.rowRebuildFinished()
        let fields = try await storage.pool.read { db in
            try Dictionary(
                grouping: Row.fetchAll(
                    db, sql: "SELECT DISTINCT o.class_name, f.field FROM object_fields f JOIN objects o ON o.key = f.object_key"),
                by: { $0["class_name"] as String }
            ).mapValues { Set($0.map { $0["field"] as String }) }
        }
        #expect(fields["D"] == ["a"])
        #expect(fields["E"] == ["createdAt"])
        #expect(fields["U"] == ["a", "createdAt", "updatedAt"])
        try await Self.expectExactRows(storage, "after v12")
        for className in ["D", "E", "U"] {
            let prefix = className.lowercased()
            let newest = try await storage.find(
                try Query.parse(className: className, text: "order by createdAt desc limit 3"), datastoreKey: datastore.key,
                readers: nil, limit: 3)
            #expect(newest.objects.map(\.objectId) == ["\(prefix)7", "\(prefix)2", "\(prefix)9"], "\(className)")
            let one = try await storage.find(
                try Query.parse(className: className, text: "where objectId = '\(prefix)4'"), datastoreKey: datastore.key,
                readers: nil, limit: 10)
            #expect(one.objects.map(\.objectId) == ["\(prefix)4"] && one.totalCount == 1, "\(className)")
            let recent = try await storage.count(
                try Query.parse(
                    className: className, text: "where updatedAt >= ?",
                    parameters: [.date(Timestamp(millisecondsSinceEpoch: 9_000))]),
                datastoreKey: datastore.key, readers: nil)
            #expect(recent == 3, "\(className)")
        }
        try await storage.close()
    }

    // MARK: Support

    /// Runs `body` with a fresh SQLite storage rebuilding `batch` objects a transaction.
    static func withStorage(batch: Int, _ body: (SQLiteStorage) async throws -> Void) async throws {
        let fixture = try SQLiteFixture()
        let storage = try SQLiteStorage(path: fixture.path, rowRebuildBatch: batch)
        do {
            try await storage.prepare()
            try await body(storage)
            try await expectSoundValueIndex(storage, "at the end")
            try await storage.close()
            try fixture.destroy()
        } catch {
            try? await storage.close()
            try? fixture.destroy()
            throw error
        }
    }

    /// Saves `settings` and applies its declaration to the rows, without starting the rebuild:
    /// the test runs its batches.
    static func declareWithoutRebuild(_ settings: ClassSettings, _ storage: SQLiteStorage) async throws {
        try await storage.pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO class_settings (class_name, settings) VALUES (?, ?)
                    ON CONFLICT (class_name) DO UPDATE SET settings = excluded.settings
                    """,
                arguments: [settings.className, try DocumentCoding.encode(settings)])
            _ = try SQLiteStorage.declareRowFields(settings, db)
        }
    }

    /// Checks that every value index row belongs to a live object under its partition
    /// (``SQLiteStorage/valueIndexFaults()``), as counts from keys rely on, rebuild or not.
    static func expectSoundValueIndex(_ storage: SQLiteStorage, _ label: String) async throws {
        let faults = try await storage.valueIndexFaults()
        #expect(faults.isEmpty, "\(label): \(faults.prefix(5))")
    }

    /// Checks that every object's index rows are exactly those its class keeps (``RowFields``,
    /// no rebuild under way), worked out from its stored body, and that the counts of values too
    /// long to index are those of the rows.
    static func expectExactRows(_ storage: SQLiteStorage, _ label: String) async throws {
        try await storage.pool.read { db in
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM class_rows WHERE rebuilt_to IS NOT NULL") == 0)
            var expected = ExpectedRows()
            let objects = try Row.fetchAll(db, sql: "SELECT o.*, d.id AS datastore_id FROM objects o JOIN datastores d ON d.key = o.datastore_key")
            for row in objects {
                let object = ObjectRow(row)
                guard !object.deleted else { continue }
                let state = try SQLiteStorage.rowFields(of: object.className, db)
                #expect(state.written == state.complete)
                expected.add(objectKey: object.key, datastoreKey: row["datastore_key"], snapshot: try object.snapshot(), kept: state.written)
            }
            var stored = ExpectedRows()
            stored.fields = Set(
                try Row.fetchAll(db, sql: "SELECT * FROM object_fields").map { row in
                    ExpectedRows.field(
                        objectKey: row["object_key"], field: row["field"], kind: row["kind"],
                        sortKey: (row["sort_key"] as Data?).map { Array($0) }, latitude: row["latitude"], longitude: row["longitude"])
                })
            stored.elements = Set(
                try Row.fetchAll(db, sql: "SELECT * FROM object_elements").map { row in
                    ExpectedRows.element(objectKey: row["object_key"], field: row["field"], key: Array(row["element_key"] as Data))
                })
            for row in try Row.fetchAll(db, sql: "SELECT * FROM unindexed_fields WHERE objects != 0") {
                stored.counts[ExpectedRows.count(datastoreKey: row["datastore_key"], className: row["class_name"], field: row["field"])] =
                    row["objects"]
            }
            #expect(stored == expected, "\(label): \(stored.differences(from: expected))")
        }
    }
}
