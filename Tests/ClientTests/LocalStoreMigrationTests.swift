import Foundation
import GRDB
@testable import Rooftop
import RooftopShared
import Testing

/// An app updated in place keeps its local data: a store written by an earlier version opens,
/// migrates and answers as if written now.
@Suite("Local store migrations")
struct LocalStoreMigrationTests {
    @Test("a v4 store keeps its objects, pins, queue and session through v5, and its queries answer from the new index")
    func fromV4() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rooftop-v4-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let old = try DatabaseQueue(path: path)
        try LocalStoreMigrations.migrator.migrate(old, upTo: "v4: local field index")
        let mine = ObjectSnapshot(
            className: "Thing", objectId: "t1", datastore: .app, fields: ["size": 3, "tags": ["a", "b"], "name": "alpha"],
            acl: ACL([.user("u1"): ACL.Access(read: true, write: true)]), version: 2)
        let theirs = ObjectSnapshot(
            className: "Thing", objectId: "t2", datastore: .app, fields: ["size": 9, "name": "beta"],
            acl: ACL([.user("u9"): ACL.Access(read: true, write: true)]), version: 1)
        let queued = Mutation(
            mutationId: MutationID.generate(), datastore: .app, className: "Thing", objectId: "t1", baseVersion: 2,
            change: .update([FieldUpdate("size", .set(4))]))
        var edited = mine
        edited.fields["size"] = 4
        try old.write { db in
            for (snapshot, local) in [(mine, edited), (theirs, theirs)] {
                try db.execute(
                    sql: """
                        INSERT INTO objects (scope, datastore, class_name, object_id, server, local, deleted)
                        VALUES ('u1', ?, 'Thing', ?, ?, ?, 0)
                        """,
                    arguments: [DatastoreID.app.rawValue, snapshot.objectId, try snapshot.encodedDocument(), try local.encodedDocument()])
            }
            try db.execute(
                sql: "INSERT INTO pins (scope, label, datastore, class_name, object_id) VALUES ('u1', 'Fav', ?, 'Thing', 't2')",
                arguments: [DatastoreID.app.rawValue])
            try db.execute(
                sql: """
                    INSERT INTO outbox (scope, mutation_id, datastore, class_name, object_id, mutation, state, created_at)
                    VALUES ('u1', ?, ?, 'Thing', 't1', ?, 'pending', 0)
                    """,
                arguments: [queued.mutationId.rawValue, DatastoreID.app.rawValue, try DocumentCoding.encode(queued)])
        }
        try old.close()

        let store = try LocalStore(.file(path: path))
        defer { store.close() }
        func ids(_ predicate: QueryPredicate?, readers: Set<String>? = nil, label: String? = nil) throws -> [String] {
            let query = Query(className: "Thing", predicate: predicate, order: [QueryOrder("size")])
            return try store.find(query, scope: "u1", datastore: .app, pinnedWith: label, readers: readers, excluding: [])
                .rows.map(\.key.objectId)
        }
        #expect(try ids(nil) == ["t1", "t2"])
        #expect(try ids(.comparison(field: "size", op: .equal, value: 4)) == ["t1"], "the local view is indexed")
        #expect(try ids(.listContains(field: "tags", value: "b")) == ["t1"])
        #expect(try ids(.startsWith(field: "name", prefix: "be")) == ["t2"])
        #expect(try ids(nil, readers: ["*", "u1"]) == ["t1"], "readers come from the ACLs")
        #expect(try ids(nil, label: "Fav") == ["t2"])
        #expect(try store.outbox(scope: "u1").map(\.mutation) == [queued])
        #expect(try store.labels(of: ObjectKey(datastore: .app, className: "Thing", objectId: "t2"), scope: "u1") == ["Fav"])
    }
}
