import Foundation
import RooftopShared
import Synchronization

/// Decoded stored objects by their stored JSON text, so that reading the same unchanged objects
/// again (local queries read every object of a class, observation re-reads them on each change)
/// does not decode them again.
///
/// Keyed by the text itself, an entry can never be stale: a changed object is stored as a
/// different text. Shared by every client of the process (the same text is the same object).
/// Bounded by the size of the texts it holds: when over budget, about a quarter of the entries
/// go, in no particular order (a scan larger than the cache still finds most of what it holds).
enum SnapshotDecodeCache {
    /// The most stored text the cache holds, in bytes (the decoded objects take a few times more).
    static let budget = 16 << 20

    private struct State {
        var entries: [String: ObjectSnapshot] = [:]
        var bytes = 0
    }

    private static let state = Mutex(State())

    /// The object stored as `text`.
    /// - Throws: A decoding error for text that is not a stored object.
    static func snapshot(from text: String) throws -> ObjectSnapshot {
        if let cached = state.withLock({ $0.entries[text] }) { return cached }
        let snapshot = try ObjectSnapshot.decodeDocument(text)
        state.withLock { state in
            guard state.entries.updateValue(snapshot, forKey: text) == nil else { return }
            state.bytes += text.utf8.count
            guard state.bytes > budget else { return }
            for key in Array(state.entries.keys.prefix(state.entries.count / 4 + 1)) {
                state.entries[key] = nil
                state.bytes -= key.utf8.count
            }
        }
        return snapshot
    }
}
