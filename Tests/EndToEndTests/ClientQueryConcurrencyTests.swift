import Foundation
import Rooftop
import RooftopShared
import Testing

/// Several clients in one process, each on its own cache file, working at the same time
/// against one server while a writer changes the data: each keeps seeing its own user's objects,
/// and their caches stay consistent with the server.
@Suite("Client queries: concurrent clients", .sharedServer(), .timeLimit(.minutes(5)))
struct ClientQueryConcurrencyTests {
    @Test("four clients of two users query, cache and pin concurrently while the data changes")
    func concurrentClients() async throws {
        let (server, api) = try SharedServer.require()
        let scene = try await ClientACLScene.make(api)
        let rounds = 8
        let writer = Task {
            for round in 0..<rounds {
                let reply = try await api.update(
                    ObjectSnapshot(className: scene.className, objectId: scene.publicDoc), fields: ["round": .int(Int64(round))],
                    admin: true)
                guard reply.status == 200 else { throw FixtureError("update answered \(reply.status)") }
            }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for user in [scene.alice, scene.bob, scene.alice, scene.bob] {
                group.addTask {
                    let expected = scene.readable(by: user)
                    let file = ClientQueryFixture.cacheFile()
                    try await ClientQueryFixture.withClient(server, as: user, storage: .file(path: file)) {
                        client async throws in
                        let query = client.query(scene.className)
                        for round in 0..<rounds {
                            let remote = try await query.find(policy: .remoteAndStore)
                            #expect(remote.idSet == expected, "\(user.username) round \(round)")
                            let cached = try await query.find(policy: .localOnly)
                            #expect(cached.idSet == expected)
                            try await client.pinAll(remote.objects, label: "round\(round % 2)")
                            if round > 0 { try await client.unpinAll(label: "round\((round + 1) % 2)") }
                            #expect(try await query.fromLocalDatastore().find().idSet == expected)
                        }
                    }
                    try await ClientQueryFixture.withOfflineClient(server, storage: .file(path: file)) {
                        client async throws in
                        #expect(try await client.query(scene.className).find(policy: .localOnly).idSet == expected)
                        #expect(try await client.query(scene.className).fromPin("round\((rounds - 1) % 2)").find().idSet == expected)
                    }
                }
            }
            try await group.waitForAll()
        }
        try await writer.value
        try await ClientQueryFixture.withClient(server, as: scene.bob) { client async throws in
            let last = try await client.query(scene.className).getObject(scene.publicDoc)
            #expect(last.int("round") == Int64(rounds - 1))
        }
    }
}
