import Foundation
import RooftopShared
import Testing
import RooftopTestSupport

/// A seeded, bounded fuzz run over the push, pull, query and count endpoints: mutated valid
/// bodies and random JSON documents. Whatever the input: no 5xx, a `{code, message}` body on
/// every 4xx, the server keeps running, other datastores are untouched, and what the fuzzer did
/// manage to write is consistent between queries and the change feed.
extension HostileInputTests {
    @Test("fuzz: mutated and random bodies never cause a server error")
    func fuzz() async throws {
        let (server, client) = try SharedServer.require()
        let user = try await client.newUser("fuzz")
        let control = try DatastoreID("control")
        let fuzzed = try DatastoreID("fuzz")
        _ = try await client.push(
            (0..<3).map { Mutations.create(control, "Item", "c\($0)", fields: ["n": .int(Int64($0))]) }
                + (0..<3).map {
                    Mutations.create(fuzzed, "Item", "f\($0)", fields: ["n": .int(Int64($0)), "list": [1, 2, 3]])
                },
            token: user.token)
        let controlState = try await client.feedState(control, token: user.token)

        var random = SeededGenerator(seed: 0x5EED_2026_0001)
        let seeds = try FuzzCorpus.seeds()
        var failures: [String] = []
        for iteration in 0..<240 {
            let (path, base) = seeds[Int(random.next() % UInt64(seeds.count))]
            let body: Data
            if random.next() % 4 == 0 {
                body = Data(FuzzCorpus.randomDocument(using: &random, depth: 0).utf8)
            } else {
                body = FuzzCorpus.mutate(base, using: &random)
            }
            let reply = try await client.send(.POST, path, raw: body, token: user.token)
            if !Refusal.isWellBehaved(reply) {
                failures.append(
                    "#\(iteration) \(path) HTTP \(reply.status) \(reply.text.prefix(200)) for \(String(decoding: body.prefix(300), as: UTF8.self))"
                )
            }
        }

        #expect(failures.isEmpty, "\(failures.count) bad answers:\n\(failures.prefix(10).joined(separator: "\n"))")
        #expect(server.isRunning)
        #expect(!server.log.contains("request failed"), "the server logged an internal error:\n\(server.log)")
        #expect(try await client.feedState(control, token: user.token) == controlState)
        // Whatever was written is readable and agrees between the feed and queries.
        let feed = try await client.feedState(fuzzed, token: user.token).filter { $0.value > 0 }
        var queried: [String: Int64] = [:]
        for className in Set(feed.keys.map { String($0.prefix { $0 != "/" }) }) {
            let page = try await client.call(
                .POST, "/v1/datastores/fuzz/query", body: QueryRequest.query(Query(className: className, limit: 1000)),
                token: user.token, as: QueryResponse.self)
            for object in page.objects { queried["\(className)/\(object.objectId)"] = object.version }
        }
        #expect(queried == feed)
    }
}
