import ArgumentParser
import Foundation
import Logging
import RooftopShared

/// `rooftop-benchmark`: starts the reference server, drives it over HTTPS with several signed-up
/// clients, and prints figures: push and pull throughput, query and count latencies, memory and
/// the database's size. It never judges the figures: it fails only when an operation fails or
/// answers something wrong.
///
/// ```
/// swift run -c release rooftop-benchmark --objects 20000
/// swift run rooftop-benchmark --objects 200 --batch 50 --clients 2 --json
/// ```
@main
struct RooftopBenchmarkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rooftop-benchmark",
        abstract: "Measure the Rooftop reference server: push, pull, queries, counts, memory, database size.",
        discussion: """
            Starts the server in this process (or --server-binary as its own process) on a free port with a \
            temporary data directory, TLS with the development CA it creates and bcrypt cost 4. Prints a table \
            (or --json); exits non-zero only when an operation fails or a result is wrong, never for timing. \
            See docs/benchmarks.md.
            """)

    @Option(help: "Objects to create.")
    var objects = 2000

    @Option(help: "Mutations per push (1-500).")
    var batch = 100

    @Option(help: "Concurrent clients, each a signed-up user.")
    var clients = 4

    @Option(help: "Fields per object (at least 5: category, score, tags, location, sum; then extras).")
    var fieldsPerObject = 8

    @Option(help: "Elements of each object's list field.")
    var listSize = 8

    @Option(
        help:
            "The class's declared indexes, `;` between indexes and `,` between fields (their fields are the only ones in the value indexes)."
    )
    var indexes = "category,score;score"

    @Option(help: "Live WebSocket subscribers of the `live notify` phase (0: skip it).")
    var subscribers = 1000

    @Option(help: "Writes the `live notify` phase times, one after the other.")
    var liveWrites = 30

    @Option(help: "Letters of each object's `note` text (0: no note; over about 250 it is not indexed).")
    var textLength = 420

    @Option(help: "Increments pushed by the update phase, over all clients (default: --objects).")
    var updates: Int?

    @Option(help: "Repetitions of each query, count and idle pull.")
    var queries = 30

    @Option(help: "Changes per pull page (1-1000).")
    var pageSize = 500

    @Option(help: "Repetitions of each local query shape and of its raw SQLite query (default: --queries).")
    var localRepeats: Int?

    @Option(help: "Changes each `client queue` phase queues with saveEventually (default: 500, at most --objects).")
    var queueSaves = 500

    @Option(help: "The local query shapes to run, by name, `,` between them (default: all).")
    var localShapes: String?

    @Option(help: "Seed of the data set and of the query parameters.")
    var seed: UInt64 = 1

    @Option(help: "Run this rooftop-server executable as its own process instead of in-process.")
    var serverBinary: String?

    @Option(
        help:
            "The server's storage URL (default: SQLite in the temporary data directory). A postgres:// URL gets a fresh schema of its own (&schema=bench_…), left in the database after the run."
    )
    var storage: String?

    @Option(help: "Server processes sharing the storage (needs --server-binary and a postgres:// --storage); clients are spread over them.")
    var servers = 1

    @Flag(help: "Print the results as JSON instead of a table.")
    var json = false

    @Flag(help: "The client library's first sync as a bulk load (ClientConfiguration.bulkInitialSync).")
    var bulkInitialSync = false

    @Flag(help: "Keep the temporary data directory (its path is printed).")
    var keepData = false

    func validate() throws {
        guard objects >= 1 else { throw ValidationError("--objects must be at least 1") }
        guard (1...500).contains(batch) else {
            throw ValidationError("--batch must be 1-500 (the server's push limit)")
        }
        guard (1...256).contains(clients) else { throw ValidationError("--clients must be 1-256") }
        guard (5...200).contains(fieldsPerObject) else { throw ValidationError("--fields-per-object must be 5-200") }
        guard (0...1000).contains(listSize) else { throw ValidationError("--list-size must be 0-1000") }
        guard (0...10_000).contains(textLength) else { throw ValidationError("--text-length must be 0-10000") }
        guard (0...5_000).contains(subscribers) else { throw ValidationError("--subscribers must be 0-5000") }
        guard (1...10_000).contains(liveWrites) else { throw ValidationError("--live-writes must be 1-10000") }
        guard (updates ?? 0) >= 0 else { throw ValidationError("--updates must not be negative") }
        guard queries >= 1 else { throw ValidationError("--queries must be at least 1") }
        guard (1...1_000_000).contains(queueSaves) else { throw ValidationError("--queue-saves must be 1-1000000") }
        guard (1...100_000).contains(localRepeats ?? 1) else { throw ValidationError("--local-repeats must be 1-100000") }
        let unknown = shapeNames.filter { name in !LocalQueryShape.all.contains { $0.name == name } }
        guard unknown.isEmpty else {
            throw ValidationError(
                "--local-shapes: no shape \(unknown.joined(separator: ", ")) (shapes: "
                    + LocalQueryShape.all.map(\.name).joined(separator: ", ") + ")")
        }
        guard (1...1000).contains(pageSize) else { throw ValidationError("--page-size must be 1-1000") }
        guard (1...8).contains(servers) else { throw ValidationError("--servers must be 1-8") }
        do {
            try ClassSettings.validateIndexes(declaredIndexes)
        } catch {
            throw ValidationError("--indexes: \(error.message)")
        }
        if servers > 1, serverBinary == nil || !(storage?.hasPrefix("postgres") ?? false) {
            throw ValidationError("--servers above 1 needs --server-binary and a postgres:// --storage")
        }
    }

    /// `--local-shapes` as names.
    var shapeNames: [String] {
        (localShapes ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// `--indexes` as lists of fields.
    var declaredIndexes: [[String]] {
        indexes.split(separator: ";").map { $0.split(separator: ",").map(String.init) }
    }

    /// The storage URL the servers get: `--storage`, with a fresh schema for PostgreSQL.
    func storageURL() -> String? {
        guard let storage, storage.hasPrefix("postgres") else { return storage }
        let schema = "bench_" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        return storage + (storage.contains("?") ? "&" : "?") + "schema=" + schema
    }

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .warning
            return handler
        }
        let settings = BenchmarkSettings(
            objects: objects, batch: batch, clients: clients, fieldsPerObject: fieldsPerObject, listSize: listSize,
            textLength: textLength, subscribers: subscribers, liveWrites: liveWrites,
            updates: updates ?? objects, queryRepeats: queries, pageSize: pageSize, seed: seed,
            indexes: declaredIndexes, localRepeats: localRepeats ?? queries, localShapes: shapeNames, bulkInitialSync: bulkInitialSync,
            queueSaves: queueSaves)
        let directory = try DataDirectory.make()
        let limits = BenchmarkLimits(objects: objects)
        var generator = SystemRandomNumberGenerator()
        let adminKey = (0..<4).map { _ in String(generator.next(), radix: 16) }.joined()
        Report.progress("data directory \(directory)")
        let storageURL = storageURL()
        if let storageURL { Report.progress("storage \(storageURL)") }
        let server: any ServerUnderTest
        do {
            if let serverBinary {
                server = try await ServerGroup.start(
                    count: servers, binary: serverBinary, dataDirectory: directory, adminKey: adminKey, limits: limits,
                    storage: storageURL)
            } else {
                server = try await InProcessServer.start(
                    dataDirectory: directory, adminKey: adminKey, limits: limits, storage: storageURL)
            }
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
        for endpoint in server.endpoints { Report.progress("server listening at \(endpoint.baseURL)") }

        var results: [PhaseResult] = []
        var failure: (any Error)?
        do {
            let benchmark = try Benchmark(settings: settings, server: server)
            do {
                try await benchmark.run(scratchDirectory: directory, postgres: storageURL?.hasPrefix("postgres") == true ? storageURL : nil)
            } catch {
                failure = error
            }
            results = benchmark.results
            await benchmark.shutdown()
        } catch {
            failure = error
        }
        let stopped = await server.stop()
        let files = DataDirectory.databaseFiles(in: directory)
        if !keepData { try? FileManager.default.removeItem(atPath: directory) }
        if let failure {
            Report.progress("FAILED: \(failure)\nserver output:\n\(server.output.suffix(4000))")
            throw ExitCode.failure
        }

        let report = Report(
            mode: (serverBinary == nil ? "in-process" : servers > 1 ? "\(servers) server processes" : "server-binary")
                + (storage?.hasPrefix("postgres") == true ? ", PostgreSQL" : ", SQLite"), buildConfiguration: Self.buildConfiguration,
            memoryScope: server.memoryScope, settings: settings,
            limits: [
                "maxDatastoreBytes": limits.maxDatastoreBytes, "maxRecordsPerDatastore": limits.maxRecordsPerDatastore,
            ],
            phases: results.map(Report.PhaseJSON.init), databaseFiles: files, serverStoppedCleanly: stopped)
        print(json ? try report.json() : report.table())
        if keepData { Report.progress("kept the data directory \(directory)") }
    }

    /// How this executable was compiled.
    static var buildConfiguration: String {
        #if DEBUG
            "debug"
        #else
            "release"
        #endif
    }
}
