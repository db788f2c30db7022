import RooftopShared
import Testing

@testable import RooftopServer

extension StorageConformance {
    /// An object's life: created, updated (ACL too), answered unchanged, refused, deleted to a
    /// tombstone that keeps its readers, re-created; `decide` sees the stored state each time.
    static func objectLifecycle(_ factory: StorageFixtureFactory) async throws {
        try await withStorage(factory) { storage, _ in
            let datastore = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil)
            let key = datastore.key
            let seen = Recorder<ObjectWriteContext>()
            let v1 = object("a", fields: ["title": "one", "n": 1], acl: readable(by: .user("u1"), .role("R")))

            let created = try await write(storage, datastoreKey: key, objectId: "a", base: nil, recorder: seen) { _ in
                StorageWrites.decision(v1, deleted: false)
            }
            #expect(seen.last?.current == nil && seen.last?.concurrentChanges == [])
            #expect(seen.last?.datastore == datastore)
            guard case .written(let stored, let readersBefore, .applied(_, 1, v1?, [])) = created else {
                Issue.record("creating gave \(created)")
                return
            }
            #expect(readersBefore.isEmpty)
            #expect(stored.snapshot == v1 && !stored.isDeleted && stored.sequence > 0)
            #expect(stored.readers == ["u1", "role:R"])
            #expect(try await storage.object(datastoreKey: key, className: "T", objectId: "a") == stored)

            let v2 = updated(v1, ["title": "two", "n": nil, "extra": [1, "x"]], acl: readable(by: .user("u2")))
            let changed = try await write(storage, datastoreKey: key, objectId: "a", base: 1, recorder: seen) { _ in
                StorageWrites.decision(v2, deleted: false)
            }
            #expect(seen.last?.current == stored)
            guard case .written(let stored2, ["u1", "role:R"], .applied(_, 2, v2?, [])) = changed else {
                Issue.record("updating gave \(changed)")
                return
            }
            #expect(stored2.sequence > stored.sequence && stored2.readers == ["u2"])
            let read2 = try await storage.object(datastoreKey: key, className: "T", objectId: "a")
            #expect(read2?.snapshot == v2 && read2?.readers == ["u2"])
            #expect(read2?.formerReaders == ["u1", "u2", "role:R"])

            // Unchanged: answered as applied at the current version; nothing is written.
            let unchanged = try await write(storage, datastoreKey: key, objectId: "a", base: 2) { _ in
                .unchanged(version: 2, object: v2, merges: [])
            }
            guard case .unchanged(.applied(_, 2, v2?, [])) = unchanged else {
                Issue.record("unchanged gave \(unchanged)")
                return
            }
            let refusal = RooftopError(.disallowed, "not yours")
            let rejected = try await write(storage, datastoreKey: key, objectId: "a", base: 2) { _ in .reject(refusal) }
            #expect(rejected.rejection == refusal)
            let thrown = try await write(storage, datastoreKey: key, objectId: "a", base: 2) { _ throws(RooftopError) in
                throw RooftopError(.sizeLimit, "too big")
            }
            #expect(thrown.rejection == RooftopError(.sizeLimit, "too big"), "an error thrown by decide is a rejection")
            #expect(try await storage.object(datastoreKey: key, className: "T", objectId: "a")?.sequence == stored2.sequence)
            #expect(try await storage.datastore(key: key)?.sequence == stored2.sequence, "nothing numbered since")

            let v3 = StorageWrites.tombstone(of: v2, at: time(30))
            let deleted = try await write(storage, datastoreKey: key, objectId: "a", base: 2) { _ in
                StorageWrites.decision(v3, deleted: true)
            }
            guard case .written(let tombstone, ["u2"], .applied(_, 3, nil, [])) = deleted else {
                Issue.record("deleting gave \(deleted)")
                return
            }
            #expect(tombstone.isDeleted && tombstone.sequence > stored2.sequence)
            let read3 = try await storage.object(datastoreKey: key, className: "T", objectId: "a")
            #expect(read3?.isDeleted == true && read3?.snapshot.fields == [:] && read3?.snapshot.version == 3)
            #expect(read3?.readers == ["u2"], "a tombstone keeps the readers of the last version")
            #expect(try await storage.objects(datastoreKey: key, pointers: [v1.pointer]).isEmpty)
            #expect(try await storage.count(Query("T"), datastoreKey: key, readers: nil) == 0)

            // Re-created over its tombstone, which `decide` sees.
            let v4 = ObjectSnapshot(
                className: "T", objectId: "a", datastore: .default, fields: ["title": "again"], createdAt: time(40),
                updatedAt: time(40), version: 4)
            let recreated = try await write(storage, datastoreKey: key, objectId: "a", base: nil, recorder: seen) { _ in
                StorageWrites.decision(v4, deleted: false)
            }
            #expect(seen.last?.current?.isDeleted == true && seen.last?.current?.snapshot.version == 3)
            guard case .written(let stored4, ["u2"], _) = recreated else {
                Issue.record("re-creating gave \(recreated)")
                return
            }
            #expect(stored4.readers == ["*"] && stored4.snapshot == v4)
            #expect(
                try await storage.objects(
                    datastoreKey: key, pointers: [v1.pointer, Pointer(className: "T", objectId: "zz")]
                )
                .map(\.snapshot) == [v4])
            #expect(try await storage.find(Query("T"), datastoreKey: key, readers: ["*"], limit: 10).objects == [v4])
        }
    }

    /// A mutation ID is applied once per scope: a second write with it is answered with the
    /// first result (writes, unchanged answers and rejections alike) without calling `decide`.
    static func idempotency(_ factory: StorageFixtureFactory) async throws {
        try await withStorage(factory) { storage, _ in
            let key = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil).key
            let calls = Recorder<ObjectWriteContext>()
            let m1 = try MutationID("m1")
            let v1 = object("a", fields: ["n": 1])
            let first = try await write(
                storage, datastoreKey: key, objectId: "a", base: nil, mutation: ("u1", m1), recorder: calls
            ) { _ in
                StorageWrites.decision(v1, deleted: false)
            }
            guard case .written(let firstStored, _, let result) = first else {
                Issue.record("the first write gave \(first)")
                return
            }
            #expect(result == .applied(mutationId: m1, version: 1, object: v1, merges: []))
            let again = try await write(
                storage, datastoreKey: key, objectId: "a", base: 1, mutation: ("u1", m1), recorder: calls
            ) { _ in
                StorageWrites.decision(updated(v1, ["n": 2]), deleted: false)
            }
            #expect(again.replayed == result)
            #expect(calls.count == 1, "a replayed mutation must not reach decide")
            #expect(try await storage.object(datastoreKey: key, className: "T", objectId: "a")?.snapshot == v1)
            #expect(try await storage.datastore(key: key)?.sequence == firstStored.sequence, "nothing numbered since")
            #expect(try await storage.operations(datastoreKey: key, className: "T", objectId: "a", after: 0).count == 1)

            // Mutation IDs are per scope: another user's m1 is a different mutation.
            let other = try await write(storage, datastoreKey: key, objectId: "a", base: 1, mutation: ("u2", m1)) { _ in
                StorageWrites.decision(updated(v1, ["n": 3]), deleted: false)
            }
            guard case .written(_, _, .applied(m1, 2, _, _)) = other else {
                Issue.record("the other scope's write gave \(other)")
                return
            }

            // A rejection is recorded too: the retry is refused the same way, even if it would
            // now be allowed.
            let m2 = try MutationID("m2")
            let refusal = RooftopError(.disallowed, "no")
            let rejected = try await write(storage, datastoreKey: key, objectId: "b", base: nil, mutation: ("u1", m2)) {
                _ in
                .reject(refusal)
            }
            #expect(rejected.rejection == refusal)
            let retried = try await write(
                storage, datastoreKey: key, objectId: "b", base: nil, mutation: ("u1", m2), recorder: calls
            ) { _ in
                StorageWrites.decision(object("b"), deleted: false)
            }
            #expect(retried.replayed == .rejected(mutationId: m2, error: refusal))
            #expect(try await storage.object(datastoreKey: key, className: "T", objectId: "b") == nil)

            // So is an unchanged answer.
            let m3 = try MutationID("m3")
            let current = try #require(try await storage.object(datastoreKey: key, className: "T", objectId: "a"))
                .snapshot
            let unchanged = try await write(storage, datastoreKey: key, objectId: "a", base: 2, mutation: ("u1", m3)) {
                _ in
                .unchanged(version: 2, object: current, merges: [])
            }
            guard case .unchanged(let answer) = unchanged else {
                Issue.record("unchanged gave \(unchanged)")
                return
            }
            #expect(answer == .applied(mutationId: m3, version: 2, object: current, merges: []))
            let replayed = try await write(
                storage, datastoreKey: key, objectId: "a", base: 2, mutation: ("u1", m3), recorder: calls
            ) { _ in
                StorageWrites.decision(updated(current, ["n": 9]), deleted: false)
            }
            #expect(replayed.replayed == answer)
            #expect(calls.count == 1)
            #expect(try await storage.object(datastoreKey: key, className: "T", objectId: "a")?.snapshot.version == 2)

            // The same mutation sent several times at once is applied once.
            let m4 = try MutationID("m4")
            let racing = try await withThrowingTaskGroup(of: ObjectWriteOutcome.self) { group in
                for _ in 0..<6 {
                    group.addTask {
                        try await write(storage, datastoreKey: key, objectId: "r", base: nil, mutation: ("u1", m4)) {
                            context in
                            let version = (context.current?.snapshot.version ?? 0) + 1
                            return StorageWrites.decision(
                                object("r", version: version, fields: ["n": .int(version)]), deleted: false)
                        }
                    }
                }
                return try await group.reduce(into: [ObjectWriteOutcome]()) { $0.append($1) }
            }
            let results = racing.compactMap { outcome -> MutationResult? in
                if case .written(_, _, let result) = outcome { return result }
                return nil
            }
            #expect(results.count == 1)
            #expect(racing.compactMap(\.replayed) == Array(repeating: results.first, count: 5).compactMap { $0 })
            #expect(try await storage.object(datastoreKey: key, className: "T", objectId: "r")?.snapshot.version == 1)
        }
    }
}

extension ObjectWriteOutcome {
    /// The error of a `.rejected` outcome.
    var rejection: RooftopError? { if case .rejected(let error) = self { error } else { nil } }

    /// The result of a `.replayed` outcome.
    var replayed: MutationResult? { if case .replayed(let result) = self { result } else { nil } }
}
