import Foundation

/// A built `rooftop-server` executable started as its own process on a free loopback port
/// (`serve --port 0 --host 127.0.0.1` plus the caller's arguments), over TLS with the
/// development CA it creates: the one launcher of the benchmark (`--server-binary`) and the
/// end-to-end tests.
///
/// It is started with `posix_spawn` (``ChildProcess``), its output collected on threads of their
/// own, its start awaited on a condition with a deadline, and it is stopped with SIGTERM, then
/// SIGKILL past a deadline.
///
/// ```swift
/// let server = try await LaunchedServer.start(
///     executable: binary, arguments: ["--data-dir", directory, "--admin-key", key])
/// defer { Task { await server.stop() } }
/// print(server.baseURL, server.caCertificatePath)
/// ```
public final class LaunchedServer: Sendable {
    /// The port it listens on.
    public let port: Int
    /// `https://127.0.0.1:<port>`.
    public let baseURL: String
    /// The development CA the server created (clients trust it and nothing else), or the
    /// certificate it was given with `--tls-cert`.
    public let caCertificatePath: String
    /// Everything it printed.
    public let output: ServerOutput
    private let process: ChildProcess

    private init(process: ChildProcess, output: ServerOutput, port: Int, caCertificatePath: String) {
        self.process = process
        self.output = output
        self.port = port
        self.baseURL = "https://127.0.0.1:\(port)"
        self.caCertificatePath = caCertificatePath
    }

    /// Starts `executable serve --port 0 --host 127.0.0.1` with `arguments`, in this process's
    /// environment without its `ROOFTOP_*` variables (the arguments are all the server sees), and
    /// waits up to `deadline` until it listens.
    /// - Throws: ``ServerLaunchError`` when it is not an executable, exits or does not listen in
    ///   time (it is stopped then); what `posix_spawn` fails with.
    public static func start(
        executable: URL, arguments: [String], deadline: Duration = .seconds(60)
    ) async throws -> LaunchedServer {
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw ServerLaunchError.notExecutable(executable.path)
        }
        let process = ChildProcess()
        process.executableURL = executable
        process.arguments = ["serve", "--port", "0", "--host", "127.0.0.1"] + arguments
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("ROOFTOP_") }
        let output = ServerOutput()
        let standardOutput = Pipe()
        let standardError = Pipe()
        process.standardOutput = .pipe(standardOutput)
        process.standardError = .pipe(standardError)
        output.attach(standardOutput)
        output.attach(standardError)
        try process.run()
        // A server given its own certificate prints no development CA.
        let givenCertificate = arguments.firstIndex(of: "--tls-cert").flatMap {
            arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil
        }
        do {
            let (port, ca) = try await output.waitForListening(deadline: deadline, givenCertificate: givenCertificate) {
                process.isRunning ? nil : "exited"
            }
            return LaunchedServer(process: process, output: output, port: port, caCertificatePath: ca)
        } catch ServerLaunchError.ended(_, let log) {
            throw ServerLaunchError.exited(status: process.terminationStatus, log: log)
        } catch {
            process.terminate()
            _ = await process.waitForExit(deadline: .seconds(30))
            throw error
        }
    }

    /// Its process ID.
    public var processIdentifier: Int32 { process.processIdentifier }

    /// Whether it is still running.
    public var isRunning: Bool { process.isRunning }

    /// Sends SIGTERM and waits up to `deadline` for it to exit; SIGKILL after that.
    /// - Returns: Its exit status (for a signal, as ``ChildProcess/terminationStatus`` reports it).
    @discardableResult
    public func stop(deadline: Duration = .seconds(30)) async -> Int32 {
        if process.isRunning { process.terminate() }
        return await process.waitForExit(deadline: deadline)
    }

    /// Kills it with SIGKILL (a crash: no graceful shutdown) and waits for it to exit.
    public func kill() async {
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        _ = await process.waitForExit(deadline: .seconds(30))
    }

    /// Waits up to `deadline` for it to exit; SIGKILL after that.
    /// - Returns: Its exit status.
    public func waitForExit(deadline: Duration) async -> Int32 {
        await process.waitForExit(deadline: deadline)
    }
}
