import RooftopShared
import Testing

@testable import RooftopServer

extension StorageConformance {
    /// Many writes in one transaction (a push): each is atomic on its own, so a refusal or a
    /// write that fails leaves the others; a later write sees the earlier ones (the same object
    /// twice, a mutation ID used twice); everything commits together, and nothing when the body
    /// throws.
    static func batches(_ factory: StorageFixtureFactory) async throws {
        try await withStorage(factory) { storage, _ in
            let key = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil).key
            let (m1, m2, m3, m4) = (try MutationID("m1"), try MutationID("m2"), try MutationID("m3"), try MutationID("m4"))
            let a1 = object("a", fields: ["n": 1])
            let a2 = updated(a1, ["n": 2])
            let b1 = object("b", fields: ["n": 1])
            let refusal = RooftopError(.disallowed, "no")
            let outcomes = try await storage.writeObjects { writer -> [String] in
                func write(_ id: String, _ mutation: MutationID?, base: Int64?, _ decision: ObjectWriteDecision) -> String {
                    let request = ObjectWriteRequest(
                        datastoreKey: key, className: "T", objectId: id, baseVersion: base,
                        mutation: mutation.map { ("u1", $0) })
                    do {
                        return "\(try writer.write(request) { _ in decision })"
                    } catch {
                        return "thrown \(error)"
                    }
                }
                return [
                    write("a", m1, base: nil, StorageWrites.decision(a1, deleted: false)),
                    write("b", m2, base: nil, .reject(refusal)),
                    // The same object again: the transaction sees its first write.
                    write("a", m3, base: 1, StorageWrites.decision(a2, deleted: false)),
                    // A mutation ID already used in this transaction: answered with its result.
                    write("b", m1, base: nil, StorageWrites.decision(b1, deleted: false)),
                    // A datastore that does not exist: this write fails, the others stand.
                    {
                        let request = ObjectWriteRequest(
                            datastoreKey: key + 1000, className: "T", objectId: "c", baseVersion: nil, mutation: ("u1", m4))
                        do { return "\(try writer.write(request) { _ in StorageWrites.decision(object("c"), deleted: false) })" }
                        catch { return "thrown" }
                    }(),
                ]
            }
            #expect(outcomes[0].hasPrefix("written"))
            #expect(outcomes[1].hasPrefix("rejected"))
            #expect(outcomes[2].hasPrefix("written"))
            #expect(outcomes[3].hasPrefix("replayed"))
            #expect(outcomes[4] == "thrown")
            #expect(try await storage.object(datastoreKey: key, className: "T", objectId: "a")?.snapshot == a2)
            #expect(try await storage.object(datastoreKey: key, className: "T", objectId: "b") == nil)
            let head = try await storage.datastore(key: key)?.sequence
            let lastWrite = try await storage.object(datastoreKey: key, className: "T", objectId: "a")?.sequence
            #expect(head != nil && head == lastWrite)
            let recorded = try await storage.mutationResults(scope: "u1", ids: [m1, m2, m3, m4])
            #expect(Set(recorded.keys) == [m1, m2, m3], "a failed write records nothing")
            #expect(recorded[m2] == .rejected(mutationId: m2, error: refusal))

            // A body that throws commits nothing, not even the writes it made before.
            struct Abort: Error {}
            let (m5, m6) = (try MutationID("m5"), try MutationID("m6"))
            await #expect(throws: Abort.self) {
                try await storage.writeObjects { writer in
                    _ = try writer.write(
                        ObjectWriteRequest(datastoreKey: key, className: "T", objectId: "d", baseVersion: nil, mutation: ("u1", m5))
                    ) { _ in StorageWrites.decision(object("d"), deleted: false) }
                    _ = try writer.record(.rejected(mutationId: m6, error: refusal), scope: "u1")
                    throw Abort()
                }
            }
            #expect(try await storage.object(datastoreKey: key, className: "T", objectId: "d") == nil)
            #expect(try await storage.mutationResults(scope: "u1", ids: [m5, m6]).isEmpty)
            #expect(try await storage.datastore(key: key)?.sequence == head)
        }
    }
}

extension StorageConformance {
    /// A push whose locks are taken, and whose reads are read ahead, before its first write
    /// (``ObjectWriter/lock(_:)``): each write still sees what the transaction wrote before it (an
    /// object written twice, a tombstone brought back, a recorded result answered with its
    /// object's state as the transaction left it), a write not read ahead works as well, and
    /// everything commits in sequence order with the right counters.
    static func readAhead(_ factory: StorageFixtureFactory) async throws {
        try await withStorage(factory) { storage, _ in
            let key = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil).key
            let ids = try (0...7).map { try MutationID("m\($0)") }
            // Committed before: `p` by m0, `q` created and deleted.
            let p1 = object("p", fields: ["n": 1, "tag": "x"])
            _ = try await write(storage, datastoreKey: key, objectId: "p", base: nil, mutation: ("u1", ids[0])) { _ in
                StorageWrites.decision(p1, deleted: false)
            }
            let q1 = try await StorageWrites.put(object("q", fields: ["n": 1]), datastoreKey: key, into: storage)
            let q2 = try await StorageWrites.put(
                StorageWrites.tombstone(of: q1.snapshot), deleted: true, datastoreKey: key, into: storage)

            let p2 = updated(p1, ["n": 2, "tag": nil], acl: .some(readable(by: .user("u2"))))
            let p3 = updated(p2, ["n": 3])
            let q3 = object("q", version: 3, fields: ["n": 3])
            let r1 = object("r", fields: ["list": .list([.string("a"), .string("b")])])
            let x1 = object("x")
            let r2 = updated(r1, ["n": 2])
            let seen = Recorder<String>()
            let outcomes = try await storage.writeObjects { writer -> [ObjectWriteOutcome] in
                func request(_ objectId: String, _ id: MutationID, base: Int64?) -> ObjectWriteRequest {
                    ObjectWriteRequest(datastoreKey: key, className: "T", objectId: objectId, baseVersion: base, mutation: ("u1", id))
                }
                func write(_ request: ObjectWriteRequest, _ snapshot: ObjectSnapshot) throws -> ObjectWriteOutcome {
                    try writer.write(request) { context in
                        let current = context.current.map { "v\($0.snapshot.version)\($0.isDeleted ? " deleted" : "")" }
                        seen.record("\(request.objectId): \(current ?? "none")")
                        return StorageWrites.decision(snapshot, deleted: false)
                    }
                }
                let requests = [
                    request("p", ids[1], base: 1), request("q", ids[2], base: nil), request("r", ids[3], base: nil),
                    request("p", ids[4], base: 2), request("p", ids[0], base: nil), request("s", ids[3], base: nil),
                    request("y", ids[6], base: nil), request("r", ids[7], base: 1), request("y", ids[6], base: nil),
                ]
                try writer.lock(requests)
                return [
                    try write(requests[0], p2), try write(requests[1], q3), try write(requests[2], r1),
                    // `p` again: the transaction's own write is what it sees.
                    try write(requests[3], p3),
                    // m0 again: its result, with `p` as this transaction left it.
                    try write(requests[4], p1),
                    // Not read ahead.
                    try write(request("x", ids[5], base: nil), x1),
                    // m3, read ahead as new and recorded by `r`'s write: its result, not a write of `s`.
                    try write(requests[5], object("s")),
                    // Read ahead as new, refused: nothing counted.
                    try writer.write(requests[6]) { _ in .reject(RooftopError(.disallowed, "no")) },
                    // `r`, read ahead as not stored, written by this transaction since: found.
                    try write(requests[7], r2),
                    // m6 again: its refusal, recorded in this transaction.
                    try write(requests[8], object("y")),
                ]
            }
            #expect(seen.all == ["p: v1", "q: v2 deleted", "r: none", "p: v2", "x: none", "r: v1"])
            #expect(
                outcomes.map { "\($0)".prefix(7) }
                    == ["written", "written", "written", "written", "replaye", "written", "replaye", "rejecte", "written", "replaye"])
            #expect(try await storage.object(datastoreKey: key, className: "T", objectId: "s") == nil)
            #expect(try await storage.object(datastoreKey: key, className: "T", objectId: "y") == nil)
            if case .replayed(let result) = outcomes[4] {
                #expect(result == .applied(mutationId: ids[0], version: 1, object: p3, merges: []))
            } else {
                Issue.record("m0 again gave \(outcomes[4])")
            }

            // Committed: the states, the feed in sequence order, the counters and the results.
            for (objectId, expected) in [("p", p3), ("q", q3), ("r", r2), ("x", x1)] {
                #expect(try await storage.object(datastoreKey: key, className: "T", objectId: objectId)?.snapshot == expected)
            }
            let feed = try await storage.changes(datastoreKey: key, after: q2.sequence, limit: 100, classes: nil)
            #expect(feed.map(\.objectId) == ["q", "p", "x", "r"])
            #expect(zip(feed, feed.dropFirst()).allSatisfy { $0.sequence < $1.sequence })
            let datastore = try #require(try await storage.datastore(key: key))
            #expect(datastore.sequence == feed.last?.sequence && datastore.recordCount == 4)
            let recorded = try await storage.mutationResults(scope: "u1", ids: ids)
            #expect(Set(recorded.keys) == Set(ids))
            #expect(recorded[ids[6]] == .rejected(mutationId: ids[6], error: RooftopError(.disallowed, "no")))
            #expect(recorded[ids[4]] == .applied(mutationId: ids[4], version: 3, object: p3, merges: []))
            // The index rows follow: `p`'s dropped tag and its readers, `r`'s list.
            let readers: Set<String>? = ["u2", "*"]
            let tagged = try await storage.find(
                Query("T").where(Field("tag") == "x"), datastoreKey: key, readers: nil, limit: 10)
            #expect(tagged.objects.isEmpty)
            let byU2 = try await storage.find(Query("T"), datastoreKey: key, readers: readers, limit: 10)
            #expect(byU2.objects.map(\.objectId).contains("p"))
            let byU3 = try await storage.find(Query("T"), datastoreKey: key, readers: ["u3", "*"], limit: 10)
            #expect(!byU3.objects.map(\.objectId).contains("p"))
            let listed = try await storage.find(
                Query("T").where(Field("list").contains("b")), datastoreKey: key, readers: nil, limit: 10)
            #expect(listed.objects.map(\.objectId) == ["r"])
        }
    }
}
