import PostgresNIO
import RooftopShared
import RooftopTestSupport
import Testing

@testable import RooftopServer

/// On PostgreSQL an object's index, element, reader and operation rows name it without a foreign
/// key (migration v8): the history sweep and a datastore's deletion remove them with the objects.
@Suite("PostgreSQL: an object's rows go with it")
struct PostgresObjectRowsTests {
    @Test("swept tombstones and a deleted datastore leave no rows of theirs; live objects keep theirs",
        .enabled(if: PostgresTestCluster.enabled, "needs a PostgreSQL cluster"))
    func rowsGoWithObjects() async throws {
        try await withStorage(PostgresFixture.factory) { storage, _ in
            let postgres = try #require(storage as? PostgresStorage)
            let main = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil)
            let other = try await storage.openOrCreateDatastore(id: .app, ownerId: nil, title: nil)
            func object(_ id: String, in datastore: DatastoreRecord) -> ObjectSnapshot {
                ObjectSnapshot(
                    className: "T", objectId: id, datastore: datastore.id,
                    fields: ["n": 1, "tags": ["a", "b"], "name": "x"], acl: .only("u1"), version: 1)
            }
            for index in 0..<6 {
                let live = object("live\(index)", in: main)
                try await StorageWrites.put(live, datastoreKey: main.key, into: storage)
                let dead = object("dead\(index)", in: main)
                try await StorageWrites.put(dead, datastoreKey: main.key, into: storage)
                try await StorageWrites.put(
                    StorageWrites.tombstone(of: dead), deleted: true, datastoreKey: main.key, into: storage)
                try await StorageWrites.put(object("elsewhere\(index)", in: other), datastoreKey: other.key, into: storage)
            }
            /// The rows of each of an object's tables that name no object.
            func orphans() async throws -> [Int64] {
                try await postgres.read { session in
                    var counts: [Int64] = []
                    for table in PostgresStatements.objectRowTables {
                        let query: PostgresQuery = """
                            SELECT count(*)::bigint FROM \(unescaped: table) x
                            WHERE NOT EXISTS (SELECT 1 FROM objects o WHERE o.key = x.object_key)
                            """
                        counts.append(try session.query(query).first?.decode(Int64.self) ?? -1)
                    }
                    return counts
                }
            }
            /// The index rows of live objects.
            func liveRows() async throws -> Int64 {
                try await postgres.read { session in
                    let query: PostgresQuery =
                        "SELECT count(*)::bigint FROM object_fields f JOIN objects o ON o.key = f.object_key WHERE NOT o.deleted"
                    return try session.query(query).first?.decode(Int64.self) ?? -1
                }
            }
            #expect(try await orphans() == [0, 0, 0, 0])
            let before = try await liveRows()
            #expect(before > 0)

            // The first sweep takes the mark, the second removes what is older: the tombstones.
            let start: Int64 = 1_800_000_000_000
            _ = try await storage.sweepHistory(
                cutoff: Timestamp(millisecondsSinceEpoch: 0), now: Timestamp(millisecondsSinceEpoch: start))
            let swept = try await storage.sweepHistory(
                cutoff: Timestamp(millisecondsSinceEpoch: start + 1), now: Timestamp(millisecondsSinceEpoch: start + 2))
            #expect(swept.tombstones == 6)
            #expect(try await orphans() == [0, 0, 0, 0])
            #expect(try await liveRows() == before)

            try await storage.deleteDatastore(key: other.key)
            #expect(try await orphans() == [0, 0, 0, 0])
            #expect(try await storage.object(datastoreKey: main.key, className: "T", objectId: "live0") != nil)
            // Half the live objects were in the deleted datastore, with as many rows.
            #expect(try await liveRows() == before / 2)
        }
    }
}
