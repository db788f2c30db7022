import Foundation
import RooftopShared
import Testing

/// Limits that have no command-line flag, at their defaults: mutations per push, query limits and
/// pull page sizes.
@Suite("Limits: mutations per push, query and pull limits", .sharedServer())
struct LimitsDefaultTests {
    @Test("a push of exactly the maximum number of mutations is applied; one more is refused whole")
    func mutationsPerPush() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser()
        let info = try await client.call(API.getServerInfo, as: ServerInfo.self)
        let maximum = info.limits.maxMutationsPerPush
        let datastore = try DatastoreID("many")
        func batch(_ objectId: String, _ count: Int) -> [Mutation] {
            [Mutations.create(datastore, "Many", objectId, fields: ["n": 0])]
                + (1..<count).map { _ in
                    Mutations.update(datastore, "Many", objectId, base: nil, [FieldUpdate("n", .increment(1))])
                }
        }
        let atLimit = try await client.push(batch("fits", maximum), token: user.token)
        let over = try await client.send(
            API.push, body: PushRequest(mutations: batch("over", maximum + 1)), token: user.token)

        #expect(atLimit.results.count == maximum && atLimit.results.allSatisfy { $0.isApplied })
        #expect(over.status == 413)
        #expect(over.error?.code == .sizeLimit)
        let stored = try await client.allObjects(datastore, className: "Many", token: user.token)
        #expect(Set(stored.keys) == ["fits"])
        #expect(stored["fits"]?.fields["n"] == .int(Int64(maximum - 1)))
    }

    @Test("queries use the default limit, accept the maximum, and refuse more (never silently lowered)")
    func queryLimits() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser()
        let info = try await client.call(API.getServerInfo, as: ServerInfo.self)
        let datastore = try DatastoreID("queried")
        let total = info.limits.defaultQueryLimit + 5
        _ = try await client.push(
            (0..<total).map { Mutations.create(datastore, "Queried", "q\($0)", fields: ["i": .int(Int64($0))]) },
            token: user.token)

        let unlimited = try await client.query(datastore, className: "Queried", token: user.token)
        #expect(unlimited.objects.count == info.limits.defaultQueryLimit)
        #expect(unlimited.totalCount == total)
        let maximum = try await client.query(
            datastore, className: "Queried", text: "limit \(info.limits.maxQueryLimit)", token: user.token)
        #expect(maximum.objects.count == total)
        let zero = try await client.query(datastore, className: "Queried", text: "limit 0", token: user.token)
        #expect(zero.objects.isEmpty && zero.totalCount == total)

        let tooMany = try await client.send(
            .POST, "/v1/datastores/queried/query",
            body: QueryRequest.text(
                className: "Queried", text: "limit \(info.limits.maxQueryLimit + 1)", parameters: []),
            token: user.token)
        #expect(tooMany.status == 413)
        #expect(tooMany.error?.code == .sizeLimit)
        let negative = try await client.send(
            .POST, "/v1/datastores/queried/query", raw: Data(#"{"query": {"className": "Queried", "limit": -1}}"#.utf8),
            token: user.token)
        #expect(negative.status == 400)
        #expect(negative.error?.code == .invalidQuery)
    }

    @Test("pull page sizes: the maximum is accepted, more is refused, zero is illegal")
    func pullLimits() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser()
        let info = try await client.call(API.getServerInfo, as: ServerInfo.self)
        let maximum = try await client.send(
            API.pull, body: PullRequest(datastore: .default, limit: info.limits.maxPullPageSize),
            token: user.token)
        let tooMany = try await client.send(
            API.pull, body: PullRequest(datastore: .default, limit: info.limits.maxPullPageSize + 1),
            token: user.token)
        let zero = try await client.send(
            API.pull, body: PullRequest(datastore: .default, limit: 0), token: user.token)

        #expect(maximum.status == 200)
        #expect(tooMany.status == 413)
        #expect(tooMany.error?.code == .sizeLimit)
        #expect(zero.status == 400)
        #expect(zero.error?.code == .illegalArgument)
    }
}
