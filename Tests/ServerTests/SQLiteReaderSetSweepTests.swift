import GRDB
import RooftopSQL
import RooftopShared
import Testing

@testable import RooftopServer

/// The history sweep deletes the reader sets no object names any more
/// (``SQLiteStorage/sweepReaderSets()``), so that inventing ACLs does not grow the database without
/// bound; sets that objects name, or that a write names while the sweep runs, stay.
@Suite("SQLite: reader sets swept")
struct SQLiteReaderSetSweepTests {
    /// Runs `body` on a new SQLite storage with the `:app` datastore (its key), closed after.
    static func withApp(_ body: (SQLiteStorage, Int64) async throws -> Void) async throws {
        let fixture = try SQLiteFixture()
        defer { try? fixture.destroy() }
        let storage = try SQLiteStorage(path: fixture.path)
        try await storage.prepare()
        let key = try await storage.openOrCreateDatastore(id: .app, ownerId: nil, title: nil).key
        do {
            try await body(storage, key)
        } catch {
            try? await storage.close()
            throw error
        }
        try await storage.close()
    }

    /// The texts of the stored sets.
    static func texts(_ storage: SQLiteStorage) async throws -> Set<String> {
        try await storage.pool.read { db in Set(try String.fetchAll(db, sql: "SELECT principals FROM reader_sets")) }
    }

    /// The members stored, as (principal, set text) pairs.
    static func members(_ storage: SQLiteStorage) async throws -> Int {
        try await storage.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM reader_set_members") ?? -1 }
    }

    @Test("a sweep deletes the sets no object names, with their members; queries answer as before; a set swept is made again")
    func sweep() async throws {
        try await Self.withApp { storage, key in
            try await StorageConformance.ReaderSetCase.write(storage, datastoreKey: key)
            // The deleted object's set (`u1` and `role:R`) is named by no object now.
            let gone = #"["role:R","u1"]"#
            #expect(try await Self.texts(storage) == Set(StorageConformance.ReaderSetCase.migratedSets.keys).union([gone]))

            let swept = try await storage.sweepHistory(
                cutoff: Timestamp(millisecondsSinceEpoch: 0), now: Timestamp(millisecondsSinceEpoch: 100))
            #expect(swept.readerSets == 1)
            #expect(try await Self.texts(storage) == Set(StorageConformance.ReaderSetCase.migratedSets.keys))
            let expectedMembers = StorageConformance.ReaderSetCase.migratedSets.values.reduce(0, +)
            #expect(try await Self.members(storage) == Int(expectedMembers))
            try await StorageConformance.ReaderSetCase.check(storage, datastoreKey: key)
            #expect(try await storage.sweepHistory(cutoff: Timestamp(millisecondsSinceEpoch: 0), now: Timestamp(millisecondsSinceEpoch: 200)).readerSets == 0)

            // The same ACL again: its set is made again and found by its readers.
            try await StorageWrites.put(
                StorageConformance.object("again", acl: StorageConformance.readable(by: .user("u1"), .role("R"))),
                datastoreKey: key, into: storage)
            let page = try await storage.find(Query("T"), datastoreKey: key, readers: ["*", "role:R"], limit: 100)
            #expect(Set(page.objects.map(\.objectId)) == ["public", "publicToo", "viaRole", "odd", "again"])
        }
    }

    @Test("a set a write names while the sweep reads is kept, and its object stays found")
    func namedDuringTheSweep() async throws {
        try await Self.withApp { storage, key in
            let first = try await StorageWrites.put(
                StorageConformance.object("a", acl: StorageConformance.readable(by: .user("u5"))), datastoreKey: key,
                into: storage)
            try await StorageWrites.put(
                StorageWrites.tombstone(of: first.snapshot), deleted: true, datastoreKey: key, into: storage)

            let unnamed = try await storage.startReaderSetSweep()
            #expect(unnamed.count == 1, "the deleted object's set")
            // Between the scan and the deletion, a write names that set.
            try await StorageWrites.put(
                StorageConformance.object("b", acl: StorageConformance.readable(by: .user("u5"))), datastoreKey: key,
                into: storage)
            #expect(try await storage.deleteReaderSets(unnamed) == 0)
            storage.readerSetWatch.end()
            #expect(try await Self.texts(storage) == [#"["u5"]"#])
            let page = try await storage.find(Query("T"), datastoreKey: key, readers: ["*", "u5"], limit: 10)
            #expect(page.objects.map(\.objectId) == ["b"])
        }
    }

    @Test("ten times a batch of unnamed sets: all swept, the named ones kept")
    func manyUnnamed() async throws {
        try await Self.withApp { storage, key in
            let total = SQLiteStorage.sweepBatch * 10 + 7
            try await storage.pool.write { db in
                for index in 0..<total { _ = try SQLiteStorage.readerSetID(["u\(index)", "v\(index % 3)"], db) }
            }
            for index in [0, 4_001, total - 1] {
                try await StorageWrites.put(
                    StorageConformance.object("o\(index)", acl: StorageConformance.readable(by: .user("u\(index)"), .user("v\(index % 3)"))),
                    datastoreKey: key, into: storage)
            }
            #expect(try await storage.sweepReaderSets() == total - 3)
            #expect(try await Self.texts(storage).count == 3)
            #expect(try await Self.members(storage) == 6)
            for index in [0, 4_001, total - 1] {
                let page = try await storage.find(Query("T"), datastoreKey: key, readers: ["*", "u\(index)"], limit: 10)
                #expect(page.objects.map(\.objectId) == ["o\(index)"])
            }
        }
    }
}
