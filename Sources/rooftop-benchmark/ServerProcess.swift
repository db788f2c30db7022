import Foundation

/// The built `rooftop-server` executable run as its own process (`--server-binary PATH`):
/// `serve --port 0` on a temporary data directory, bcrypt cost 4, the benchmark's limits. Its
/// memory is read from `/proc/<pid>/status`, apart from the benchmark's own.
final class ServerProcess: ServerUnderTest {
    let endpoint: ServerEndpoint
    let memoryScope = "RSS: the server process alone (the benchmark process's own figures are in --json)"
    private let process: Process
    private let lines: PrintedLines

    private init(endpoint: ServerEndpoint, process: Process, lines: PrintedLines) {
        self.endpoint = endpoint
        self.process = process
        self.lines = lines
    }

    /// Starts `binary` and waits until it listens.
    /// - Throws: ``BenchmarkError/server`` when it cannot start or exits before listening.
    static func start(
        binary: String, dataDirectory: String, adminKey: String, limits: BenchmarkLimits, storage: String? = nil
    ) async throws -> ServerProcess {
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw BenchmarkError.server("\(binary) is not an executable (build it with `swift build -c release`)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = [
            "serve", "--port", "0", "--host", "127.0.0.1", "--data-dir", dataDirectory, "--admin-key", adminKey,
            "--bcrypt-cost", "4", "--log-level", "warning",
            "--max-datastore-bytes", String(limits.maxDatastoreBytes),
            "--max-records-per-datastore", String(limits.maxRecordsPerDatastore),
            // The live phase opens its many sockets from one address.
            "--max-connections-per-address", "0",
        ] + (storage.map { ["--storage", $0] } ?? [])
        // The server reads ROOFTOP_* variables; the benchmark's flags must be all it sees.
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("ROOFTOP_") }
        let lines = PrintedLines()
        let standardOutput = Pipe()
        let standardError = Pipe()
        process.standardOutput = standardOutput
        process.standardError = standardError
        try process.run()
        // Each pipe is read on a thread of its own until its end of file, not through
        // `FileHandle.readabilityHandler`, whose dispatch read source can crash the process in
        // libdispatch on Linux when torn down (swift-corelibs-libdispatch#949).
        for pipe in [standardOutput, standardError] {
            let handle = pipe.fileHandleForReading
            Thread.detachNewThread {
                while case let data = handle.availableData, !data.isEmpty {
                    lines.append(String(decoding: data, as: UTF8.self))
                }
            }
        }
        do {
            let (port, caPath) = try await lines.waitForListening {
                process.isRunning ? nil : "the server exited with status \(process.terminationStatus)"
            }
            let endpoint = ServerEndpoint(
                baseURL: "https://127.0.0.1:\(port)", caCertificatePath: caPath, adminKey: adminKey, appId: "rooftop",
                dataDirectory: dataDirectory, processID: process.processIdentifier)
            return ServerProcess(endpoint: endpoint, process: process, lines: lines)
        } catch {
            _ = await terminate(process)
            throw error
        }
    }

    /// Everything the server printed (for failure messages).
    var output: String { lines.all }

    func stop() async -> Bool {
        await Self.terminate(process)
    }

    /// SIGTERM, then SIGKILL after 30 seconds. Returns whether it exited by itself with status 0.
    private static func terminate(_ process: Process) async -> Bool {
        if process.isRunning { process.terminate() }
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: .seconds(30))
        while process.isRunning && clock.now < end {
            try? await Task.sleep(for: .milliseconds(20))
        }
        guard process.isRunning else { return process.terminationStatus == 0 }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        return false
    }
}
