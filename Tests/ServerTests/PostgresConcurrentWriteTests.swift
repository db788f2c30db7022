import Dispatch
import PostgresNIO
import RooftopShared
import Synchronization
import Testing

@testable import RooftopServer

/// On PostgreSQL a datastore's writers run at once: a write locks only its object, and a
/// transaction's changes are numbered at its end, under the datastore's row lock held until
/// commit (docs/server.md, "Commit-ordered sequences, writers at once"). These tests hold one
/// transaction open inside its body (a semaphore, with a deadline) while another writes.
@Suite("PostgreSQL: concurrent writers of one datastore", .enabled(if: PostgresTestCluster.enabled, "needs a PostgreSQL cluster"))
struct PostgresConcurrentWriteTests {
    /// A transaction held open longer than a test waits for anything.
    struct Stuck: Error {}

    /// How long a test waits for a step before it fails (a writer that waited for the held
    /// transaction would wait this long, then fail the test).
    static let patience = DispatchTimeInterval.seconds(20)

    @Test("a writer commits while another of the same datastore is open; the one that began first and commits last is numbered after it, and a pull that read up to it still gets its change")
    func lateCommit() async throws {
        try await withStorage(PostgresFixture.factory) { storage, _ in
            let key = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil).key
            let (wrote, release) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
            let long = Task {
                try await storage.writeObjects { writer -> (ObjectWriteOutcome, FeedNumbering?) in
                    let outcome = try writer.write(Self.request(key, "a")) { _ in
                        StorageWrites.decision(StorageConformance.object("a"), deleted: false)
                    }
                    wrote.signal()
                    guard release.wait(timeout: .now() + Self.patience) == .success else { throw Stuck() }
                    return (outcome, writer.numbering)
                }
            }
            defer {
                release.signal()
                long.cancel()
            }
            try await Self.waitFor(wrote)

            // With a datastore-wide lock, this write would wait for the open transaction (which
            // waits for it): the open one gives up after `patience` and the checks below fail.
            let b = try await StorageWrites.put(StorageConformance.object("b"), datastoreKey: key, into: storage)
            #expect(b.sequence == 1)
            let first = try await storage.changes(datastoreKey: key, after: 0, limit: 100, classes: nil)
            #expect(first.map(\.objectId) == ["b"] && first.map(\.sequence) == [1])

            release.signal()
            let (outcome, numbering) = try await long.value
            guard case .written(let a, _, _) = outcome.committed(by: numbering, datastoreKey: key) else {
                Issue.record("the long transaction's write gave \(outcome)")
                return
            }
            #expect(a.sequence == 2, "numbered when it committed, after the write that committed first")
            let next = try await storage.changes(datastoreKey: key, after: first.last?.sequence ?? 0, limit: 100, classes: nil)
            #expect(next.map(\.objectId) == ["a"] && next.map(\.sequence) == [2])
            #expect(try await storage.object(datastoreKey: key, className: "T", objectId: "a")?.sequence == 2)
            let datastore = try await storage.datastore(key: key)
            #expect(datastore?.sequence == 2 && datastore?.recordCount == 2)
        }
    }

    @Test("a retry of a mutation sent while its first attempt is open waits for it, then replays its result")
    func retryWaitsForFirstAttempt() async throws {
        try await withStorage(PostgresFixture.factory) { storage, _ in
            let postgres = try #require(storage as? PostgresStorage)
            let key = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil).key
            let mutation = (scope: "u1", id: try MutationID("m1"))
            let (wrote, release) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
            let decisions = Mutex(0)
            let decide: @Sendable (ObjectWriteContext) throws(RooftopError) -> ObjectWriteDecision = { context in
                decisions.withLock { $0 += 1 }
                let version = (context.current?.snapshot.version ?? 0) + 1
                return StorageWrites.decision(StorageConformance.object("a", version: version), deleted: false)
            }
            let first = Task {
                try await storage.writeObjects { writer -> ObjectWriteOutcome in
                    let outcome = try writer.write(Self.request(key, "a", mutation: mutation), decide: decide)
                    wrote.signal()
                    guard release.wait(timeout: .now() + Self.patience) == .success else { throw Stuck() }
                    return outcome
                }
            }
            defer {
                release.signal()
                first.cancel()
            }
            try await Self.waitFor(wrote)
            let retry = Task { try await storage.writeObject(Self.request(key, "a", mutation: mutation), decide: decide) }
            // The retry waits on the object's lock: seen in pg_locks, then the first commits.
            try await Self.waitUntilSomeoneWaits(postgres)
            release.signal()
            guard case .written = try await first.value else {
                Issue.record("the first attempt did not write")
                return
            }
            guard case .replayed(.applied(_, 1, _, _)) = try await retry.value else {
                Issue.record("the retry was not answered with the first attempt's result")
                return
            }
            #expect(decisions.withLock { $0 } == 1, "decided once")
            #expect(try await storage.object(datastoreKey: key, className: "T", objectId: "a")?.snapshot.version == 1)
            #expect(try await storage.datastore(key: key)?.sequence == 1)
        }
    }

    @Test("writers racing for a datastore's last records never pass its limit: the one that counted on room taken meanwhile runs again alone")
    func limitsHoldUnderRacingWriters() async throws {
        try await withStorage(PostgresFixture.factory) { storage, _ in
            let key = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil).key
            let limit = 3
            let (wrote, release) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
            let runs = Mutex(0)
            // Creates the objects, refusing one past the limit as the write decider does.
            @Sendable func create(_ ids: [String], with writer: any ObjectWriter) throws -> [String] {
                try ids.map { id in
                    var request = Self.request(key, id)
                    request.datastoreLimits = (records: limit, bytes: Int.max)
                    let outcome = try writer.write(request) { context throws(RooftopError) in
                        guard context.datastore.recordCount + 1 <= limit else { return .reject(RooftopError(.sizeLimit, "full")) }
                        return StorageWrites.decision(StorageConformance.object(id), deleted: false)
                    }
                    if case .written = outcome { return "written" }
                    return "refused"
                }
            }
            let racing = Task {
                try await storage.writeObjects { writer -> [String] in
                    let run = runs.withLock { $0 += 1; return $0 }
                    let outcomes = try create(["a1", "a2"], with: writer)
                    if run == 1 {
                        wrote.signal()
                        guard release.wait(timeout: .now() + Self.patience) == .success else { throw Stuck() }
                    }
                    return outcomes
                }
            }
            defer {
                release.signal()
                racing.cancel()
            }
            try await Self.waitFor(wrote)
            // Counts 0 and 1 (the open transaction's writes are not committed): both fit.
            let other = try await storage.writeObjects { writer in try create(["b1", "b2"], with: writer) }
            #expect(other == ["written", "written"])
            release.signal()
            // Its two writes counted on 0 and 1 records; at its end there are 4, over the limit.
            #expect(try await racing.value == ["written", "refused"], "run again alone, with exact counts")
            #expect(runs.withLock { $0 } == 2)
            #expect(try await storage.datastore(key: key)?.recordCount == limit)
            let stored = try await storage.changes(datastoreKey: key, after: 0, limit: 100, classes: nil)
            #expect(stored.map(\.objectId) == ["b1", "b2", "a1"])
            #expect(stored.map(\.sequence) == [1, 2, 3])
        }
    }

    @Test("a push takes its object locks in lock-key order, whatever the order of its writes: two pushes of the same objects never wait for each other in a cycle")
    func lockOrder() async throws {
        try await withStorage(PostgresFixture.factory) { storage, _ in
            let postgres = try #require(storage as? PostgresStorage)
            let key = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil).key
            let seed = try await postgres.lockSeed()
            // Two objects, `first` the one whose lock key is lower.
            let names = ["x", "y"].map { ($0, PostgresObjectWriter.Locks.objectName(Self.request(key, $0))) }
            let keys = try await postgres.read { session in
                try names.map { _, name in
                    try session.query("SELECT hashtextextended(\(name), \(seed))").first?.decode(Int64.self) ?? 0
                }
            }
            let (first, second) = keys[0] < keys[1] ? (names[0], names[1]) : (names[1], names[0])
            let firstKey = min(keys[0], keys[1])
            let (wrote, release) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
            defer { release.signal() }
            let holder = Task {
                try await storage.writeObjects { writer in
                    try writer.lock([Self.request(key, second.0)])
                    wrote.signal()
                    guard release.wait(timeout: .now() + Self.patience) == .success else { throw Stuck() }
                }
            }
            defer { holder.cancel() }
            try await Self.waitFor(wrote)
            // Asked in the other order: it must take `first`'s lock, then wait for `second`'s.
            let other = Task {
                try await storage.writeObjects { writer in
                    try writer.lock([Self.request(key, second.0), Self.request(key, first.0)])
                }
            }
            try await Self.waitUntilSomeoneWaits(postgres)
            let heldFirst = try await postgres.read { session in
                try session.query(
                    """
                    SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1
                    AND ((classid::bigint << 32) | objid::bigint) = \(firstKey)
                    """
                ).first?.decode(Int64.self) ?? 0
            }
            #expect(heldFirst == 1, "the waiting push holds the lower key's lock: it took the keys in order")
            release.signal()
            try await holder.value
            try await other.value
        }
    }

    @Test("deleting a datastore waits for the writes in flight; a write that starts after it finds the datastore gone (404, not 500)")
    func deleteDuringWrites() async throws {
        try await withStorage(PostgresFixture.factory) { storage, _ in
            let postgres = try #require(storage as? PostgresStorage)
            let key = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil).key
            try await StorageWrites.put(StorageConformance.object("a"), datastoreKey: key, into: storage)
            let (wrote, release) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
            let open = Task {
                try await storage.writeObjects { writer in
                    let outcome = try writer.write(Self.request(key, "a")) { _ in
                        StorageWrites.decision(StorageConformance.object("a", version: 2), deleted: false)
                    }
                    wrote.signal()
                    guard release.wait(timeout: .now() + Self.patience) == .success else { throw Stuck() }
                    return "\(outcome)"
                }
            }
            defer {
                release.signal()
                open.cancel()
            }
            try await Self.waitFor(wrote)
            let delete = Task { try await storage.deleteDatastore(key: key) }
            try await Self.waitUntilSomeoneWaits(postgres)
            let late = Task {
                try await storage.writeObject(Self.request(key, "b")) { _ in
                    StorageWrites.decision(StorageConformance.object("b"), deleted: false)
                }
            }
            release.signal()
            #expect(try await open.value.hasPrefix("written"))
            try await delete.value
            do {
                let outcome = try await late.value
                Issue.record("a write after the delete gave \(outcome)")
            } catch let error as RooftopError {
                #expect(error.code == .notFound, "\(error)")
            }
            #expect(try await storage.datastore(key: key) == nil)
        }
    }

    @Test("a push's message to the other processes carries its latest change's settled sequence")
    func clusterMessageSequence() throws {
        let changes = PostgresObjectWriter.Changes()
        for (sequence, reader) in [(Int64(-1), "u1"), (-2, "u2"), (-3, "u1")] {
            changes.add(datastoreKey: 7, className: "T", sequence: sequence, readers: [reader])
        }
        let numbering = FeedNumbering()
        numbering.settle(datastoreKey: 7, base: 40)
        guard case .changed(7, let sequence, "T", let readers)? = changes.messages(numbering).first else {
            Issue.record("\(changes.messages(numbering))")
            return
        }
        #expect(sequence == 43 && readers == ["u1", "u2"])
        #expect(numbering.committed(-2, datastoreKey: 7) == 42 && numbering.committed(5, datastoreKey: 7) == 5)
        #expect(numbering.committed(-2, datastoreKey: 8) == -2, "a datastore not settled keeps what was written")
    }

    static func request(_ key: Int64, _ id: String, mutation: (scope: String, id: MutationID)? = nil) -> ObjectWriteRequest {
        ObjectWriteRequest(datastoreKey: key, className: "T", objectId: id, baseVersion: nil, mutation: mutation)
    }

    /// Waits for `semaphore`, at most ``patience``, on a dispatch thread: blocking one of Swift's
    /// few cooperative threads would stall the tests running beside this one.
    static func waitFor(_ semaphore: DispatchSemaphore) async throws {
        let result = await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: semaphore.wait(timeout: .now() + patience)) }
        }
        guard result == .success else { throw Stuck() }
    }

    /// Waits until an advisory lock request waits in the storage's database, at most 20 s.
    static func waitUntilSomeoneWaits(_ storage: PostgresStorage) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while try await storage.read({ session in
            try session.query(
                """
                SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
                AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                """
            ).first?.decode(Int64.self) ?? 0
        }) == 0 {
            guard ContinuousClock.now < deadline else { throw Stuck() }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}
