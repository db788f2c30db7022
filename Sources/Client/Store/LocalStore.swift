import Foundation
import GRDB
import Logging
import RooftopSQLite
import RooftopShared
import Synchronization

/// The client's local datastore: objects (the server's last state and the local view), pins and
/// labels, cached query results, the offline queue, set-aside refusals, pull checkpoints, the
/// session and known datastores — one SQLite database (in memory, or a WAL file).
///
/// Every row belongs to a scope: the signed-in user's ID, or `""` for local use without an
/// account. Changes that belong together are one transaction (``write(scope:_:)``); after each
/// commit the objects it touched are published on ``changes``.
final class LocalStore: Sendable {
    private let database: any DatabaseWriter
    /// A file's connection for point reads (``pointRead(_:)``), read-only, apart from the pool's
    /// readers: a pool's read takes a reader from its pool and asks SQLite for the schema's
    /// version first, a third of the app's lookup of one object (`perf`, eight callers queueing
    /// saves, 2026-12-07). `nil` in memory (reads use the one connection).
    private let pointReader: DatabaseQueue?
    /// Where committed changes are announced.
    let changes = Broadcaster<StoreChange>()
    /// Whether the store is closed, and how many reads and writes are running. The connection is
    /// closed by whichever comes last, ``close()`` or the last running access: GRDB frees the
    /// SQLite connection on close, and an access after that would hand SQLite a null connection
    /// (a crash, seen when a sync task still ran while its client shut down).
    private let gate = Mutex(Gate())
    /// Writes waiting for a shared commit (``writeGrouped(scope:_:committed:)``).
    let group = Mutex(GroupQueue())
    /// The compiled statements of local queries, a bounded number per reader connection.
    let queryStatements = QueryStatements()
    /// Writes asked for and not started yet (waiting for the one writer connection).
    private let waitingWrites = Atomic<Int>(0)
    /// Commits published in the order they were made (``PublicationOrder``).
    private let publication = PublicationOrder()
    /// Whether the writer may still be left unsynced by a deferred commit (``Durability``).
    private let relaxed = Mutex(false)
    /// The thread long writes wait and run on (``writeLong(scope:durability:_:committed:)``).
    private let longWrites = DispatchQueue(label: "rooftop.store.long-writes")
    /// The writer's page cache, large while long writes run (``WriterCache``).
    let writerCache: WriterCache
    /// What the writer's transactions keep from one to the next (``WriterMemo``).
    let writerMemo = WriterMemo()
    /// When a pull loads a datastore in bulk, and how often its entries are built (tests lower them).
    let bulkLoading = Mutex(BulkLoading())
    /// The thread that checkpoints a file's log, so that the writer's commits copy little of it
    /// (``LogCheckpointer``); `nil` in memory.
    let checkpointer: LogCheckpointer?
    /// The commits made, counted so that two reads can tell they read one snapshot
    /// (``versionedRead(_:)``).
    let commits = CommitCounter()
    /// How many pages' totals were counted beside them (``countAside(_:version:)``; tests).
    let countedAside = Atomic<Int>(0)
    /// The threads counts beside pages run on (``countAside(_:version:)``).
    let countThreads = CountThreads(size: LocalStore.maxCountsAside)
    /// Whether a page waits for its count beside it even before the count's read began (tests
    /// set it, so that what they check does not depend on which thread runs first; a store with
    /// more pages at once than reader connections must not set it). Default `false`.
    let countsAsidePatiently = Atomic<Bool>(false)

    /// Whether the store reads on more than one connection (a file), so that a page's total can
    /// be counted beside it (``countAside(_:version:)``).
    var countsAside: Bool { database is DatabasePool && countThreads.size > 0 }

    /// Whether a commit made is not published yet (its live objects may not have taken it).
    /// Tests observe the order of publications with it; code waits with ``waitForPublications()``.
    var isPublishing: Bool { publication.isPublishing }

    /// Returns once every commit made before the call is published (its live objects have taken
    /// what it stored and its change is on ``changes``).
    func waitForPublications() async { await publication.waitForPublications() }

    /// Whether a write is waiting for the writer: a long write (a pull's batch) ends its
    /// transaction early then, and goes on in another after the waiting ones.
    var writesWaiting: Bool { waitingWrites.load(ordering: .relaxed) > 0 }
    /// How many writes wait for the writer (tests).
    var waitingWriteCount: Int { waitingWrites.load(ordering: .relaxed) }

    private struct Gate {
        var closed = false
        var active = 0
    }

    /// Opens (creating and migrating if needed) the store.
    /// - Parameters:
    ///   - cacheLinger: How long after a long write the writer's page cache stays large
    ///     (``WriterCache/linger``; default one second).
    ///   - maximumReaders: The most reader connections of a file's store (default 5, GRDB's).
    /// - Throws: `cache` when the database cannot be opened or migrated, or was written by a newer
    ///   version of the app (its format may hold what this one cannot read).
    init(_ storage: LocalStorage, cacheLinger: Duration = .seconds(1), maximumReaders: Int = 5) throws(RooftopError) {
        writerCache = WriterCache(linger: cacheLinger)
        var superseded = false
        let checkpointer: LogCheckpointer?
        if case .file(let path) = storage {
            checkpointer = LogCheckpointer(path: path, threshold: LocalStore.checkpointPages)
        } else {
            checkpointer = nil
        }
        self.checkpointer = checkpointer
        var pointReader: DatabaseQueue?
        do {
            var configuration = Configuration()
            configuration.maximumReaderCount = max(maximumReaders, 1)
            configuration.busyMode = .timeout(10)
            configuration.prepareDatabase { db in
                // A pulled page writes a few MiB: with SQLite's default (a checkpoint whenever the
                // log passes 4 MiB) every other page paid a checkpoint that rewrote the same
                // index pages again. 32 MiB lets many pages share one.
                try db.execute(sql: "PRAGMA wal_autocheckpoint = \(LocalStore.checkpointPages)")
                // The functions compiled local queries call (`near` by SQL).
                RooftopSQLite.registerFunctions(db)
            }
            switch storage {
            case .inMemory:
                database = try DatabaseQueue(configuration: configuration)
            case .file(let path):
                let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                let pool = try DatabasePool(path: path, configuration: configuration)
                // A queued change must survive a power loss, not only the app's crash, before
                // `saveEventually()` returns: every commit waits for the disk. GRDB sets its
                // writer to NORMAL in WAL mode (after `prepareDatabase`), which may lose the last
                // commits when the device stops.
                // The writer's page cache is sized per write (``WriterCache``); readers keep
                // SQLite's default.
                // Past the threshold, the writer's commits leave the checkpoint to a thread of
                // its own (in an initial sync, 16% of the writer's time at 100,000 objects).
                try pool.writeWithoutTransaction { db in
                    try db.execute(sql: "PRAGMA synchronous = FULL")
                    try checkpointer?.attach(to: db)
                }
                database = pool
            }
            // A store written by a newer build may hold what this one cannot read: refused.
            let migrator = LocalStoreMigrations.migrator
            superseded = try database.read { db in try migrator.hasBeenSuperseded(db) }
            if !superseded { try migrator.migrate(database) }
            if case .file(let path) = storage, !superseded {
                // Opened once the schema is migrated; a statement prepared before a later schema
                // change is prepared again by SQLite.
                var readOnly = Configuration()
                readOnly.readonly = true
                readOnly.busyMode = .timeout(10)
                pointReader = try DatabaseQueue(path: path, configuration: readOnly)
            }
        } catch {
            // The point reader is opened last: nothing throws once it is open.
            throw RooftopError(.cache, "the local datastore could not be opened", cause: error)
        }
        self.pointReader = pointReader
        guard !superseded else {
            throw RooftopError(
                .cache, "the local datastore was written by a newer version of the app, whose format this version cannot read")
        }
    }

    /// The log's size, in pages, past which it is checkpointed (32 MiB).
    static let checkpointPages: Int32 = 8_192

    deinit {
        countThreads.stop()
        checkpointer?.close()
        // A store let go without ``close()``: the point reader closes here, before the pool goes
        // (whatever order the properties go in).
        do {
            try pointReader?.close()
        } catch {
            Logger(label: "rooftop.store").warning(
                "the local datastore's point reader did not close cleanly", metadata: ["error": "\(error)"])
        }
    }

    /// Closes the database and ends the change streams. Reads and writes still running finish
    /// first (the connection closes after the last); later ones throw `cache`.
    func close() {
        changes.finish()
        countThreads.stop()
        let closeNow = gate.withLock { gate in
            guard !gate.closed else { return false }
            gate.closed = true
            return gate.active == 0
        }
        if closeNow { closeDatabase() }
    }

    /// Whether ``close()`` was called: reads and writes throw `cache` from then on.
    var isClosed: Bool { gate.withLock { $0.closed } }

    /// Lets one read or write in, unless the store is closed.
    private func enter() throws(RooftopError) {
        let open = gate.withLock { gate in
            guard !gate.closed else { return false }
            gate.active += 1
            return true
        }
        guard open else { throw RooftopError(.cache, "the local datastore is closed: the client was shut down") }
    }

    /// Ends a read or write; the last one after ``close()`` closes the connection.
    private func leave() {
        let closeNow = gate.withLock { gate in
            gate.active -= 1
            return gate.closed && gate.active == 0
        }
        if closeNow { closeDatabase() }
    }

    private func closeDatabase() {
        // On its own: its failure (statements still running) leaves the rest to close.
        do {
            try pointReader?.close()
        } catch {
            Logger(label: "rooftop.store").warning(
                "the local datastore's point reader did not close cleanly", metadata: ["error": "\(error)"])
        }
        do {
            // The checkpointer's connection closes first (whether or not the writer could be
            // given SQLite's own checkpoint back): the writer's, closed last, checkpoints the log
            // and removes it.
            if let checkpointer {
                defer { checkpointer.close() }
                try database.writeWithoutTransaction { db in checkpointer.detach(from: db) }
            }
            try database.close()
        } catch {
            // Closing only fails while statements are still running; the pool is released when
            // the store goes away. Nothing was lost: every write committed before returning.
            Logger(label: "rooftop.store").warning("the local datastore did not close cleanly", metadata: ["error": "\(error)"])
        }
    }

    /// Runs `body` in one write transaction over `scope`, then publishes what it changed.
    /// - Throws: What `body` throws (the transaction is rolled back), or `cache` for a database
    ///   failure or a closed store.
    /// - Parameters:
    ///   - durability: Whether the commit waits for the disk (default ``Durability/synced``).
    ///   - long: Whether the write is a long one, which the writer runs with a large page cache
    ///     (``WriterCache``; default `false`).
    ///   - committed: Runs after the commit, before the change is published (live objects take
    ///     what was written, so that whoever waits for the change reads them updated).
    @discardableResult
    func write<T>(
        scope: String, durability: Durability = .synced, long: Bool = false, _ body: (StoreTransaction) throws -> T,
        committed: (() -> Void)? = nil
    ) throws(RooftopError) -> T {
        try enter()
        defer { leave() }
        let (result, change): (T, StoreChange)
        waitingWrites.add(1, ordering: .relaxed)
        var started = false
        defer { if !started { waitingWrites.subtract(1, ordering: .relaxed) } }
        // Taken just before the commit (writes are one at a time there): publications follow
        // commit order, a failed commit's ticket passed on too.
        var ticket: Int?
        defer { if let ticket { publication.finish(ticket) } }
        do {
            (result, change) = try database.writeWithoutTransaction { db in
                if !started {
                    started = true
                    waitingWrites.subtract(1, ordering: .relaxed)
                }
                writerCache.prepare(db, long: long)
                defer { if long { writerCache.longWriteEnded() } }
                return try durability.commit(db, relaxed: relaxed) {
                    var written: (T, StoreChange)?
                    // Counted from just before SQLite makes the commit visible until it returned.
                    var committing = false
                    defer { if committing { commits.finished() } }
                    let transaction = StoreTransaction(db: db, scope: scope)
                    try db.inTransaction {
                        transaction.start(from: try writerMemo.entries(for: db))
                        let result = try body(transaction)
                        try transaction.finish()
                        ticket = publication.issue()
                        written = (result, transaction.change)
                        commits.willCommit()
                        committing = true
                        return .commit
                    }
                    guard let written else { throw RooftopError(.internal, "a committed write returned nothing") }
                    writerMemo.absorb(transaction)
                    return written
                }
            }
        } catch let error as RooftopError {
            throw error
        } catch {
            throw RooftopError(.cache, "the local datastore could not be written", cause: error)
        }
        if let ticket { publication.waitTurn(ticket) }
        committed?()
        if !change.isEmpty { changes.publish(change) }
        return result
    }

    /// Runs ``write(scope:durability:long:_:committed:)`` on a thread of the store's own, one long
    /// write at a time, and suspends the caller until it is done; `committed` receives what
    /// `body` returned.
    ///
    /// A write blocks its thread while it waits for the writer connection, runs and commits. Swift
    /// runs tasks on a few threads, one per core: a pull's page write (tens of milliseconds)
    /// holding one of them left the next page's request, its reading and the app's own tasks one
    /// thread fewer (one of two on a 2-core device), and the sync's steps ran one after the other
    /// instead of side by side (profiled: the writer idle 44% of an initial sync).
    ///
    /// `body` and `committed` run on that thread: they must not wait for a task, nor write to the
    /// store themselves (a write inside a write traps). The writer runs it with a large page cache
    /// (``WriterCache``).
    /// - Throws: As ``write(scope:durability:long:_:committed:)``.
    func writeLong<T: Sendable>(
        scope: String, durability: Durability = .synced, _ body: @escaping @Sendable (StoreTransaction) throws -> T,
        committed: (@Sendable (T) -> Void)? = nil
    ) async throws(RooftopError) -> T {
        let outcome: Result<T, RooftopError> = await withCheckedContinuation { continuation in
            longWrites.async {
                var value: T?
                continuation.resume(
                    returning: Result { () throws(RooftopError) -> T in
                        try self.write(
                            scope: scope, durability: durability, long: true,
                            { transaction in
                                let result = try body(transaction)
                                value = result
                                return result
                            },
                            committed: { if let value { committed?(value) } })
                    })
            }
        }
        return try outcome.get()
    }

    /// Runs a read, in a read transaction of its own (its statements read one snapshot).
    func read<T>(_ body: (Database) throws -> T) throws(RooftopError) -> T {
        try reading { try database.read(body) }
    }

    /// Runs a read of one statement (an object by its key) without a transaction around it: a
    /// statement reads one snapshot on its own, and `BEGIN` and `COMMIT` around one cost as
    /// much as a point read itself (profiled: the transaction was two fifths of the lookup of
    /// an object, 2026-12-02). `body` must run a single statement.
    func pointRead<T>(_ body: (Database) throws -> T) throws(RooftopError) -> T {
        guard let pointReader else { return try reading { try database.unsafeRead(body) } }
        return try reading { try pointReader.unsafeRead(body) }
    }

    private func reading<T>(_ run: () throws -> T) throws(RooftopError) -> T {
        try enter()
        defer { leave() }
        do {
            return try run()
        } catch let error as RooftopError {
            throw error
        } catch {
            throw RooftopError(.cache, "the local datastore could not be read", cause: error)
        }
    }
}
