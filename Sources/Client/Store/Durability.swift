import GRDB
import RooftopShared

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
/// recorded under their IDs, ``OutboxEngine``) — and never something sent from the device in a
/// form that only it records (a queued change, a rebase that rewrites one, the mark that a change
/// may have reached the server).
enum Durability: Sendable {
    /// The commit returns once it is on disk.
    case synced
    /// The commit returns once it is in the log, unsynced (see the type's documentation).
    case deferred

    /// Runs `transaction` (which commits) with this durability on `db`, outside any transaction:
    /// SQLite changes `synchronous` only there. The writer's `FULL` is back afterwards, whether
    /// the transaction committed or threw.
    /// - Throws: What `transaction` throws, or GRDB's error when the setting cannot be changed.
    func commit<T>(_ db: Database, _ transaction: () throws -> T) throws -> T {
        guard self == .deferred else { return try transaction() }
        try db.execute(sql: "PRAGMA synchronous = NORMAL")
        let outcome = Result { try transaction() }
        try db.execute(sql: "PRAGMA synchronous = FULL")
        return try outcome.get()
    }
}
