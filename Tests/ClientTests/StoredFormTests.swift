import Foundation
import GRDB
@testable import Rooftop
import RooftopTestSupport
import RooftopShared
import Testing

@Suite("Stored forms of an object's two states")
struct StoredFormTests {
    private static func snapshot(_ fields: [String: Value], acl: ACL? = nil, id: String = "n1") -> ObjectSnapshot {
        ObjectSnapshot(
            className: "Note", objectId: id, datastore: .app, fields: fields, acl: acl,
            createdAt: Timestamp(millisecondsSinceEpoch: 1_000), updatedAt: Timestamp(millisecondsSinceEpoch: 2_000),
            version: 3)
    }

    /// A field value of any kind, the awkward ones among them (NaN, -0.0, long and composed
    /// strings, nested lists).
    private static func value(_ random: inout SeededGenerator) -> Value {
        random.next() % 2 == 0 ? RandomValues.edges.value(&random, depth: 2) : RandomValues.collisions.value(&random, depth: 2)
    }

    @Test("a delta from a view gives back the server state exactly, through its stored text, for random pairs")
    func deltaRoundTrips() throws {
        var random = SeededGenerator(seed: 0x5EED_F0)
        let acls: [ACL?] = [nil, .publicReadWrite, .only("u1")]
        var directReads = 0
        defer { #expect(directReads > 250) }
        for _ in 0..<500 {
            var serverFields: [String: Value] = [:]
            for index in 0..<Int(random.next() % 6) { serverFields["f\(index)"] = Self.value(&random) }
            var viewFields = serverFields
            for _ in 0..<Int(random.next() % 4) {
                let name = "f\(random.next() % 8)"
                switch random.next() % 3 {
                case 0: viewFields[name] = nil
                default: viewFields[name] = Self.value(&random)
                }
            }
            let server = Self.snapshot(serverFields, acl: acls[Int(random.next() % 3)])
            let view = Self.snapshot(viewFields, acl: acls[Int(random.next() % 3)])
            let delta = try #require(ServerDelta(server: server, view: view))
            // Compared as values, which tell apart every bit of a double and every byte of a string.
            #expect(delta.applied(to: view) == server)
            // The stored text is written directly; one `JSONEncoder` wrote (stores of the last
            // build) reads the same, and the direct text is the `Codable` form too.
            let text = try delta.encodedDocument()
            #expect(try ServerDelta.decodeDocument(text).applied(to: view) == server)
            #expect(try ServerDelta.decodeDocument(DocumentCoding.encode(delta)) == delta)
            #expect(try DocumentCoding.decode(ServerDelta.self, from: text) == delta)
            // Read directly, not left to `Codable` (which `decodeDocument` falls back to), whenever
            // an object with the same fields and ACL is.
            let same = try Self.snapshot(delta.fields, acl: delta.acl).encodedDocument()
            if (try? DocumentReader.read(same) { try $0.readObjectSnapshot() }) != nil {
                #expect(try DocumentReader.read(text, ServerDelta.read) == delta)
                directReads += 1
            }
            // Only what differs is in it (and fields holding JSON, whose keys compare loosely).
            for (name, value) in delta.fields {
                if case .json = value { continue }
                if case .list = value { continue }
                #expect(view.fields[name] != value)
            }
            for name in delta.removed { #expect(server.fields[name] == nil && view.fields[name] != nil) }
        }
    }

    @Test("a write of one object leaves its state decoded, unless it holds JSON (which may decode to another value)")
    func seededDecodes() throws {
        let store = try LocalStore(.inMemory)
        let plain = Self.snapshot(["n": 1, "s": .string("seeded \(UUID())")], id: "p1")
        // Written as `2`, read back as an integer: `==` holds the two equal.
        let json = Self.snapshot(["j": .json(.double(2)), "s": .string("seeded \(UUID())")], id: "j1")
        try store.write(scope: "s") { transaction in
            for snapshot in [plain, json] {
                try transaction.put(ObjectKey(snapshot), server: snapshot, local: snapshot, deleted: false)
            }
        }
        #expect(SnapshotDecodeCache.contains(try plain.encodedDocument()))
        #expect(!SnapshotDecodeCache.contains(try json.encodedDocument()))
        let read = try #require(try store.object(ObjectKey(json), scope: "s")?.local)
        guard case .json(.int(2))? = read.fields["j"] else {
            Issue.record("the JSON field reads as stored: \(String(describing: read.fields["j"]))")
            return
        }
    }

    @Test("states that differ beyond fields and the ACL have no delta, property by property")
    func noDeltaBeyondFields() {
        let view = Self.snapshot(["a": 2])
        let differing: [(String, (inout ObjectSnapshot) -> Void)] = [
            ("version", { $0.version = 4 }),
            ("fieldVersions", { $0.fieldVersions = ["a": 2] }),
            ("createdAt", { $0.createdAt = Timestamp(millisecondsSinceEpoch: 999) }),
            ("updatedAt", { $0.updatedAt = nil }),
            ("className", { $0.className = "Other" }),
            ("objectId", { $0.objectId = "n2" }),
            ("datastore", { $0.datastore = .default }),
        ]
        for (property, change) in differing {
            var server = Self.snapshot(["a": 1])
            change(&server)
            #expect(ServerDelta(server: server, view: view) == nil, "a delta across \(property)")
        }
        #expect(ServerDelta(server: Self.snapshot(["a": 1]), view: view) != nil)
    }

    @Test("a field holding JSON is kept in the delta: keys Swift holds equal come back with the server's bytes")
    func jsonKeysExact() throws {
        let composed = "\u{E9}"
        let decomposed = "e\u{301}"
        let server = Self.snapshot(["j": .json(.object([composed: .int(1)])), "n": 1])
        let view = Self.snapshot(["j": .json(.object([decomposed: .int(1)])), "n": 2])
        #expect(server.fields["j"] == view.fields["j"], "the premise: Swift holds the two keys equal")
        let delta = try #require(ServerDelta(server: server, view: view))
        let text = try delta.encodedDocument()
        let rebuilt = try ServerDelta.decodeDocument(text).applied(to: view)
        guard case .json(.object(let object))? = rebuilt.fields["j"], let key = object.keys.first else {
            Issue.record("the JSON field did not come back: \(rebuilt)")
            return
        }
        #expect(Array(key.utf8) == Array(composed.utf8))
        #expect(rebuilt.fields["n"] == 1)
    }

    @Test("a queued change's local view is stored with a delta; recomputed over a newer server state, the two are stored whole")
    func queuedPath() throws {
        let store = try LocalStore(.inMemory)
        let key = ObjectKey(datastore: .app, className: "Note", objectId: "n1")
        let server = Self.snapshot(["count": 1, "title": "t"])
        let increment = Mutation(
            datastore: .app, className: "Note", objectId: "n1", baseVersion: 3,
            change: .update([FieldUpdate("count", .increment(.int(2)))]))
        let form = { () throws -> Int64? in
            try store.write(scope: "u1") { try Int64.fetchOne($0.db, sql: "SELECT local_is_server FROM objects") }
        }
        try store.write(scope: "u1") { transaction in
            try transaction.put(key, server: server, local: server, deleted: false)
            try transaction.pin(key, label: "Mine")
            try transaction.enqueue(increment)
            _ = try transaction.storeLocalView(key, server: server, queued: [increment])
        }
        #expect(try form() == StoredForm.serverAsDelta.rawValue)
        var stored = try #require(try store.object(key, scope: "u1"))
        #expect(stored.server == server && stored.local?.fields["count"] == 3)
        // A pulled state with a newer version (the queued change on top): view and server state
        // differ in their version too, which a delta does not hold.
        var newer = server
        newer.version = 4
        newer.updatedAt = Timestamp(millisecondsSinceEpoch: 3_000)
        newer.fields["title"] = "u"
        try store.write(scope: "u1") { transaction in _ = try transaction.recomputeLocalView(key, server: newer) }
        stored = try #require(try store.object(key, scope: "u1"))
        #expect(stored.server == newer && stored.local?.fields["count"] == 3 && stored.local?.fields["title"] == "u")
        #expect(try form() == StoredForm.serverAsDelta.rawValue, "the view is the newer state plus the change")
        // Acknowledged: nothing queued, one state.
        try store.write(scope: "u1") { transaction in
            try transaction.removeFromQueue(increment.mutationId)
            var acknowledged = newer
            acknowledged.fields["count"] = 3
            acknowledged.version = 5
            _ = try transaction.recomputeLocalView(key, server: acknowledged)
        }
        #expect(try form() == StoredForm.localIsServer.rawValue)
        // Stored whole when the view holds another version than the server state.
        var older = server
        older.version = 2
        try store.write(scope: "u1") { try $0.put(key, server: older, local: server, deleted: false) }
        #expect(try form() == StoredForm.separate.rawValue)
        #expect(try store.object(key, scope: "u1").map { [$0.server, $0.local] } == [older, server])
    }

    @Test("a queued change keeps its view whole and its server state as a short delta; both read back, by key and by query")
    func storedAsDelta() throws {
        let store = try LocalStore(.inMemory)
        let key = ObjectKey(datastore: .app, className: "Note", objectId: "n1")
        let body = String(repeating: "a long body of text ", count: 40)
        let server = Self.snapshot(["title": "first", "body": .string(body), "count": 1], acl: .publicReadWrite)
        let view = Self.snapshot(["title": "first", "body": .string(body), "count": 2, "new": true], acl: .publicReadWrite)
        try store.write(scope: "u1") { transaction in
            try transaction.put(key, server: server, local: server, deleted: false)
            try transaction.pin(key, label: "Mine")
        }
        let rowBefore = try store.write(scope: "u1") { try Row.fetchOne($0.db, sql: "SELECT * FROM objects") }
        #expect(rowBefore?["local_is_server"] as Int64? == StoredForm.localIsServer.rawValue)
        try store.write(scope: "u1") { transaction in
            try transaction.put(key, server: server, local: view, deleted: false)
        }
        let row = try #require(try store.write(scope: "u1") { try Row.fetchOne($0.db, sql: "SELECT * FROM objects") })
        #expect(row["local_is_server"] as Int64 == StoredForm.serverAsDelta.rawValue)
        let serverText: String = row["server"]
        let localText: String = row["local"]
        // The row grew by the delta (a few dozen bytes), not by a second copy of the object.
        #expect(serverText.utf8.count < 100)
        #expect(localText.utf8.count > body.utf8.count)
        let stored = try #require(try store.object(key, scope: "u1"))
        #expect(stored.server == server && stored.local == view)

        var query = Query(className: "Note")
        query.order = [QueryOrder("title")]
        let page = try store.find(query, scope: "u1", datastore: .app, pinnedWith: nil, readers: nil, excluding: [])
        let found = try #require(page.rows.first)
        #expect(found.form == .serverAsDelta && found.localText == localText)
        let decoded = try found.decoded()
        #expect(decoded.server == server && decoded.local == view)
        // A condition read from the document reads the view.
        query.predicate = Field("new") == true
        #expect(try store.find(query, scope: "u1", datastore: .app, pinnedWith: nil, readers: nil, excluding: []).rows.count == 1)

        // Acknowledged: one state again, stored once.
        var acknowledged = view
        acknowledged.version = 4
        try store.write(scope: "u1") { transaction in
            try transaction.put(key, server: acknowledged, local: acknowledged, deleted: false)
        }
        let after = try #require(try store.write(scope: "u1") { try Row.fetchOne($0.db, sql: "SELECT * FROM objects") })
        #expect(after["local_is_server"] as Int64 == StoredForm.localIsServer.rawValue)
        #expect(after["local"] as String? == nil)
        #expect(try store.object(key, scope: "u1")?.server == acknowledged)
    }

    @Test("states a delta cannot hold are stored whole; a form no version writes is refused, not misread")
    func wholeAndUnknownForms() throws {
        let store = try LocalStore(.inMemory)
        let key = ObjectKey(datastore: .app, className: "Note", objectId: "n1")
        var older = Self.snapshot(["a": 1])
        older.version = 2
        let view = Self.snapshot(["a": 5])
        let created = Self.snapshot(["a": 7])
        try store.write(scope: "u1") { transaction in
            try transaction.put(key, server: older, local: view, deleted: false)
            try transaction.pin(key, label: "Mine")
        }
        #expect(try store.object(key, scope: "u1").map { [$0.server, $0.local] } == [older, view])
        let form = try store.write(scope: "u1") { try Int64.fetchOne($0.db, sql: "SELECT local_is_server FROM objects") }
        #expect(form == StoredForm.separate.rawValue)
        // Created on the device, never saved: no server state.
        try store.write(scope: "u1") { try $0.put(key, server: nil, local: created, deleted: false) }
        #expect(try store.object(key, scope: "u1").map { [$0.server, $0.local] } == [nil, created])
        // Deleted by a queued change: no view.
        try store.write(scope: "u1") { try $0.put(key, server: older, local: nil, deleted: true) }
        #expect(try store.object(key, scope: "u1").map { [$0.server, $0.local] } == [older, nil])

        try store.write(scope: "u1") { try $0.put(key, server: older, local: view, deleted: false) }
        #expect(try store.find(Query(className: "Note"), scope: "u1", datastore: .app, pinnedWith: nil, readers: nil, excluding: []).rows.count == 1)
        try store.write(scope: "u1") { try $0.db.execute(sql: "UPDATE objects SET local_is_server = 9") }
        #expect(throws: RooftopError.self) { try store.object(key, scope: "u1") }
        #expect(throws: RooftopError.self) {
            try store.find(Query(className: "Note"), scope: "u1", datastore: .app, pinnedWith: nil, readers: nil, excluding: [])
        }
        // A delta that does not read is refused, not taken for an object.
        try store.write(scope: "u1") { try $0.db.execute(sql: "UPDATE objects SET local_is_server = 2, server = '[1]', local = ?", arguments: [try view.encodedDocument()]) }
        #expect(throws: RooftopError.self) { try store.object(key, scope: "u1") }
        try store.write(scope: "u1") { try $0.db.execute(sql: "UPDATE objects SET server = NULL") }
        #expect(throws: RooftopError.self) { try store.object(key, scope: "u1") }
    }

    @Test("a store written by a newer build (a migration this one does not know) is refused, not read")
    func newerStoreRefused() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rooftop-store-\(UUID()).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let store = try LocalStore(.file(path: path))
        store.close()
        // Opened again as it is: fine.
        try LocalStore(.file(path: path)).close()
        let raw = try DatabaseQueue(path: path)
        try raw.write { db in
            let known = try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations")
            #expect(known.contains("v19: server states kept as deltas from the view"))
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99: from a newer build')")
        }
        try raw.close()
        #expect(throws: RooftopError.self) { try LocalStore(.file(path: path)) }
    }
}
