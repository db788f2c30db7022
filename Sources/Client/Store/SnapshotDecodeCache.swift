import Foundation
import RooftopShared
import Synchronization

/// Decoded stored objects by their stored JSON text, so that reading the same unchanged objects
/// again (observation re-reads them on each change) does not decode them again.
///
/// Keyed by the text itself, an entry can never be stale: a changed object is stored as a
/// different text. Shared by every client of the process (the same text is the same object).
///
/// Two generations bound it by the size of the texts it holds, at a constant cost per read: new
/// entries go to the young generation; when it holds half the budget, the old generation is
/// dropped whole and the young one becomes old. A hit in the old generation moves the entry back
/// to the young one, so what is read again stays while a long scan passes through. (The cache it
/// replaces dropped a quarter of its keys in bucket order on every overflow: past about 60,000
/// objects each overflow cost more than the reads it saved, 16 s for one pass of 100,000.)
enum SnapshotDecodeCache {
    /// The most stored text the cache holds, in bytes (the decoded objects take a few times more).
    static let budget = 16 << 20

    /// A stored text with its hash computed once: a lookup, a move between generations and an
    /// insert each hashed the whole text again (and every resize of a generation rehashed all
    /// of its texts), a tenth of a local query's time when its page was not cached.
    ///
    /// Texts are told apart by their UTF-8 bytes, not as `String`s: `String` hashes and compares
    /// by Unicode canonical equivalence, character by character once a text has a letter outside
    /// ASCII (most of a query's time in the cache went there). Two texts that differ in bytes
    /// only are two entries, each decoded from its own bytes.
    private struct Key: Hashable {
        let text: String
        let hash: Int

        init(_ text: String) {
            var text = text
            var hasher = Hasher()
            text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
            self.text = text
            hash = hasher.finalize()
        }

        func hash(into hasher: inout Hasher) { hasher.combine(hash) }

        static func == (lhs: Key, rhs: Key) -> Bool {
            guard lhs.hash == rhs.hash else { return false }
            var left = lhs.text
            var right = rhs.text
            return left.withUTF8 { left in
                right.withUTF8 { right in
                    guard left.count == right.count, let a = left.baseAddress, let b = right.baseAddress else {
                        return left.count == right.count
                    }
                    return memcmp(a, b, left.count) == 0
                }
            }
        }
    }

    private struct Generation {
        var entries: [Key: ObjectSnapshot] = [:]
        var bytes = 0
    }

    private struct State {
        var young = Generation()
        var old = Generation()

        /// Adds an entry to the young generation, turning generations over first when it would
        /// hold more than half the budget (so both together never hold more than the budget).
        mutating func insert(_ snapshot: ObjectSnapshot, for key: Key) {
            let size = key.text.utf8.count
            guard size <= budget / 2, young.entries[key] == nil else { return }
            if young.bytes + size > budget / 2 {
                old = young
                young = Generation()
            }
            young.entries[key] = snapshot
            young.bytes += size
        }
    }

    private static let state = Mutex(State())

    /// The object stored as `text`.
    /// - Throws: A decoding error for text that is not a stored object.
    static func snapshot(from text: String) throws -> ObjectSnapshot {
        let key = Key(text)
        let cached = state.withLock { state -> ObjectSnapshot? in
            if let young = state.young.entries[key] { return young }
            guard let old = state.old.entries.removeValue(forKey: key) else { return nil }
            state.old.bytes -= text.utf8.count
            state.insert(old, for: key)
            return old
        }
        if let cached { return cached }
        let snapshot = try ObjectSnapshot.decodeDocument(text)
        state.withLock { $0.insert(snapshot, for: key) }
        return snapshot
    }

    /// Remembers `snapshot` as the object stored as `text`, which was just encoded from it (a
    /// write of one object: the next read of it, such as the settle of a queued save, finds it
    /// decoded). `text` must be `snapshot`'s stored form: decoded, it gives `snapshot` back.
    static func remember(_ snapshot: ObjectSnapshot, as text: String) {
        let key = Key(text)
        state.withLock { $0.insert(snapshot, for: key) }
    }

    /// The bytes of text held (for tests).
    static var bytes: Int { state.withLock { $0.young.bytes + $0.old.bytes } }

    /// Whether `text` is cached (for tests).
    static func contains(_ text: String) -> Bool {
        let key = Key(text)
        return state.withLock { $0.young.entries[key] != nil || $0.old.entries[key] != nil }
    }
}
