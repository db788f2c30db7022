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

    @Test("merges read the changes since their base ahead: 5 and 500 writes of an older version, in the same statements")
    func mergesReadAhead() async throws {
        try await withStorage(PostgresFixture.factory) { storage, _ in
            var counts: [Int: Int] = [:]
            for size in [5, 500] {
                let key = try await storage.openOrCreateDatastore(id: try DatastoreID("m\(size)"), ownerId: "u1", title: nil).key
                _ = try await Self.push(storage, datastoreKey: key, count: size, update: false, scope: "mc\(size)")
                _ = try await Self.push(storage, datastoreKey: key, count: size, update: true, scope: "mu\(size)")
                // Every object is at version 2: a write based on version 1 merges with version 2's change.
                let (session, before, seen) = try await storage.writeObjects { writer in
                    let requests = try (0..<size).map { index in
                        ObjectWriteRequest(
                            datastoreKey: key, className: "T", objectId: "o\(index)", baseVersion: 1,
                            mutation: ("mm\(size)", try MutationID("mm\(size)-o\(index)")))
                    }
                    let session = try #require(writer as? PostgresObjectWriter).session
                    let before = session.statementsRun.load(ordering: .relaxed)
                    try writer.lock(requests)
                    var seen: [[OperationRecord]] = []
                    for request in requests {
                        var concurrent: [OperationRecord] = []
                        let outcome = try writer.write(request) { context throws(RooftopError) in
                            concurrent = context.concurrentChanges
                            guard let current = context.current?.snapshot else { throw RooftopError(.internal, "no object") }
                            return StorageWrites.decision(StorageConformance.updated(current, ["n": -1]), deleted: false)
                        }
                        guard case .written = outcome else { throw StorageWrites.Unexpected(description: "\(outcome)") }
                        seen.append(concurrent)
                    }
                    return (session, before, seen)
                }
                counts[size] = session.statementsRun.load(ordering: .relaxed) - before
                // Each merge saw version 2's change, as the object's operations read alone tell it.
                #expect(seen.count == size && seen.allSatisfy { $0.map(\.version) == [2] })
                for index in [0, size - 1] {
                    let alone = try await storage.operations(datastoreKey: key, className: "T", objectId: "o\(index)", after: 1)
                    #expect(alone.map(\.version) == [2, 3])
                    #expect(alone.first == seen[index].first)
                }
            }
            let (small, large) = (counts[5] ?? .max, counts[500] ?? .max)
            #expect(large <= small, "\(counts)")

            // Two writes of one object in one push, on different bases (o0 and o1 of `m5` are at
            // version 3): the first is answered from what was read ahead (from the oldest base),
            // the second, after the first wrote the object, reads again and sees that write too.
            let key = try #require(try await storage.datastore(id: try DatastoreID("m5"), ownerId: "u1")?.key)
            let seen = try await storage.writeObjects { writer in
                let plan: [(String, Int64)] = [("o0", 1), ("o0", 2), ("o1", 2), ("o1", 1)]
                let requests = try plan.enumerated().map { index, step in
                    ObjectWriteRequest(
                        datastoreKey: key, className: "T", objectId: step.0, baseVersion: step.1,
                        mutation: ("chain", try MutationID("chain-\(index)")))
                }
                try writer.lock(requests)
                var seen: [[Int64]] = []
                for request in requests {
                    var concurrent: [Int64] = []
                    let outcome = try writer.write(request) { context throws(RooftopError) in
                        concurrent = context.concurrentChanges.map(\.version)
                        guard let current = context.current?.snapshot else { throw RooftopError(.internal, "no object") }
                        return StorageWrites.decision(StorageConformance.updated(current, ["n": -2]), deleted: false)
                    }
                    guard case .written = outcome else { throw StorageWrites.Unexpected(description: "\(outcome)") }
                    seen.append(concurrent)
                }
                return seen
            }
            #expect(seen == [[2, 3], [3, 4], [3], [2, 3, 4]])
        }
    }

    /// Writes `snapshot` (deleted when `deleted`) in a transaction of its own, based on the version before it.
    static func write(_ storage: any Storage, key: Int64, _ snapshot: ObjectSnapshot, deleted: Bool = false) async throws {
        let outcome = try await storage.writeObjects { writer in
            try writer.write(
                ObjectWriteRequest(
                    datastoreKey: key, className: "T", objectId: snapshot.objectId,
                    baseVersion: snapshot.version > 1 ? snapshot.version - 1 : nil, mutation: nil)
            ) { _ throws(RooftopError) in StorageWrites.decision(snapshot, deleted: deleted) }
        }
        guard case .written = outcome else { throw StorageWrites.Unexpected(description: "\(outcome)") }
    }

    @Test("objects read ahead carry the readers they carry read alone: reader sets, ended access, tombstones, none, public")
    func readAheadReaders() async throws {
        try await withStorage(PostgresFixture.factory) { storage, _ in
            let key = try await storage.openOrCreateDatastore(id: try DatastoreID("r"), ownerId: "u1", title: nil).key
            let shared = StorageConformance.readable(by: .user("u1"), .user("u2"))
            let nobody = ACL([.user("u1"): ACL.Access(read: false, write: true)])
            var snapshots: [ObjectSnapshot] = []
            for index in 0..<8 {
                let acl: ACL? = index == 5 ? nil : index == 6 ? nobody : shared
                snapshots.append(StorageConformance.object("r\(index)", fields: ["n": .int(Int64(index))], acl: acl))
                try await Self.write(storage, key: key, snapshots[index])
            }
            // r7 becomes public, its former readers kept.
            try await Self.write(storage, key: key, StorageConformance.updated(snapshots[7], [:], acl: .some(nil)))
            // u2's access ends for r1; r2 goes to u3 alone, then back to both; r3 is deleted; r4 is
            // deleted after u1's access ended; r5 is public.
            try await Self.write(storage, key: key, StorageConformance.updated(snapshots[1], [:], acl: StorageConformance.readable(by: .user("u1"))))
            let moved = StorageConformance.updated(snapshots[2], [:], acl: StorageConformance.readable(by: .user("u3")))
            try await Self.write(storage, key: key, moved)
            try await Self.write(storage, key: key, StorageConformance.updated(moved, [:], acl: shared))
            try await Self.write(storage, key: key, StorageConformance.updated(snapshots[3], [:]), deleted: true)
            let narrowed = StorageConformance.updated(snapshots[4], [:], acl: StorageConformance.readable(by: .user("u2")))
            try await Self.write(storage, key: key, narrowed)
            try await Self.write(storage, key: key, StorageConformance.updated(narrowed, [:]), deleted: true)

            var alone: [StoredObject] = []
            for index in 0..<8 {
                alone.append(try #require(try await storage.object(datastoreKey: key, className: "T", objectId: "r\(index)")))
            }
            let ahead = try await storage.writeObjects { writer in
                try writer.lock(
                    (0..<8).map { ObjectWriteRequest(datastoreKey: key, className: "T", objectId: "r\($0)", baseVersion: nil, mutation: nil) })
                let batch = try #require(writer as? PostgresObjectWriter).batch
                return try (0..<8).map { index in
                    try #require(batch.objects[PostgresObjectWriter.Locks.objectName(datastoreKey: key, className: "T", objectId: "r\(index)")] ?? nil).object
                }
            }
            #expect(ahead == alone)
            // The cases are there: access that ended, and tombstones.
            #expect(alone[1].readers == ["u1"] && alone[1].formerReaders.contains("u2"))
            #expect(alone[3].isDeleted && alone[4].isDeleted && alone[4].readers == ["u2"])
            #expect(alone[5].readers == ["*"] && alone[6].readers.isEmpty)
            #expect(alone[7].readers == ["*"] && alone[7].formerReaders.isSuperset(of: ["u1", "u2"]))
        }
    }
}
