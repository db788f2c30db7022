import Foundation
import RooftopShared
import Synchronization

/// Decoded stored objects by their stored JSON text, so that reading the same unchanged objects
/// again (local queries read every object of a class, observation re-reads them on each change)
/// does not decode them again.
///
/// Keyed by the text itself, an entry can never be stale: a changed object is stored as a
/// different text. Shared by every client of the process (the same text is the same object).
/// Bounded: when full, it starts over, so memory stays flat however many objects pass through.
enum SnapshotDecodeCache {
    /// Entries kept at most.
    static let capacity = 20_000

    private static let entries = Mutex<[String: ObjectSnapshot]>([:])

    /// The object stored as `text`.
    /// - Throws: A decoding error for text that is not a stored object.
    static func snapshot(from text: String) throws -> ObjectSnapshot {
        if let cached = entries.withLock({ $0[text] }) { return cached }
        let snapshot = try StoreCoding.decode(ObjectSnapshot.self, from: text)
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[text] = snapshot
        }
        return snapshot
    }
}
