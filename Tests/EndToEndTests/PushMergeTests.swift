import Foundation
import RooftopShared
import Testing

/// Push: changes based on the same old version are merged by the class's field rules, the merge
/// decisions are returned, and a client's successive mutations in one batch chain.
@Suite("Push: merges of concurrent changes", .sharedServer())
struct PushMergeTests {
    /// Two users who both may write the objects of a test (public read/write ACL in `:app`).
    struct Pair {
        var remote: TestUser
        var local: TestUser
    }

    func pair(_ client: APIClient) async throws -> Pair {
        Pair(remote: try await client.newUser("remote"), local: try await client.newUser("local"))
    }

    /// Creates an object in `:app` that everyone may write, returns its version.
    func seed(
        _ client: APIClient, _ user: TestUser, _ className: String, _ objectId: String, fields: [String: Value]
    ) async throws -> Int64 {
        let result = try await client.push(
            Mutations.create(.app, className, objectId, fields: fields, acl: .publicReadWrite), token: user.token)
        return try #require(result.appliedVersion, "seeding failed: \(result)")
    }

    /// One conflict on field `v`: the remote side's change lands first, the local one second.
    struct RuleCase: Sendable, CustomTestStringConvertible {
        var rule: MergeRule
        var base: Value
        var remote: FieldOperation
        var local: FieldOperation
        var expected: Value?
        var testDescription: String {
            "\(rule): base \(base), remote \(remote), local \(local) → \(String(describing: expected))"
        }
    }

    static let ruleCases: [RuleCase] = [
        RuleCase(rule: .remote, base: 10, remote: .set(20), local: .set(15), expected: 20),
        RuleCase(rule: .remote, base: 10, remote: .unset, local: .set(15), expected: nil),
        RuleCase(rule: .local, base: 10, remote: .set(20), local: .set(15), expected: 15),
        RuleCase(rule: .local, base: 10, remote: .set(20), local: .unset, expected: nil),
        RuleCase(rule: .max, base: 10, remote: .set(12), local: .set(30), expected: 30),
        RuleCase(rule: .max, base: 10, remote: .set(12), local: .set(5), expected: 12),
        RuleCase(rule: .max, base: 10, remote: .increment(5), local: .set(14), expected: 15),
        RuleCase(rule: .min, base: 10, remote: .set(12), local: .set(30), expected: 12),
        RuleCase(rule: .min, base: 10, remote: .set(12), local: .set(5), expected: 5),
        RuleCase(rule: .min, base: "m", remote: .set("z"), local: .set("b"), expected: "b"),
        RuleCase(rule: .sum, base: 10, remote: .set(20), local: .increment(5), expected: 25),
        RuleCase(rule: .sum, base: 10, remote: .set(20), local: .set(13), expected: 23),
        RuleCase(rule: .sum, base: 10, remote: .increment(4), local: .increment(6), expected: 20),
        RuleCase(rule: .sum, base: "text", remote: .set("remote"), local: .set("local"), expected: "remote"),
    ]

    @Test("each field rule gives the documented result, and the decision is returned", arguments: ruleCases)
    func fieldRule(_ rule: RuleCase) async throws {
        let (_, client) = try SharedServer.require()
        let users = try await pair(client)
        let className = uniqueClassName("Rule")
        try await client.setClass(className, rules: ["v": rule.rule])
        let base = try await seed(client, users.remote, className, "o", fields: ["v": rule.base, "other": 1])

        let remote = try await client.push(
            Mutations.update(.app, className, "o", base: base, [FieldUpdate("v", rule.remote)]),
            token: users.remote.token)
        let local = try await client.push(
            Mutations.update(.app, className, "o", base: base, [FieldUpdate("v", rule.local)]), token: users.local.token
        )

        #expect(remote.isApplied && remote.merges.isEmpty)
        #expect(local.isApplied)
        let decision = try #require(local.merges.first, "no merge decision in \(local)")
        #expect(local.merges.count == 1)
        #expect(decision.field == "v")
        #expect(decision.rule == rule.rule)
        #expect(decision.baseValue == rule.base)
        #expect(decision.remoteValue == remote.appliedObject?.fields["v"])
        #expect(decision.result == rule.expected)
        #expect(decision.resolution == .rule)
        let stored = try await client.object(.app, className: className, objectId: "o", token: users.local.token)
        #expect(stored?.fields["v"] == rule.expected)
        #expect(stored?.fields["other"] == 1)
        #expect(local.appliedObject?.fields["v"] == rule.expected)
    }

    @Test("changes to different fields from the same base both land, without decisions")
    func disjointFields() async throws {
        let (_, client) = try SharedServer.require()
        let users = try await pair(client)
        let className = uniqueClassName("Disjoint")
        let base = try await seed(client, users.remote, className, "o", fields: ["x": 1, "y": 1])
        _ = try await client.push(
            Mutations.update(.app, className, "o", base: base, [FieldUpdate("x", .set(2))]), token: users.remote.token)
        let local = try await client.push(
            Mutations.update(.app, className, "o", base: base, [FieldUpdate("y", .set(3))]), token: users.local.token)

        #expect(local.merges.isEmpty)
        #expect(local.appliedObject?.fields == ["x": 2, "y": 3])
        #expect(local.appliedVersion == base + 2)
    }

    @Test("many concurrent increments of a sum counter from one base all count")
    func concurrentSumCounter() async throws {
        let (_, client) = try SharedServer.require()
        let className = uniqueClassName("Tally")
        try await client.setClass(className, rules: ["n": .sum])
        let users = [try await client.newUser(), try await client.newUser(), try await client.newUser()]
        let base = try await seed(client, users[0], className, "tally", fields: ["n": 100])
        let tasks = 30
        // Every third task writes the value it computed locally (a set); sum keeps its difference.
        let results = try await withThrowingTaskGroup(of: MutationResult.self) { group in
            for index in 1...tasks {
                let user = users[index % users.count]
                let operation: FieldOperation =
                    index % 3 == 0 ? .set(.int(100 + Int64(index))) : .increment(.int(Int64(index)))
                group.addTask {
                    try await client.push(
                        Mutations.update(.app, className, "tally", base: base, [FieldUpdate("n", operation)]),
                        token: user.token)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }

        #expect(results.allSatisfy { $0.isApplied })
        #expect(Set(results.compactMap(\.appliedVersion)) == Set((base + 1)...(base + Int64(tasks))))
        #expect(results.filter(\.merges.isEmpty).count == 1, "only the first to commit meets no concurrent change")
        let stored = try await client.object(.app, className: className, objectId: "tally", token: users[0].token)
        #expect(stored?.fields["n"] == .int(100 + Int64(tasks * (tasks + 1) / 2)))
    }

    @Test("concurrent list inserts at the same index and appends all land")
    func concurrentListInserts() async throws {
        let (_, client) = try SharedServer.require()
        let users = try await pair(client)
        let className = uniqueClassName("Lists")
        let base = try await seed(client, users.remote, className, "o", fields: ["items": ["a", "b"]])
        _ = try await client.push(
            Mutations.update(
                .app, className, "o", base: base, [FieldUpdate("items", .listInsert(index: 1, value: "x"))]),
            token: users.remote.token)
        let local = try await client.push(
            Mutations.update(
                .app, className, "o", base: base, [FieldUpdate("items", .listInsert(index: 1, value: "y"))]),
            token: users.local.token)
        #expect(local.merges.first?.resolution == .listTransform)
        #expect(local.appliedObject?.fields["items"] == ["a", "x", "y", "b"])

        // Many writers appending from one stale base: every element lands once.
        let writers = 12
        let results = try await withThrowingTaskGroup(of: MutationResult.self) { group in
            for index in 0..<writers {
                let user = index.isMultiple(of: 2) ? users.remote : users.local
                group.addTask {
                    try await client.push(
                        Mutations.update(
                            .app, className, "o", base: base,
                            [FieldUpdate("items", .listAppend([.string("w\(index)")]))]),
                        token: user.token)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.allSatisfy { $0.isApplied })
        let stored = try await client.object(.app, className: className, objectId: "o", token: users.local.token)
        let items = stored?.fields["items"]?.listValue ?? []
        #expect(Array(items.prefix(4)) == ["a", "x", "y", "b"])
        #expect(Set(items.dropFirst(4)) == Set((0..<writers).map { Value.string("w\($0)") }))
        #expect(items.count == 4 + writers)
    }

    @Test("a delete wins over a concurrent update, whichever lands first")
    func deleteWins() async throws {
        let (_, client) = try SharedServer.require()
        let users = try await pair(client)
        let className = uniqueClassName("Deletes")

        // The delete lands first; the update based on the old version leaves the object deleted.
        let first = try await seed(client, users.remote, className, "first", fields: ["v": 1])
        let deleted = try await client.push(
            Mutations.delete(.app, className, "first", base: first), token: users.remote.token)
        let late = try await client.push(
            Mutations.update(.app, className, "first", base: first, [FieldUpdate("v", .set(2))]),
            token: users.local.token)
        #expect(deleted.isApplied && deleted.appliedObject == nil)
        #expect(late.isApplied)
        #expect(late.appliedObject == nil)
        #expect(late.appliedVersion == deleted.appliedVersion)
        #expect(late.merges.map(\.resolution) == [.objectDeleted])
        #expect(late.merges.first?.result == nil)
        #expect(try await client.object(.app, className: className, objectId: "first", token: users.local.token) == nil)

        // The update lands first; the delete based on the old version still deletes.
        let second = try await seed(client, users.remote, className, "second", fields: ["v": 1])
        let updated = try await client.push(
            Mutations.update(.app, className, "second", base: second, [FieldUpdate("v", .set(2))]),
            token: users.local.token)
        let lateDelete = try await client.push(
            Mutations.delete(.app, className, "second", base: second), token: users.remote.token)
        #expect(updated.appliedVersion == second + 1)
        #expect(lateDelete.isApplied && lateDelete.appliedObject == nil)
        #expect(lateDelete.merges.map(\.field) == ["v"])
        #expect(
            try await client.object(.app, className: className, objectId: "second", token: users.local.token) == nil)
        #expect(try await client.count(.app, className: className, token: users.local.token) == 0)
    }

    /// RELIABILITY.md, "Randomized convergence", bug 1 (seeds 100037635269762, 100037635269775,
    /// 100037635269958): a client's update made on its own creation travels with no base version
    /// while the creation is not acknowledged to it; when it arrives in a push without the
    /// creation (the creation's answer was lost, then it was acknowledged by a retry), after
    /// another user deleted the object, it must lose to the delete instead of re-creating the
    /// object with only its own fields.
    @Test("an update with no base version does not re-create its own creation that another user deleted")
    func baselessUpdateLosesToDeleteOfOwnCreation() async throws {
        let (_, client) = try SharedServer.require()
        let users = try await pair(client)
        let className = uniqueClassName("Resurrection")

        // The local client creates the object; say the answer is lost (the result is not used).
        let created = try await client.push(
            Mutations.create(.app, className, "o", fields: ["a": 1, "b": 1], acl: .publicReadWrite),
            token: users.local.token)
        let createdVersion = try #require(created.appliedVersion)
        // Another user sees it and deletes it.
        let deleted = try await client.push(
            Mutations.delete(.app, className, "o", base: createdVersion), token: users.remote.token)
        let tombstone = try #require(deleted.appliedVersion)
        #expect(deleted.appliedObject == nil)

        // The local client's update made on its creation, with no base version, alone in a push.
        let late = try await client.push(
            Mutations.update(.app, className, "o", base: nil, [FieldUpdate("b", .set(2))]), token: users.local.token)
        #expect(late.isApplied, "answered like a change that lost to a delete: \(late)")
        #expect(late.appliedObject == nil)
        #expect(late.appliedVersion == tombstone)
        #expect(late.merges.map(\.resolution) == [.objectDeleted])
        #expect(try await client.object(.app, className: className, objectId: "o", token: users.local.token) == nil)

        // Three such updates in one push: the later ones are chained to the first, and lose too.
        let batch = try await client.push(
            [
                Mutations.update(.app, className, "o", base: nil, [FieldUpdate("b", .set(3))]),
                Mutations.update(.app, className, "o", base: nil, [FieldUpdate("c", .set(4))]),
                Mutations.update(.app, className, "o", base: nil, [FieldUpdate("d", .set(5))]),
            ], token: users.local.token)
        #expect(batch.results.allSatisfy { $0.isApplied && $0.appliedObject == nil }, "\(batch.results)")
        #expect(batch.results.map(\.appliedVersion) == [tombstone, tombstone, tombstone])
        #expect(try await client.object(.app, className: className, objectId: "o", token: users.local.token) == nil)

        // A deliberate re-creation after the caller's own delete still re-creates.
        let mine = try await seed(client, users.local, className, "mine", fields: ["a": 1])
        let ownDelete = try await client.push(
            Mutations.delete(.app, className, "mine", base: mine), token: users.local.token)
        #expect(ownDelete.isApplied)
        let recreated = try await client.push(
            Mutations.create(.app, className, "mine", fields: ["a": 5]), token: users.local.token)
        #expect(recreated.appliedObject?.fields == ["a": 5])

        // So does a creation over an object someone else created and deleted.
        let theirs = try await seed(client, users.remote, className, "theirs", fields: ["a": 1])
        _ = try await client.push(Mutations.delete(.app, className, "theirs", base: theirs), token: users.remote.token)
        let overTheirs = try await client.push(
            Mutations.create(.app, className, "theirs", fields: ["a": 6]), token: users.local.token)
        #expect(overTheirs.appliedObject?.fields == ["a": 6])
    }
}
