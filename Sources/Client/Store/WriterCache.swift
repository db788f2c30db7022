import GRDB
import Synchronization

/// The writer connection's page cache: large while long writes run, SQLite's default otherwise.
///
/// Long writes (a pull's batch of pages, ``LocalStore/writeLong(scope:durability:_:committed:)``)
/// dirty many index pages: with SQLite's default cache (2 MiB) they spill to the log in the middle
/// of the transaction and are written again, so those writes want ``largeKiB``.
///
/// A large cache costs every commit, though. When a B-tree balance reorders sibling pages, SQLite
/// renumbers one through the lock-byte page (page 262,145, past the end of any file under 1 GiB),
/// and the commit then drops every cached page past the end of the file by walking the whole
/// cache (`pcache1TruncateUnsafe`, SQLite 3.40). A small write nearly always balances some page,
/// so with 32 MiB cached (about 8,000 pages) each queued save's commit walked 8,000 page headers:
/// 11% of the client's CPU while one caller queued saves, as much as the save's own statements
/// (`perf`, 2026-12-02). Small writes want a small cache.
///
/// So the cache is large from the first long write until no long write has run for ``linger``
/// (a save between two batches of one sync leaves it large: shrinking drops the pages the next
/// batch reads again), and SQLite's default otherwise. The size is set on the writer, outside any
/// transaction, only when it changes.
final class WriterCache: Sendable {
    /// The size for long writes, in KiB (32 MiB).
    static let largeKiB = 32_768
    /// SQLite's default size, in KiB (2 MiB).
    static let defaultKiB = 2_000

    /// How long the cache stays large after a long write ends (default one second).
    let linger: Duration

    private struct State {
        /// The size the writer has now, in KiB.
        var currentKiB = WriterCache.defaultKiB
        /// When the last long write ended.
        var lastLongWrite: ContinuousClock.Instant?
    }

    private let state = Mutex(State())

    /// - Parameter linger: How long the cache stays large after a long write (default 1 s).
    init(linger: Duration = .seconds(1)) {
        self.linger = linger
    }

    /// The size the writer's cache has now, in KiB (tests).
    var currentKiB: Int { state.withLock { $0.currentKiB } }

    /// Sizes the writer's cache for a write about to start on `db` (the writer, outside a
    /// transaction): large for a long one, or while one ran less than ``linger`` ago.
    /// - Throws: GRDB's error when the size cannot be set.
    func prepare(_ db: Database, long: Bool) throws {
        let now = ContinuousClock.now
        let wanted = state.withLock { state -> Int? in
            let recent = state.lastLongWrite.map { now - $0 < linger } ?? false
            let kib = long || recent ? WriterCache.largeKiB : WriterCache.defaultKiB
            return kib == state.currentKiB ? nil : kib
        }
        guard let wanted else { return }
        try db.execute(sql: "PRAGMA cache_size = -\(wanted)")
        state.withLock { $0.currentKiB = wanted }
    }

    /// Notes that a long write ended (committed or not).
    func longWriteEnded() {
        let now = ContinuousClock.now
        state.withLock { $0.lastLongWrite = now }
    }
}
