import Foundation
import GRDB
import RooftopShared
import RooftopTestSupport
import Testing

@testable import Rooftop

/// What a write costs the disk: the pages of each table and index it writes to the log, read back
/// from the write-ahead log itself and named with SQLite's `dbstat` table.
@Suite("Local store: the pages a write touches", .timeLimit(.minutes(5)))
struct StorePagesTests {
    /// The tables and indexes whose pages the last transaction in the log at `path` wrote (one
    /// name per page).
    private static func lastCommitPages(path: String, store: LocalStore) throws -> [String] {
        let log = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path + "-wal")))
        func integer(at offset: Int) -> Int {
            log[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
        }
        // A 32-byte header (the page size at 8, the salts at 16 and 20), then frames: a 24-byte
        // header (the page's number; the database's size in pages on a transaction's last frame,
        // 0 on the others; the salts at 8 and 12) and the page. Frames whose salts are not the
        // header's are left from before the log last restarted: the log ends at the first.
        let pageSize = integer(at: 8)
        let salts = (integer(at: 16), integer(at: 20))
        var transactions: [[Int]] = []
        var current: [Int] = []
        var offset = 32
        while offset + 24 + pageSize <= log.count, (integer(at: offset + 8), integer(at: offset + 12)) == salts {
            current.append(integer(at: offset))
            if integer(at: offset + 4) != 0 {
                transactions.append(current)
                current = []
            }
            offset += 24 + pageSize
        }
        let names = try store.read { db in
            Dictionary(
                try Row.fetchAll(db, sql: "SELECT name, pageno FROM dbstat").map { ($0["pageno"] as Int, $0["name"] as String) },
                uniquingKeysWith: { first, _ in first })
        }
        return (transactions.last ?? []).map { names[$0] ?? "page \($0)" }
    }

    @Test("a queued save of an object writes its row and its queue row (four pages); its flags' and readers' indexes only when they change")
    func queuedSavePages() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pages-\(UUID().uuidString).sqlite").path
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        let (client, _) = try offlineClient(storage: .file(path: path))
        let store = client.core.store
        try store.declareIndexes([["category", "score"], ["score"]], of: "Note")
        for index in 0..<200 {
            let note = client.object("Note", id: "n\(index)")
            note["category"] = .string("c\(index % 7)")
            note["score"] = .double(Double(index))
            note["sum"] = .int(0)
            try await note.saveEventually()
        }
        // A field no index names: the object's row and the queue's (its table and its two
        // indexes; no sequence of its row IDs since v15).
        let note = client.object("Note", id: "n42")
        try note.increment("sum", by: 1)
        try await note.saveEventually()
        let saved = try Self.lastCommitPages(path: path, store: store)
        // (`sqlite_schema`: the file's first page, rewritten when a commit grows the file.)
        #expect(
            Set(saved).isSubset(of: [
                "objects", "outbox", "outbox_by_object", "sqlite_autoindex_outbox_1", "sqlite_schema",
            ]), "\(saved)")
        #expect(saved.contains("objects") && saved.contains("outbox"), "\(saved)")

        // New readers: the row's reader set changes, and so does its index.
        var acl = ACL()
        acl.setReadAccess(true, for: .user("u9"))
        note.acl = acl
        try await note.saveEventually()
        let shared = try Self.lastCommitPages(path: path, store: store)
        #expect(shared.contains("objects_by_readers"), "\(shared)")
        let readers = try store.read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT m.principal FROM objects o JOIN reader_set_members m ON m.reader_set = o.readers
                    WHERE o.object_id = 'n42'
                    """)
        }
        #expect(readers == [Principal.user("u9").description], "\(readers)")
        // Read by the stored object, the change is there.
        #expect(try store.object(note.key, scope: "")?.local?.acl == acl)
        await client.shutdown()
    }
}
