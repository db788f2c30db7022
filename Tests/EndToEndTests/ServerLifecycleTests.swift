import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL
import RooftopShared
import Testing
import RooftopTestSupport

/// The server process itself: start-up on a fresh data directory, TLS only, health, shutdown.
@Suite("Server process, TLS and health", .serialized)
struct ServerLifecycleTests {
    @Test("a fresh data directory gets a database and a development CA; /health answers over TLS", TestStorage.sqliteOnly)
    func freshStart() async throws {
        try await withServerAndClient { server, client in
            #expect(FileManager.default.fileExists(atPath: server.dataDirectory + "/rooftop.sqlite"))
            #expect(server.caCertificatePath.hasPrefix(server.dataDirectory))
            let reply = try await client.send(.GET, "/health", appId: .some(nil))
            #expect(reply.status == 200)
            #expect(reply.text.contains(#""status":"ok""#))
            #expect(reply.headers.first(name: "X-Request-Id") != nil)
        }
    }

    @Test("requests are logged one line each at debug, and not at the default level info")
    func requestLogLevel() async throws {
        for (level, logged) in [("info", false), ("debug", true)] {
            let server = try await withServer(extraArguments: ["--log-level", level]) { server in
                let client = try APIClient(server: server)
                let reply = try await client.send(.GET, "/health")
                await client.shutdown()
                #expect(reply.status == 200)
                return server
            }
            // Stopped: everything it printed has been read.
            #expect(server.log.contains("hb.request.path=/health") == logged, "at \(level):\n\(server.log)")
        }
    }

    @Test("requests run on the event loops by default and on Swift's pool when asked; another executor is refused")
    func executors() async throws {
        for (arguments, line) in [([], "tasks run on the event loops"), (["--executor", "pool"], "tasks run on Swift's default pool")] {
            let server = try await withServerAndClient(extraArguments: ["--log-level", "info"] + arguments) { server, client in
                // Writes (GRDB's queue or PostgreSQL's pool, then back) and reads, many at once.
                let user = try await client.newUser("executor")
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<16 {
                        group.addTask {
                            _ = try await client.create("Note", in: .default, fields: ["n": .int(Int64(index))], as: user)
                        }
                    }
                    try await group.waitForAll()
                }
                #expect(try await client.pullAll(.default, as: user).changes.count == 16)
                return server
            }
            #expect(server.log.contains(line), "\(arguments):\n\(server.log)")
            #expect(!server.log.contains("could not become the executor"), "\(server.log)")
        }
        try await expectStartRefused(extraArguments: ["--executor", "threads"], saying: "the executor is event-loops or pool")
    }

    @Test("plain HTTP on the TLS port is refused")
    func plainHTTPRefused() async throws {
        try await withServer { server in
            let client = HTTPClient(eventLoopGroupProvider: .singleton)
            defer { _ = client.shutdown() }
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(server.port)/health")
            request.method = .GET
            await #expect(throws: (any Error).self) {
                let response = try await client.execute(request, timeout: .seconds(10))
                _ = try await response.body.collect(upTo: 1024)
            }
        }
    }

    @Test("a client that does not trust the development CA cannot connect")
    func untrustedCertificateRefused() async throws {
        try await withServer { server in
            var configuration = HTTPClient.Configuration(tlsConfiguration: .makeClientConfiguration())
            configuration.connectionPool.retryConnectionEstablishment = false
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            defer { _ = client.shutdown() }
            let request = HTTPClientRequest(url: server.baseURL + "/health")
            await #expect(throws: (any Error).self) {
                _ = try await client.execute(request, timeout: .seconds(10))
            }
        }
    }

    @Test("SIGTERM shuts the server down cleanly with status 0")
    func gracefulShutdown() async throws {
        let server = try await ServerProcess.start()
        let status = await server.stop()
        #expect(status == 0, "log:\n\(server.log)")
    }

    @Test("restarting on the same data directory keeps the CA and the data")
    func restartKeepsState() async throws {
        let directory = TemporaryDirectory.make(prefix: "rooftop-restart")
        let token = try await withServer(dataDirectory: directory) { server in
            let client = try APIClient(server: server)
            defer { Task { await client.shutdown() } }
            return try await client.signUp("restart-user").sessionToken
        }
        try await withServer(dataDirectory: directory) { server in
            let client = try APIClient(server: server)
            let me = try await client.call(API.getCurrentUser, token: token, as: UserInfo.self)
            await client.shutdown()
            #expect(me.username == "restart-user")
        }
    }

    @Test("API requests need the application ID")
    func applicationIdRequired() async throws {
        try await withServerAndClient { _, client in
            let missing = try await client.send(API.getServerInfo, appId: .some(nil))
            #expect(missing.status == 401)
            #expect(missing.error?.code == .auth)
            let wrong = try await client.send(API.getServerInfo, appId: "other-app")
            #expect(wrong.status == 401)
            let info = try await client.call(API.getServerInfo, as: ServerInfo.self)
            #expect(info.limits.maxRecordBytes == 100 * 1024)
        }
    }
}
