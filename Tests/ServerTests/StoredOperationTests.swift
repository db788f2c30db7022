import Foundation
import GRDB
import PostgresNIO
import RooftopShared
import RooftopTestSupport
import Testing

@testable import RooftopServer

/// How `object_operations` keeps an operation: a first creation in a short form, everything else
/// as ``OperationRecord`` encodes it, both read back as the record written.
@Suite("Stored operations")
struct StoredOperationTests {
    private let creation = OperationRecord(
        version: 1, change: .update([]), priorValues: ["n": nil, "name": nil, "tags": nil],
        origin: "3edaff4c10d2dafa.5e517ff68ceeb78afd04d06454c5a7ca")

    @Test("a first creation is stored as the fields it created and its origin, and reads back whole")
    func firstCreation() throws {
        let text = try StoredOperation.text(creation, firstCreation: true)
        #expect(
            text == #"{"version":1,"created":["n","name","tags"],"origin":"3edaff4c10d2dafa.5e517ff68ceeb78afd04d06454c5a7ca"}"#)
        #expect(text.utf8.count < (try creation.encodedDocument()).utf8.count - 30)
        #expect(try StoredOperation.record(from: text) == creation)
        var anonymous = creation
        anonymous.origin = nil
        let plain = try StoredOperation.text(anonymous, firstCreation: true)
        #expect(!plain.contains("origin"))
        #expect(try StoredOperation.record(from: plain) == anonymous)
        let empty = OperationRecord(version: 1, change: .update([]), priorValues: [:])
        #expect(try StoredOperation.record(from: try StoredOperation.text(empty, firstCreation: true)) == empty)
    }

    @Test("every other operation keeps the record's own form: what does not fit the short one is never cut")
    func otherOperations() throws {
        let others = [
            // Not a first creation (a re-creation over a tombstone, say).
            (creation, false),
            // A first creation whose record still carries its updates or ACL, or a prior value.
            (OperationRecord(version: 1, change: .update([FieldUpdate("n", .set(1))]), priorValues: ["n": nil]), true),
            (OperationRecord(version: 1, change: .update([], acl: ACL()), priorValues: ["n": nil]), true),
            (OperationRecord(version: 1, change: .update([]), priorValues: ["n": .some(.int(2))]), true),
            (OperationRecord(version: 1, change: .update([]), priorValues: ["n": .some(.null)]), true),
            (OperationRecord(version: 4, change: .delete, priorValues: ["n": .some(3)], origin: "a.b"), true),
        ]
        for (record, first) in others {
            let text = try StoredOperation.text(record, firstCreation: first)
            #expect(text == (try record.encodedDocument()))
            #expect(try StoredOperation.record(from: text) == record)
        }
    }

    @Test("rows written before the short form, and damaged rows, read as before: no trap")
    func earlierAndDamagedRows() throws {
        // A first creation as servers stored it until now.
        #expect(try StoredOperation.record(from: try creation.encodedDocument()) == creation)
        // A field named twice: read once.
        let twice = try StoredOperation.record(from: #"{"version":1,"created":["n","n"]}"#)
        #expect(twice.priorValues.count == 1)
        for damaged in [#"{"created":["n"]}"#, #"{"version":1,"created":"n"}"#, #"{"version":1}"#, "", "[]"] {
            #expect(throws: (any Error).self, "\(damaged)") { try StoredOperation.record(from: damaged) }
        }
    }
}

/// What each backend's `object_operations` holds: the short form for a first creation only.
@Suite("Stored operations: the text each backend keeps")
struct StoredOperationTextTests {
    @Test("a first creation is kept in the short form; a re-creation over its tombstone and every other change in the record's",
        arguments: StorageBackend.tested)
    func storedText(backend: StorageBackend) async throws {
        try await withStorage(backend.factory) { storage, _ in
            let key = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil).key
            let first = StorageConformance.object("a", fields: ["n": 1, "name": "x"])
            let created = OperationRecord(
                version: 1, change: .update([FieldUpdate("n", .set(1)), FieldUpdate("name", .set("x"))]),
                priorValues: ["n": nil, "name": nil], origin: "s.m1")
            let tombstone = StorageWrites.tombstone(of: first)
            let deleted = OperationRecord(
                version: 2, change: .delete, priorValues: ["n": .some(1), "name": .some("x")], origin: "s.m2")
            var again = first
            again.version = 3
            let recreated = OperationRecord(
                version: 3, change: .update([FieldUpdate("n", .set(1)), FieldUpdate("name", .set("x"))]),
                priorValues: ["n": nil, "name": nil], origin: "s.m3")
            for (snapshot, record) in [(first, created), (tombstone, deleted), (again, recreated)] {
                _ = try await StorageConformance.write(storage, datastoreKey: key, objectId: "a", base: snapshot.version - 1) {
                    _ in
                    .write(snapshot: snapshot, deleted: record.change == .delete, operation: record, merges: [])
                }
            }

            let texts = try await Self.operationTexts(storage)
            #expect(texts.count == 3)
            #expect(texts.first == #"{"version":1,"created":["n","name"],"origin":"s.m1"}"#)
            #expect(texts.dropFirst().allSatisfy { $0.contains(#""change":"#) && $0.contains(#""priorValues":"#) }, "\(texts)")
            var logged = created
            logged.change = .update([])
            let read = try await storage.operations(datastoreKey: key, className: "T", objectId: "a", after: 0)
            #expect(read == [logged, deleted, recreated], "a re-creation keeps its updates: merges read them")
        }
    }

    /// The `operation` column of every row, in version order.
    private static func operationTexts(_ storage: any Storage) async throws -> [String] {
        if let sqlite = storage as? SQLiteStorage {
            return try await sqlite.pool.read { db in
                try String.fetchAll(db, sql: "SELECT operation FROM object_operations ORDER BY version")
            }
        }
        let postgres = try #require(storage as? PostgresStorage)
        return try await postgres.read { session in
            try session.query("SELECT operation FROM object_operations ORDER BY version").map { try $0.decode(String.self) }
        }
    }
}
