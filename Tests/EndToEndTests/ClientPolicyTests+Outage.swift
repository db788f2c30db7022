import Foundation
import Rooftop
import RooftopShared
import Testing
import RooftopTestSupport

/// Fetch policies when the server cannot answer: a server that hangs (requests time out), and
/// the real server stopped and started again.
extension ClientPolicyTests {
    @Test("a server that hangs: remoteOnly times out after the request timeout, remoteElseLocal falls back to the cache")
    func hangingServer() async throws {
        let (server, api) = try SharedServer.require()
        let scene = try await ClientScoreScene.make(server, api, count: 4)
        try await scene.online { client async throws in
            _ = try await scene.top(client).find(policy: .remoteAndStore)
        }
        let clock = ContinuousClock()
        var firstRequest: ContinuousClock.Instant?
        try await ClientQueryFixture.withOfflineClient(
            server, storage: .file(path: scene.file), hanging: true, requestTimeout: .milliseconds(700)
        ) { client async throws in
            let start = clock.now
            firstRequest = start
            let error = await #expect(throws: RooftopError.self) { try await scene.top(client).find() }
            #expect(error?.code == .timeout, "\(String(describing: error))")
            #expect(clock.now - start >= .milliseconds(600), "a sub-second timeout is waited for, not rounded down to 0")
            let fallback = try await scene.top(client).find(policy: .remoteElseLocal)
            #expect(fallback.fromCache && fallback.objectIds == scene.ids(40, 30, 20))
        }
        // Connection attempts end with the request timeout (700 ms here): shutting down does not
        // wait for the connect timeout of 10 seconds it once waited for. That wait ran from the
        // first request's connection attempt, so the time is taken from there: 10 s or more with
        // the fault, about 1.5 s without (two timeouts, then shutting down), which leaves a
        // loaded machine seconds to spare under the bound.
        let sinceFirstRequest = clock.now - (firstRequest ?? clock.now)
        #expect(sinceFirstRequest < .seconds(9), "the requests and shutting the client down took \(sinceFirstRequest)")
    }
}

/// Fetch policies with the real server stopped and started again on the same port and data.
@Suite("Client fetch policies: server stopped and restarted", .timeLimit(.minutes(5)))
struct ClientPolicyRestartTests {
    @Test("with the server stopped: remoteOnly fails, remoteElseLocal and localAndRemote use the cache; back up, the same client reads the server")
    func stopAndRestart() async throws {
        let directory = TemporaryDirectory.make(prefix: "client-policy-restart")
        let file = ClientQueryFixture.cacheFile()
        let first = try await ServerProcess.start(dataDirectory: directory)
        let port = first.port
        var restarted: ServerProcess?
        do {
            let api = try APIClient(server: first)
            let scene: ClientScoreScene
            do {
                scene = try await ClientScoreScene.make(first, api, count: 5)
                await api.shutdown()
            } catch {
                await api.shutdown()
                throw error
            }
            let user = scene.user
            try await ClientQueryFixture.withClient(first, as: user, storage: .file(path: file)) { client async throws in
                let query = client.query(scene.className).order(by: "score")
                let stored = try await query.find(policy: .remoteAndStore)
                #expect(stored.objectIds == scene.ids(10, 20, 30, 40, 50))

                await first.stop()
                let error = await #expect(throws: RooftopError.self) { try await query.find(policy: .remoteOnly) }
                #expect(error?.code == .noConnection, "\(String(describing: error))")
                let fallback = try await query.find(policy: .remoteElseLocal)
                #expect(fallback.fromCache && fallback.objectIds == scene.ids(10, 20, 30, 40, 50))
                var results: [FetchResult] = []
                await #expect(throws: RooftopError.self) {
                    for try await result in query.results(policy: .localAndRemote) { results.append(result) }
                }
                #expect(results.map(\.fromCache) == [true])

                let server = try await ServerProcess.start(dataDirectory: directory, extraArguments: ["--port", "\(port)"])
                restarted = server
                #expect(server.port == port)
                let writer = try APIClient(server: server)
                let newest: ObjectSnapshot
                do {
                    newest = try await writer.create(scene.className, fields: ["score": .int(60)], as: user)
                    await writer.shutdown()
                } catch {
                    await writer.shutdown()
                    throw error
                }
                let back = try await query.find(policy: .remoteElseLocal)
                #expect(!back.fromCache)
                #expect(back.objectIds == scene.ids(10, 20, 30, 40, 50) + [newest.objectId])
            }
        } catch {
            await first.stop()
            await restarted?.stop()
            throw error
        }
        await first.stop()
        await restarted?.stop()
    }
}
