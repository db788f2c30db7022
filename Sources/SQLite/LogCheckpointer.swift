import Dispatch
import GRDB
import GRDBSQLite
import Logging
import Synchronization

/// Checkpoints a database's write-ahead log on a connection and a thread of its own, so that the
/// writer copies little of it.
///
/// SQLite's automatic checkpoint runs inside the commit that grows the log past its threshold, on
/// the writer's thread: in a client's initial sync it was 16% of the writer's time at 100,000
/// objects and 17% at a million (copying the log's pages into the database file, syncing it),
/// while the other core sat idle a third of the time (docs/benchmarks.md). Attached to the writer
/// (``attach(to:)``), this replaces the automatic checkpoint by a commit hook that looks at the
/// log's size:
///
/// - past ``threshold`` pages, the commit asks this checkpointer's thread for a checkpoint
///   (`PASSIVE`: it copies what no reader still needs, never waits for anyone and never makes
///   anyone wait) and returns;
/// - the first commit past the threshold after that checkpoint ended copies the rest itself:
///   the pages its commits logged while the thread copied. SQLite starts the log again from its
///   beginning at a writer's next transaction only once a checkpoint copied all of it, and a busy
///   writer begins its next transaction before a thread could catch up: left to the thread
///   alone, the log would grow to the limit and stay there;
/// - past ``limit`` pages (the thread fell behind, or a reader held the log), every commit
///   checkpoints, as SQLite's own hook does past its threshold.
///
/// Durability is unchanged: commits sync the log as their connection's `synchronous` says; a
/// checkpoint syncs the log before it copies and the database file after, whichever connection
/// runs it.
///
/// ```swift
/// let checkpointer = LogCheckpointer(path: path)
/// try pool.writeWithoutTransaction { db in try checkpointer.attach(to: db) }
/// // …
/// try pool.writeWithoutTransaction { db in checkpointer.detach(from: db) }
/// checkpointer.close()
/// ```
package final class LogCheckpointer: Sendable {
    /// The log's size, in pages, past which a commit asks for a checkpoint (default 8,192: 32 MiB
    /// of 4 KiB pages; each store passes the automatic threshold it used before).
    package let threshold: Int32
    /// The log's size, in pages, past which a commit checkpoints itself (default four times
    /// ``threshold``).
    package let limit: Int32
    private let path: String
    private let queue = DispatchQueue(label: "rooftop.sqlite.checkpointer", qos: .utility)
    private let state = Mutex(State())
    private static let logger = Logger(label: "rooftop.sqlite.checkpointer")

    private struct State {
        /// The checkpointer's own connection, opened by ``attach(to:)``.
        var connection: Connection?
        /// Whether the thread has a checkpoint to run or is running one.
        var busy = false
        /// Whether the thread's checkpoint ended since the log last started again: the next
        /// commit past the threshold copies the rest.
        var caughtUp = false
        /// The log's size at the last commit, in pages (smaller at the next: it started again).
        var pages: Int32 = 0
        /// How many times the log started again, as the commits saw it: a thread's checkpoint of
        /// an earlier log does not count for the current one.
        var generation = 0
        /// Whether ``close()`` was called: nothing more runs.
        var closed = false
        /// Checkpoints run on the thread, and by commits (tests read them).
        var counts = Counts()
    }

    /// What a commit does about the log (``committed(pages:)``).
    package enum Step: Sendable, Equatable {
        /// Nothing: the log is below the threshold, or the thread is checkpointing it.
        case nothing
        /// Ask the thread for a checkpoint of the log of this generation.
        case ask(generation: Int)
        /// Checkpoint in the commit.
        case checkpoint
    }

    /// An SQLite connection handle, used under ``state``'s lock or on ``queue`` alone.
    private struct Connection: @unchecked Sendable {
        let handle: OpaquePointer
    }

    /// What a writer's hook holds (retained by it until ``detach(from:)``; a connection closed
    /// while attached keeps it, a few bytes): the checkpointer, weakly, so that a connection whose
    /// owner went away without detaching it checkpoints as SQLite's own hook does.
    private final class Hook: @unchecked Sendable {
        /// Set once, before the hook is installed.
        weak var checkpointer: LogCheckpointer?
        let threshold: Int32

        init(_ checkpointer: LogCheckpointer) {
            self.checkpointer = checkpointer
            threshold = checkpointer.threshold
        }
    }

    /// How many checkpoints ran, and where.
    package struct Counts: Sendable, Equatable {
        /// On the checkpointer's thread.
        package var background = 0
        /// The log's frames found copied at the end of the thread's checkpoints, summed (0 when
        /// the thread never copied anything).
        package var backgroundFrames = 0
        /// In commits: the rest after the thread's, or past ``limit``.
        package var inline = 0
    }

    /// Checkpoints ran so far.
    package var counts: Counts { state.withLock { $0.counts } }

    /// The log's size, in pages, after the last commit on an attached connection.
    package var logPages: Int32 { state.withLock { $0.pages } }

    /// A checkpointer of the database file at `path` (its connection opens in ``attach(to:)``).
    /// - Parameters:
    ///   - threshold: Pages past which a commit asks for a checkpoint (default 8,192, at least 1).
    ///   - limit: Pages past which a commit checkpoints itself (default four times `threshold`,
    ///     at least `threshold`).
    package init(path: String, threshold: Int32 = 8_192, limit: Int32? = nil) {
        self.path = path
        self.threshold = max(threshold, 1)
        let fourTimes = self.threshold.multipliedReportingOverflow(by: 4)
        self.limit = max(limit ?? (fourTimes.overflow ? Int32.max : fourTimes.partialValue), self.threshold)
    }

    deinit {
        if let connection = state.withLock({ $0.connection }) { sqlite3_close_v2(connection.handle) }
    }

    /// Makes `db`'s commits ask this checkpointer for checkpoints instead of checkpointing
    /// themselves (it replaces SQLite's automatic checkpoint on that connection): call it on the
    /// writer connection of a database in WAL mode, outside a transaction. Opens the
    /// checkpointer's own connection to the same file first. ``detach(from:)`` gives the
    /// connection SQLite's own checkpoint back.
    /// - Throws: `DatabaseError` when the checkpointer's connection cannot be opened or read
    ///   the file; the writer's checkpoint is then left as it was.
    package func attach(to db: Database) throws {
        guard let connection = db.sqliteConnection else { return }
        try open()
        let hook = Unmanaged.passRetained(Hook(self)).toOpaque()
        LogCheckpointer.hooks.withLock { _ = $0.insert(UInt(bitPattern: hook)) }
        let previous = sqlite3_wal_hook(connection, LogCheckpointer.committed, hook)
        LogCheckpointer.release(previous)
    }

    /// Opens the checkpointer's connection, unless open: it waits for the disk at its
    /// checkpoints whatever SQLite's compiled default (`synchronous = FULL`), and reads the
    /// schema once, which opens the log on it — a connection that never read has no log, and
    /// `sqlite3_wal_checkpoint_v2` on it copies nothing.
    private func open() throws {
        if state.withLock({ $0.connection }) != nil { return }
        var opening: OpaquePointer?
        var status = sqlite3_open_v2(path, &opening, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
        if status == SQLITE_OK, let opening {
            status = sqlite3_exec(opening, "PRAGMA synchronous = FULL; SELECT count(*) FROM sqlite_schema", nil, nil, nil)
        }
        guard status == SQLITE_OK, let opening else {
            let message = opening.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let opening { sqlite3_close_v2(opening) }
            throw DatabaseError(
                resultCode: ResultCode(rawValue: status), message: "the log's checkpointer could not open the database: \(message)")
        }
        state.withLock { $0.connection = Connection(handle: opening) }
    }

    /// Gives `db` SQLite's automatic checkpoint back, at ``threshold`` pages.
    package func detach(from db: Database) {
        guard let connection = db.sqliteConnection else { return }
        let previous = sqlite3_wal_hook(connection, LogCheckpointer.committed, nil)
        sqlite3_wal_autocheckpoint(connection, threshold)
        LogCheckpointer.release(previous)
    }

    /// The contexts of the hooks installed and not replaced yet, by address.
    private static let hooks = Mutex<Set<UInt>>([])

    /// Releases a hook's context that `sqlite3_wal_hook` replaced, when it was one of ours (SQLite's
    /// own hook's context is a page count, not an object).
    private static func release(_ previous: UnsafeMutableRawPointer?) {
        guard let previous else { return }
        hooks.withLock { installed in
            if installed.remove(UInt(bitPattern: previous)) != nil {
                Unmanaged<Hook>.fromOpaque(previous).release()
            }
        }
    }

    /// Stops checkpointing: a checkpoint under way finishes, none begins after, and the
    /// connection closes. Commits past the threshold checkpoint themselves from then on. Blocks
    /// for the checkpoint under way; never call it on the checkpointer's queue.
    package func close() {
        dispatchPrecondition(condition: .notOnQueue(queue))
        state.withLock { $0.closed = true }
        // After the one under way, if any: the queue runs one block at a time.
        queue.sync {
            let connection = state.withLock { state -> Connection? in
                defer { state.connection = nil }
                return state.connection
            }
            if let connection { sqlite3_close_v2(connection.handle) }
        }
    }

    /// Waits until the checkpoints asked for so far have run (tests).
    package func waitForCheckpoints() {
        dispatchPrecondition(condition: .notOnQueue(queue))
        queue.sync {}
    }

    /// The commit hook (`sqlite3_wal_hook`): `pages` is the log's size after the commit.
    private static let committed:
        @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32 = {
            context, connection, name, pages in
            guard let context else { return SQLITE_OK }
            let hook = Unmanaged<Hook>.fromOpaque(context).takeUnretainedValue()
            guard let checkpointer = hook.checkpointer else {
                // Its owner went away without detaching it: as SQLite's own hook.
                if pages >= hook.threshold { sqlite3_wal_checkpoint_v2(connection, name, SQLITE_CHECKPOINT_PASSIVE, nil, nil) }
                return SQLITE_OK
            }
            switch checkpointer.committed(pages: pages) {
            case .nothing:
                break
            case .ask(let generation):
                checkpointer.queue.async { checkpointer.checkpoint(generation: generation) }
            case .checkpoint:
                // As SQLite's own hook: its outcome is not the commit's (busy while the thread
                // checkpoints: the next commit tries again).
                sqlite3_wal_checkpoint_v2(connection, name, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            }
            return SQLITE_OK
        }

    /// What a commit that left the log at `pages` does (see the type's documentation); the
    /// hook does it. Tests call it directly, with ``threadCheckpointEnded(generation:)``.
    ///
    /// A log that started again is told by a size smaller than at the last commit. One that
    /// started again and grew past its last size in one transaction goes unnoticed: its next
    /// crossing of the threshold then copies it all in the commit, as SQLite's own hook would.
    package func committed(pages: Int32) -> Step {
        state.withLock { state in
            if pages < state.pages {
                state.caughtUp = false
                state.generation += 1
            }
            state.pages = pages
            guard pages >= threshold else { return .nothing }
            // Closed, the checkpointer leaves every checkpoint to the commits, as SQLite's hook.
            if state.closed || pages >= limit || (state.caughtUp && !state.busy) {
                state.caughtUp = false
                state.counts.inline += 1
                return .checkpoint
            }
            guard !state.busy else { return .nothing }
            state.busy = true
            return .ask(generation: state.generation)
        }
    }

    /// Records that the thread's checkpoint of the log of `generation` ended: the next commit
    /// past the threshold copies the rest, unless the log started again meanwhile.
    package func threadCheckpointEnded(generation: Int) {
        state.withLock { state in
            state.busy = false
            if state.generation == generation { state.caughtUp = true }
        }
    }

    /// Runs a checkpoint of the log of `generation` on the checkpointer's connection (on
    /// ``queue``). A failure is logged: the next commit past the threshold copies what it can,
    /// as SQLite's own hook would.
    private func checkpoint(generation: Int) {
        defer { threadCheckpointEnded(generation: generation) }
        let (closed, opened) = state.withLock { state in (state.closed, state.connection) }
        guard !closed, let handle = opened?.handle else { return }
        var logged: Int32 = 0
        var copied: Int32 = 0
        let status = sqlite3_wal_checkpoint_v2(handle, "main", SQLITE_CHECKPOINT_PASSIVE, &logged, &copied)
        state.withLock { state in
            state.counts.background += 1
            if status == SQLITE_OK, copied > 0 { state.counts.backgroundFrames += Int(copied) }
        }
        // Busy: a commit past the limit is checkpointing (then the log is not counted, -1).
        if status != SQLITE_BUSY && (status != SQLITE_OK || logged < 0) {
            Self.logger.warning(
                "a checkpoint of the log failed; the next commit past the threshold copies it",
                metadata: ["status": "\(status)", "error": "\(String(cString: sqlite3_errmsg(handle)))"])
        }
    }
}
