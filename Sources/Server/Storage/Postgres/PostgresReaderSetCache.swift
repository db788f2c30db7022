import Synchronization

/// The IDs of reader sets a process's committed write transactions used, by text
/// (``SQLIndexRows/readerSetText(_:)``), so that a write on PostgreSQL names its object's set
/// without a round trip for it. Only a committed transaction's sets are kept (one that rolls back
/// may have made sets that then never existed), and only sets no sweep has marked unnamed.
///
/// Each entry is forgotten ``timeToLive`` after it was kept: the history sweep deletes a set no
/// object names only once it has been marked unnamed for longer (``PostgresStorage/readerSetGrace``),
/// so no process still names a deleted set from here (docs/server.md, "Reader sets swept").
///
/// Bounded: past ``capacity`` entries it starts again empty, so that its memory and each
/// look-up stay constant however many distinct ACLs are written (a set not kept costs one
/// round trip, and is kept again).
final class PostgresReaderSetCache: Sendable {
    /// The most sets kept.
    let capacity: Int
    /// How long an entry is used.
    let timeToLive: Duration
    private let entries = Mutex<[String: (id: Int64, kept: ContinuousClock.Instant)]>([:])

    /// The entries kept by default.
    static let defaultCapacity = 4_096
    /// How long an entry is used by default.
    static let defaultTimeToLive: Duration = .seconds(300)

    init(capacity: Int = PostgresReaderSetCache.defaultCapacity, timeToLive: Duration = defaultTimeToLive) {
        self.capacity = max(capacity, 1)
        self.timeToLive = timeToLive
    }

    /// The ID of the set with this text, when kept less than ``timeToLive`` ago.
    func id(of text: String) -> Int64? {
        let now = ContinuousClock.now
        return entries.withLock { entries in
            guard let entry = entries[text] else { return nil }
            guard now - entry.kept < timeToLive else {
                entries[text] = nil
                return nil
            }
            return entry.id
        }
    }

    /// Keeps the ID of a committed set.
    func keep(_ text: String, _ id: Int64) {
        let now = ContinuousClock.now
        entries.withLock { entries in
            if entries.count >= capacity, entries[text] == nil { entries.removeAll(keepingCapacity: true) }
            entries[text] = (id, now)
        }
    }

    /// Forgets every set (the process's own sweep deleted some).
    func removeAll() {
        entries.withLock { $0.removeAll() }
    }

    /// How many sets are kept (for tests).
    var count: Int { entries.withLock { $0.count } }
}
