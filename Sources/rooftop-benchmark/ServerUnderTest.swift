import Foundation
import RooftopShared

/// Where and how to reach the server under test.
struct ServerEndpoint: Sendable {
    /// `https://127.0.0.1:<port>`.
    var baseURL: String
    /// The development CA the server created; the benchmark's clients trust nothing else.
    var caCertificatePath: String
    /// The admin key the server was started with.
    var adminKey: String
    /// The application ID clients send.
    var appId: String
    /// The server's data directory (its database is measured there after the run).
    var dataDirectory: String
    /// The server's process ID when it runs as its own process, `nil` in-process.
    var processID: Int32?
}

/// A running server: in this process (``InProcessServer``) or the built executable
/// (``ServerProcess``).
protocol ServerUnderTest: Sendable {
    /// How to reach it.
    var endpoint: ServerEndpoint { get }
    /// How to reach each of its processes (one but for ``ServerGroup``).
    var endpoints: [ServerEndpoint] { get }
    /// What the memory figures cover, printed with the table.
    var memoryScope: String { get }
    /// Everything the server printed (its log lines at warning and above), for failure messages.
    var output: String { get }
    /// Stops the server and waits until it has closed its database.
    /// - Returns: Whether it stopped cleanly (false: it had to be killed or did not finish).
    func stop() async -> Bool
}

extension ServerUnderTest {
    var endpoints: [ServerEndpoint] { [endpoint] }
}

/// Several server processes on one PostgreSQL storage (or one process, on any storage); the
/// first process's endpoint is the group's, the clients are spread over all of them.
struct ServerGroup: ServerUnderTest {
    let processes: [ServerProcess]

    var endpoint: ServerEndpoint { processes[0].endpoint }
    var endpoints: [ServerEndpoint] { processes.map(\.endpoint) }
    var memoryScope: String { processes[0].memoryScope + (processes.count > 1 ? " (the first server process)" : "") }
    var output: String { processes.map(\.output).joined(separator: "\n---\n") }

    /// Starts `count` processes, each on a data directory of its own beside `dataDirectory` but
    /// with the first one's TLS files, all on `storage`.
    /// - Throws: What starting a process throws (the ones started are stopped).
    static func start(
        count: Int, binary: String, dataDirectory: String, adminKey: String, limits: BenchmarkLimits, storage: String?
    ) async throws -> ServerGroup {
        var processes: [ServerProcess] = []
        do {
            for index in 0..<count {
                let directory = index == 0 ? dataDirectory : dataDirectory + "/server-\(index)"
                if index > 0 {
                    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                    try FileManager.default.copyItem(atPath: dataDirectory + "/tls", toPath: directory + "/tls")
                }
                processes.append(
                    try await ServerProcess.start(
                        binary: binary, dataDirectory: directory, adminKey: adminKey, limits: limits, storage: storage))
            }
        } catch {
            for process in processes { _ = await process.stop() }
            throw error
        }
        return ServerGroup(processes: processes)
    }

    func stop() async -> Bool {
        var clean = true
        for process in processes where !(await process.stop()) { clean = false }
        return clean
    }
}

/// The limits the benchmark raises so that the data set fits in one datastore: the defaults
/// (10 MiB, 100,000 records per datastore) are product limits, not what is being measured.
struct BenchmarkLimits: Sendable {
    /// Largest datastore, in bytes.
    var maxDatastoreBytes: Int
    /// Most records per datastore.
    var maxRecordsPerDatastore: Int

    /// Limits roomy enough for `objects` objects.
    init(objects: Int) {
        maxDatastoreBytes = 1 << 36
        maxRecordsPerDatastore = max(Limits.default.maxRecordsPerDatastore, objects + 1000)
    }
}

/// A fresh temporary data directory for one run.
enum DataDirectory {
    /// Creates `<tmp>/rooftop-benchmark-<uuid>`.
    static func make() throws -> String {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("rooftop-benchmark-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// The size of each SQLite file (`rooftop.sqlite`, `-wal`, `-shm`) in `directory`, in bytes.
    static func databaseFiles(in directory: String) -> [String: Int] {
        let manager = FileManager.default
        var sizes: [String: Int] = [:]
        for name in (try? manager.contentsOfDirectory(atPath: directory)) ?? [] where name.hasPrefix("rooftop.sqlite") {
            let attributes = try? manager.attributesOfItem(atPath: directory + "/" + name)
            sizes[name] = (attributes?[.size] as? NSNumber)?.intValue ?? 0
        }
        return sizes
    }
}
