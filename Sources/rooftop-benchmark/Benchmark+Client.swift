import Foundation
import Rooftop
import RooftopShared
import Synchronization

extension Benchmark {
    /// The phases of the client library (`Rooftop`), as an app would use it: one more device of
    /// the pulling user, with its local datastore in a file.
    func runClientLibrary() async throws {
        let client = try await openLibraryClient()
        libraryClient = client
        try await clientPull(client)
        try await clientQueue(client)
        try await clientLocalQueries(client)
        try await clientColdStart(client)
    }

    /// A `RooftopClient` trusting the development CA, with a fresh local datastore file, signed
    /// in as the pulling user.
    private func openLibraryClient() async throws -> RooftopClient {
        let client = try await RooftopClient(configuration: try libraryConfiguration())
        _ = try await client.logIn(username: usernames[pullerIndex], password: Benchmark.password)
        return client
    }

    /// Phase `client cold start`: the app starts again on the local datastore the sync filled
    /// (a new `RooftopClient` on the same file, its session restored) and answers its first
    /// local query (the first shape); one sample, from opening to the answer.
    private func clientColdStart(_ previous: RooftopClient) async throws {
        await previous.shutdown()
        libraryClient = nil
        let configuration = try libraryConfiguration()
        guard let shape = LocalQueryShape.all.first, let run = try runs(of: shape, number: 0).first else { return }
        try await measure("client cold start", unit: "start") { samples in
            let clock = ContinuousClock()
            let start = clock.now
            let client = try await RooftopClient(configuration: configuration)
            libraryClient = client
            let found = try await client.query(Dataset.className, in: datastore).text(shape.text, run.values)
                .fromLocalDatastore().find()
            await samples.add([clock.now - start])
            try require(found.objects.count == run.expected, "the first query after a cold start answered \(found.objects.count), not \(run.expected)")
            return (1, [:])
        }
    }

    /// The library client's configuration: the development CA, a local datastore in a file.
    private func libraryConfiguration() throws -> ClientConfiguration {
        guard let serverURL = URL(string: server.endpoint.baseURL) else {
            throw BenchmarkError.wrongResult("the server's URL \(server.endpoint.baseURL) is not a URL")
        }
        let directory = server.endpoint.dataDirectory + "/benchmark-client"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var configuration = ClientConfiguration(serverURL: serverURL)
        configuration.appId = server.endpoint.appId
        configuration.trust = .certificateAuthority(
            pem: try String(contentsOfFile: server.endpoint.caCertificatePath, encoding: .utf8))
        configuration.storage = .file(path: directory + "/local.sqlite")
        configuration.bulkInitialSync = settings.bulkInitialSync
        return configuration
    }

    /// Phase `client pull`: the library pulls the whole datastore into its local store (pages
    /// streamed and applied one by one), reporting progress; every object must arrive.
    private func clientPull(_ client: RooftopClient) async throws {
        let expected = dataset.objects.count
        try await measure("client pull", unit: "obj") { _ in
            let reports = Mutex<[SyncProgress]>([])
            // The client's memory along the way (the whole benchmark process; with the server
            // in-process, the server's too): it should stay flat, whatever the datastore's size.
            let resident = Mutex<[Int]>(MemoryProbe.current().map { [$0.residentBytes] } ?? [])
            // The app stays responsive: a screen's local query, run again and again while the
            // pull writes (answers partial, so only their time is kept).
            let (dataset, datastore, seed) = (dataset, datastore, settings.seed)
            let probe = Task {
                try await Benchmark.localQueriesWhile(client, dataset: dataset, datastore: datastore, seed: seed)
            }
            let applied: Int
            do {
                applied = try await client.sync.pull(datastore: datastore) { progress in
                    reports.withLock { $0.append(progress) }
                    if let reading = MemoryProbe.current() { resident.withLock { $0.append(reading.residentBytes) } }
                }
            } catch {
                probe.cancel()
                throw error
            }
            probe.cancel()
            let during = try await probe.value
            let samples = resident.withLock { $0 }
            let mebibytes = { (bytes: Int) in Double(bytes) / 1_048_576 }
            let seen = reports.withLock { $0 }
            let processed = seen.map(\.processed)
            try require(zip(processed, processed.dropFirst()).allSatisfy(<=), "progress went backwards: \(processed)")
            try require(
                seen.last.map { $0.isFinished && $0.processed == applied } ?? false,
                "the last progress report \(String(describing: seen.last)) does not end at \(applied)")
            try require(applied == expected, "the client library pulled \(applied) objects, not \(expected)")
            var notes = ["progress reports": Double(seen.count)]
            for (name, durations) in [("local query", during.queries), ("saveEventually", during.saves)] {
                let milliseconds = durations.map { Double($0.components.attoseconds) / 1e15 + Double($0.components.seconds) * 1e3 }
                    .sorted()
                guard let last = milliseconds.last else { continue }
                let at = { (share: Double) in milliseconds[min(milliseconds.count - 1, Int(Double(milliseconds.count) * share))] }
                notes["\(name) while pulling (count)"] = Double(milliseconds.count)
                notes["\(name) p50 ms while pulling"] = at(0.5)
                notes["\(name) p99 ms while pulling"] = at(0.99)
                notes["\(name) max ms while pulling"] = last
            }
            if let first = samples.first, let last = samples.last, let peak = samples.max() {
                notes["process RSS MiB at start"] = mebibytes(first)
                notes["process RSS MiB peak while pulling"] = mebibytes(peak)
                notes["process RSS MiB at the end"] = mebibytes(last)
                // Half-way through: compared with the end, shows whether memory grows with the data.
                notes["process RSS MiB half-way"] = mebibytes(samples[samples.count / 2])
                // The client's own memory, apart from the data set the benchmark holds (in the
                // process before the pull began): what the pull added at its peak.
                notes["client RSS MiB added by the pull (peak)"] = mebibytes(peak - first)
            }
            return (applied, notes)
        }
        // Checked outside the measured phase: counting reads every stored object.
        let local = try await client.query(Dataset.className, in: datastore).fromLocalDatastore().count()
        try require(local == expected, "the client library stored \(local) objects, not \(expected)")
    }

    /// What the app does while the sync runs, every 100 ms until cancelled: the first local query
    /// shape (`category = ?` ordered by score, limit 50; a screen refreshing) and a
    /// `saveEventually()` of an object of the user's private datastore (not the one pulled, whose
    /// objects the phases count); returns each one's time.
    private static func localQueriesWhile(
        _ client: RooftopClient, dataset: Dataset, datastore: DatastoreID, seed: UInt64
    ) async throws -> (queries: [Duration], saves: [Duration]) {
        guard let shape = LocalQueryShape.all.first else { return ([], []) }
        var random = SeededGenerator(seed: seed).derived(0xD0_1E)
        let clock = ContinuousClock()
        var queries: [Duration] = []
        var saves: [Duration] = []
        let note = client.object("BenchmarkProbe", in: .default)
        while !Task.isCancelled {
            let run = try shape.draw(&random, dataset)
            var start = clock.now
            _ = try await client.query(Dataset.className, in: datastore).text(shape.text, run.values).fromLocalDatastore()
                .find()
            queries.append(clock.now - start)
            start = clock.now
            try note.increment("saves", by: 1)
            try await note.saveEventually()
            saves.append(clock.now - start)
            do { try await Task.sleep(for: .milliseconds(100)) } catch { break }
        }
        return (queries, saves)
    }

    /// The note of the queue phases: durable `saveEventually()` calls per second.
    static let durableEnqueues = "durable enqueues/s"

    /// Phases `client queue` and `client queue 8`: increments of `sum` queued with
    /// `saveEventually()` by one caller, then by 8 concurrent callers (each its own objects), each
    /// call returning once its change is in the local datastore, on disk (notes: the time and
    /// rate of those durable enqueues, and a save's time split between the app's own read and
    /// increment of the object and `saveEventually()` itself); then the offline queue sends them
    /// until idle. The phase's rate is of the whole; none may be refused. Concurrent calls share
    /// commits (group commit).
    private func clientQueue(_ client: RooftopClient) async throws {
        let count = min(dataset.objects.count, settings.queueSaves)
        let objects = dataset.objects.prefix(count).map(\.objectId)
        /// One caller's saves: each one's time, and the parts spent reading and in `saveEventually()`.
        struct CallerTimes: Sendable {
            var durations: [Duration] = []
            var reading = Duration.zero
            var saving = Duration.zero
        }
        for callers in [1, 8] {
            try await measure(callers == 1 ? "client queue" : "client queue \(callers)", unit: "mut") { samples in
                let clock = ContinuousClock()
                let enqueueStart = clock.now
                let datastore = self.datastore
                var reading = Duration.zero
                var saving = Duration.zero
                try await withThrowingTaskGroup(of: CallerTimes.self) { group in
                    for caller in 0..<callers {
                        group.addTask {
                            var times = CallerTimes()
                            for (index, objectId) in objects.enumerated() where index % callers == caller {
                                let start = clock.now
                                let live = client.object(Dataset.className, id: objectId, in: datastore)
                                try live.increment("sum", by: 1)
                                let read = clock.now
                                try await live.saveEventually()
                                let end = clock.now
                                times.durations.append(end - start)
                                times.reading += read - start
                                times.saving += end - read
                            }
                            return times
                        }
                    }
                    for try await times in group {
                        await samples.add(times.durations)
                        reading += times.reading
                        saving += times.saving
                    }
                }
                let enqueued = clock.now - enqueueStart
                let sendStart = clock.now
                try await client.outbox.waitUntilIdle()
                let refused = try client.outbox.rejected()
                try require(refused.isEmpty, "the server refused \(refused.count) queued changes")
                try require(!client.outbox.hasPendingWrites, "changes are still pending after the queue went idle")
                let perSave = { (total: Duration) in total.seconds * 1e3 / Double(max(count, 1)) }
                return (
                    count,
                    [
                        "sent until idle s": (clock.now - sendStart).seconds,
                        "enqueue s (durable, before sending)": enqueued.seconds,
                        Benchmark.durableEnqueues: Double(count) / max(enqueued.seconds, 1e-9),
                        "app read and increment ms/save (mean)": perSave(reading),
                        "saveEventually ms/save (mean)": perSave(saving),
                    ]
                )
            }
        }
    }
}
