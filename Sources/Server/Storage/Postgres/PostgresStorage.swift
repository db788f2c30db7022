import Foundation
import Logging
import NIOCore
import PostgresNIO
import RooftopSQL
import RooftopShared
import Synchronization

/// The storage for several server processes: one PostgreSQL database (or a compatible one)
/// shared by all of them.
///
/// It keeps the SQLite storage's design (docs/server.md, "What is stored, and why") in
/// PostgreSQL's types, with its own migrations (``PostgresMigrations``), and makes the same
/// decisions through the same code (``ObjectWriteFlow``, ``SQLQueryRunner``,
/// ``SQLQueryCompiler``). What differs is concurrency: writers run at once, so
///
/// - an object write locks its object until commit (a retried mutation waits for its first
///   attempt, then replays it), and the transaction numbers its changes in a range that follows
///   its transaction ID (``PostgresStatements/FeedBase``); a pull reads the feed only below the
///   oldest transaction still running (``PostgresStatements/feedBound``), so it never skips a
///   change that commits later with a lower number, and a datastore's writers wait for each
///   other only to add its counters, from the transaction's end to commit;
/// - everything created on first use (datastores, secrets, users, roles) is inserted with
///   `ON CONFLICT`, so two processes racing to create it agree on one;
/// - each transaction that writes objects announces them to the other processes
///   (``PostgresNotifier``), delivered when and only when it commits.
///
/// The write path is synchronous, as on SQLite: each transaction runs on a thread of the pool's
/// own (``PostgresBlockingSession``).
///
/// ```swift
/// let storage = try PostgresStorage(url: "postgres://rooftop@db:5432/rooftop", logger: logger)
/// try await storage.prepare()
/// ```
public final class PostgresStorage: Storage, RowRebuilding {
    let pool: PostgresPool
    /// The server's clock: mutation results are dated by it.
    let clock: ServerClock
    /// Messages to the other server processes: each committed object write is announced in its
    /// own transaction (``ClusterMessage/changed(datastoreKey:sequence:className:readers:)``).
    let notifier: PostgresNotifier
    /// The seed of the objects' lock keys, read once from the database (``lockSeed()``).
    private let cachedLockSeed = Mutex<Int64?>(nil)
    /// How many advisory locks this process's write transactions may hold at once.
    let lockBudget: PostgresLockBudget
    /// The reader sets this process has found committed.
    let readerSetCache = PostgresReaderSetCache()
    /// The planner's statistics, kept current as the object tables grow.
    let statistics: PostgresStatistics
    /// How many reads of the change feed found committed changes held back behind a
    /// transaction still running, and waited (``changes(datastoreKey:after:limit:classes:)``).
    let feedWaits = Atomic<Int>(0)
    /// The background rebuild of index rows after a class's declared indexes change (``RowFields``).
    let rowRebuild: RowRebuild
    /// How long the statements of one query's read may run (``readSnapshot(_:)``), in milliseconds.
    let queryTimeoutMilliseconds: Int64

    /// Opens a connection pool for a `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE` URL
    /// (`?sslmode=disable|prefer|require`, default `prefer`). Nothing is connected until used.
    /// - Parameters:
    ///   - maximumConnections: The pool's size (default 20).
    ///   - clock: The clock results are dated by (default the system's).
    ///   - rowRebuildBatch: The objects whose index rows one transaction rebuilds after a class's
    ///     declared indexes change (default 1,000; ``RowFields``).
    ///   - queryTimeout: How long the statements of one query's read may run (default 30
    ///     seconds, the server's default request timeout; at least a millisecond): a query the
    ///     evaluator answers over many candidates stops with its request.
    /// - Throws: `illegalArgument` for a URL that is not a PostgreSQL URL.
    public init(
        url: String, maximumConnections: Int = 20, logger: Logger = Logger(label: "rooftop.storage"),
        clock: ServerClock = .system, rowRebuildBatch: Int = 1000, queryTimeout: Duration = .seconds(30)
    ) throws {
        rowRebuild = RowRebuild(batch: max(1, rowRebuildBatch))
        // Between a millisecond and PostgreSQL's largest `statement_timeout` (2³¹ − 1 ms).
        let (seconds, attoseconds) = queryTimeout.components
        let milliseconds = Double(seconds) * 1_000 + Double(attoseconds) / 1e15
        queryTimeoutMilliseconds = Int64(max(1, min(milliseconds, Double(Int32.max))))
        lockBudget = PostgresLockBudget(capacity: PostgresLockBudget.defaultCapacity)
        pool = try PostgresPool(url: url, maximumConnections: maximumConnections, logger: logger)
        self.clock = clock
        notifier = PostgresNotifier(pool: pool)
        statistics = PostgresStatistics(logger: logger)
    }

    /// The postgres-nio client configuration a storage URL names (see ``init(url:maximumConnections:logger:now:)``),
    /// for tools that talk to the same database directly (the benchmark measures PostgreSQL's own
    /// rates with it).
    /// - Throws: `illegalArgument` naming what is wrong with the URL.
    public static func clientConfiguration(url: String) throws(RooftopError) -> PostgresClient.Configuration {
        try PostgresPool.configuration(url: url)
    }

    /// Applies the migrations not applied yet, then moves the feed's origin if transaction IDs
    /// went back (``reoriginFeedIfBehind()``), and resumes a rebuild of index rows that is due
    /// (``RowFields``).
    public func prepare() async throws {
        try await pool.migrate()
        try await reoriginFeedIfBehind()
        startRowRebuild()
    }

    /// Moves the feed's origin above the numbers stored when the transaction IDs of the cluster
    /// went back below those changes were numbered with (``PostgresStatements/FeedBase``): a
    /// database restored into another cluster (`pg_dump`, logical replication). Without it new
    /// changes would be numbered below what clients have pulled. Nothing happens otherwise (the
    /// counter of transaction IDs only grows). Reads each datastore's last change from its index.
    /// - Throws: What the database answers.
    func reoriginFeedIfBehind() async throws {
        try await transaction { session in
            try session.execute(
                """
                UPDATE feed_origin SET origin = m.top + 1 - pg_current_xact_id()::text::bigint * \(PostgresStatements.changesPerTransaction)
                FROM (SELECT GREATEST(coalesce(max(d.sequence), 0),
                coalesce(max((SELECT max(o.sequence) FROM objects o WHERE o.datastore_key = d.key)), 0)) AS top
                FROM datastores d) AS m
                WHERE origin + pg_current_xact_id()::text::bigint * \(PostgresStatements.changesPerTransaction) <= m.top
                """)
        }
    }

    /// Closes every connection, once the statistics' analysis running (if any) has ended.
    public func close() async throws {
        await rowRebuild.close()?.value
        await statistics.close()
        await pool.close()
    }

    /// Analyzes the tables queries read (``PostgresStatistics``); answers the objects counted.
    /// - Throws: What the database answers.
    func analyzeObjectTables() async throws -> Int64 {
        try await transaction { session in
            // Bounded: an analysis waiting behind another (autovacuum's, another process's) gives up.
            try session.execute("SET LOCAL statement_timeout = '60s'")
            try session.execute("ANALYZE \(unescaped: PostgresStatistics.tables)")
            return try session.query("SELECT reltuples::bigint FROM pg_class WHERE oid = 'objects'::regclass").first?
                .decode(Int64.self) ?? 0
        }
    }

    /// Runs `body` in one transaction (committed when it returns), read committed whatever the
    /// database's default: each statement sees what committed before it, so a row read after a
    /// lock is the row as the lock's last holder left it.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (PostgresBlockingSession) throws -> T) async throws -> T {
        try await pool.blockingTransaction(begin: "BEGIN ISOLATION LEVEL READ COMMITTED", body)
    }

    /// Runs `body` outside a transaction: reads, or writes of one statement each (whose changed
    /// row count may be ignored).
    @discardableResult
    func read<T: Sendable>(_ body: @escaping @Sendable (PostgresBlockingSession) throws -> T) async throws -> T {
        try await pool.blockingRead(body)
    }

    // MARK: Settings

    /// The seed the objects' advisory lock keys are hashed with (``PostgresObjectWriter/Locks``):
    /// random, made once per database and shared by its server processes, so that a caller
    /// cannot choose an object ID whose lock key is another object's.
    /// - Throws: What reading or storing it throws.
    func lockSeed() async throws -> Int64 {
        if let seed = cachedLockSeed.withLock({ $0 }) { return seed }
        let bytes = try await secret(named: "advisory-lock-seed") { (0..<8).map { _ in UInt8.random(in: 0...255) } }
        guard bytes.count == 8 else { throw RooftopError(.internal, "the advisory lock seed is not 8 bytes") }
        let seed = bytes.reduce(Int64(0)) { ($0 << 8) | Int64($1) }
        cachedLockSeed.withLock { $0 = seed }
        return seed
    }

    /// See ``SettingsStorage/secret(named:make:)``.
    public func secret(named name: String, make: @Sendable () -> [UInt8]) async throws -> [UInt8] {
        let query: PostgresQuery = "SELECT value FROM settings WHERE name = \(name)"
        if let existing = try await read({ session in try session.query(query).first?.decode(ByteBuffer.self) }) {
            return Array(buffer: existing)
        }
        let candidate = ByteBuffer(bytes: make())
        return try await transaction { session in
            // The first process to insert wins; every other one reads what it inserted.
            try session.execute(
                "INSERT INTO settings (name, value) VALUES (\(name), \(candidate)) ON CONFLICT (name) DO NOTHING")
            guard let row = try session.query(query).first else {
                throw RooftopError(.internal, "the secret '\(name)' vanished after it was stored")
            }
            return Array(buffer: try row.decode(ByteBuffer.self))
        }
    }

    /// See ``SettingsStorage/setting(named:)``.
    public func setting(named name: String) async throws -> String? {
        try await read { session in
            try session.query("SELECT value FROM settings WHERE name = \(name)").first
                .map { String(buffer: try $0.decode(ByteBuffer.self)) }
        }
    }

    /// See ``SettingsStorage/setSetting(named:to:)``.
    public func setSetting(named name: String, to value: String) async throws {
        let bytes = ByteBuffer(string: value)
        try await read { session in
            try session.execute(
                """
                INSERT INTO settings (name, value) VALUES (\(name), \(bytes))
                ON CONFLICT (name) DO UPDATE SET value = excluded.value
                """)
        }
    }

    // MARK: Classes

    /// See ``ClassStorage/classSettings(named:)``.
    public func classSettings(named className: String) async throws -> ClassSettings? {
        let text = try await read { session in
            try session.query("SELECT settings FROM class_settings WHERE class_name = \(className)").first
                .map { try $0.decode(String.self) }
        }
        return try text.map { try DocumentCoding.decode(ClassSettings.self, from: $0) }
    }

    /// See ``ClassStorage/saveClassSettings(_:)``.
    public func saveClassSettings(_ settings: ClassSettings) async throws {
        let text = try DocumentCoding.encode(settings)
        let seed = try await lockSeed()
        let rebuild = try await transaction { session in
            try session.execute(
                """
                INSERT INTO class_settings (class_name, settings) VALUES (\(settings.className), \(text))
                ON CONFLICT (class_name) DO UPDATE SET settings = excluded.settings
                """)
            return try Self.declareRowFields(settings, seed: seed, session)
        }
        if rebuild { startRowRebuild() }
    }
}

extension PostgresBlockingSession {
    /// Runs a compiled fragment (``SQLQueryCompiler`` with the PostgreSQL dialect).
    /// - Throws: What the database answers.
    func query(_ fragment: SQLFragment) throws -> [PostgresRow] {
        try query(Self.query(fragment))
    }

    /// Runs a compiled fragment, calling `body` with its rows a few at a time
    /// (``forEachRow(_:batch:_:)``).
    /// - Throws: What the database answers, or what `body` throws.
    func forEachRow(_ fragment: SQLFragment, _ body: (PostgresRow) throws -> Void) throws {
        try forEachRow(Self.query(fragment), body)
    }

    /// A compiled fragment as a query, its arguments bound.
    private static func query(_ fragment: SQLFragment) -> PostgresQuery {
        var bindings = PostgresBindings(capacity: fragment.arguments.count)
        for argument in fragment.arguments {
            switch argument {
            case .integer(let value): bindings.append(value)
            case .real(let value): bindings.append(value)
            case .text(let value): bindings.append(value)
            case .blob(let value): bindings.append(ByteBuffer(bytes: value))
            }
        }
        return PostgresQuery(unsafeSQL: fragment.sql, binds: bindings)
    }
}

extension PSQLError: StorageFaultReporting {
    /// A fault when the database cannot be reached or used now (connection lost or refused, the
    /// server shutting down, out of resources, a serialization failure or deadlock): the server
    /// answers 503 `retryLater`. Other errors (bugs, bad SQL) are not faults.
    public var storageFault: String? {
        switch code {
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed:
            return "the PostgreSQL connection failed (\(code))"
        case .server:
            guard let state = serverInfo?[.sqlState] else { return nil }
            // 08: connection exception; 53: insufficient resources; 57P: operator intervention;
            // 40001/40P01: serialization failure, deadlock (a retry succeeds).
            if state.hasPrefix("08") || state.hasPrefix("53") || state.hasPrefix("57P") || state == "40001"
                || state == "40P01"
            {
                return "PostgreSQL cannot serve the request now (SQLSTATE \(state))"
            }
            return nil
        default:
            return nil
        }
    }
}
