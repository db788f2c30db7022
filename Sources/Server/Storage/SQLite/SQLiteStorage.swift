import Foundation
import GRDB
import Logging
import RooftopSQL
import RooftopShared
import RooftopSQLite
import Synchronization

/// The embedded default storage: one SQLite file in WAL mode, through GRDB.
///
/// Writes are serialized by SQLite's single writer, which is also what makes the change feed
/// gap-free: sequence numbers are assigned inside write transactions that commit in order.
///
/// ```swift
/// let storage = try SQLiteStorage(path: "/var/lib/rooftop/rooftop.sqlite")
/// try await storage.prepare()
/// ```
public final class SQLiteStorage: Storage, RowRebuilding {
    let pool: DatabasePool
    /// A read-only connection of the point reads' own (``pointRead(_:)``): they never wait for a
    /// reader of `pool`, which scans may all hold.
    let pointReader: DatabaseQueue
    /// The thread that checkpoints the log past ``checkpointPages``, so that the writer's
    /// commits copy only what they logged meanwhile (``LogCheckpointer``).
    let checkpointer: LogCheckpointer
    /// The log's size, in pages, past which it is checkpointed (SQLite's default, about
    /// ``logSizeLimit``).
    static let checkpointPages: Int32 = 1_000
    /// The reader sets writes name while a sweep of unnamed ones runs.
    let readerSetWatch = ReaderSetWatch()
    /// Object writes since the query planner's statistics were last refreshed.
    let writesSinceAnalysis = Mutex(0)
    /// How many object writes make the statistics stale enough to refresh.
    static let analysisInterval = 10_000
    /// The size the write-ahead log's file is cut back to when the log starts again, in bytes:
    /// what SQLite's automatic checkpoint lets it reach (1,000 pages of 4 KiB, and its header).
    static let logSizeLimit = 4_200_000
    /// The server's clock: mutation results are dated by it.
    let clock: ServerClock
    /// The background rebuild of index rows after a class's declared indexes change (``RowFields``).
    let rowRebuild: RowRebuild
    /// How query pages are read: the cheaper of two plans by the matches' count
    /// (``SQLPagePlan/cheapest``); tests pin either plan to compare both with the evaluator.
    let pagePlan = Mutex(SQLPagePlan.cheapest)
    /// The order-first pages read since the server started: walked to their end, or abandoned
    /// at their bound and read matches first (``SQLQueryRunner/boundedObjects``).
    let pageWalks = Mutex((completed: 0, abandoned: 0))

    /// Opens (creating if needed) the database at `path`, private to the server's user (mode
    /// 0600, see ``PrivateDatabaseFile``).
    /// - Throws: GRDB errors when the file cannot be opened; `illegalArgument` when its mode
    ///   cannot be set.
    /// - Parameters:
    ///   - clock: The clock results are dated by (default the system's; the server passes its
    ///     own, which tests move by hand).
    ///   - rowRebuildBatch: The objects whose index rows one transaction rebuilds after a class's
    ///     declared indexes change (default 1,000).
    public init(
        path: String, clock: ServerClock = .system, rowRebuildBatch: Int = 1000
    ) throws {
        self.clock = clock
        rowRebuild = RowRebuild(batch: max(1, rowRebuildBatch))
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            // The same distance as the shared evaluator, so `near` agrees to the last bit.
            RooftopSQLite.registerFunctions(db)
            try RooftopSQLite.mapPages(db)
            // The write-ahead log is checkpointed past 1,000 pages (about 4 MB) and then written
            // again from its start, but its file stays at the largest it ever grew to (a push
            // committed over a checkpoint held back by readers, 6 MB on issue 19's workload: a
            // fifth of that run's directory). Cut back to the checkpoint's size whenever the log
            // starts again; a burst past it grows the file for that while only.
            try db.execute(sql: "PRAGMA journal_size_limit = \(Self.logSizeLimit)")
        }
        configuration.busyMode = .timeout(10)
        if path != ":memory:" { try PrivateDatabaseFile.prepare(path) }
        self.pool = try DatabasePool(path: path, configuration: configuration)
        // An acknowledged write must survive a power loss, not only the process's crash: every
        // commit (one per push) waits for the disk. GRDB's default in WAL mode is NORMAL, which
        // may lose the last commits when the machine stops.
        // Past the threshold, the writer's commits leave most of the checkpoint to a thread of its
        // own (``LogCheckpointer``).
        let checkpointer = LogCheckpointer(path: path, threshold: Self.checkpointPages)
        self.checkpointer = checkpointer
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try checkpointer.attach(to: db)
        }
        var pointConfiguration = configuration
        pointConfiguration.readonly = true
        pointConfiguration.label = "point reads"
        // A reader of a WAL database is kept waiting only in rare moments (the log's index being
        // rebuilt): a second at most, each point read holding its thread (an event loop, by
        // default) while it waits.
        pointConfiguration.busyMode = .timeout(1)
        // Point reads read a few pages each, through `pread`, not the memory map: a reader that
        // finds the log changed since its last read drops its pages and, when it maps the file,
        // unmaps all of it (flushing every core's TLB) and faults the pages back in; after every
        // write, that was a tenth of a single create's CPU in the server (`munmap` in
        // `sqlite3PagerSharedLock`, under the next request's session read).
        pointConfiguration.prepareDatabase { db in try db.execute(sql: "PRAGMA mmap_size = 0") }
        self.pointReader = try DatabaseQueue(path: path, configuration: pointConfiguration)
    }

    /// Runs the migrations, and refreshes the planner's statistics of a database with data.
    /// - Throws: `badState` when the file records migrations this version does not have (a newer
    ///   server's, ``RooftopError/newerSchema(_:)``), before anything is written; GRDB's errors.
    public func prepare() async throws {
        let unknown = try await pool.read { db in
            SQLiteMigrations.unknown(try SQLiteMigrations.migrator.appliedIdentifiers(db))
        }
        guard unknown.isEmpty else { throw RooftopError.newerSchema(unknown) }
        try SQLiteMigrations.migrator.migrate(pool)
        // Whether there are 1,000 objects, without counting them all (a scan at start-up).
        let hasData = try await pool.read { db in
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM objects LIMIT 1 OFFSET 999)") ?? false
        }
        if hasData { try await analyze() }
        // A rebuild of index rows the last run did not finish goes on.
        startRowRebuild()
    }

    /// Refreshes the query planner's statistics (`ANALYZE`, sampling at most 400 rows of each
    /// index, so it takes milliseconds whatever the size). Without them SQLite guesses, and
    /// guessed wrong for queries: it scanned a whole class instead of looking up the few objects
    /// the field index found.
    func analyze() async throws {
        try await pool.write { db in try db.execute(sql: "PRAGMA analysis_limit = 400; ANALYZE") }
    }

    /// Counts object writes; every ``analysisInterval`` of them, refreshes the statistics in the
    /// background (the writes are committed already: a failure there is only logged).
    func noteWrites(_ count: Int) {
        let due = writesSinceAnalysis.withLock { written in
            written += count
            guard written >= Self.analysisInterval else { return false }
            written = 0
            return true
        }
        guard due else { return }
        Task {
            do {
                try await analyze()
            } catch {
                Logger(label: "rooftop.storage").warning(
                    "the query planner's statistics could not be refreshed", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Closes the database.
    public func close() async throws {
        await rowRebuild.close()?.value
        try pointReader.close()
        // Its connection closes first, whatever the writer's detaching did: the writer's,
        // closed last, checkpoints and removes the log.
        var detaching: (any Error)?
        do {
            try await pool.writeWithoutTransaction { db in checkpointer.detach(from: db) }
        } catch {
            detaching = error
        }
        checkpointer.close()
        try pool.close()
        if let detaching { throw detaching }
    }

    // MARK: Settings

    /// See ``SettingsStorage/secret(named:make:)``.
    public func secret(named name: String, make: @Sendable () -> [UInt8]) async throws -> [UInt8] {
        try await pool.write { db in
            if let existing = try Data.fetchOne(db, sql: "SELECT value FROM settings WHERE name = ?", arguments: [name]) {
                return Array(existing)
            }
            let value = make()
            try db.execute(sql: "INSERT INTO settings (name, value) VALUES (?, ?)", arguments: [name, Data(value)])
            return value
        }
    }

    /// See ``SettingsStorage/setting(named:)``.
    public func setting(named name: String) async throws -> String? {
        try await pool.read { db in
            try Data.fetchOne(db, sql: "SELECT value FROM settings WHERE name = ?", arguments: [name])
                .map { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// See ``SettingsStorage/setSetting(named:to:)``.
    public func setSetting(named name: String, to value: String) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value",
                arguments: [name, Data(value.utf8)])
        }
    }

    // MARK: Classes

    /// See ``ClassStorage/classSettings(named:)``.
    public func classSettings(named className: String) async throws -> ClassSettings? {
        let text = try await pool.read { db in
            try String.fetchOne(db, sql: "SELECT settings FROM class_settings WHERE class_name = ?", arguments: [className])
        }
        return try text.map { try DocumentCoding.decode(ClassSettings.self, from: $0) }
    }

    /// See ``ClassStorage/saveClassSettings(_:)``.
    public func saveClassSettings(_ settings: ClassSettings) async throws {
        let text = try DocumentCoding.encode(settings)
        let rebuild = try await pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO class_settings (class_name, settings) VALUES (?, ?)
                    ON CONFLICT(class_name) DO UPDATE SET settings = excluded.settings
                    """,
                arguments: [settings.className, text])
            return try Self.declareRowFields(settings, db)
        }
        if rebuild { startRowRebuild() }
    }
}

extension SQLiteStorage {
    /// A point read — a lookup by key that reads a few pages, in microseconds — run on the calling
    /// thread. `pool.read`'s asynchronous form hands the read to a reader's queue and the answer
    /// back, two waits for another thread per read: a REST get (its session, its datastore, its
    /// object) spent more of its time in those hand-offs than in SQLite.
    ///
    /// Point reads have a read-only connection of their own (``pointReader``), one at a time: a
    /// point read waits only for others, microseconds each, never for a reader of the pool, which
    /// long reads (pages, queries, counts; each up to the request timeout) may all hold — a wait
    /// that would block one of the few threads tasks run on. A read that may scan stays on the
    /// pool, asynchronous. A point read is not interrupted when its task is cancelled: it ends
    /// sooner than an interruption would.
    ///
    /// `body` runs one statement, which reads one state of the database on its own: no
    /// transaction around it. What must agree is read together in that statement (a datastore
    /// and its sharing roles, ``datastoreColumns``; an object and its readers,
    /// ``storedObjectColumns``; a session).
    /// - Throws: What `body` throws, or GRDB's error when the connection cannot read.
    func pointRead<T>(_ body: (Database) throws -> T) throws -> T {
        try pointReader.unsafeRead(body)
    }
}
