import GRDB
import Synchronization

/// What the writer's transactions look up in the store on every write and what changes seldom:
/// the fields each class's declared indexes name and lead (``StoreTransaction/valueIndexedFields(of:)``,
/// ``StoreTransaction/leadingFields(of:)``), the keys of reader sets
/// (``StoreTransaction/readerSet(_:)``) and the readers each scope's `readable` flags are kept for
/// (``StoreTransaction/keptReaders()``), kept from one transaction to the next.
///
/// Each transaction read them again: a queued save, one small transaction, spent a sixth of
/// storing its row on those three lookups (`perf`, eight callers queueing saves, 2026-12-07).
///
/// A transaction starts from what the memo holds, and at its commit the memo becomes what the
/// transaction holds then: only what committed transactions read or wrote is kept (a reader set
/// inserted by a transaction that rolled back is never remembered, and a grouped write's
/// savepoint hands its reads to the group only when it succeeds), and what a transaction forgot
/// is forgotten (it forgets the declarations it changes and the reader sets it deletes:
/// ``StoreTransaction/forgetValueIndexedFields()``, ``StoreTransaction/dropUnusedReaderSets()``).
/// A write by any other connection to the file empties it (`PRAGMA data_version`, read at the
/// start of every write). At most
/// ``maxReaderSets`` reader sets are kept (past it the list starts again: the sets a device holds
/// are as many as the distinct ACLs of its objects).
final class WriterMemo: Sendable {
    /// The most reader-set keys kept.
    static let maxReaderSets = 4_096
    /// The most scopes whose kept readers are kept.
    static let maxScopes = 64

    /// What is kept.
    struct Entries {
        /// ``StoreTransaction/valueIndexedFields(of:)`` by class.
        var indexedFields: [String: Set<String>?] = [:]
        /// ``StoreTransaction/leadingFields(of:)`` by class.
        var leadingFields: [String: Set<String>] = [:]
        /// Reader-set keys by their principals.
        var readerSets: [Set<String>: Int64] = [:]
        /// The readers each scope's `readable` flags are kept for (``StoreTransaction/keptReaders()``).
        var keptReaders: [String: Set<String>?] = [:]
    }

    private struct State {
        var entries = Entries()
        /// The file's `data_version` as the writer last read it.
        var dataVersion: Int64?
    }

    private let state = Mutex(State())

    init() {}

    /// What is kept, for a write starting on the writer `db`: emptied first when another
    /// connection wrote the file since the last write.
    /// - Throws: GRDB's errors (reading `data_version`).
    func entries(for db: Database) throws -> Entries {
        let version = try Int64.fetchOne(db.cachedStatement(sql: "PRAGMA data_version"))
        return state.withLock { state in
            if state.dataVersion != version {
                state.entries = Entries()
                state.dataVersion = version
            }
            return state.entries
        }
    }

    /// Keeps what a committed transaction holds at its end (what it read and wrote, less what it
    /// forgot).
    func absorb(_ transaction: StoreTransaction) {
        state.withLock { state in
            state.entries.indexedFields = transaction.indexedFieldsRead
            state.entries.leadingFields = transaction.leadingFieldsRead
            state.entries.readerSets =
                transaction.readerSetsRead.count <= Self.maxReaderSets ? transaction.readerSetsRead : [:]
            // As many as the accounts signed in on the device; bounded all the same.
            state.entries.keptReaders =
                transaction.keptReadersRead.count <= Self.maxScopes ? transaction.keptReadersRead : [:]
        }
    }

    /// The number of reader-set keys kept (tests).
    var readerSetCount: Int { state.withLock { $0.entries.readerSets.count } }
}

extension StoreTransaction {
    /// Starts from what earlier committed transactions read (``WriterMemo``).
    func start(from entries: WriterMemo.Entries) {
        indexedFieldsRead = entries.indexedFields
        leadingFieldsRead = entries.leadingFields
        readerSetsRead = entries.readerSets
        keptReadersRead = entries.keptReaders
    }

    /// Starts from what `parent` (a grouped write's transaction) has read so far.
    func start(from parent: StoreTransaction) {
        indexedFieldsRead = parent.indexedFieldsRead
        leadingFieldsRead = parent.leadingFieldsRead
        readerSetsRead = parent.readerSetsRead
        keptReadersRead = parent.keptReadersRead
    }

    /// Takes what `child` (one grouped write, whose savepoint succeeded) read and wrote.
    func adoptReads(of child: StoreTransaction) {
        indexedFieldsRead = child.indexedFieldsRead
        leadingFieldsRead = child.leadingFieldsRead
        readerSetsRead = child.readerSetsRead
        keptReadersRead = child.keptReadersRead
    }
}
