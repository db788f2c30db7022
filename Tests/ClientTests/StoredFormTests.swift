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
            let text = try DocumentCoding.encode(delta)
            #expect(try DocumentCoding.decode(ServerDelta.self, from: text).applied(to: view) == server)
            // Only what differs is in it.
            #expect(delta.fields.count + delta.removed.count <= serverFields.count + viewFields.count)
            for (name, value) in delta.fields { #expect(view.fields[name] != value) }
        }
        // States that differ beyond fields and the ACL have no delta: both are stored whole.
        var later = Self.snapshot(["a": 1])
        later.version = 4
        #expect(ServerDelta(server: later, view: Self.snapshot(["a": 2])) == nil)
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

        try store.write(scope: "u1") { try $0.db.execute(sql: "UPDATE objects SET local_is_server = 9") }
        #expect(throws: RooftopError.self) { try store.object(key, scope: "u1") }
    }
}
