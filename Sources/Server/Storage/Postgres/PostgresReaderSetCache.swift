import Synchronization

/// The IDs of reader sets a process's committed write transactions used, by text
/// (``SQLIndexRows/readerSetText(_:)``), so that a write on PostgreSQL names its object's set
/// without a round trip for it: a set is never deleted or changed once committed, so its ID
/// stays right. Only a committed transaction's sets are kept (one that rolls back may have made
/// sets that then never existed).
///
/// Bounded: past ``capacity`` entries it starts again empty, so that its memory and each
/// look-up stay constant however many distinct ACLs are written (a set not kept costs one
/// round trip, and is kept again).
final class PostgresReaderSetCache: Sendable {
    /// The most sets kept.
    let capacity: Int
    private let ids = Mutex<[String: Int64]>([:])

    /// The entries kept by default.
    static let defaultCapacity = 4_096

    init(capacity: Int = PostgresReaderSetCache.defaultCapacity) {
        self.capacity = max(capacity, 1)
    }

    /// The ID of the set with this text, when kept.
    func id(of text: String) -> Int64? {
        ids.withLock { $0[text] }
    }

    /// Keeps the ID of a committed set.
    func keep(_ text: String, _ id: Int64) {
        ids.withLock { ids in
            if ids.count >= capacity, ids[text] == nil { ids.removeAll(keepingCapacity: true) }
            ids[text] = id
        }
    }

    /// How many sets are kept (for tests).
    var count: Int { ids.withLock { $0.count } }
}
