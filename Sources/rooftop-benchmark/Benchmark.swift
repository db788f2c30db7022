import Foundation
import NIOHTTP1
import Rooftop
import RooftopServer
import RooftopShared

/// The sizes and switches of one run.
struct BenchmarkSettings: Sendable, Codable {
    /// Objects created (`--objects`).
    var objects: Int
    /// Mutations per push (`--batch`).
    var batch: Int
    /// Concurrent clients, each a signed-up user (`--clients`).
    var clients: Int
    /// Fields per object (`--fields-per-object`).
    var fieldsPerObject: Int
    /// Elements of each object's list (`--list-size`).
    var listSize: Int
    /// Letters of each object's `note` (`--text-length`, 0: none).
    var textLength: Int
    /// Live WebSocket subscribers (`--subscribers`, 0: no live phase).
    var subscribers: Int
    /// Writes whose notifications the live phase times (`--live-writes`).
    var liveWrites: Int
    /// Increments pushed by the update phase, over all clients (`--updates`).
    var updates: Int
    /// Repetitions of each query, count and idle pull (`--queries`).
    var queryRepeats: Int
    /// Changes per pull page (`--page-size`).
    var pageSize: Int
    /// The data set's seed (`--seed`).
    var seed: UInt64
    /// The class's declared indexes (`--indexes`).
    var indexes: [[String]]
    /// Repetitions of each local query shape and of its raw SQLite query (`--local-repeats`,
    /// default `--queries`).
    var localRepeats: Int
    /// The local query shapes run, by name (`--local-shapes`; all by default).
    var localShapes: [String]
    /// The client library's first sync as a bulk load (``ClientConfiguration/bulkInitialSync``).
    var bulkInitialSync = false
    /// Changes each queue phase queues (`--queue-saves`, at most `objects`).
    var queueSaves: Int

    /// The local query shapes this run measures, in their order.
    var measuredShapes: [(number: Int, shape: LocalQueryShape)] {
        LocalQueryShape.all.enumerated().filter { localShapes.isEmpty || localShapes.contains($0.element.name) }
            .map { (number: $0.offset, shape: $0.element) }
    }
}

/// One run: the users, their clients, the shared datastore, the data set, and the figures of
/// each phase so far. Phases are in `Benchmark+Push.swift`, `Benchmark+Pull.swift` and
/// `Benchmark+Queries.swift`; every operation that fails, or answers something the data set
/// says is wrong, throws and ends the run.
final class Benchmark {
    let settings: BenchmarkSettings
    let server: any ServerUnderTest
    let dataset: Dataset
    /// Signed-up users' clients; client 0 owns the datastore and creates the objects.
    var clients: [BenchmarkHTTPClient] = []
    /// The user ID of each client.
    var userIds: [String] = []
    /// The user name of each client (all share ``password``).
    var usernames: [String] = []
    /// The client library's client (the `client …` phases), once opened.
    var libraryClient: RooftopClient?
    /// The shareable datastore every client edits.
    var datastore = DatastoreID.default
    /// Each object's version after the create phase.
    var createdVersions: [Int64] = []
    /// Which objects the update phase changed.
    var updatedObjects = Set<Int>()
    /// Where the full pull stopped, for the incremental pull.
    var checkpoint: Checkpoint?
    /// The `sum` field of each object as the pulling client last saw it.
    var pulledSums: [String: Int64] = [:]
    /// The figures of each phase, in order.
    private(set) var results: [PhaseResult] = []
    /// The source of query parameters and update targets.
    var random: SeededGenerator
    private let anonymous: BenchmarkHTTPClient

    /// Prepares a run against `server` (no request is sent yet).
    init(settings: BenchmarkSettings, server: any ServerUnderTest) throws {
        self.settings = settings
        self.server = server
        let root = SeededGenerator(seed: settings.seed)
        var dataRandom = root.derived(1)
        dataset = try Dataset(
            count: settings.objects, fieldsPerObject: settings.fieldsPerObject, listSize: settings.listSize,
            textLength: settings.textLength, random: &dataRandom)
        random = root.derived(2)
        anonymous = try BenchmarkHTTPClient(target: server.endpoint)
    }

    /// Every benchmark user's password.
    static let password = "benchmark-password"

    /// Closes every client's connections.
    func shutdown() async {
        await libraryClient?.shutdown()
        for client in clients { await client.shutdown() }
        await anonymous.shutdown()
    }

    /// Runs every phase in order, then measures the physical limits (``measureSQLiteLimits(in:)``)
    /// in `scratchDirectory`, and PostgreSQL's at `postgres` when the servers run on it
    /// (``measurePostgresLimits(url:)``), while the server is idle.
    func run(scratchDirectory: String, postgres: String? = nil) async throws {
        try await signUp()
        try await prepareDatastore()
        try await pushCreates()
        try await pullFull()
        try await pushUpdates()
        try await pullIncremental()
        try await pullIdle()
        try await runQueries()
        try await runCounts()
        try await runClientLibrary()
        // Last: they add objects the query phases' checks do not expect.
        try await pullNew()
        try await singleObjects()
        try await liveSubscribers()
        try await pushConcurrently()
        try await pushManyDatastores()
        try await measureSQLiteLimits(in: scratchDirectory)
        if let postgres { try await measurePostgresLimits(url: postgres) }
    }

    /// Phase `signup`: one user per client (bcrypt cost 4), each then on its own connection pool.
    func signUp() async throws {
        let run = String(UInt32(truncatingIfNeeded: random.next()), radix: 36)
        try await measure("signup", unit: "req") { samples in
            for index in 0..<settings.clients {
                let request = SignUpRequest(username: "bench-\(run)-\(index)", password: Benchmark.password)
                let answer = try await anonymous.call(API.signUp, body: request)
                await samples.add([answer.elapsed])
                let session = answer.value
                // Spread over the server processes.
                let endpoints = server.endpoints
                clients.append(
                    try BenchmarkHTTPClient(target: endpoints[index % endpoints.count], token: session.sessionToken))
                userIds.append(session.user.objectId)
                usernames.append(request.username)
            }
            return (settings.clients, [:])
        }
    }

    /// Not timed: the class's merge rule (`sum` adds concurrent increments), its declared indexes
    /// (`--indexes`; by default `(category, score)` and `score`, as the raw SQLite table the local
    /// queries are compared with, which also has `latitude` and the tags), and a shareable datastore owned by client 0 where every other client is an
    /// editor.
    func prepareDatastore() async throws {
        let settingsBody = ClassSettingsChange(
            className: Dataset.className, mergeRules: ["sum": .sum], indexes: settings.indexes)
        _ = try await anonymous.call(
            API.putClassSettings, API.putClassSettings.path(Dataset.className), body: settingsBody, admin: true)
        datastore = try await clients[0].call(
            API.createDatastore, body: CreateDatastoreRequest(title: "benchmark")
        ).value.id
        for userId in userIds.dropFirst() {
            _ = try await clients[0].call(
                API.setDatastoreRole, API.setDatastoreRole.path(datastore.rawValue),
                body: SetRoleRequest(principal: .user(userId), role: .editor))
        }
    }

    /// Every benchmark user may read and write every object.
    var objectACL: ACL {
        var acl = ACL()
        for userId in userIds {
            acl.setReadAccess(true, for: .user(userId))
            acl.setWriteAccess(true, for: .user(userId))
        }
        return acl
    }

    /// The note by which a phase gives the seconds its rate is over, when not its whole time
    /// (a phase that repeats its work: one repetition's).
    static let timedSeconds = "timed s"
    /// Repetitions of `sqlite insert` (its rate is the median's).
    static let insertRepetitions = 3
    /// Commits of `sqlite synced commit`, at most.
    static let syncedCommits = 2_000

    /// Runs and records one phase: wall time, request latencies, memory before and after.
    /// - Parameters:
    ///   - name: The phase's name in the table.
    ///   - unit: What the returned count counts.
    ///   - trend: Add the median latency of the first and last tenth of the requests to the
    ///     notes (for phases whose data grows as they run).
    ///   - body: The phase; adds request latencies to the collector, returns how many operations
    ///     it made and any extra figures (``timedSeconds`` among them: the seconds its rate is
    ///     over, instead of the phase's wall time).
    func measure(
        _ name: String, unit: String, trend: Bool = false,
        _ body: (SampleCollector) async throws -> (count: Int, notes: [String: Double])
    ) async throws {
        let memoryBefore = MemoryProbe.current()
        let serverBefore = server.endpoint.processID.flatMap(MemoryProbe.process)
        let collector = SampleCollector()
        let clock = ContinuousClock()
        let start = clock.now
        var (count, notes) = try await body(collector)
        var elapsed = clock.now - start
        // A phase that repeats its work times one repetition (the median).
        if let timed = notes.removeValue(forKey: Benchmark.timedSeconds) { elapsed = .seconds(timed) }
        if trend, let (first, last) = await collector.trend() {
            notes["p50 ms, first 10% of requests"] = first
            notes["p50 ms, last 10% of requests"] = last
        }
        let result = PhaseResult(
            name: name, count: count, unit: unit, totalSeconds: elapsed.seconds,
            samplesMilliseconds: await collector.sorted(), memoryBefore: memoryBefore,
            memoryAfter: MemoryProbe.current(),
            serverMemoryBefore: serverBefore, serverMemoryAfter: server.endpoint.processID.flatMap(MemoryProbe.process),
            notes: notes)
        results.append(result)
        Report.progress(
            "\(name): \(count) \(unit) in \(Report.fixed(elapsed.seconds, 2)) s"
                + " (\(Report.fixed(result.rate, 1)) \(unit)/s)")
    }

    /// Requires `condition`, or throws ``BenchmarkError/wrongResult``.
    func require(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        if !condition { throw BenchmarkError.wrongResult(message()) }
    }
}
