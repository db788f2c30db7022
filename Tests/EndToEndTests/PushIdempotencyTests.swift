import Foundation
import RooftopShared
import Testing
import RooftopTestSupport

/// Push: a mutation ID is applied at most once and always answered with its first result, within
/// a batch, across batches, across restarts and crashes; one refusal does not fail a batch.
@Suite("Push: idempotency and batches", .sharedServer())
struct PushIdempotencyTests {
    private let datastore = DatastoreID.default

    @Test("the same mutation pushed twice increments once and gets the same result")
    func sameMutationTwice() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser()
        let created = try await client.push(
            Mutations.create(datastore, "Counter", "c1", fields: ["n": 0]), token: user.token)
        let base = try #require(created.appliedVersion)
        let increment = Mutations.update(datastore, "Counter", "c1", base: base, [FieldUpdate("n", .increment(1))])

        let first = try await client.push(increment, token: user.token)
        let second = try await client.push(increment, token: user.token)
        let batch = try await client.push([increment, increment], token: user.token)

        #expect(first.isApplied)
        #expect(first.appliedVersion == base + 1)
        #expect(second == first)
        #expect(batch.results == [first, first])
        let stored = try #require(
            try await client.object(datastore, className: "Counter", objectId: "c1", token: user.token))
        #expect(stored.fields["n"] == 1)
        #expect(stored.version == base + 1)
    }

    @Test("the same mutation pushed by many tasks at once is applied once; every task gets the same result")
    func concurrentDuplicates() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser()
        let created = try await client.push(
            Mutations.create(datastore, "Counter", "race", fields: ["n": 0]), token: user.token)
        let increment = Mutations.update(
            datastore, "Counter", "race", base: created.appliedVersion, [FieldUpdate("n", .increment(1))])
        let refused = Mutations.create(datastore, "Counter", "bad id", fields: ["n": 0])
        let results = try await withThrowingTaskGroup(of: [MutationResult].self) { group in
            for _ in 0..<16 {
                group.addTask { try await client.push([increment, refused], token: user.token).results }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }

        let first = try #require(results.first)
        #expect(results.allSatisfy { $0 == first })
        #expect(first.first?.isApplied == true)
        #expect(first.last?.error?.code == .illegalArgument)
        let stored = try await client.object(datastore, className: "Counter", objectId: "race", token: user.token)
        #expect(stored?.fields["n"] == 1)
    }

    @Test("mutation IDs are scoped per user: another user's identical ID is a different mutation")
    func mutationIdsPerUser() async throws {
        let (_, client) = try SharedServer.require()
        let alice = try await client.newUser("alice")
        let bob = try await client.newUser("bob")
        let id = MutationID.generate()
        let aliceResult = try await client.push(
            Mutations.create(datastore, "Note", "n1", fields: ["by": "alice"], id: id), token: alice.token)
        let bobResult = try await client.push(
            Mutations.create(datastore, "Note", "n1", fields: ["by": "bob"], id: id), token: bob.token)

        #expect(aliceResult.appliedObject?.fields["by"] == "alice")
        #expect(bobResult.appliedObject?.fields["by"] == "bob")
        let bobsNote = try await client.object(datastore, className: "Note", objectId: "n1", token: bob.token)
        #expect(bobsNote?.fields["by"] == "bob")
    }

    @Test("a batch with rejected mutations applies the others, each with its own result in order")
    func batchWithRejections() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser()
        let locked = uniqueClassName("Locked")
        var permissions = ClassPermissions.default
        permissions.create = .nobody
        try await client.setClass(locked, permissions: permissions)
        let seeded = try await client.push(
            Mutations.create(datastore, "Item", "text", fields: ["s": "a string"]), token: user.token)
        let textVersion = try #require(seeded.appliedVersion)

        let mutations = [
            Mutations.create(datastore, "Item", "ok1", fields: ["n": 1]),
            Mutations.create(datastore, locked, "nope", fields: ["n": 1]),
            Mutations.update(datastore, "Item", "ok1", base: nil, [FieldUpdate("n", .increment(41))]),
            Mutations.update(datastore, "Item", "text", base: textVersion, [FieldUpdate("s", .increment(1))]),
            Mutations.update(datastore, "Item", "ok1", base: nil, [FieldUpdate("n", .increment("x"))]),
            Mutations.create(datastore, "Item", "bad id", fields: ["n": 1]),
            Mutations.update(datastore, "Item", "ok1", base: nil, [FieldUpdate("objectId", .set("other"))]),
            Mutations.create(datastore, "Item", "ok2", fields: ["n": 2]),
        ]
        let response = try await client.push(mutations, token: user.token)

        #expect(response.results.map(\.mutationId) == mutations.map(\.mutationId))
        let codes = response.results.map { $0.error?.code }
        #expect(codes == [nil, .disallowed, nil, .badType, .badType, .illegalArgument, .invalidOperation, nil])
        let objects = try await client.allObjects(datastore, className: "Item", token: user.token)
        #expect(Set(objects.keys) == ["text", "ok1", "ok2"])
        #expect(objects["ok1"]?.fields["n"] == 42)
        #expect(objects["text"]?.fields["s"] == "a string")
        #expect(objects["text"]?.version == textVersion)
        #expect(try await client.count(datastore, className: locked, token: user.token) == 0)
    }

    @Test("a rejected mutation retried after the cause went away gets the first rejection")
    func rejectedRetried() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser()
        let className = uniqueClassName("Frozen")
        let created = try await client.push(
            Mutations.create(datastore, className, "f1", fields: ["n": 0]), token: user.token)
        let base = try #require(created.appliedVersion)
        var frozen = ClassPermissions.default
        frozen.update = .nobody
        try await client.setClass(className, permissions: frozen)

        let increment = Mutations.update(datastore, className, "f1", base: base, [FieldUpdate("n", .increment(1))])
        let first = try await client.push(increment, token: user.token)
        try await client.setClass(className, permissions: .default)
        let retried = try await client.push(increment, token: user.token)

        #expect(first.error?.code == .disallowed)
        #expect(retried == first)
        let stored = try await client.object(datastore, className: className, objectId: "f1", token: user.token)
        #expect(stored?.fields["n"] == 0)
        #expect(stored?.version == base)
        // A new mutation is judged afresh.
        let fresh = try await client.push(
            Mutations.update(datastore, className, "f1", base: base, [FieldUpdate("n", .increment(1))]),
            token: user.token)
        #expect(fresh.appliedObject?.fields["n"] == 1)
    }

    @Test("a mutation refused for want of a datastore role, retried once granted one, gets the first rejection")
    func refusedBeforeTheTransactionRetried() async throws {
        let (_, client) = try SharedServer.require()
        let owner = try await client.newUser("owner")
        let other = try await client.newUser("other")
        let shared = try await client.shareableDatastore(owner: owner)
        let mutation = Mutations.create(shared, "Doc", "d1", fields: ["title": "draft"])

        let first = try await client.push(mutation, token: other.token)
        try await client.share(shared, .editor, with: other, by: owner)
        let retried = try await client.push(mutation, token: other.token)

        #expect(first.error?.code == .notFound)
        #expect(retried == first)
        #expect(try await client.count(shared, className: "Doc", token: owner.token) == 0)
    }

    @Test("an applied mutation retried after losing the datastore role still gets its first (applied) result")
    func appliedRetriedAfterLosingAccess() async throws {
        let (_, client) = try SharedServer.require()
        let owner = try await client.newUser("owner")
        let editor = try await client.newUser("editor")
        let shared = try await client.shareableDatastore(owner: owner, sharedWith: [editor])
        let mutation = Mutations.create(shared, "Doc", "d1", fields: ["title": "by the editor"], acl: .publicReadWrite)

        let first = try await client.push(mutation, token: editor.token)
        try await client.share(shared, .none, with: editor, by: owner)
        let retried = try await client.push(mutation, token: editor.token)

        #expect(first.isApplied)
        // The client never saw the first answer; a rejection now would make it set aside a change
        // that the server did apply.
        #expect(retried == first)
        let stored = try await client.object(shared, className: "Doc", objectId: "d1", token: owner.token)
        #expect(stored?.version == first.appliedVersion)
    }

    @Test("the same mutation pushed again after a restart is not applied again")
    func acrossRestart() async throws {
        let directory = TemporaryDirectory.make(prefix: "rooftop-idempotent-restart")
        let (user, increment, first) = try await withServer(dataDirectory: directory) { server in
            try await withClient(server) { client in
                let user = try await client.newUser()
                let created = try await client.push(
                    Mutations.create(datastore, "Counter", "c1", fields: ["n": 0]), token: user.token)
                let increment = Mutations.update(
                    datastore, "Counter", "c1", base: created.appliedVersion, [FieldUpdate("n", .increment(5))])
                return (user, increment, try await client.push(increment, token: user.token))
            }
        }
        try await withServer(dataDirectory: directory) { server in
            try await withClient(server) { client in
                let again = try await client.push(increment, token: user.token)
                #expect(again == first)
                let stored = try await client.object(datastore, className: "Counter", objectId: "c1", token: user.token)
                #expect(stored?.fields["n"] == 5)
                #expect(stored?.version == first.appliedVersion)
            }
        }
    }

    @Test("a batch retried after SIGKILL (acknowledged before the crash) applies nothing twice")
    func retriedBatchAfterCrash() async throws {
        let directory = TemporaryDirectory.make(prefix: "rooftop-idempotent-crash")
        let batch = [
            Mutations.create(datastore, "Counter", "a", fields: ["n": 0]),
            Mutations.update(datastore, "Counter", "a", base: nil, [FieldUpdate("n", .increment(1))]),
            Mutations.create(datastore, "Counter", "b", fields: ["n": 10]),
            Mutations.update(datastore, "Counter", "b", base: nil, [FieldUpdate("n", .increment(1))]),
            Mutations.update(datastore, "Counter", "a", base: nil, [FieldUpdate("tags", .listAppend(["x"]))]),
        ]
        let (user, first) = try await withServer(dataDirectory: directory) { server in
            try await withClient(server) { client in
                let user = try await client.newUser()
                let response = try await client.push(batch, token: user.token)
                await server.kill()
                return (user, response)
            }
        }
        #expect(first.results.allSatisfy { $0.isApplied })

        try await withServer(dataDirectory: directory) { server in
            try await withClient(server) { client in
                let retried = try await client.push(batch, token: user.token)
                // The same decisions; each object as it is now (a retry does not get old states).
                #expect(retried.results.map(\.decision) == first.results.map(\.decision))
                let objects = try await client.allObjects(datastore, className: "Counter", token: user.token)
                #expect(retried.results.map { $0.appliedObject } == batch.map { objects[$0.objectId] })
                #expect(objects["a"]?.fields["n"] == 1)
                #expect(objects["a"]?.fields["tags"] == ["x"])
                #expect(objects["a"]?.version == 3)
                #expect(objects["b"]?.fields["n"] == 11)
                #expect(objects["b"]?.version == 2)
                // A retry with one more mutation applies just that one, on top.
                let extra = Mutations.update(datastore, "Counter", "a", base: 3, [FieldUpdate("n", .increment(1))])
                let extended = try await client.push(batch + [extra], token: user.token)
                #expect(extended.results.prefix(batch.count).map(\.decision) == first.results.map(\.decision))
                #expect(extended.results.last?.appliedObject?.fields["n"] == 2)
                #expect(extended.results.last?.appliedVersion == 4)
            }
        }
    }

    @Test("a push killed mid-batch and retried applies every mutation exactly once")
    func crashMidBatch() async throws {
        let directory = TemporaryDirectory.make(prefix: "rooftop-idempotent-midbatch")
        let count = 300
        let batch =
            [Mutations.create(datastore, "Counter", "c", fields: ["n": 0])]
            + (0..<count).map { _ in
                Mutations.update(datastore, "Counter", "c", base: nil, [FieldUpdate("n", .increment(1))])
            }
        let user = try await withServer(dataDirectory: directory) { server in
            try await withClient(server) { client in
                let user = try await client.newUser()
                let push = Task { try? await client.push(batch, token: user.token) }
                // Kill as soon as part of the batch is committed (or after all of it, if it is quick).
                // On PostgreSQL a mutation is a dozen round trips, and under the whole suite's load
                // the batch has taken 30 s: the wait is long, the check is not about time.
                try await TestWait.until(within: .seconds(120), "the first increments to commit") {
                    let object = try await client.object(
                        datastore, className: "Counter", objectId: "c", token: user.token)
                    return (object?.version ?? 0) >= 2
                }
                await server.kill()
                _ = await push.value
                return user
            }
        }
        try await withServer(dataDirectory: directory) { server in
            try await withClient(server) { client in
                let before = try await client.object(datastore, className: "Counter", objectId: "c", token: user.token)
                let response = try await client.push(batch, token: user.token)
                #expect(response.results.allSatisfy { $0.isApplied })
                let after = try await client.object(datastore, className: "Counter", objectId: "c", token: user.token)
                #expect(
                    after?.fields["n"] == .int(Int64(count)), "before the retry: \(String(describing: before?.fields))")
                #expect(after?.version == Int64(count + 1))
            }
        }
    }
}
