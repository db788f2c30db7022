import Foundation
import GRDB
import RooftopSQLite
import Testing

/// The write-ahead log is checkpointed on a thread of its own; the writer copies only what its
/// commits logged meanwhile, or everything past the limit (``LogCheckpointer``).
@Suite("SQLite: the log's checkpointer", .timeLimit(.minutes(2)))
struct LogCheckpointerTests {
    /// Pages a test transaction logs at most (20 rows of 1,000 bytes: about six), with room.
    static let pagesPerWrite = 16
    /// SQLite's log frame: a page and its header (the file's own header is 32 bytes).
    static let frameBytes = 4_096 + 24

    /// A pool on a fresh file with `checkpointer` attached to its writer; the file is removed
    /// after `body`, the checkpointer closed.
    private static func withPool<T>(
        threshold: Int32, limit: Int32, _ body: (DatabasePool, LogCheckpointer, String) async throws -> T
    ) async throws -> T {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("checkpointer-\(UUID().uuidString).sqlite").path
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        let checkpointer = LogCheckpointer(path: path, threshold: threshold, limit: limit)
        let pool = try DatabasePool(path: path)
        try await pool.writeWithoutTransaction { db in
            try db.execute(sql: "CREATE TABLE rows (id INTEGER PRIMARY KEY, body BLOB NOT NULL)")
            try checkpointer.attach(to: db)
        }
        do {
            let result = try await body(pool, checkpointer, path)
            try await pool.writeWithoutTransaction { db in checkpointer.detach(from: db) }
            checkpointer.close()
            try pool.close()
            return result
        } catch {
            checkpointer.close()
            try? pool.close()
            throw error
        }
    }

    /// Writes 20 rows of 1,000 random bytes in one transaction.
    private static func write(_ pool: DatabasePool) throws {
        try pool.write { db in
            for _ in 0..<20 { try db.execute(sql: "INSERT INTO rows (body) VALUES (randomblob(1000))") }
        }
    }

    /// The log file's size in frames (0 when there is none).
    private static func logFrames(_ path: String) -> Int {
        let bytes = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        return max(bytes - 32, 0) / frameBytes
    }

    @Test("commits past the threshold leave the copy to the checkpointer's thread; the log starts again and stays bounded; every row is kept")
    func thresholdAndRestart() async throws {
        let writes = 300
        try await LogCheckpointerTests.withPool(threshold: 64, limit: 256) { pool, checkpointer, path in
            var largest = 0
            for _ in 0..<writes {
                try LogCheckpointerTests.write(pool)
                largest = max(largest, LogCheckpointerTests.logFrames(path))
            }
            checkpointer.waitForCheckpoints()
            let counts = checkpointer.counts
            // The thread copied frames of the log (a connection that never read copies none).
            #expect(counts.background > 0 && counts.backgroundFrames > 0, "\(counts)")
            // Checkpointed and started again: without it, the log would hold every write (about
            // 1,800 pages); the bound is loose, a loaded machine's thread may copy late.
            #expect(largest < writes * 6 / 2, "log file at \(largest) frames")
            // Two more writes after the thread's last checkpoint: the rest is copied, then the log
            // starts again.
            for _ in 0..<3 { try LogCheckpointerTests.write(pool) }
            checkpointer.waitForCheckpoints()
            for _ in 0..<3 { try LogCheckpointerTests.write(pool) }
            #expect(checkpointer.logPages < checkpointer.limit)
        }
    }

    @Test("the commits' steps: ask past the threshold, nothing while the thread copies, the rest after it, every commit past the limit")
    func steps() {
        let checkpointer = LogCheckpointer(path: "/nonexistent", threshold: 100, limit: 400)
        #expect(checkpointer.committed(pages: 60) == .nothing)
        #expect(checkpointer.committed(pages: 120) == .ask(generation: 0))
        #expect(checkpointer.committed(pages: 180) == .nothing)
        #expect(checkpointer.committed(pages: 240) == .nothing)
        checkpointer.threadCheckpointEnded(generation: 0)
        // The rest, once: the log starts again at the next write.
        #expect(checkpointer.committed(pages: 300) == .checkpoint)
        #expect(checkpointer.committed(pages: 20) == .nothing)
        #expect(checkpointer.committed(pages: 110) == .ask(generation: 1))
        // The thread fell behind: past the limit each commit copies.
        #expect(checkpointer.committed(pages: 410) == .checkpoint)
        #expect(checkpointer.committed(pages: 470) == .checkpoint)
        checkpointer.threadCheckpointEnded(generation: 1)
        #expect(checkpointer.committed(pages: 30) == .nothing)
        // A log that started again forgets the thread's last checkpoint: it asks again.
        #expect(checkpointer.committed(pages: 130) == .ask(generation: 2))
        // The log starts again while the thread copies: its end does not count for the new log.
        #expect(checkpointer.committed(pages: 40) == .nothing)
        checkpointer.threadCheckpointEnded(generation: 2)
        #expect(checkpointer.committed(pages: 150) == .ask(generation: 3))
        checkpointer.close()
        #expect(checkpointer.committed(pages: 160) == .checkpoint)
        #expect(checkpointer.counts.background == 0)
    }

    @Test("copied by the thread and the commits, every row is in the database file alone")
    func everyRowKept() async throws {
        let path = try await LogCheckpointerTests.withPool(threshold: 32, limit: 128) { pool, checkpointer, path in
            for _ in 0..<200 { try LogCheckpointerTests.write(pool) }
            checkpointer.waitForCheckpoints()
            // Copied as it would be at the next open: every frame of the log into the file.
            let copy = path + "-copy"
            try await pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
            try FileManager.default.copyItem(atPath: path, toPath: copy)
            return copy
        }
        defer { try? FileManager.default.removeItem(atPath: path) }
        let queue = try DatabaseQueue(path: path)
        #expect(try await queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM rows") } == 200 * 20)
        #expect(try await queue.read { db in try String.fetchOne(db, sql: "PRAGMA integrity_check") } == "ok")
    }

    @Test("a reader holding the log back: past the limit every commit checkpoints, and the log starts again once it ends")
    func readerHoldsLog() async throws {
        try await LogCheckpointerTests.withPool(threshold: 32, limit: 96) { pool, checkpointer, path in
            try LogCheckpointerTests.write(pool)
            // A read transaction open on the first snapshot: no checkpoint may copy past it.
            let snapshot = try pool.makeSnapshot()
            for _ in 0..<60 { try LogCheckpointerTests.write(pool) }
            checkpointer.waitForCheckpoints()
            let held = checkpointer.counts
            #expect(checkpointer.logPages > checkpointer.limit)
            // Each commit past the limit tried to copy, as SQLite's own hook does.
            #expect(held.inline >= 10, "\(held)")
            #expect(try await snapshot.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM rows") } == 20)
            _ = consume snapshot
            for _ in 0..<6 { try LogCheckpointerTests.write(pool) }
            #expect(checkpointer.logPages < checkpointer.limit, "the log did not start again: \(checkpointer.logPages)")
            #expect(LogCheckpointerTests.logFrames(path) > Int(checkpointer.limit))
        }
    }

    @Test("detached or closed, the writer checkpoints the log itself, as SQLite's own hook")
    func detachedAndClosed() async throws {
        try await LogCheckpointerTests.withPool(threshold: 32, limit: 10_000) { pool, checkpointer, path in
            try await pool.writeWithoutTransaction { db in checkpointer.detach(from: db) }
            for _ in 0..<100 { try LogCheckpointerTests.write(pool) }
            #expect(checkpointer.counts.background == 0 && checkpointer.counts.inline == 0)
            // SQLite's hook checkpointed at 32 pages and the log started again each time.
            #expect(LogCheckpointerTests.logFrames(path) <= 32 + LogCheckpointerTests.pagesPerWrite)
        }
        try await LogCheckpointerTests.withPool(threshold: 32, limit: 10_000) { pool, checkpointer, path in
            checkpointer.close()
            for _ in 0..<100 { try LogCheckpointerTests.write(pool) }
            #expect(checkpointer.counts.background == 0)
            #expect(checkpointer.counts.inline > 0)
            #expect(LogCheckpointerTests.logFrames(path) <= 32 + LogCheckpointerTests.pagesPerWrite)
        }
    }
}
