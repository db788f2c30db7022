import Foundation
@testable import Rooftop
import RooftopShared
import Testing

/// Fetch policies when the server refuses the session: a refusal is not an outage.
extension ClientPolicyTests {
    @Test("a revoked session: remoteElseLocal throws auth instead of reading the cache; localOnly still reads it")
    func revokedSession() async throws {
        let (server, api) = try SharedServer.require()
        let scene = try await ClientScoreScene.make(server, api, count: 4)
        try await scene.online { client async throws in
            let top = scene.top(client)
            _ = try await top.find(policy: .remoteAndStore)
            // The client's own session (not the one the scene's user was made with).
            let token = try #require(client.core.currentSession?.token)
            #expect(token != scene.user.token)
            let reply = try await api.send(API.logOut, token: token)
            #expect((200..<300).contains(reply.status), "\(reply.status): \(reply.text)")

            let refused = await #expect(throws: RooftopError.self) { try await top.find(policy: .remoteElseLocal) }
            #expect(refused?.code == .auth, "\(String(describing: refused))")
            let remote = await #expect(throws: RooftopError.self) { try await top.find(policy: .remoteOnly) }
            #expect(remote?.code == .auth)
            let cached = try await top.find(policy: .localOnly)
            #expect(cached.objectIds == scene.ids(40, 30, 20), "the local data stays")

            try await client.logIn(username: scene.user.username, password: scene.user.password)
            #expect(try await top.find(policy: .remoteElseLocal).fromCache == false)
        }
    }
}
