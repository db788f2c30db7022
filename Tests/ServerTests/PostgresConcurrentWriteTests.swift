import Dispatch
import PostgresNIO
import RooftopShared
import RooftopTestSupport
import Synchronization
import Testing

@testable import RooftopServer

/// On PostgreSQL a datastore's writers run at once: a write locks only its object, a
/// transaction numbers its changes in a range that follows its transaction ID, and the feed is
/// read only below the oldest transaction still running (docs/server.md, "Changes numbered by
/// transaction, writers at once"). These tests hold one transaction open inside its body (a
/// semaphore, with a deadline) while another writes.
@Suite("PostgreSQL: concurrent writers of one datastore", .enabled(if: PostgresTestCluster.enabled, "needs a PostgreSQL cluster"))
struct PostgresConcurrentWriteTests {
    /// A transaction held open longer than a test waits for anything.
    struct Stuck: Error {}

    /// How long a test waits for a step before it fails (a writer that waited for the held
    /// transaction would wait this long, then fail the test).
    static let patience = DispatchTimeInterval.seconds(20)

    @Test("a long transaction that began first commits last with the older number: a writer of the same datastore commits meanwhile, a pull waits for the older one instead of skipping its change, and gets both in number order")
    func lateCommit() async throws {
        try await withStorage(PostgresFixture.factory) { storage, _ in
            let postgres = try #require(storage as? PostgresStorage)
            let key = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil).key
            let (wrote, release) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
            let long = Task {
                try await storage.writeObjects { writer -> ObjectWriteOutcome in
                    let outcome = try writer.write(Self.request(key, "a")) { _ in
                        StorageWrites.decision(StorageConformance.object("a"), deleted: false)
                    }
                    wrote.signal()
                    guard release.wait(timeout: .now() + Self.patience) == .success else { throw Stuck() }
                    return outcome
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
            // Committed, numbered after the open transaction, which may still commit below it.
            #expect(try await storage.datastore(key: key)?.sequence == b.sequence)
            #expect(try await storage.recentChanges(datastoreKey: key, limit: 10).map(\.objectId) == ["b"])

            let waitsBefore = postgres.feedWaits.load(ordering: .relaxed)
            let pull = Task { try await storage.changes(datastoreKey: key, after: 0, limit: 100, classes: nil) }
            defer { pull.cancel() }
            // The pull found `b` held back and waits (it would have answered `[]` or `[b]`).
            let deadline = ContinuousClock.now + .seconds(20)
            while postgres.feedWaits.load(ordering: .relaxed) == waitsBefore {
                guard ContinuousClock.now < deadline else { throw Stuck() }
                try await Task.sleep(for: .milliseconds(2))
            }
            release.signal()
            guard case .written(let a, _, _) = try await long.value else {
                Issue.record("the long transaction did not write")
                return
            }
            #expect(a.sequence < b.sequence, "numbered by the transaction that began first")
            let pulled = try await pull.value
            #expect(pulled.map(\.objectId) == ["a", "b"] && pulled.map(\.sequence) == [a.sequence, b.sequence])
            let after = try await storage.changes(datastoreKey: key, after: b.sequence, limit: 100, classes: nil)
            #expect(after.isEmpty)
            #expect(try await storage.object(datastoreKey: key, className: "T", objectId: "a")?.sequence == a.sequence)
            let datastore = try await storage.datastore(key: key)
            #expect(datastore?.sequence == b.sequence && datastore?.recordCount == 2)
        }
    }

    @Test("a transaction that locks an object after its first change, which one numbered after it wrote meanwhile, runs again numbered after that write")
    func lateLockRunsAgain() async throws {
        try await withStorage(PostgresFixture.factory) { storage, _ in
            let key = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil).key
            let (wrote, release) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
            let runs = Mutex(0)
            let late = Task {
                try await storage.writeObjects { writer -> [Int64] in
                    let run = runs.withLock { $0 += 1; return $0 }
                    // Numbered now: the transaction's range is taken at its first change.
                    let first = try writer.write(Self.request(key, "a")) { _ in
                        StorageWrites.decision(StorageConformance.object("a"), deleted: false)
                    }
                    if run == 1 {
                        wrote.signal()
                        guard release.wait(timeout: .now() + Self.patience) == .success else { throw Stuck() }
                    }
                    // Locked only now: another transaction wrote it meanwhile.
                    let second = try writer.write(Self.request(key, "c")) { context in
                        let version = (context.current?.snapshot.version ?? 0) + 1
                        return StorageWrites.decision(StorageConformance.object("c", version: version), deleted: false)
                    }
                    return [first, second].compactMap { outcome -> Int64? in
                        guard case .written(let stored, _, _) = outcome else { return nil }
                        return stored.sequence
                    }
                }
            }
            defer {
                release.signal()
                late.cancel()
            }
            try await Self.waitFor(wrote)
            let c = try await StorageWrites.put(StorageConformance.object("c"), datastoreKey: key, into: storage)
            release.signal()
            let sequences = try await late.value
            #expect(runs.withLock { $0 } == 2, "ran again")
            #expect(sequences.count == 2 && sequences.allSatisfy { $0 > c.sequence })
            #expect(try await storage.object(datastoreKey: key, className: "T", objectId: "c")?.snapshot.version == 2)
            let feed = try await storage.changes(datastoreKey: key, after: 0, limit: 100, classes: nil)
            #expect(feed.map(\.objectId) == ["a", "c"] && feed.map(\.sequence) == sequences)
        }
    }

    @Test("a transaction open in another deployment of the database (another schema) holds nothing back")
    func otherDeploymentsDoNotHoldBack() async throws {
        try await TestPostgres.withDatabase { url in
            func schema(_ name: String) -> String { url + (url.contains("?") ? "&" : "?") + "schema=" + name }
            let (first, second) = (
                try PostgresStorage(url: schema("first"), maximumConnections: 4),
                try PostgresStorage(url: schema("second"), maximumConnections: 4)
            )
            let (wrote, release) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
            var open: Task<Void, any Error>?
            do {
                try await first.prepare()
                try await second.prepare()
                let firstKey = try await first.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil).key
                let key = try await second.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil).key
                open = Task {
                    try await first.writeObjects { writer in
                        _ = try writer.write(Self.request(firstKey, "a")) { _ in
                            StorageWrites.decision(StorageConformance.object("a"), deleted: false)
                        }
                        wrote.signal()
                        guard release.wait(timeout: .now() + Self.patience) == .success else { throw Stuck() }
                    }
                }
                try await Self.waitFor(wrote)
                // Numbered after the open transaction, in the other deployment: not held back.
                // The pull may still wait a moment for a transaction of another test's database
                // that ended between the snapshot and its reading of pg_stat_activity (what
                // cannot be told apart is waited for); the open one stays open until the pull
                // has returned, so a pull held back by it would throw `FeedHeldBack`.
                let b = try await StorageWrites.put(StorageConformance.object("b"), datastoreKey: key, into: second)
                let pulled = try await second.changes(
                    datastoreKey: key, after: 0, limit: 100, classes: nil, waitingAtMost: .seconds(2))
                #expect(pulled.map(\.sequence) == [b.sequence])
                release.signal()
                try await open?.value
                try await first.close()
                try await second.close()
            } catch {
                release.signal()
                _ = try? await open?.value
                try? await first.close()
                try? await second.close()
                throw error
            }
        }
    }

    @Test("transactions that number no change hold nothing back: one of the deployment's own that is not a writer, and a prepared one")
    func nonWritersDoNotHoldBack() async throws {
        try await withStorage(PostgresFixture.factory) { storage, _ in
            let postgres = try #require(storage as? PostgresStorage)
            let key = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil).key
            // A prepared transaction with an ID, older than the write below.
            try await postgres.pool.client.withConnection { connection in
                try await connection.query("BEGIN", logger: postgres.pool.logger)
                try await connection.query(
                    "INSERT INTO settings (name, value) VALUES ('prepared', ''::bytea)", logger: postgres.pool.logger)
                try await connection.query("PREPARE TRANSACTION 'rooftop-test'", logger: postgres.pool.logger)
            }
            do {
                try await Self.pullsPastNonWriters(postgres, datastoreKey: key)
            } catch {
                _ = try? await postgres.read { session in try session.execute("ROLLBACK PREPARED 'rooftop-test'") }
                throw error
            }
            _ = try await postgres.read { session in try session.execute("ROLLBACK PREPARED 'rooftop-test'") }
        }
    }

    /// With a transaction of the deployment open that is not a writer, a write and a pull that
    /// is not held back by it.
    static func pullsPastNonWriters(_ postgres: PostgresStorage, datastoreKey key: Int64) async throws {
        let (wrote, release) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        // The deployment's own transaction, with an ID, that is not a writer (a setting's).
        let open = Task {
            try await postgres.transaction { session in
                try session.execute("INSERT INTO settings (name, value) VALUES ('open', ''::bytea)")
                wrote.signal()
                guard release.wait(timeout: .now() + Self.patience) == .success else { throw Stuck() }
            }
        }
        defer {
            release.signal()
            open.cancel()
        }
        try await Self.waitFor(wrote)
        let b = try await StorageWrites.put(StorageConformance.object("b"), datastoreKey: key, into: postgres)
        // A moment's wait is allowed for a transaction of another database that ended between the
        // snapshot and the pull's reading of pg_stat_activity; the open one outlasts the pull.
        let pulled = try await postgres.changes(
            datastoreKey: key, after: 0, limit: 100, classes: nil, waitingAtMost: .seconds(2))
        #expect(pulled.map(\.sequence) == [b.sequence])
        release.signal()
        try await open.value
    }

    @Test("a pull held back longer than the feed's wait answers a storage fault (503) instead of skipping")
    func heldBackTooLong() async throws {
        try await withStorage(PostgresFixture.factory) { storage, _ in
            let postgres = try #require(storage as? PostgresStorage)
            let key = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil).key
            let (wrote, release) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
            let long = Task {
                try await storage.writeObjects { writer in
                    _ = try writer.write(Self.request(key, "a")) { _ in
                        StorageWrites.decision(StorageConformance.object("a"), deleted: false)
                    }
                    wrote.signal()
                    guard release.wait(timeout: .now() + Self.patience) == .success else { throw Stuck() }
                }
            }
            defer {
                release.signal()
                long.cancel()
            }
            try await Self.waitFor(wrote)
            try await StorageWrites.put(StorageConformance.object("b"), datastoreKey: key, into: storage)
            do {
                let pulled = try await postgres.changes(
                    datastoreKey: key, after: 0, limit: 100, classes: nil, waitingAtMost: .milliseconds(100))
                Issue.record("a held-back pull answered \(pulled.map(\.objectId))")
            } catch {
                #expect(RooftopError.storageFault(in: error) != nil, "\(error)")
            }
            release.signal()
            try await long.value
            let pulled = try await storage.changes(datastoreKey: key, after: 0, limit: 100, classes: nil)
            #expect(pulled.map(\.objectId) == ["a", "b"])
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
            let a = try await storage.object(datastoreKey: key, className: "T", objectId: "a")
            #expect(try await storage.datastore(key: key)?.sequence == a?.sequence)
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
            #expect(stored.map(\.objectId) == ["b1", "b2", "a1"], "the run alone began after the others committed")
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

    @Test("a push's message to the other processes carries its latest change's sequence and every reader")
    func clusterMessageSequence() throws {
        let changes = PostgresObjectWriter.Changes()
        for (sequence, reader) in [(Int64(41), "u1"), (43, "u2"), (42, "u1")] {
            changes.add(datastoreKey: 7, className: "T", sequence: sequence, readers: [reader])
        }
        guard case .changed(7, let sequence, "T", let readers)? = changes.messages().first else {
            Issue.record("\(changes.messages())")
            return
        }
        #expect(sequence == 43 && readers == ["u1", "u2"])
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
