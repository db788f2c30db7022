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
///   writer begins its next transaction before a thread could catch up (the log then grew to
///   128 MiB and stayed there, in a first version that left it all to the thread);
/// - past ``limit`` pages (the thread fell behind, or a reader held the log), every commit
///   checkpoints, as SQLite's own hook does past its threshold.
///
/// Durability is unchanged: commits sync the log as their connection's `synchronous` says; a
/// checkpoint syncs the log before it copies and the database file after, whichever connection
/// runs it.
///
/// ```swift
/// let checkpointer = LogCheckpointer(path: path)
/// try pool.writeWithoutTransaction { db in checkpointer.attach(to: db) }
/// // …
/// try pool.writeWithoutTransaction { db in checkpointer.detach(from: db) }
/// checkpointer.close()
/// ```
package final class LogCheckpointer: Sendable {
    /// The log's size, in pages, past which a commit asks for a checkpoint (default 8,192: 32 MiB
    /// of 4 KiB pages, the automatic threshold the stores used before).
    package let threshold: Int32
    /// The log's size, in pages, past which a commit checkpoints itself (default four times
    /// ``threshold``).
    package let limit: Int32
    private let path: String
    private let queue = DispatchQueue(label: "rooftop.sqlite.checkpointer", qos: .utility)
    private let state = Mutex(State())
    private static let logger = Logger(label: "rooftop.sqlite.checkpointer")

    private struct State {
        /// The checkpointer's own connection, opened at its first checkpoint.
        var connection: Connection?
        /// Whether the thread has a checkpoint to run or is running one.
        var busy = false
        /// Whether the thread's checkpoint ended since the log last started again: the next
        /// commit past the threshold copies the rest.
        var caughtUp = false
        /// The log's size at the last commit, in pages (smaller at the next: it started again).
        var pages: Int32 = 0
        /// Whether ``close()`` was called: nothing more runs.
        var closed = false
        /// Checkpoints run on the thread, and by commits (tests read them).
        var counts = Counts()
    }

    /// What a commit does about the log (``committed(pages:)``).
    package enum Step: Sendable, Equatable {
        /// Nothing: the log is below the threshold, or the thread is checkpointing it.
        case nothing
        /// Ask the thread for a checkpoint.
        case ask
        /// Checkpoint in the commit.
        case checkpoint
    }

    /// An SQLite connection handle, used under ``state``'s lock or on ``queue`` alone.
    private struct Connection: @unchecked Sendable {
        let handle: OpaquePointer
    }

    /// What a writer's hook holds (retained by it until ``detach(from:)``): the checkpointer,
    /// weakly, so that a connection whose store went away without detaching it checkpoints as
    /// SQLite's own hook does.
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
        /// In commits: the rest after the thread's, or past ``limit``.
        package var inline = 0
    }

    /// Checkpoints ran so far.
    package var counts: Counts { state.withLock { $0.counts } }

    /// The log's size, in pages, after the last commit on an attached connection.
    package var logPages: Int32 { state.withLock { $0.pages } }

    /// A checkpointer of the database file at `path` (its connection opens at the first
    /// checkpoint).
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
    /// writer connection, outside a transaction. ``detach(from:)`` gives the connection SQLite's
    /// own checkpoint back.
    package func attach(to db: Database) {
        guard let connection = db.sqliteConnection else { return }
        let hook = Unmanaged.passRetained(Hook(self)).toOpaque()
        LogCheckpointer.hooks.withLock { _ = $0.insert(UInt(bitPattern: hook)) }
        let previous = sqlite3_wal_hook(connection, LogCheckpointer.committed, hook)
        LogCheckpointer.release(previous)
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
    /// connection closes.
    package func close() {
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
    package func waitForCheckpoints() { queue.sync {} }

    /// The commit hook (`sqlite3_wal_hook`): `pages` is the log's size after the commit.
    private static let committed:
        @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32 = {
            context, connection, name, pages in
            guard let context else { return SQLITE_OK }
            let hook = Unmanaged<Hook>.fromOpaque(context).takeUnretainedValue()
            guard let checkpointer = hook.checkpointer else {
                // Its store went away without detaching it: as SQLite's own hook.
                if pages >= hook.threshold { sqlite3_wal_checkpoint_v2(connection, name, SQLITE_CHECKPOINT_PASSIVE, nil, nil) }
                return SQLITE_OK
            }
            switch checkpointer.committed(pages: pages) {
            case .nothing:
                break
            case .ask:
                checkpointer.queue.async { checkpointer.checkpoint() }
            case .checkpoint:
                // As SQLite's own hook: its outcome is not the commit's (busy while the thread
                // checkpoints: the next commit tries again).
                sqlite3_wal_checkpoint_v2(connection, name, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            }
            return SQLITE_OK
        }

    /// What a commit that left the log at `pages` does (see the type's documentation); the
    /// hook does it. Tests call it directly, with ``threadCheckpointEnded()``.
    package func committed(pages: Int32) -> Step {
        state.withLock { state in
            if pages < state.pages { state.caughtUp = false }
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
            return .ask
        }
    }

    /// Records that the thread's checkpoint ended: the next commit past the threshold copies the
    /// rest.
    package func threadCheckpointEnded() {
        state.withLock { state in
            state.busy = false
            state.caughtUp = true
        }
    }

    /// Runs a checkpoint on the checkpointer's connection (on ``queue``). A failure is logged:
    /// the next commit past the threshold copies what it can, as SQLite's own hook would.
    private func checkpoint() {
        let (closed, opened) = state.withLock { state in (state.closed, state.connection) }
        defer { threadCheckpointEnded() }
        guard !closed else { return }
        let handle: OpaquePointer
        if let opened {
            handle = opened.handle
        } else {
            var opening: OpaquePointer?
            let status = sqlite3_open_v2(path, &opening, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
            guard status == SQLITE_OK, let opening else {
                Self.logger.warning(
                    "the log's checkpointer could not open the database; commits checkpoint it",
                    metadata: ["status": "\(status)"])
                if let opening { sqlite3_close_v2(opening) }
                return
            }
            handle = opening
            state.withLock { $0.connection = Connection(handle: opening) }
        }
        let status = sqlite3_wal_checkpoint_v2(handle, "main", SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        state.withLock { $0.counts.background += 1 }
        if status != SQLITE_OK && status != SQLITE_BUSY {
            Self.logger.warning(
                "a checkpoint of the log failed; the next commit past the threshold copies it",
                metadata: ["status": "\(status)", "error": "\(String(cString: sqlite3_errmsg(handle)))"])
        }
    }
}
