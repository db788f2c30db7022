import Foundation
import Logging
import RooftopLauncher
import RooftopServer
import RooftopShared

/// The reference server running in this process, as `RooftopServer.start` assembles it: HTTPS
/// on a free port, a development CA, a temporary data directory and bcrypt cost 4.
///
/// Client and server share the process (and the machine's cores), so memory figures are the sum
/// of both; `--server-binary` separates them.
final class InProcessServer: ServerUnderTest {
    let endpoint: ServerEndpoint
    let memoryScope = "RSS: this process = benchmark clients + in-process server together"
    private let task: Task<Void, any Error>
    private let lines: ServerOutput

    private init(endpoint: ServerEndpoint, task: Task<Void, any Error>, lines: ServerOutput) {
        self.endpoint = endpoint
        self.task = task
        self.lines = lines
    }

    /// What the server printed through its output callback (its log goes to standard error).
    var output: String { lines.text }

    /// Starts a server on `dataDirectory` and waits until it listens.
    /// - Throws: Configuration, storage and TLS errors; ``BenchmarkError/server`` when it stops
    ///   before listening.
    static func start(
        dataDirectory: String, adminKey: String, limits: BenchmarkLimits, storage: String? = nil
    ) async throws -> InProcessServer {
        var configuration = ServerConfiguration()
        configuration.storageURL = storage
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.dataDirectory = dataDirectory
        configuration.adminKey = adminKey
        configuration.bcryptCost = 4
        configuration.logLevel = .warning
        configuration.limits.maxDatastoreBytes = limits.maxDatastoreBytes
        configuration.limits.maxRecordsPerDatastore = limits.maxRecordsPerDatastore
        // The live phase opens its many sockets from one address.
        configuration.connections.maxConnectionsPerAddress = 0
        let lines = ServerOutput()
        let server = try await RooftopServer.start(configuration: configuration) { lines.append($0 + "\n") }
        let task = Task {
            do {
                try await server.run()
                lines.markEnded("the server stopped")
            } catch {
                lines.markEnded("the server failed: \(error)")
                throw error
            }
        }
        let port: Int
        let caPath: String
        do {
            (port, caPath) = try await lines.waitForListening(deadline: .seconds(120)) { lines.ended }
        } catch {
            task.cancel()
            if let error = error as? ServerLaunchError { throw BenchmarkError.server("\(error)") }
            throw error
        }
        let endpoint = ServerEndpoint(
            baseURL: "https://127.0.0.1:\(port)", caCertificatePath: caPath, adminKey: adminKey,
            appId: configuration.appId, dataDirectory: dataDirectory, processID: nil)
        return InProcessServer(endpoint: endpoint, task: task, lines: lines)
    }

    func stop() async -> Bool {
        // The server's own graceful path: `run()` handles SIGTERM (stop accepting, finish
        // in-flight requests, close the storage). The signal is caught by the server's handler
        // and does not end this process; cancelling the task instead would skip closing the
        // storage. Once the server has ended, its handler is gone and the signal would.
        guard lines.ended == nil else { return false }
        kill(getpid(), SIGTERM)
        if await finishes(within: .seconds(30)) {
            if let reason = lines.ended, reason != "the server stopped" { Report.progress(reason) }
            return lines.ended == "the server stopped"
        }
        task.cancel()
        _ = await finishes(within: .seconds(10))
        return false
    }

    /// Whether the server task ends within `limit`.
    private func finishes(within limit: Duration) async -> Bool {
        let task = self.task
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                _ = await task.result
                return true
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }
}
