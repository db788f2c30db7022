import Foundation
import Testing

/// A real `rooftop-server` process: the built executable, started with `serve --port 0` on a
/// fresh (or given) data directory, over TLS with the development CA it creates — the package's
/// one launcher (``LaunchedServer``) with the tests' defaults: bcrypt cost 4, the test admin key,
/// the storage the run asks for (``TestStorage``), a long request timeout.
///
/// Start it with ``withServer(dataDirectory:extraArguments:_:)`` so that it is stopped on every
/// path. Waiting is always on a condition with a deadline, never a fixed sleep.
public final class ServerProcess: Sendable {
    /// `https://127.0.0.1:<port>`.
    public var baseURL: String { launched.baseURL }
    /// The port it listens on.
    public var port: Int { launched.port }
    /// The data directory.
    public let dataDirectory: String
    /// The development CA the server created (trusted by test clients, nothing else is), or the
    /// certificate given with `--tls-cert`.
    public var caCertificatePath: String { launched.caCertificatePath }
    /// The admin key it was started with.
    public let adminKey: String
    /// The application ID it was started with.
    public let appId = "rooftop"

    private let launched: LaunchedServer

    private init(launched: LaunchedServer, dataDirectory: String, adminKey: String) {
        self.launched = launched
        self.dataDirectory = dataDirectory
        self.adminKey = adminKey
    }

    /// Everything the process printed so far (stdout and stderr), for failure messages.
    public var log: String { launched.output.text }

    /// Whether the process is still running.
    public var isRunning: Bool { launched.isRunning }

    /// Its process ID.
    public var processIdentifier: Int32 { launched.processIdentifier }

    /// Starts a server and waits (up to `deadline`) until it prints its listening address.
    ///
    /// At most ``startGate``'s width of servers start at once: every suite starts its servers
    /// together, and on a 2-core machine the start-ups' work (migrations, TLS files) starved the
    /// servers already serving. The deadline counts from this server's own start.
    /// - Throws: ``ServerLaunchError`` when it exits or does not listen in time;
    ///   ``ServerProcessError/binaryNotFound(name:searched:)``.
    public static func start(
        dataDirectory: String? = nil, extraArguments: [String] = [], adminKey: String = ServerProcess.testAdminKey,
        deadline: Duration = .seconds(60)
    ) async throws -> ServerProcess {
        await startGate.enter()
        do {
            let directory = dataDirectory ?? TemporaryDirectory.make(prefix: "rooftop-e2e")
            let arguments =
                ["--data-dir", directory, "--admin-key", adminKey, "--bcrypt-cost", "4", "--log-level", "warning"]
                + (extraArguments.contains("--storage") ? [] : try TestStorage.arguments(dataDirectory: directory))
                // A loaded 2-core machine running every suite's servers at once (on PostgreSQL
                // above all) can take longer than the default 30 s over a request that is not
                // stuck; the deadline tests set their own.
                + (extraArguments.contains("--request-timeout") ? [] : ["--request-timeout", "300"])
                + extraArguments
            let launched = try await LaunchedServer.start(
                executable: try ServerBinary.url(), arguments: arguments, deadline: deadline)
            await startGate.leave()
            return ServerProcess(launched: launched, dataDirectory: directory, adminKey: adminKey)
        } catch {
            await startGate.leave()
            throw error
        }
    }

    /// Server start-ups in flight at once: two, one a core.
    public static let startGate = StartGate(width: 2)

    /// Sends SIGTERM and waits (up to `deadline`) for the process to exit; SIGKILL after that.
    /// - Returns: The exit status.
    @discardableResult
    public func stop(deadline: Duration = .seconds(30)) async -> Int32 {
        await launched.stop(deadline: deadline)
    }

    /// Kills the process with SIGKILL (a crash: no graceful shutdown) and waits for it to exit.
    public func kill() async {
        await launched.kill()
    }

    /// Waits for the process to exit; kills it with SIGKILL if it has not by the deadline.
    public func waitForExit(deadline: Duration) async -> Int32 {
        await launched.waitForExit(deadline: deadline)
    }

    /// The admin key every test server is started with.
    public static let testAdminKey = "test-admin-key-0123456789abcdef"
}

/// Starts a server, runs `body`, and stops the server whatever happens.
public func withServer<T>(
    dataDirectory: String? = nil, extraArguments: [String] = [], _ body: (ServerProcess) async throws -> T
) async throws -> T {
    let server = try await ServerProcess.start(dataDirectory: dataDirectory, extraArguments: extraArguments)
    return try await scoped(server, release: { await $0.stop() }, body)
}

/// The storage the end-to-end servers use: the embedded SQLite file in their data directory, or,
/// with `ROOFTOP_TEST_STORAGE=postgres`, a schema of their own in the PostgreSQL test cluster
/// (``TestPostgres``), kept with the data directory so that a restarted server finds its data.
public enum TestStorage {
    /// Whether the servers run on PostgreSQL.
    public static var isPostgres: Bool { ProcessInfo.processInfo.environment["ROOFTOP_TEST_STORAGE"] == "postgres" }

    /// For tests of the embedded SQLite file itself (its bytes, backups, disk faults): skipped
    /// when the servers run on PostgreSQL.
    public static var sqliteOnly: ConditionTrait {
        .enabled(if: !isPostgres, "tests the embedded SQLite storage's files; the servers run on PostgreSQL")
    }

    /// The `--storage` arguments for a server on `dataDirectory` (none for SQLite).
    /// - Throws: ``TestPostgres/ClusterError`` when PostgreSQL is asked for without a cluster.
    public static func arguments(dataDirectory: String) throws -> [String] {
        guard isPostgres else { return [] }
        guard let cluster = TestPostgres.url else {
            throw TestPostgres.ClusterError("ROOFTOP_TEST_STORAGE=postgres needs ROOFTOP_TEST_POSTGRES_URL")
        }
        let file = URL(fileURLWithPath: dataDirectory).appendingPathComponent("test-storage-url")
        if let url = try? String(contentsOf: file, encoding: .utf8) { return ["--storage", url] }
        let schema = "e2e_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let url = cluster + (cluster.contains("?") ? "&" : "?") + "schema=" + schema
        try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        try url.write(to: file, atomically: true, encoding: .utf8)
        return ["--storage", url]
    }
}

/// A package executable the tests need was not built.
public enum ServerProcessError: Error, CustomStringConvertible {
    case binaryNotFound(name: String, searched: [String])

    public var description: String {
        switch self {
        case .binaryNotFound(let name, let searched): "\(name) not found (build it with `swift build`); looked in \(searched)"
        }
    }
}

/// Where the built `rooftop-server` is: `ROOFTOP_SERVER_BINARY`, next to the test bundle, or
/// in the package's `.build/debug`.
public enum ServerBinary {
    public static func url() throws -> URL {
        try BuiltExecutable.url(named: "rooftop-server", environmentVariable: "ROOFTOP_SERVER_BINARY")
    }
}

/// Where one of the package's built executables is: the path in `environmentVariable` when set,
/// next to the test bundle, or in the package's `.build/debug`.
public enum BuiltExecutable {
    public static func url(named name: String, environmentVariable: String) throws -> URL {
        var candidates: [String] = []
        if let configured = ProcessInfo.processInfo.environment[environmentVariable] {
            candidates.append(configured)
        }
        let testBundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        candidates.append(testBundle.appendingPathComponent(name).path)
        let packageRoot = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(packageRoot.appendingPathComponent(".build/debug/\(name)").path)
        for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate) {
            return URL(fileURLWithPath: candidate)
        }
        throw ServerProcessError.binaryNotFound(name: name, searched: candidates)
    }
}

/// Fresh temporary directories for test servers, all under one directory per test process
/// (`<tmp>/rooftop-e2e-runs/<pid>`). A test process cannot clean up after itself at exit, so each
/// run removes the directories of earlier runs whose process is gone.
public enum TemporaryDirectory {
    private static let root: String = {
        let runs = FileManager.default.temporaryDirectory.appendingPathComponent("rooftop-e2e-runs")
        let manager = FileManager.default
        for entry in (try? manager.contentsOfDirectory(atPath: runs.path)) ?? [] {
            // kill(pid, 0) fails with ESRCH when no such process exists.
            if let pid = Int32(entry), pid != getpid(), Foundation.kill(pid, 0) != 0, errno == ESRCH {
                try? manager.removeItem(at: runs.appendingPathComponent(entry))
            }
        }
        let root = runs.appendingPathComponent(String(getpid())).path
        try? manager.createDirectory(atPath: root, withIntermediateDirectories: true)
        return root
    }()

    public static func make(prefix: String) -> String {
        let path = URL(fileURLWithPath: root).appendingPathComponent("\(prefix)-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

/// At most `width` holders at once; the others wait their turn, first come first served.
public actor StartGate {
    private let width: Int
    private var holders = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    public init(width: Int) { self.width = width }

    /// Waits for a place.
    public func enter() async {
        if holders < width {
            holders += 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    /// Gives the place to the next in line, or frees it.
    public func leave() {
        if waiting.isEmpty {
            holders -= 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}
