import GRDB
import Logging
import RooftopShared
import Synchronization

/// Whether a commit of the local store waits for the disk.
///
/// The store's writer commits with `synchronous = FULL`: a commit returns once the write-ahead
/// log is on disk, so that a queued change survives a power loss before `saveEventually()`
/// returns. A commit that the server's word can always rebuild need not wait: it is
/// ``deferred``, and SQLite writes it to the log without syncing (`synchronous = NORMAL`).
///
/// The log is written in commit order and a sync covers all of it, so a deferred commit can be
/// lost by a power loss (never by a crash of the app) only with every commit after it, and never
/// once a synced commit followed it: the store stays as it was after some commit, never a mix.
/// A deferred commit must therefore hold only what the server tells again when asked again —
/// the acknowledgements of queued changes (sent again, the server answers them from what it
/// recorded under their IDs, ``OutboxEngine``), a pulled page stored with its checkpoint (lost,
/// the pull asks again from the checkpoint before it, ``SyncEngine``) — and never something sent
/// from the device in a form that only it records (a queued change, a rebase that rewrites one,
/// the mark that a change may have reached the server) or chosen on the device (a new sync
/// scope stored with a checkpoint).
enum Durability: Sendable {
    /// The commit returns once it is on disk.
    case synced
    /// The commit returns once it is in the log, unsynced (see the type's documentation).
    case deferred

    /// Runs `transaction` (which commits) with this durability on `db`, outside any transaction:
    /// SQLite changes `synchronous` only there.
    ///
    /// A deferred write sets `NORMAL` and `FULL` again after its transaction, whether it
    /// committed or threw. Should that last step fail, the write's own outcome stands (it did
    /// commit, or its error is the one thrown) and `relaxed` stays set: the next synced write sets
    /// `FULL` before it writes anything, and throws if it cannot — a synced write never commits
    /// unsynced.
    /// - Throws: What `transaction` throws, or GRDB's error when the setting cannot be changed
    ///   before the transaction.
    func commit<T>(_ db: Database, relaxed: borrowing Mutex<Bool>, _ transaction: () throws -> T) throws -> T {
        switch self {
        case .synced:
            if relaxed.withLock({ $0 }) {
                try db.cachedStatement(sql: "PRAGMA synchronous = FULL").execute()
                relaxed.withLock { $0 = false }
            }
            return try transaction()
        case .deferred:
            relaxed.withLock { $0 = true }
            try db.cachedStatement(sql: "PRAGMA synchronous = NORMAL").execute()
            let outcome = Result { try transaction() }
            do {
                try db.cachedStatement(sql: "PRAGMA synchronous = FULL").execute()
                relaxed.withLock { $0 = false }
            } catch {
                Logger(label: "rooftop.store").warning(
                    "the writer could not wait for the disk again after a deferred commit; the next synced write sets it first",
                    metadata: ["error": "\(error)"])
            }
            return try outcome.get()
        }
    }
}
