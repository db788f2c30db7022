import Foundation
import GRDB
import GRDBSQLite
import RooftopShared
import Testing

@testable import Rooftop

/// The writer's page cache is large for long writes (a pull's batches) and SQLite's default for
/// the others, whose commits walk the whole cache (``WriterCache``).
@Suite("Local store: the writer's page cache", .timeLimit(.minutes(2)))
struct WriterCacheTests {
    /// What the writer's cache is while a write runs: its `cache_size` (negative: KiB) and the
    /// bytes it holds.
    struct Reading: Sendable {
        var sizeSetting: Int
        var bytesHeld: Int
    }

    private static func reading(_ db: Database) throws -> Reading {
        var held: Int32 = 0
        var highwater: Int32 = 0
        let status = sqlite3_db_status(db.sqliteConnection, SQLITE_DBSTATUS_CACHE_USED, &held, &highwater, 0)
        try #require(status == SQLITE_OK)
        return Reading(sizeSetting: try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? 0, bytesHeld: Int(held))
    }

    private static func withStore<T>(linger: Duration, _ body: (LocalStore) async throws -> T) async throws -> T {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("writer-cache-\(UUID().uuidString).sqlite").path
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        let store = try LocalStore(.file(path: path), cacheLinger: linger)
        defer { store.close() }
        return try await body(store)
    }

    /// A short write's reading.
    private static func short(_ store: LocalStore) throws -> Reading {
        try store.write(scope: "") { transaction in try reading(transaction.db) }
    }

    /// A long write's reading, after it wrote `rows` rows of 1,000 bytes to a table of its own.
    private static func long(_ store: LocalStore, rows: Int = 0) async throws -> Reading {
        try await store.writeLong(scope: "") { transaction in
            let db = transaction.db
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS scratch (id INTEGER PRIMARY KEY, body BLOB NOT NULL)")
            for _ in 0..<rows {
                try db.execute(sql: "INSERT INTO scratch (body) VALUES (randomblob(1000))")
            }
            return try reading(db)
        }
    }

    @Test("a long write runs with 32 MiB and the cache stays large for the linger; a short write before any runs with SQLite's default")
    func sizes() async throws {
        try await WriterCacheTests.withStore(linger: .seconds(3600)) { store throws in
            let first = try WriterCacheTests.short(store)
            #expect(first.sizeSetting == -WriterCache.defaultKiB)
            let long = try await WriterCacheTests.long(store)
            #expect(long.sizeSetting == -WriterCache.largeKiB)
            let next = try WriterCacheTests.short(store)
            #expect(next.sizeSetting == -WriterCache.largeKiB)
            #expect(store.writerCache.currentKiB == WriterCache.largeKiB)
        }
    }

    @Test("after the linger, a short write drops the pages a long write left cached down to SQLite's default size")
    func shrinksAfterLinger() async throws {
        try await WriterCacheTests.withStore(linger: .zero) { store throws in
            // 12 MB written: the long write's cache holds far more than 2 MiB of them.
            let long = try await WriterCacheTests.long(store, rows: 12_000)
            #expect(long.sizeSetting == -WriterCache.largeKiB)
            #expect(long.bytesHeld > 8 << 20)
            let short = try WriterCacheTests.short(store)
            #expect(short.sizeSetting == -WriterCache.defaultKiB)
            // 2,000 KiB of pages and their headers.
            #expect(short.bytesHeld < 3 << 20)
            // And large again for the next long write.
            let again = try await WriterCacheTests.long(store)
            #expect(again.sizeSetting == -WriterCache.largeKiB)
        }
    }
}
