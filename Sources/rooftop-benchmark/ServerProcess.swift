import Foundation
import RooftopLauncher

/// The built `rooftop-server` executable run as its own process (`--server-binary PATH`), by the
/// package's one launcher (``LaunchedServer``): `serve --port 0` on a temporary data directory,
/// bcrypt cost 4, the benchmark's limits. Its memory is read from `/proc/<pid>/status`, apart
/// from the benchmark's own.
final class ServerProcess: ServerUnderTest {
    let endpoint: ServerEndpoint
    let memoryScope = "RSS: the server process alone (the benchmark process's own figures are in --json)"
    private let launched: LaunchedServer

    private init(endpoint: ServerEndpoint, launched: LaunchedServer) {
        self.endpoint = endpoint
        self.launched = launched
    }

    /// Starts `binary` and waits until it listens.
    /// - Throws: ``BenchmarkError/server`` when it cannot start or exits before listening.
    static func start(
        binary: String, dataDirectory: String, adminKey: String, limits: BenchmarkLimits, storage: String? = nil
    ) async throws -> ServerProcess {
        let arguments =
            [
                "--data-dir", dataDirectory, "--admin-key", adminKey, "--bcrypt-cost", "4", "--log-level", "warning",
                "--max-datastore-bytes", String(limits.maxDatastoreBytes),
                "--max-records-per-datastore", String(limits.maxRecordsPerDatastore),
                // The live phase opens its many sockets from one address.
                "--max-connections-per-address", "0",
            ] + (storage.map { ["--storage", $0] } ?? [])
        do {
            let launched = try await LaunchedServer.start(
                executable: URL(fileURLWithPath: binary), arguments: arguments, deadline: .seconds(120))
            let endpoint = ServerEndpoint(
                baseURL: launched.baseURL, caCertificatePath: launched.caCertificatePath, adminKey: adminKey,
                appId: "rooftop", dataDirectory: dataDirectory, processID: launched.processIdentifier)
            return ServerProcess(endpoint: endpoint, launched: launched)
        } catch let error as ServerLaunchError {
            throw BenchmarkError.server("\(error)")
        }
    }

    /// Everything the server printed (for failure messages).
    var output: String { launched.output.text }

    /// SIGTERM, then SIGKILL after 30 seconds. Returns whether it exited by itself with status 0.
    func stop() async -> Bool {
        await launched.stop(deadline: .seconds(30)) == 0
    }
}
