import RooftopShared
import Testing

@testable import RooftopServer

/// On PostgreSQL a push is a batch (``PostgresObjectWriter/Batch``): its reads are read ahead and
/// its rows written in one statement per kind, so the statements a push runs do not grow with
/// its size.
@Suite("PostgreSQL: a push as a batch", .enabled(if: PostgresTestCluster.enabled, "needs a PostgreSQL cluster"))
struct PostgresBatchTests {
    /// Runs one transaction that locks (reading ahead) then writes `count` objects, each created
    /// or, when `update`, its next version with one field changed and another dropped; answers
    /// the statements it ran.
    static func push(
        _ storage: any Storage, datastoreKey key: Int64, count: Int, update: Bool, scope: String
    ) async throws -> Int {
        let snapshots = (0..<count).map { index in
            let first = StorageConformance.object(
                "o\(index)", fields: ["n": .int(Int64(index)), "tags": .list([.string("a"), .string("t\(index)")]), "gone": 1],
                acl: StorageConformance.readable(by: .user("u\(index % 3)")))
            return update ? StorageConformance.updated(first, ["n": .int(Int64(index + 1)), "gone": nil]) : first
        }
        let (session, before) = try await storage.writeObjects { writer in
            let requests = try snapshots.map { snapshot in
                ObjectWriteRequest(
                    datastoreKey: key, className: "T", objectId: snapshot.objectId, baseVersion: snapshot.version - 1,
                    mutation: (scope, try MutationID("\(scope)-\(snapshot.objectId)")))
            }
            let session = try #require(writer as? PostgresObjectWriter).session
            let before = session.statementsRun.load(ordering: .relaxed)
            try writer.lock(requests)
            for (request, snapshot) in zip(requests, snapshots) {
                let outcome = try writer.write(request) { context throws(RooftopError) in
                    guard context.current?.snapshot.version ?? 0 == snapshot.version - 1 else {
                        throw RooftopError(.internal, "unexpected version")
                    }
                    return StorageWrites.decision(snapshot, deleted: false)
                }
                guard case .written = outcome else { throw StorageWrites.Unexpected(description: "\(outcome)") }
            }
            return (session, before)
        }
        // Counted once the transaction has ended: its writes, its end and its notice included.
        return session.statementsRun.load(ordering: .relaxed) - before
    }

    @Test("the statements of a push do not grow with its size: 5 and 500 creates, 5 and 500 updates")
    func constantRoundTrips() async throws {
        try await withStorage(PostgresFixture.factory) { storage, _ in
            var counts: [String: Int] = [:]
            for size in [5, 500] {
                let key = try await storage.openOrCreateDatastore(id: try DatastoreID("d\(size)"), ownerId: "u1", title: nil).key
                counts["create \(size)"] = try await Self.push(storage, datastoreKey: key, count: size, update: false, scope: "c\(size)")
                counts["update \(size)"] = try await Self.push(storage, datastoreKey: key, count: size, update: true, scope: "u\(size)")

                // What the batches wrote reads back as written, through the queries and the feed.
                let page = try await storage.find(Query("T").where(Field("tags").contains("a")), datastoreKey: key, readers: nil, limit: 1000)
                #expect(page.objects.count == size && page.objects.allSatisfy { $0.version == 2 && $0.fields["gone"] == nil })
                let gone = try await storage.count(Query("T").where(Field("gone") == 1), datastoreKey: key, readers: nil)
                #expect(gone == 0)
                let byU1 = try await storage.count(Query("T"), datastoreKey: key, readers: ["u1", "*"])
                #expect(byU1 == (0..<size).filter { $0 % 3 == 1 }.count)
                let feed = try await storage.changes(datastoreKey: key, after: 0, limit: 1000, classes: nil)
                #expect(feed.count == size && zip(feed, feed.dropFirst()).allSatisfy { $0.sequence < $1.sequence })
                let results = try await storage.mutationResults(
                    scope: "u\(size)", ids: try (0..<size).map { try MutationID("u\(size)-o\($0)") })
                #expect(results.count == size && results.values.allSatisfy { $0.isApplied })
            }
            // The first push also makes the reader sets (3 statements), which the second finds kept;
            // each push reads its class's row-keeping state once (``RowFields``).
            let (create5, create500) = (counts["create 5"] ?? .max, counts["create 500"] ?? .max)
            let (update5, update500) = (counts["update 5"] ?? .max, counts["update 500"] ?? .max)
            #expect(create500 <= create5 && update500 <= update5, "\(counts)")
            #expect(create5 <= 13 && update5 <= 13, "\(counts)")
        }
    }
}
