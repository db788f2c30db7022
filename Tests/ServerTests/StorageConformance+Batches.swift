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
            #expect(try await storage.datastore(key: key)?.sequence == 2)
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
            #expect(try await storage.datastore(key: key)?.sequence == 2)
        }
    }
}
