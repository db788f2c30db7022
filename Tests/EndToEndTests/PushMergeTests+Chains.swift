import Foundation
import RooftopShared
import Testing

/// Push: a client's successive mutations of one object in one batch, made on the same base
/// version, chain: they never conflict with each other, yet each still merges with what others
/// committed since that base.
extension PushMergeTests {
    @Test("successive mutations of one object in one batch, on the same base, chain instead of conflicting")
    func chainInBatch() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser()
        let className = uniqueClassName("Chain")
        let base = try await seed(client, user, className, "o", fields: ["title": "t0", "n": 0])
        let batch = [
            Mutations.update(.app, className, "o", base: base, [FieldUpdate("title", .set("a"))]),
            Mutations.update(.app, className, "o", base: base, [FieldUpdate("title", .set("b"))]),
            Mutations.update(.app, className, "o", base: base, [FieldUpdate("n", .increment(1))]),
            Mutations.update(.app, className, "o", base: base, [FieldUpdate("title", .set("c"))]),
        ]
        let response = try await client.push(batch, token: user.token)

        #expect(response.results.map(\.appliedVersion) == [base + 1, base + 2, base + 3, base + 4])
        #expect(response.results.allSatisfy { $0.merges.isEmpty })
        let stored = try await client.object(.app, className: className, objectId: "o", token: user.token)
        #expect(stored?.fields == ["title": "c", "n": 1])

        // A create followed by updates without a base (a new object edited offline) chains too.
        let fresh = try await client.push(
            [
                Mutations.create(.app, className, "new", fields: ["n": 1]),
                Mutations.update(.app, className, "new", base: nil, [FieldUpdate("n", .increment(1))]),
                Mutations.update(.app, className, "new", base: nil, [FieldUpdate("tags", .listAppend(["t"]))]),
            ], token: user.token)
        #expect(fresh.results.map(\.appliedVersion) == [1, 2, 3])
        #expect(fresh.results.last?.appliedObject?.fields == ["n": 2, "tags": ["t"]])
    }

    @Test("a chained batch still merges every mutation with the concurrent change it did not see")
    func chainOverConcurrentChange() async throws {
        let (_, client) = try SharedServer.require()
        let users = try await pair(client)
        let className = uniqueClassName("ChainMerge")
        try await client.setClass(className, rules: ["count": .sum])
        let base = try await seed(client, users.remote, className, "o", fields: ["title": "t0", "count": 10, "n": 0])
        let remote = try await client.push(
            Mutations.update(
                .app, className, "o", base: base,
                [FieldUpdate("title", .set("remote")), FieldUpdate("count", .increment(100))]),
            token: users.remote.token)
        #expect(remote.isApplied)

        // Offline, the local client edited the object three times from `base`: it set the counter
        // to the values it computed (11, then 12) and edited the title twice.
        let batch = [
            Mutations.update(
                .app, className, "o", base: base, [FieldUpdate("count", .set(11)), FieldUpdate("n", .set(1))]),
            Mutations.update(.app, className, "o", base: base, [FieldUpdate("title", .set("local 1"))]),
            Mutations.update(
                .app, className, "o", base: base,
                [FieldUpdate("count", .set(12)), FieldUpdate("title", .set("local 2"))]),
        ]
        let response = try await client.push(batch, token: users.local.token)

        #expect(response.results.allSatisfy { $0.isApplied })
        let stored = try await client.object(.app, className: className, objectId: "o", token: users.local.token)
        // `remote` (the default) keeps the concurrent title; `sum` keeps both sides' increments.
        #expect(stored?.fields["title"] == "remote")
        #expect(stored?.fields["count"] == 112)
        #expect(stored?.fields["n"] == 1)
        let titleDecisions = response.results.flatMap(\.merges).filter { $0.field == "title" }
        #expect(!titleDecisions.isEmpty && titleDecisions.allSatisfy { $0.result == "remote" })
    }

    @Test("chained list edits land around a concurrent insert, by element, not by index")
    func chainedListEdits() async throws {
        let (_, client) = try SharedServer.require()
        let users = try await pair(client)
        let className = uniqueClassName("ChainList")
        let base = try await seed(client, users.remote, className, "o", fields: ["items": ["a", "b", "c"]])
        _ = try await client.push(
            Mutations.update(
                .app, className, "o", base: base, [FieldUpdate("items", .listInsert(index: 0, value: "r"))]),
            token: users.remote.token)
        // Locally: ["a", "b", "c"] → append x → remove "b" → insert y at the front.
        let batch = [
            Mutations.update(.app, className, "o", base: base, [FieldUpdate("items", .listAppend(["x"]))]),
            Mutations.update(.app, className, "o", base: base, [FieldUpdate("items", .listRemove(index: 1))]),
            Mutations.update(
                .app, className, "o", base: base, [FieldUpdate("items", .listInsert(index: 0, value: "y"))]),
        ]
        let response = try await client.push(batch, token: users.local.token)

        #expect(response.results.allSatisfy { $0.isApplied })
        let stored = try await client.object(.app, className: className, objectId: "o", token: users.local.token)
        #expect(stored?.fields["items"] == ["r", "y", "a", "c", "x"])
    }

    @Test("a chain that deletes and re-creates an object re-creates it, even after a concurrent update")
    func chainedDeleteAndRecreate() async throws {
        let (_, client) = try SharedServer.require()
        let users = try await pair(client)
        let className = uniqueClassName("ChainRecreate")
        let base = try await seed(client, users.remote, className, "o", fields: ["v": 1, "old": true])
        _ = try await client.push(
            Mutations.update(.app, className, "o", base: base, [FieldUpdate("v", .set(2))]), token: users.remote.token)
        let response = try await client.push(
            [
                Mutations.delete(.app, className, "o", base: base),
                Mutations.update(.app, className, "o", base: base, [FieldUpdate("v", .set(10))]),
            ], token: users.local.token)

        #expect(response.results.map(\.appliedVersion) == [base + 2, base + 3])
        #expect(response.results.first?.merges.map(\.field) == ["v"], "the delete discarded the concurrent update")
        let stored = try await client.object(.app, className: className, objectId: "o", token: users.local.token)
        #expect(stored?.fields == ["v": 10])
    }

    @Test("a retried chain with one more mutation merges it with what others committed in between")
    func retriedChain() async throws {
        let (_, client) = try SharedServer.require()
        let users = try await pair(client)
        let className = uniqueClassName("ChainRetry")
        try await client.setClass(className, rules: ["count": .sum])
        let base = try await seed(client, users.remote, className, "o", fields: ["count": 0, "title": "t0"])
        let first = [
            Mutations.update(.app, className, "o", base: base, [FieldUpdate("count", .set(1))]),
            Mutations.update(.app, className, "o", base: base, [FieldUpdate("title", .set("local"))]),
        ]
        let acknowledged = try await client.push(first, token: users.local.token)
        // The answer was lost; meanwhile someone else counted ten more.
        _ = try await client.push(
            Mutations.update(.app, className, "o", base: base + 2, [FieldUpdate("count", .increment(10))]),
            token: users.remote.token)
        let retried = try await client.push(
            first + [Mutations.update(.app, className, "o", base: base, [FieldUpdate("count", .set(2))])],
            token: users.local.token)

        #expect(retried.results.prefix(2).map(\.decision) == acknowledged.results.map(\.decision))
        let stored = try await client.object(.app, className: className, objectId: "o", token: users.local.token)
        #expect(
            retried.results.prefix(2).allSatisfy { ($0.appliedObject?.version ?? 0) >= 4 },
            "replays carry the object's state when they were answered, after the concurrent count")
        #expect(stored?.fields["count"] == 12)
        #expect(stored?.fields["title"] == "local")
    }

    @Test("changes without a base, chained after a creation, merge with what others committed since it")
    func baselessChainAfterCreation() async throws {
        let (_, client) = try SharedServer.require()
        let users = try await pair(client)
        let className = uniqueClassName("ChainNoBase")
        try await client.setClass(className, rules: ["a": .remote, "n": .max])
        // A new object edited offline: its creation reached the server but the answer was lost.
        let creation = Mutations.create(
            .app, className, "o", fields: ["a": 1, "n": 1, "l": .list([])],
            acl: ACL([.everyone: ACL.Access(read: true, write: true)]))
        #expect(try await client.push(creation, token: users.local.token).appliedVersion == 1)
        // Meanwhile someone else sets `a` and `n` and inserts into the list.
        let remote = try await client.push(
            [
                Mutations.update(.app, className, "o", base: 1, [FieldUpdate("a", .set(32)), FieldUpdate("n", .set(50))]),
                Mutations.update(.app, className, "o", base: 1, [FieldUpdate("l", .listInsert(index: 0, value: "r"))]),
            ], token: users.remote.token)
        #expect(remote.results.map { $0.appliedVersion } == [2, 3])
        // The retry carries the changes made on the new object since, all without a base.
        let retried = try await client.push(
            [
                creation,
                Mutations.update(.app, className, "o", base: nil, [FieldUpdate("l", .listAppend(["mine"]))]),
                Mutations.update(.app, className, "o", base: nil, [FieldUpdate("a", .set(25)), FieldUpdate("n", .set(7))]),
            ], token: users.local.token)

        #expect(retried.results.allSatisfy { $0.isApplied }, "\(retried.results)")
        let stored = try await client.object(.app, className: className, objectId: "o", token: users.local.token)
        // The third was made on the creation, not on the second's result: it did not see 32 or 50.
        #expect(stored?.fields["a"] == 32)
        #expect(stored?.fields["n"] == 50)
        #expect(stored?.fields["l"] == ["r", "mine"])
        let decisions = retried.results.flatMap { $0.merges }
        #expect(decisions.contains { $0.field == "a" && $0.result == 32 }, "\(decisions)")
    }

    @Test("a retried chain whose first change others built on appends after their changes, so later list edits still land")
    func retriedChainAfterOthersBuiltOnIt() async throws {
        let (_, client) = try SharedServer.require()
        let users = try await pair(client)
        let className = uniqueClassName("ChainReplayList")
        let seeded = try await seed(client, users.remote, className, "o", fields: ["l": ["s"], "n": 0])
        // Before the chain, someone else changes another field.
        let base = seeded
        #expect(
            try await client.push(
                Mutations.update(.app, className, "o", base: seeded, [FieldUpdate("n", .increment(1))]),
                token: users.remote.token
            ).appliedVersion == seeded + 1)
        let first = Mutations.update(.app, className, "o", base: base, [FieldUpdate("l", .listAppend(["a"]))])
        #expect(try await client.push(first, token: users.local.token).appliedVersion == base + 2)
        // The answer was lost; someone else appended on top of it.
        #expect(
            try await client.push(
                Mutations.update(.app, className, "o", base: base + 2, [FieldUpdate("l", .listAppend(["r"]))]),
                token: users.remote.token
            ).appliedVersion == base + 3)
        // The retry carries the next append, made on the first.
        let retried = try await client.push(
            [first, Mutations.update(.app, className, "o", base: base, [FieldUpdate("l", .listAppend(["b"]))])],
            token: users.local.token)
        #expect(retried.results.allSatisfy { $0.isApplied }, "\(retried.results)")
        // A third edit, made long before on the seeded version, still lands.
        let late = try await client.push(
            Mutations.update(.app, className, "o", base: base, [FieldUpdate("l", .listAppend(["x"]))]),
            token: users.remote.token)
        #expect(late.isApplied)
        let stored = try await client.object(.app, className: className, objectId: "o", token: users.local.token)
        #expect(stored?.fields["l"] == ["s", "a", "r", "b", "x"], "\(String(describing: stored?.fields))")
    }
}
