import RooftopShared

/// The readers of the change feed's objects, read with their rows in the same statement on both
/// backends (``SQLiteStorage/feedColumns``, ``PostgresStorage/feedObjectSelect``): a live object's
/// current readers are its reader set (`objects.readers`, ``SQLIndexRows/readerSet(of:)``),
/// decoded once per set however many objects of the page name it; the readers' history
/// (`object_readers`) is read only for what it adds, the readers whose access ended and a
/// tombstone's readers (a tombstone names no set). A page of objects nobody lost access to
/// therefore costs no reader rows at all; reading each object's whole history, principal by
/// principal, was a quarter of the server's work in a full pull.
///
/// A set that holds `*` is `*` alone, so an object everyone may read has the readers `["*"]`:
/// what the feed decides with them (can a caller, whose principals always hold `*`, read it now
/// or could it once) comes out the same.
struct FeedReaders {
    /// The sets decoded so far, by ID.
    private var sets: [Int64: Set<String>] = [:]

    /// An object's current and former readers.
    /// - Parameters:
    ///   - readerSet: `objects.readers`: the set's ID, `nil` when nobody may read the object (and
    ///     for a tombstone).
    ///   - setPrincipals: the set's stored text (`reader_sets.principals`, a JSON array), read only
    ///     the first time the page meets the set.
    ///   - lastReaders: a tombstone's readers (those of its last version); `nil` for a live object.
    ///   - historyReaders: the principals of the history rows a live object's set does not give
    ///     (readers whose access ended; for a tombstone, all of them).
    /// - Throws: `internal` when the object names a set that is not stored or cannot be read.
    mutating func readers(
        readerSet: Int64?, setPrincipals: () throws -> String?, lastReaders: [String]?, historyReaders: [String]
    ) throws -> (current: Set<String>, former: Set<String>) {
        let current: Set<String>
        if let lastReaders {
            current = Set(lastReaders)
        } else if let readerSet {
            guard let found = try principals(ofSet: readerSet, setPrincipals) else {
                throw RooftopError(.internal, "reader set \(readerSet) is named by an object but not stored")
            }
            current = found
        } else {
            current = []
        }
        return (current, historyReaders.isEmpty ? [] : Set(historyReaders))
    }

    /// The principals of the reader set `id`, decoded from its stored text (`text`, read only
    /// the first time the set is met); `nil` when the set is not stored.
    /// - Throws: `internal` when the text is not a list of principals.
    mutating func principals(ofSet id: Int64, _ text: () throws -> String?) throws -> Set<String>? {
        if let known = sets[id] { return known }
        guard let text = try text() else { return nil }
        let decoded: Set<String>
        do {
            decoded = Set(try DocumentCoding.decode([String].self, from: text))
        } catch {
            throw RooftopError(.internal, "reader set \(id) is not a list of principals")
        }
        sets[id] = decoded
        return decoded
    }
}
