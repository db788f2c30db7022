import Foundation
import GRDB
import RooftopShared
import Testing

@testable import Rooftop

/// What the writer keeps from one transaction to the next (``WriterMemo``): reader-set keys and
/// index declarations, never one a transaction rolled back, another connection changed, or a
/// declaration replaced.
@Suite("Local store: the writer's memo")
struct WriterMemoTests {
    private static func snapshot(_ id: String, readers: [String], fields: [String: Value] = ["a": 1]) -> ObjectSnapshot {
        let acl = ACL(Dictionary(uniqueKeysWithValues: readers.map { (Principal.user($0), ACL.Access(read: true, write: true)) }))
        return ObjectSnapshot(className: "Note", objectId: id, datastore: .app, fields: fields, acl: acl, version: 1)
    }

    private static func key(_ id: String) -> ObjectKey {
        ObjectKey(datastore: .app, className: "Note", objectId: id)
    }

    private static func put(_ snapshot: ObjectSnapshot, in transaction: StoreTransaction) throws {
        try transaction.put(ObjectKey(snapshot), server: snapshot, local: snapshot, deleted: false)
    }

    /// The principals of the reader set an object's row names (`nil` when the set is missing).
    private static func readers(of id: String, _ store: LocalStore) throws -> String? {
        try store.read { db in
            try String.fetchOne(
                db,
                sql: "SELECT s.principals FROM objects o LEFT JOIN reader_sets s ON s.id = o.readers WHERE o.object_id = ?",
                arguments: [id])
        }
    }

    @Test("a reader set inserted by a transaction that rolled back is not remembered")
    func rolledBack() throws {
        let store = try LocalStore(.inMemory)
        let first = Self.snapshot("n1", readers: ["u1", "u2"])
        #expect(throws: RooftopError.self) {
            try store.write(scope: "s") { transaction in
                try Self.put(first, in: transaction)
                throw RooftopError(.invalidOperation, "rolled back")
            }
        }
        try store.write(scope: "s") { transaction in try Self.put(Self.snapshot("n2", readers: ["u1", "u2"]), in: transaction) }
        let principals = try #require(try Self.readers(of: "n2", store))
        #expect(principals.contains("u1") && principals.contains("u2"))
        #expect(store.writerMemo.readerSetCount == 1)
    }

    @Test("a write by another connection empties it: a reader set's key taken by another set is looked up again")
    func otherConnection() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("memo-\(UUID().uuidString).sqlite").path
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        let store = try LocalStore(.file(path: path))
        try store.write(scope: "s") { transaction in try Self.put(Self.snapshot("n1", readers: ["u1"]), in: transaction) }
        #expect(store.writerMemo.readerSetCount == 1)
        do {
            // Another store on the file drops the datastore (and the set), and a new set takes
            // the dropped one's key.
            let other = try LocalStore(.file(path: path))
            try other.write(scope: "s") { transaction in try transaction.removeDatastore(.app, discardQueued: true) }
            try other.write(scope: "s") { transaction in try Self.put(Self.snapshot("n2", readers: ["u9"]), in: transaction) }
        }
        try store.write(scope: "s") { transaction in try Self.put(Self.snapshot("n3", readers: ["u1"]), in: transaction) }
        let principals = try #require(try Self.readers(of: "n3", store))
        #expect(principals.contains("u1") && !principals.contains("u9"))
    }

    /// The `readable` flag of an object's row.
    private static func readable(_ id: String, _ store: LocalStore) throws -> Bool? {
        try store.read { db in try Bool.fetchOne(db, sql: "SELECT readable FROM objects WHERE object_id = ?", arguments: [id]) }
    }

    @Test("the readers flags are kept for follow the scope's change: a write after it flags objects for the new readers")
    func keptReaders() throws {
        let store = try LocalStore(.inMemory)
        try store.keepReadableFlags(scope: "s", for: ["u1"])
        try store.write(scope: "s") { transaction in try Self.put(Self.snapshot("n1", readers: ["u1"]), in: transaction) }
        #expect(try Self.readable("n1", store) == true)
        // The user's roles change: flags are kept for other readers now, and the next write,
        // starting from the memo, flags by them.
        try store.keepReadableFlags(scope: "s", for: ["u2"])
        #expect(try Self.readable("n1", store) == false)
        try store.write(scope: "s") { transaction in
            try Self.put(Self.snapshot("n2", readers: ["u1"]), in: transaction)
            try Self.put(Self.snapshot("n3", readers: ["u2"]), in: transaction)
        }
        #expect(try Self.readable("n2", store) == false)
        #expect(try Self.readable("n3", store) == true)
        // Another scope's flags are its own.
        try store.write(scope: "t") { transaction in try Self.put(Self.snapshot("n4", readers: ["u2"]), in: transaction) }
        #expect(try Self.readable("n4", store) == false)
    }

    @Test("taking over another scope forgets both scopes' kept readers: the next write flags nothing readable")
    func keptReadersAfterAdoption() throws {
        let store = try LocalStore(.inMemory)
        try store.keepReadableFlags(scope: "u1", for: ["u1"])
        try store.write(scope: "u1") { transaction in try Self.put(Self.snapshot("n1", readers: ["u1"]), in: transaction) }
        #expect(try Self.readable("n1", store) == true)
        // Local use before signing in, taken over: the flags are kept for no one until a query
        // records its readers again.
        try store.write(scope: "") { transaction in try Self.put(Self.snapshot("n2", readers: ["u1"]), in: transaction) }
        try store.write(scope: "u1") { transaction in try transaction.adopt(scope: "") }
        try store.write(scope: "u1") { transaction in try Self.put(Self.snapshot("n3", readers: ["u1"]), in: transaction) }
        #expect(try Self.readable("n3", store) == false)
    }

    @Test("a declaration empties it: the next write indexes the declared fields only")
    func declarations() throws {
        let store = try LocalStore(.inMemory)
        let fields: [String: Value] = ["a": 1, "b": 2]
        try store.write(scope: "s") { transaction in
            try Self.put(Self.snapshot("n1", readers: ["u1"], fields: fields), in: transaction)
        }
        try store.declareIndexes([["a"]], of: "Note")
        try store.write(scope: "s") { transaction in
            try Self.put(Self.snapshot("n2", readers: ["u1"], fields: fields), in: transaction)
        }
        let rows = try store.read { db in
            try String.fetchAll(
                db,
                sql: "SELECT f.field FROM object_fields f JOIN objects o ON o.key = f.object_key WHERE o.object_id = 'n2'")
        }
        #expect(rows.contains("a"))
        #expect(!rows.contains("b"), "rows: \(rows)")
    }

    @Test("at ten times its budget of reader sets it starts again, and what it keeps stays right")
    func bounded() throws {
        let store = try LocalStore(.inMemory)
        let many = WriterMemo.maxReaderSets * 10
        try store.write(scope: "s") { transaction in
            for index in 0..<many {
                try Self.put(Self.snapshot("n\(index)", readers: ["u\(index)"]), in: transaction)
            }
        }
        #expect(store.writerMemo.readerSetCount == 0)
        try store.write(scope: "s") { transaction in
            try Self.put(Self.snapshot("m1", readers: ["u7"]), in: transaction)
        }
        #expect(store.writerMemo.readerSetCount == 1)
        let principals = try #require(try Self.readers(of: "m1", store))
        #expect(principals.contains("u7") && !principals.contains("u70"))
        let sets = try store.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM reader_sets") }
        #expect(sets == many)
    }
}
