import Foundation
import GRDB
import RooftopSQLite
import RooftopShared
import RooftopTestSupport
import Synchronization
import Testing

@testable import RooftopServer

/// The storage conformance suite (``StorageConformance``) on every backend (``StorageBackend``).
@Suite("Storage conformance")
struct StorageConformanceTests {

    @Test("users: found by ID and name, also under a look-alike; a taken name or a look-alike of one is refused", arguments: StorageBackend.tested) func users(backend: StorageBackend) async throws {
        try await StorageConformance.users(backend.factory)
    }

    @Test("sessions: expiry cleanup and log-out", arguments: StorageBackend.tested) func sessions(backend: StorageBackend) async throws {
        try await StorageConformance.sessions(backend.factory)
    }

    @Test("dashboard sessions: found by hash, ended one by one or all, expired ones removed", arguments: StorageBackend.tested) func dashboardSessions(backend: StorageBackend) async throws {
        try await StorageConformance.dashboardSessions(backend.factory)
    }

    @Test("users: listed in byte order, sessions listed and ended per user, passwords replaced", arguments: StorageBackend.tested) func userAdministration(backend: StorageBackend) async throws {
        try await StorageConformance.userAdministration(backend.factory)
    }

    @Test("datastores: listed for administration, with their classes and the counts", arguments: StorageBackend.tested) func datastoreAdministration(backend: StorageBackend) async throws {
        try await StorageConformance.datastoreAdministration(backend.factory)
    }

    @Test("roles: membership updates and the role graph", arguments: StorageBackend.tested) func roles(backend: StorageBackend) async throws {
        try await StorageConformance.roles(backend.factory)
    }

    @Test("roles: a deleted role's name stays reserved", arguments: StorageBackend.tested) func retiredRoleNames(backend: StorageBackend) async throws {
        try await StorageConformance.retiredRoleNames(backend.factory)
    }

    @Test("principals: a caller with 70,000 roles gets exact answers from every filtered read", arguments: StorageBackend.tested) func manyPrincipals(backend: StorageBackend) async throws {
        try await StorageConformance.manyPrincipals(backend.factory)
    }

    @Test("reader sets: each caller finds what its principals may read, as ACLs change and objects are deleted", arguments: StorageBackend.tested) func readerSets(backend: StorageBackend) async throws {
        try await StorageConformance.readerSets(backend.factory)
    }

    @Test("reader sets: a set made by a transaction that rolled back is made again, and found", arguments: StorageBackend.tested) func readerSetsAfterRollback(backend: StorageBackend) async throws {
        try await StorageConformance.readerSetsAfterRollback(backend.factory)
    }

    @Test("reader sets: a caller in ten times the sets a query names gets exact pages and counts", arguments: StorageBackend.tested) func manyReaderSets(backend: StorageBackend) async throws {
        try await StorageConformance.manyReaderSets(backend.factory)
    }

    @Test("settings and secrets", arguments: StorageBackend.tested) func settings(backend: StorageBackend) async throws {
        try await StorageConformance.settings(backend.factory)
    }

    @Test("datastores: private per owner, shareable and :app unique", arguments: StorageBackend.tested) func datastoreScopes(backend: StorageBackend) async throws {
        try await StorageConformance.datastoreScopes(backend.factory)
    }

    @Test("datastores: sharing roles set, changed and cleared", arguments: StorageBackend.tested) func datastoreRoles(backend: StorageBackend) async throws {
        try await StorageConformance.datastoreRoles(backend.factory)
    }

    @Test("datastores: deletion cascades and keys are not reused", arguments: StorageBackend.tested) func datastoreDeletion(backend: StorageBackend) async throws {
        try await StorageConformance.datastoreDeletion(backend.factory)
    }

    @Test("objects: create, update, unchanged, reject, delete, re-create", arguments: StorageBackend.tested) func objectLifecycle(backend: StorageBackend) async throws {
        try await StorageConformance.objectLifecycle(backend.factory)
    }

    @Test("objects: mutation IDs are applied once per scope", arguments: StorageBackend.tested) func idempotency(backend: StorageBackend) async throws {
        try await StorageConformance.idempotency(backend.factory)
    }

    @Test("objects: a batch of writes in one transaction, each atomic on its own", arguments: StorageBackend.tested) func batches(backend: StorageBackend) async throws {
        try await StorageConformance.batches(backend.factory)
    }

    @Test("reader sets no object names are swept, never one named again meanwhile", arguments: StorageBackend.tested) func readerSetsSwept(backend: StorageBackend) async throws {
        try await StorageConformance.readerSetsSwept(backend.factory)
    }

    @Test("objects: a push's reads read ahead; each write still sees the transaction's earlier ones", arguments: StorageBackend.tested) func readAhead(backend: StorageBackend) async throws {
        try await StorageConformance.readAhead(backend.factory)
    }

    @Test("objects: concurrent changes and the operation log", arguments: StorageBackend.tested) func concurrentChanges(backend: StorageBackend) async throws {
        try await StorageConformance.concurrentChanges(backend.factory)
    }

    @Test("datastores: sequence, record count and size counters", arguments: StorageBackend.tested) func datastoreCounters(backend: StorageBackend) async throws {
        try await StorageConformance.datastoreCounters(backend.factory)
    }

    @Test("change feed: order, paging, classes, counts, tombstones", arguments: StorageBackend.tested) func changeFeed(backend: StorageBackend) async throws {
        try await StorageConformance.changeFeed(backend.factory)
    }

    @Test("change feed: paging under concurrent writers", arguments: StorageBackend.tested) func changeFeedUnderConcurrentWriters(backend: StorageBackend) async throws {
        try await StorageConformance.changeFeedUnderConcurrentWriters(backend.factory)
    }

    @Test("lost access after a principal set change", arguments: StorageBackend.tested) func lostAccessAfterPrincipalChange(backend: StorageBackend) async throws {
        try await StorageConformance.lostAccessAfterPrincipalChange(backend.factory)
    }

    @Test("lost access after ACL changes", arguments: StorageBackend.tested) func lostAccessAfterACLChange(backend: StorageBackend) async throws {
        try await StorageConformance.lostAccessAfterACLChange(backend.factory)
    }

    @Test("readers' history: an ACL change, a delete and a revival", arguments: StorageBackend.tested) func readerHistory(backend: StorageBackend) async throws {
        try await StorageConformance.readerHistory(backend.factory)
    }

    @Test("durability: close and reopen", arguments: StorageBackend.tested) func durability(backend: StorageBackend) async throws {
        try await StorageConformance.durability(backend.factory)
    }
}

/// What only the embedded SQLite storage does.
@Suite("SQLite storage")
struct StorageSQLiteTests {
    /// A prepared storage in a new file and the key of `u1`'s default datastore, for `body`;
    /// the file goes after.
    private func withDatastore(_ body: (SQLiteStorage, Int64) async throws -> Void) async throws {
        let fixture = try SQLiteFixture()
        defer { try? fixture.destroy() }
        let storage = try SQLiteStorage(path: fixture.path)
        try await storage.prepare()
        try await body(storage, try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil).key)
        try await storage.close()
    }

    /// Writes `snapshot` as a creation (its field `n` new) in the datastore `key`.
    private func create(_ snapshot: ObjectSnapshot, in storage: SQLiteStorage, datastoreKey key: Int64) async throws {
        _ = try await StorageConformance.write(storage, datastoreKey: key, objectId: snapshot.objectId, base: nil) { _ in
            .write(
                snapshot: snapshot, deleted: false,
                operation: OperationRecord(version: 1, change: .update([]), priorValues: ["n": nil]), merges: [])
        }
    }

    @Test("every analysisInterval object writes, the planner's statistics are refreshed")
    func statisticsRefresh() async throws {
        try await withDatastore { storage, key in
            for index in 0..<3 {
                let snapshot = StorageConformance.object("o\(index)", fields: ["n": .int(Int64(index))])
                try await create(snapshot, in: storage, datastoreKey: key)
            }
            let statistics = { try await storage.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_stat1") } }
            #expect(try await storage.pool.read { db in try db.tableExists("sqlite_stat1") } == false, "not before")
            storage.noteWrites(SQLiteStorage.analysisInterval - 3)
            try await TestWait.until("the statistics are written") {
                try await storage.pool.read { db in try db.tableExists("sqlite_stat1") } ? (try await statistics() ?? 0) > 0 : false
            }
            #expect(storage.writesSinceAnalysis.withLock { $0 } == 0)
        }
    }

    @Test("the write-ahead log's file is cut back to its limit when the log starts again after growing past it")
    func logCutBack() async throws {
        try await withDatastore { storage, _ in
            let log = storage.pool.path + "-wal"
            let logSize = { try (FileManager.default.attributesOfItem(atPath: log)[.size] as? Int) ?? -1 }
            try await storage.pool.write { db in try db.execute(sql: "CREATE TABLE filler (bytes BLOB)") }
            // A read held open from before the writes: no checkpoint may start the log again
            // under it, so the log grows past its limit (as behind a slow pull).
            let holding = Shared(false)
            let released = Shared(false)
            let reader = Task {
                try await storage.pool.read { db in
                    _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM filler")
                    holding.withLock { $0 = true }
                    let end = ContinuousClock.now.advanced(by: .seconds(120))
                    while !released.withLock({ $0 }), ContinuousClock.now < end { Thread.sleep(forTimeInterval: 0.001) }
                }
            }
            defer { released.withLock { $0 = true } }
            try await TestWait.until("the read is open") { holding.withLock { $0 } }
            for _ in 0..<10 {
                try await storage.pool.write { db in
                    try db.execute(
                        sql: """
                            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
                            INSERT INTO filler SELECT randomblob(1000) FROM n
                            """)
                }
            }
            let grown = try logSize()
            #expect(grown > 2 * SQLiteStorage.logSizeLimit, "the log grew under the held read: \(grown) bytes")
            released.withLock { $0 = true }
            try await reader.value
            // The first write has the whole log checkpointed (nothing holds it now), by itself or
            // by the checkpointer's thread (``LogCheckpointer``), waited for here; the next starts
            // the log again and, at its commit, cuts the file back.
            try await storage.pool.write { db in try db.execute(sql: "INSERT INTO filler VALUES (x'00')") }
            storage.checkpointer.waitForCheckpoints()
            for _ in 0..<2 {
                try await storage.pool.write { db in try db.execute(sql: "INSERT INTO filler VALUES (x'00')") }
            }
            #expect(storage.checkpointer.counts.background > 0, "\(storage.checkpointer.counts)")
            #expect(try logSize() <= SQLiteStorage.logSizeLimit)
        }
    }

    @Test("the pool's readers read the file through a memory map; point reads, which follow every write, through pread")
    func pointReadsUnmapped() async throws {
        try await withDatastore { storage, _ in
            let mapped = try await storage.pool.read { db in try Int.fetchOne(db, sql: "PRAGMA mmap_size") }
            #expect(mapped == RooftopSQLite.mappedBytes)
            #expect(try storage.pointRead { db in try Int.fetchOne(db, sql: "PRAGMA mmap_size") } == 0)
        }
    }

    @Test("point reads (a session, a datastore, an object) answer while long reads hold every reader of the pool, and see the latest commit")
    func pointReadsBesideLongReads() async throws {
        try await withDatastore { storage, key in
            // Long reads, as many as the pool has readers, each held until released.
            let readers = storage.pool.configuration.maximumReaderCount
            let holding = Shared(0)
            let released = Shared(false)
            let long = (0..<readers).map { _ in
                Task {
                    try await storage.pool.read { _ in
                        holding.withLock { $0 += 1 }
                        // Held past the point reads' wait: were they to wait for a reader, that wait fails.
                        let end = ContinuousClock.now.advanced(by: .seconds(120))
                        while !released.withLock({ $0 }), ContinuousClock.now < end { Thread.sleep(forTimeInterval: 0.001) }
                    }
                }
            }
            defer { released.withLock { $0 = true } }
            try await TestWait.until("every reader of the pool is held") { holding.withLock { $0 } == readers }
            // Written while the pool's readers are held: a point read sees it.
            let snapshot = StorageConformance.object("o1", fields: ["n": .int(1)])
            try await create(snapshot, in: storage, datastoreKey: key)
            let answered = Shared<[String]>([])
            let point = Task {
                if try await storage.session(tokenHash: "nobody") == nil { answered.withLock { $0.append("session") } }
                if try await storage.datastore(key: key) != nil { answered.withLock { $0.append("datastore") } }
                if try await storage.object(datastoreKey: key, className: snapshot.className, objectId: "o1")?.snapshot.fields["n"] == .int(1) {
                    answered.withLock { $0.append("object") }
                }
            }
            try await TestWait.until(within: .seconds(30), "the point reads answer") { answered.withLock { $0.count } == 3 }
            #expect(holding.withLock { $0 } == readers, "the long reads still hold every reader")
            try await point.value
            released.withLock { $0 = true }
            for task in long { try await task.value }
        }
    }

    @Test("a point read that fails leaves nothing open: the next sees what was committed since")
    func failedPointRead() async throws {
        try await withDatastore { storage, key in
            #expect(try await storage.datastore(key: key)?.sequence == 0)
            #expect(throws: RooftopError.self) {
                try storage.pointRead { db -> Int64? in
                    // A cursor stepped once and dropped by the error: its statement must not hold a
                    // read open.
                    let cursor = try Int64.fetchCursor(db, sql: "SELECT sequence FROM datastores WHERE key = ?", arguments: [key])
                    _ = try cursor.next()
                    throw RooftopError(.internal, "injected")
                }
            }
            #expect(try storage.pointRead { db in db.isInsideTransaction } == false)
            let snapshot = StorageConformance.object("o1", fields: ["n": .int(1)])
            try await create(snapshot, in: storage, datastoreKey: key)
            #expect(try await storage.datastore(key: key)?.sequence == 1)
            #expect(try await storage.object(datastoreKey: key, className: snapshot.className, objectId: "o1") != nil)
            #expect(try await storage.session(tokenHash: "nobody") == nil)
        }
    }

    @Test("an object read by ID with damaged readers: a missing set gives none, an unreadable one is an internal error")
    func damagedReaderSets() async throws {
        try await withDatastore { storage, key in
            let snapshot = {
                var object = StorageConformance.object("o1", fields: ["n": .int(1)])
                object.acl = .only("u1")
                return object
            }()
            try await create(snapshot, in: storage, datastoreKey: key)
            let read = { try await storage.object(datastoreKey: key, className: snapshot.className, objectId: "o1") }
            #expect(try await read()?.readers == ["u1"])

            try await storage.pool.write { db in try db.execute(sql: "UPDATE reader_sets SET principals = '{\"u1\"'") }
            await #expect(throws: RooftopError.self) { _ = try await read() }
            do {
                _ = try await read()
            } catch let error as RooftopError {
                #expect(error.code == .internal)
            }

            try await storage.pool.write { db in try db.execute(sql: "UPDATE objects SET readers = readers + 1000") }
            let orphan = try await read()
            #expect(orphan?.readers == [] && orphan?.snapshot.fields == snapshot.fields, "as on PostgreSQL: no readers from a set not stored")
        }
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
                    try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY rowid")
                )
            }
            #expect(mode == "wal")
            #expect(applied == SQLiteMigrations.migrator.migrations)
            try await storage.close()
        }
    }

    @Test("object writes keep their statement journals in memory; the writer's other transactions and readers use files")
    func writerTemporariesInMemory() async throws {
        let fixture = try SQLiteFixture()
        defer { try? fixture.destroy() }
        let storage = try SQLiteStorage(path: fixture.path)
        try await storage.prepare()
        // SQLite's `temp_store`: 0 is the build's default (files), 2 memory.
        let setting = "PRAGMA temp_store"
        #expect(try await storage.pool.writeWithoutTransaction { db in try Int.fetchOne(db, sql: setting) } == 0)
        #expect(try await storage.writeObjects { objects in
            return try Int.fetchOne(try #require(objects as? SQLiteObjectWriter).db, sql: setting)
        } == 2)
        #expect(
            try await storage.pool.write { db in try Int.fetchOne(db, sql: setting) } == 0,
            "a datastore's deletion, in one statement, journals to a file")
        #expect(try await storage.pool.read { db in try Int.fetchOne(db, sql: setting) } == 0)
        // A push's mutations, each in its savepoint, each touching more pages than SQLite kept in
        // memory before spilling to a file; every tenth fails after its object was written (its
        // result cannot be recorded), and its savepoint restores the pages from the journal.
        let key = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil).key
        let text = String(repeating: "x", count: 3_000)
        let ids = try (0..<60).map { try MutationID("m\($0)") }
        let outcomes = try await storage.writeObjects { objects -> [Bool] in
            let sqlite = try #require(objects as? SQLiteObjectWriter)
            try sqlite.db.execute(
                sql: """
                    CREATE TEMP TRIGGER refuse_tenth BEFORE INSERT ON mutation_results
                    WHEN CAST(substr(new.mutation_id, 2) AS INTEGER) % 10 = 9
                    BEGIN SELECT RAISE(ABORT, 'injected'); END
                    """)
            let requests = ids.enumerated().map { index, id in
                ObjectWriteRequest(datastoreKey: key, className: "T", objectId: "o\(index)", baseVersion: nil, mutation: ("u1", id))
            }
            try objects.lock(requests)
            let written = requests.enumerated().map { index, request in
                do {
                    _ = try objects.write(request) { _ in
                        StorageWrites.decision(
                            StorageConformance.object(request.objectId, fields: ["n": .int(Int64(index)), "s": .string(text)]),
                            deleted: false)
                    }
                    return true
                } catch {
                    return false
                }
            }
            try sqlite.db.execute(sql: "DROP TRIGGER refuse_tenth")
            return written
        }
        #expect(outcomes.count(where: { $0 }) == 54)
        let stored = try await storage.pool.read { db in
            try String.fetchAll(db, sql: "SELECT object_id FROM objects WHERE datastore_key = ? ORDER BY key", arguments: [key])
        }
        #expect(stored == (0..<60).filter { $0 % 10 != 9 }.map { "o\($0)" })
        #expect(try await storage.changes(datastoreKey: key, after: 0, limit: 100, classes: nil).map(\.sequence) == Array(1...54))
        try await storage.close()
    }

    @Test("the database, its WAL and shared memory, and backups are private (0600) whatever the umask; an older 0644 file is tightened")
    func privateFiles() async throws {
        let fixture = try SQLiteFixture()
        defer { try? fixture.destroy() }
        func mode(_ path: String) throws -> Int {
            try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
        }
        // As an older server left it: created with the umask's 0644.
        #expect(FileManager.default.createFile(atPath: fixture.path, contents: nil, attributes: [.posixPermissions: 0o644]))
        #expect(try mode(fixture.path) == 0o644)
        let storage = try SQLiteStorage(path: fixture.path)
        try await storage.prepare()
        _ = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil)
        for file in [fixture.path, fixture.path + "-wal", fixture.path + "-shm"] {
            #expect(FileManager.default.fileExists(atPath: file), "\(file)")
            let bits = try mode(file)
            #expect(bits == 0o600, "\(file) is \(String(bits, radix: 8))")
        }
        let backup = fixture.path + ".backup"
        defer { try? FileManager.default.removeItem(atPath: backup) }
        _ = try SQLiteBackup.backup(databaseAt: fixture.path, to: backup)
        #expect(try mode(backup) == 0o600)
        try await storage.close()
    }
}

/// A value several tasks read and change.
private final class Shared<Value: Sendable>: Sendable {
    private let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
    func withLock<T>(_ body: (inout Value) -> T) -> T { value.withLock { body(&$0) } }
}
