import GRDB
import RooftopShared
import RooftopTestSupport
import Testing

@testable import RooftopServer

/// The storage conformance suite (``StorageConformance``) on the embedded SQLite storage.
@Suite("SQLite storage conformance")
struct StorageSQLiteTests {
    let factory = SQLiteFixture.factory

    @Test("users: found by ID and name; a taken name is refused") func users() async throws {
        try await StorageConformance.users(factory)
    }

    @Test("sessions: expiry cleanup and log-out") func sessions() async throws {
        try await StorageConformance.sessions(factory)
    }

    @Test("roles: membership updates and the role graph") func roles() async throws {
        try await StorageConformance.roles(factory)
    }

    @Test("settings and secrets") func settings() async throws {
        try await StorageConformance.settings(factory)
    }

    @Test("datastores: private per owner, shareable and :app unique") func datastoreScopes() async throws {
        try await StorageConformance.datastoreScopes(factory)
    }

    @Test("datastores: sharing roles set, changed and cleared") func datastoreRoles() async throws {
        try await StorageConformance.datastoreRoles(factory)
    }

    @Test("datastores: deletion cascades and keys are not reused") func datastoreDeletion() async throws {
        try await StorageConformance.datastoreDeletion(factory)
    }

    @Test("objects: create, update, unchanged, reject, delete, re-create") func objectLifecycle() async throws {
        try await StorageConformance.objectLifecycle(factory)
    }

    @Test("objects: mutation IDs are applied once per scope") func idempotency() async throws {
        try await StorageConformance.idempotency(factory)
    }

    @Test("objects: a batch of writes in one transaction, each atomic on its own") func batches() async throws {
        try await StorageConformance.batches(factory)
    }

    @Test("objects: concurrent changes and the operation log") func concurrentChanges() async throws {
        try await StorageConformance.concurrentChanges(factory)
    }

    @Test("datastores: sequence, record count and size counters") func datastoreCounters() async throws {
        try await StorageConformance.datastoreCounters(factory)
    }

    @Test("change feed: order, paging, classes, counts, tombstones") func changeFeed() async throws {
        try await StorageConformance.changeFeed(factory)
    }

    @Test("change feed: paging under concurrent writers") func changeFeedUnderConcurrentWriters() async throws {
        try await StorageConformance.changeFeedUnderConcurrentWriters(factory)
    }

    @Test("lost access after a principal set change") func lostAccessAfterPrincipalChange() async throws {
        try await StorageConformance.lostAccessAfterPrincipalChange(factory)
    }

    @Test("lost access after ACL changes") func lostAccessAfterACLChange() async throws {
        try await StorageConformance.lostAccessAfterACLChange(factory)
    }

    @Test("durability: close and reopen") func durability() async throws {
        try await StorageConformance.durability(factory)
    }

    @Test("every analysisInterval object writes, the planner's statistics are refreshed")
    func statisticsRefresh() async throws {
        let fixture = try SQLiteFixture()
        defer { try? fixture.destroy() }
        let storage = try SQLiteStorage(path: fixture.path)
        try await storage.prepare()
        let key = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil).key
        for index in 0..<3 {
            let snapshot = StorageConformance.object("o\(index)", fields: ["n": .int(Int64(index))])
            _ = try await StorageConformance.write(storage, datastoreKey: key, objectId: "o\(index)", base: nil) { _ in
                .write(
                    snapshot: snapshot, deleted: false,
                    operation: OperationRecord(version: 1, change: .update([]), priorValues: ["n": nil]), merges: [])
            }
        }
        let statistics = { try await storage.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_stat1") } }
        #expect(try await storage.pool.read { db in try db.tableExists("sqlite_stat1") } == false, "not before")
        storage.noteWrites(SQLiteStorage.analysisInterval - 3)
        try await TestWait.until("the statistics are written") {
            try await storage.pool.read { db in try db.tableExists("sqlite_stat1") } ? (try await statistics() ?? 0) > 0 : false
        }
        #expect(storage.writesSinceAnalysis.withLock { $0 } == 0)
        try await storage.close()
    }

    @Test("the embedded database runs in WAL mode with every migration applied, also after reopening")
    func walAndMigrations() async throws {
        let fixture = try SQLiteFixture()
        defer { try? fixture.destroy() }
        for _ in 0..<2 {
            let storage = try SQLiteStorage(path: fixture.path)
            try await storage.prepare()
            let (mode, applied) = try await storage.pool.read { db in
                (
                    try String.fetchOne(db, sql: "PRAGMA journal_mode"),
                    try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier")
                )
            }
            #expect(mode == "wal")
            #expect(applied == SQLiteMigrations.migrator.migrations)
            try await storage.close()
        }
    }
}
