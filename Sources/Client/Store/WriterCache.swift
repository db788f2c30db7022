import GRDB
import Logging
import Synchronization

/// The writer connection's page cache: large while long writes run, SQLite's default otherwise.
///
/// Long writes (a pull's batch of pages, ``LocalStore/writeLong(scope:durability:_:committed:)``)
/// dirty many index pages: with SQLite's default cache (2 MiB) they spill to the log in the middle
/// of the transaction and are written again, so those writes want ``largeKiB``.
///
/// A large cache costs every commit, though. When a B-tree balance reorders sibling pages, SQLite
/// renumbers one through the lock-byte page (page 262,145, past the end of any file under 1 GiB),
/// and the commit then drops every cached page past the end of the file by walking the cache's
/// whole hash table and every page header in it (`pcache1TruncateUnsafe`, SQLite 3.40). A small
/// write nearly always balances some page, so with 32 MiB cached (about 8,000 pages) each queued
/// save's commit read 8,000 page headers: 11% of the client's CPU while one caller queued saves,
/// as much as the save's own statements (`perf`, 2026-12-02). With the default size the walk
/// reads at most about 500 headers (the hash table, grown once, stays as large, but its empty
/// slots are one array).
///
/// So the cache is large for a long write, and stays large for the writes that start less than
/// ``linger`` after the last long write ended (a save between two batches of one sync leaves it
/// large: shrinking drops the pages the next batch reads again); the first write after that sets
/// SQLite's default again. The size is set on the writer, outside any transaction, only when it
/// changes.
final class WriterCache: Sendable {
    /// The size for long writes, in KiB (32 MiB).
    static let largeKiB = 32_768
    /// SQLite's default size, in KiB (2 MiB).
    static let defaultKiB = 2_000

    /// How long after a long write ends the cache stays large (default one second).
    let linger: Duration

    private struct State {
        /// The size the writer has now, in KiB; `nil` until this type sets one.
        var currentKiB: Int?
        /// When the last long write ended.
        var lastLongWrite: ContinuousClock.Instant?
    }

    private let state = Mutex(State())

    /// - Parameter linger: How long after a long write the cache stays large (default 1 s).
    init(linger: Duration = .seconds(1)) {
        self.linger = linger
    }

    /// The size the writer's cache was last set to, in KiB (tests).
    var currentKiB: Int? { state.withLock { $0.currentKiB } }

    /// Sizes the writer's cache for a write about to start on `db` (the writer, outside a
    /// transaction): large for a long one, or while one ended less than ``linger`` ago. Only
    /// speed depends on it: when the size cannot be set, the write goes on with the cache as it
    /// is, and the failure is logged (the next write tries again).
    func prepare(_ db: Database, long: Bool) {
        let now = ContinuousClock.now
        let wanted = state.withLock { state -> Int? in
            let recent = state.lastLongWrite.map { now - $0 < linger } ?? false
            let kib = long || recent ? WriterCache.largeKiB : WriterCache.defaultKiB
            return kib == state.currentKiB ? nil : kib
        }
        guard let wanted else { return }
        do {
            try db.execute(sql: "PRAGMA cache_size = -\(wanted)")
            state.withLock { $0.currentKiB = wanted }
        } catch {
            Logger(label: "rooftop.store").warning(
                "the writer's page cache could not be resized; the write goes on with it as it is",
                metadata: ["kib": "\(wanted)", "error": "\(error)"])
        }
    }

    /// Notes that a long write ended (committed or not).
    func longWriteEnded() {
        let now = ContinuousClock.now
        state.withLock { $0.lastLongWrite = now }
    }
}
