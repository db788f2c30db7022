import Foundation
import RooftopShared
import Testing
import RooftopTestSupport

/// Durability: what the server acknowledged survives a crash (SIGKILL, no graceful shutdown) and a
/// restart on the same data directory; so do sessions.
@Suite("Durability across crashes and restarts")
struct DurabilityTests {
    @Test("acknowledged writes survive SIGKILL right after the last acknowledgement")
    func acknowledgedWritesSurviveKill() async throws {
        let directory = TemporaryDirectory.make(prefix: "rooftop-durability")
        let datastore = try DatastoreID("durable")
        let objects = 60
        let (user, acknowledged, checkpoint) = try await withServer(dataDirectory: directory) { server in
            try await withClient(server) { client in
                let user = try await client.newUser()
                var acknowledged: [String: Int64] = [:]
                // Single pushes, batches, and updates of earlier objects: every acknowledgement counts.
                for index in 0..<objects {
                    let id = "d\(index)"
                    let result = try await client.push(
                        Mutations.create(datastore, "Durable", id, fields: ["i": .int(Int64(index))]), token: user.token
                    )
                    let version = try #require(result.appliedVersion)
                    acknowledged[id] = version
                    if index.isMultiple(of: 7) {
                        let update = try await client.push(
                            Mutations.update(
                                datastore, "Durable", id, base: result.appliedVersion,
                                [FieldUpdate("i", .increment(1000))]),
                            token: user.token)
                        let updated = try #require(update.appliedVersion)
                        acknowledged[id] = updated
                    }
                }
                let batch = (0..<20).map { Mutations.create(datastore, "Durable", "b\($0)", fields: ["batch": true]) }
                let response = try await client.push(batch, token: user.token)
                for (mutation, result) in zip(batch, response.results) {
                    let version = try #require(result.appliedVersion)
                    acknowledged[mutation.objectId] = version
                }
                let checkpoint = try #require(try await client.pullPages(datastore, token: user.token).last).checkpoint
                await server.kill()
                return (user, acknowledged, checkpoint)
            }
        }

        try await withServer(dataDirectory: directory) { server in
            try await withClient(server) { client in
                let stored = try await client.allObjects(datastore, className: "Durable", token: user.token)
                #expect(stored.mapValues(\.version) == acknowledged)
                #expect(stored["d7"]?.fields["i"] == 1007)
                #expect(stored["d8"]?.fields["i"] == 8)
                // The change feed agrees, and the checkpoint taken before the crash is still valid.
                let pulled = try await client.pullPages(datastore, token: user.token).flatMap(\.changes)
                #expect(pulled.count == acknowledged.count)
                let since = try await client.pull(
                    PullRequest(datastore: datastore, since: checkpoint), token: user.token)
                #expect(since.changes.isEmpty && !since.hasMore)
            }
        }
    }

    @Test("sessions survive SIGKILL and restart; logged-out sessions stay logged out")
    func sessionsSurvive() async throws {
        let directory = TemporaryDirectory.make(prefix: "rooftop-durability-sessions")
        let (kept, loggedOut, username) = try await withServer(dataDirectory: directory) { server in
            try await withClient(server) { client in
                let username = "durable-\(UUID().uuidString.prefix(8).lowercased())"
                let first = try await client.signUp(username, password: "password-1")
                let second: Session = try await client.call(
                    API.logIn, body: LogInRequest(username: username, password: "password-1"))
                let reply = try await client.send(API.logOut, token: second.sessionToken)
                #expect(reply.status == 204)
                await server.kill()
                return (first.sessionToken, second.sessionToken, username)
            }
        }
        try await withServer(dataDirectory: directory) { server in
            try await withClient(server) { client in
                let me = try await client.call(API.getCurrentUser, token: kept, as: UserInfo.self)
                #expect(me.username == username)
                let write = try await client.push(
                    Mutations.create(.default, "AfterCrash", "a", fields: ["x": 1]), token: kept)
                #expect(write.isApplied)
                let refused = try await client.send(API.getCurrentUser, token: loggedOut)
                #expect(refused.status == 401)
                #expect(refused.error?.code == .auth)
            }
        }
    }
}
