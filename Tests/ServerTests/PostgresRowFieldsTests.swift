import Foundation
import Logging
import PostgresNIO
import RooftopSQL
import RooftopShared
import Synchronization
import Testing

@testable import RooftopServer
import RooftopTestSupport

/// A class that declares indexes keeps index rows only of the fields they name on PostgreSQL too
/// (``RowFields``, v12): queries on its other fields go to the shared evaluator, a change of what
/// it declares is applied by a rebuild whose batches exclude the class's concurrent writers, and
/// at every moment queries agree with the evaluator.
@Suite("PostgreSQL: index rows of declared fields", .enabled(if: PostgresTestCluster.enabled, "needs a PostgreSQL cluster"))
struct PostgresRowFieldsTests {
    @Test("random declarations, changed and rebuilt batch by batch: queries agree with the evaluator between batches, rows are exact after each rebuild")
    func differential() async throws {
        for seed in TestSeeds.seeds(fixed: [21, 22]) {
            try await Self.withStorage(batch: 3) { storage in
                try await RowFieldsDifferential(
                    storage: storage, declareWithoutRebuild: { try await Self.declareWithoutRebuild($0, storage) },
                    expectExactRows: { try await Self.expectExactRows(storage, $0) }
                ).run(seed: seed)
            }
        }
    }

    @Test("a rebuild's batches run while four writers create, update and delete objects of the class: every object's rows are exact once it has ended")
    func rebuildUnderConcurrentWrites() async throws {
        try await Self.withStorage(batch: 4) { storage in
            let datastore = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil)
            try await storage.saveClassSettings(ClassSettings(className: "W", indexes: [["a"]]))
            await storage.rowRebuildFinished()
            func object(_ id: Int, version: Int64, _ rng: inout SeededGenerator) -> ObjectSnapshot {
                StorageConformance.object(
                    "o\(id)", className: "W", version: version,
                    fields: [
                        "a": .int(Int64(rng.int(0...9))), "b": .string("b\(rng.int(0...9))"),
                        "c": .list([.string("c\(rng.int(0...3))"), .int(Int64(id))]),
                    ])
            }
            // 40 objects first, then declarations that add and drop fields while writers go on.
            var rng = SeededGenerator(seed: 5)
            for id in 0..<40 { _ = try await StorageWrites.put(object(id, version: 1, &rng), datastoreKey: datastore.key, into: storage) }
            for (step, indexes) in [[["a"], ["b"]], [["c"]], [["b", "a"]]].enumerated() {
                try await Self.declareWithoutRebuild(ClassSettings(className: "W", indexes: indexes), storage)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { while try await storage.rebuildRowsBatch() {} }
                    for writer in 0..<4 {
                        group.addTask {
                            var rng = SeededGenerator(seed: UInt64(100 * step + writer))
                            for round in 0..<10 {
                                // Each writer its own objects: versions follow one another.
                                let id = writer * 10 + rng.int(0...9)
                                let current = try await storage.object(datastoreKey: datastore.key, className: "W", objectId: "o\(id)")
                                let version = (current?.snapshot.version ?? 0) + 1
                                if round % 4 == 3, let current, !current.isDeleted {
                                    _ = try await StorageWrites.put(
                                        StorageWrites.tombstone(of: object(id, version: version - 1, &rng)), deleted: true,
                                        datastoreKey: datastore.key, into: storage)
                                } else {
                                    _ = try await StorageWrites.put(
                                        object(id, version: version, &rng), datastoreKey: datastore.key, into: storage)
                                }
                                // New objects too, whose keys come after every object's.
                                _ = try await StorageWrites.put(
                                    object(1000 + 100 * step + 10 * writer + round, version: 1, &rng),
                                    datastoreKey: datastore.key, into: storage)
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                while try await storage.rebuildRowsBatch() {}
                try await Self.expectExactRows(storage, "step \(step)")
            }
        }
    }

    @Test("a v11 database whose class declares indexes: the migration keeps the declared fields' rows complete, and the rebuild removes the others'")
    func fromV11() async throws {
        let url = try await PostgresTestCluster.createDatabase()
        defer { Task { try? await PostgresTestCluster.dropDatabase(url: url) } }
        // Written by this version with every field's rows (as v11 wrote them): its state removed.
        var storage = try Self.open(url, batch: 2)
        try await storage.prepare()
        let datastore = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil)
        for id in 0..<7 {
            var snapshot = StorageConformance.object(
                "o\(id)", className: "M", fields: ["a": .int(Int64(id)), "b": .string("b\(id % 2)"), "c": .list([.string("x")])])
            snapshot.createdAt = Timestamp(millisecondsSinceEpoch: 1_000 + Int64(id))
            _ = try await StorageWrites.put(snapshot, datastoreKey: datastore.key, into: storage)
        }
        try await storage.transaction { session in
            try session.execute(
                """
                INSERT INTO class_settings (class_name, settings) VALUES ('M', \(try DocumentCoding.encode(ClassSettings(className: "M", indexes: [["a"]]))))
                """)
            try session.execute("DELETE FROM class_rows")
            try session.execute("DELETE FROM rooftop_migrations WHERE name = 'v12: rows of declared fields only'")
            try session.execute("DROP TABLE class_rows")
        }
        let before = try await storage.read { session in
            try session.query("SELECT count(*) FROM object_fields WHERE field = 'b'").first?.decode(Int64.self)
        }
        #expect(before == 7, "every field's rows, as before v12")
        try await storage.close()

        storage = try Self.open(url, batch: 2)
        do {
            try await storage.prepare()
            await storage.rowRebuildFinished()
            let state = try await storage.read { session in try PostgresStorage.rowFields(of: "M", session) }
            #expect(state == RowFields(written: ["a"], complete: ["a"]))
            try await Self.expectExactRows(storage, "after v12")
            // `b` is read by the evaluator now; `a` from its rows; `createdAt` from its column.
            let odd = try await storage.find(Query("M").where(Field("b") == "b1").order(by: "a"), datastoreKey: datastore.key, readers: nil, limit: 10)
            #expect(odd.objects.map(\.objectId) == ["o1", "o3", "o5"] && odd.totalCount == 3)
            let some = try await storage.count(Query("M").where(Field("a") >= 4), datastoreKey: datastore.key, readers: nil)
            #expect(some == 3)
            let ordered = try await storage.find(
                Query("M").where(Field("c").exists).order(by: "createdAt", descending: true), datastoreKey: datastore.key,
                readers: nil, limit: 3)
            // Created one after the other (a millisecond apart): the newest first.
            #expect(ordered.objects.map(\.objectId) == ["o6", "o5", "o4"] && ordered.totalCount == 7)
        } catch {
            try? await storage.close()
            throw error
        }
        try await storage.close()
    }

    @Test("a query on an undeclared field reads its candidates a batch at a time: 1,200 objects answered exactly; a body that cannot be read fails the query, and the connection answers the next")
    func evaluatedInBatches() async throws {
        try await Self.withStorage(batch: 100, connections: 1) { storage in
            let datastore = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil)
            try await storage.saveClassSettings(ClassSettings(className: "B", indexes: [["a"]]))
            for id in 0..<1_200 {
                let snapshot = StorageConformance.object(
                    String(format: "o%04d", id), className: "B", fields: ["a": .int(Int64(id % 7)), "b": .string("b\(id % 5)")])
                _ = try await StorageWrites.put(snapshot, datastoreKey: datastore.key, into: storage)
            }
            let query = Query("B").where(Field("b") == "b3").order(by: "objectId", descending: true).limit(5)
            let page = try await storage.find(query, datastoreKey: datastore.key, readers: nil, limit: 5)
            #expect(page.totalCount == 240 && page.objects.map(\.objectId) == ["o1198", "o1193", "o1188", "o1183", "o1178"])
            // Ordered by an undeclared field, every object a match: only the first `offset +
            // limit` are kept as the candidates stream by (1,200 past the 1,024 kept at most).
            let byB = Query("B").order(by: "b", descending: true).offset(3).limit(5)
            let sorted = try await storage.find(byB, datastoreKey: datastore.key, readers: nil, limit: 5)
            #expect(sorted.totalCount == 1_200 && sorted.objects.map(\.objectId) == ["o0019", "o0024", "o0029", "o0034", "o0039"])
            let counted = try await storage.count(Query("B").where(Field("b") == "b3" && Field("a") == 1), datastoreKey: datastore.key, readers: nil)
            #expect(counted == (0..<1_200).filter { $0 % 5 == 3 && $0 % 7 == 1 }.count)

            try await storage.read { session in
                try session.execute("UPDATE objects SET body = '{' WHERE class_name = 'B' AND object_id = 'o0003'")
            }
            await #expect(throws: (any Error).self) {
                _ = try await storage.find(query, datastoreKey: datastore.key, readers: nil, limit: 5)
            }
            // The one connection read the rest of the rows: it answers the next query.
            let declared = try await storage.count(Query("B").where(Field("a") == 2), datastoreKey: datastore.key, readers: nil)
            #expect(declared == (0..<1_200).filter { $0 % 7 == 2 }.count)
        }
    }

    @Test("a query's reads stop at the query timeout: PostgreSQL cancels a statement that runs past it, and the connection answers the next")
    func queryTimeout() async throws {
        try await Self.withStorage(batch: 1, connections: 1, queryTimeout: .milliseconds(200)) { storage in
            let shown = try await storage.readSnapshot { session in
                try session.query("SHOW statement_timeout").first?.decode(String.self)
            }
            #expect(shown == "200ms")
            await #expect(throws: (any Error).self) {
                try await storage.readSnapshot { session in _ = try session.query("SELECT pg_sleep(30)") }
            }
            let after = try await storage.readSnapshot { session in try session.query("SELECT 1").first?.decode(Int64.self) }
            #expect(after == 1)
        }
    }

    @Test("a class's lock: a rebuild's batch holding it keeps a writer of the class waiting until it commits, and a writer holding it keeps the batch waiting")
    func classLock() async throws {
        try await Self.withStorage(batch: 10) { storage in
            let datastore = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil)
            let seed = try await storage.lockSeed()
            let first = StorageConformance.object("o1", className: "L", fields: ["a": 1, "b": 2])
            _ = try await StorageWrites.put(first, datastoreKey: datastore.key, into: storage)

            // The batch's side: the class's lock held exclusively in an open transaction.
            let release = DispatchSemaphore(value: 0)
            try await Self.expectWaits(storage, release: release, "the write waits for the batch") {
                try await storage.transaction { session in
                    try PostgresStorage.lockClass("L", seed: seed, session)
                    _ = release.wait(timeout: .now() + 60)
                }
            } waiter: {
                _ = try await StorageWrites.put(
                    StorageConformance.updated(first, ["a": 3]), datastoreKey: datastore.key, into: storage)
            }

            // The writer's side: a transaction that locked its write, still open.
            try await Self.declareWithoutRebuild(ClassSettings(className: "L", indexes: [["a"]]), storage)
            try await Self.expectWaits(storage, release: release, "the batch waits for the writer") {
                try await storage.writeObjects { writer in
                    try writer.lock([
                        ObjectWriteRequest(datastoreKey: datastore.key, className: "L", objectId: "o2", baseVersion: 0, mutation: nil)
                    ])
                    _ = release.wait(timeout: .now() + 60)
                }
            } waiter: {
                while try await storage.rebuildRowsBatch() {}
            }
            try await Self.expectExactRows(storage, "after the rebuild")
        }
    }

    /// Runs `holder` (which holds a class lock until `release` is signalled) and, once its lock
    /// shows granted, `waiter`: checks that the waiter waits for a lock and has not finished
    /// until the holder lets go, then that both finish.
    private static func expectWaits(
        _ storage: PostgresStorage, release: DispatchSemaphore, _ comment: Comment,
        holding holder: @escaping @Sendable () async throws -> Void,
        waiter: @escaping @Sendable () async throws -> Void
    ) async throws {
        let held = Task { try await holder() }
        try await waitForAdvisoryLocks(storage, granted: true)
        let finished = Flag()
        let waiting = Task {
            try await waiter()
            finished.set()
        }
        try await waitForAdvisoryLocks(storage, granted: false)
        #expect(!finished.isSet, comment)
        release.signal()
        try await held.value
        try await waiting.value
        #expect(finished.isSet)
    }

    /// A flag one task sets and another reads.
    final class Flag: Sendable {
        private let value = Mutex(false)
        func set() { value.withLock { $0 = true } }
        var isSet: Bool { value.withLock { $0 } }
    }

    /// Waits (at most 30 seconds) until PostgreSQL shows an advisory lock of the storage's
    /// database granted (`granted`) or one waited for.
    static func waitForAdvisoryLocks(_ storage: PostgresStorage, granted: Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let count = try await storage.read { session in
                try session.query(
                    """
                    SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted = \(granted)
                    AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                    """
                ).first?.decode(Int64.self) ?? 0
            }
            if count > 0 { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("no advisory lock \(granted ? "held" : "waited for") within 30 seconds")
    }

    /// Runs `body` with a storage on a new database whose rebuild reads `batch` objects at a time,
    /// over at most `connections` connections, its queries' reads stopped past `queryTimeout`.
    static func withStorage(
        batch: Int, connections: Int = 6, queryTimeout: Duration = .seconds(30), _ body: (PostgresStorage) async throws -> Void
    ) async throws {
        let url = try await PostgresTestCluster.createDatabase()
        let storage = try open(url, batch: batch, connections: connections, queryTimeout: queryTimeout)
        do {
            try await storage.prepare()
            try await body(storage)
        } catch {
            try? await storage.close()
            try? await PostgresTestCluster.dropDatabase(url: url)
            throw error
        }
        try await storage.close()
        try await PostgresTestCluster.dropDatabase(url: url)
    }

    static func open(
        _ url: String, batch: Int, connections: Int = 6, queryTimeout: Duration = .seconds(30)
    ) throws -> PostgresStorage {
        try PostgresStorage(
            url: url, maximumConnections: connections, logger: Logger(label: "rooftop.storage-tests"), rowRebuildBatch: batch,
            queryTimeout: queryTimeout)
    }

    /// Saves a class's settings as ``PostgresStorage/saveClassSettings(_:)`` does, without
    /// starting the rebuild: the caller runs its batches.
    static func declareWithoutRebuild(_ settings: ClassSettings, _ storage: PostgresStorage) async throws {
        let text = try DocumentCoding.encode(settings)
        let seed = try await storage.lockSeed()
        try await storage.transaction { session in
            try session.execute(
                """
                INSERT INTO class_settings (class_name, settings) VALUES (\(settings.className), \(text))
                ON CONFLICT (class_name) DO UPDATE SET settings = excluded.settings
                """)
            _ = try PostgresStorage.declareRowFields(settings, seed: seed, session)
        }
    }

    /// Checks that every live object's index rows are exactly those its class keeps (no rebuild
    /// under way), and the counts of values too long to index those of the rows.
    static func expectExactRows(_ storage: PostgresStorage, _ label: String) async throws {
        let (stored, expected) = try await storage.transaction { session -> (ExpectedRows, ExpectedRows) in
            #expect(try session.query("SELECT count(*) FROM class_rows WHERE rebuilt_to IS NOT NULL").first?.decode(Int64.self) == 0)
            var expected = ExpectedRows()
            var states: [String: RowFields] = [:]
            for row in try session.query(
                "SELECT \(unescaped: objectRowColumns), o.datastore_key FROM objects o JOIN datastores d ON d.key = o.datastore_key")
            {
                let object = try PostgresStorage.objectRow(row)
                guard !object.deleted else { continue }
                let state = try states[object.className] ?? PostgresStorage.rowFields(of: object.className, session)
                states[object.className] = state
                #expect(state.written == state.complete)
                expected.add(
                    objectKey: object.key, datastoreKey: try Array(row)[10].decode(Int64.self), snapshot: try object.snapshot(),
                    kept: state.written)
            }
            var stored = ExpectedRows()
            for row in try session.query("SELECT object_key, field, kind, sort_key, latitude, longitude FROM object_fields") {
                let (key, field, kind, sortKey, latitude, longitude) = try row.decode(
                    (Int64, String, Int64, ByteBuffer?, Double?, Double?).self)
                stored.fields.insert(
                    ExpectedRows.field(
                        objectKey: key, field: field, kind: kind, sortKey: sortKey.map { Array($0.readableBytesView) },
                        latitude: latitude, longitude: longitude))
            }
            for row in try session.query("SELECT object_key, field, element_key FROM object_elements") {
                let (key, field, element) = try row.decode((Int64, String, ByteBuffer).self)
                stored.elements.insert(ExpectedRows.element(objectKey: key, field: field, key: Array(element.readableBytesView)))
            }
            for row in try session.query("SELECT datastore_key, class_name, field, objects FROM unindexed_fields WHERE objects <> 0") {
                let (datastoreKey, className, field, objects) = try row.decode((Int64, String, String, Int64).self)
                stored.counts[ExpectedRows.count(datastoreKey: datastoreKey, className: className, field: field)] = objects
            }
            return (stored, expected)
        }
        #expect(stored == expected, "\(label): \(stored.differences(from: expected))")
    }
}
