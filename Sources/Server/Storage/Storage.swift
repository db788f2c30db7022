import RooftopShared
import Synchronization

/// Where the server keeps everything: users, sessions, roles, datastores, objects, the change
/// feed and the record of applied mutations.
///
/// The protocol speaks in domain terms so that each backend (SQLite embedded by default,
/// PostgreSQL for several server processes) implements the same semantics, checked by one
/// conformance suite. Two guarantees every backend must give:
///
/// - **Atomic object writes.** ``ObjectWriter/write(_:decide:)`` loads the object, the changes
///   since the mutation's base version and any earlier result of the same mutation ID, calls
///   `decide`, and writes the new state, its index rows, the change-feed sequence number, the
///   datastore's counters and the mutation's result — or nothing. ``ObjectStorage/writeObjects(_:)`` runs many
///   such writes in one transaction (a push), each atomic on its own, and commits them together,
///   durably, before it returns: nothing is acknowledged that a crash could lose.
/// - **Gap-free change feed.** Within a datastore, each change has a sequence number above the
///   object's previous one, and the feed (``ChangeFeedStorage/changes(datastoreKey:after:limit:classes:)``) reads
///   only where nothing can still commit: once a reader has seen sequence `n`, no change numbered
///   at or below `n` commits later. Numbers increase but need not be consecutive. (SQLite numbers
///   changes in commit order, one writer at a time. PostgreSQL numbers them in ranges that
///   follow transaction IDs, and its feed stops below the oldest transaction still running:
///   see ``PostgresStatements/FeedBase``.)
public protocol Storage: SettingsStorage, AccountStorage, RoleStorage, DatastoreStorage, ClassStorage, ObjectStorage,
    ChangeFeedStorage, RetentionStorage
{
    /// Creates or migrates the schema. Called once at start-up.
    func prepare() async throws

    /// Releases connections and files.
    func close() async throws

    /// How many users, datastores and objects (from the datastores' counters) are stored.
    func statistics() async throws -> StorageStatistics
}

extension ObjectStorage {
    /// Applies one mutation atomically, in a transaction of its own.
    public func writeObject(
        _ request: ObjectWriteRequest,
        decide: @Sendable (ObjectWriteContext) throws(RooftopError) -> ObjectWriteDecision
    ) async throws -> ObjectWriteOutcome {
        try await writeObjects { writer in try writer.write(request, decide: decide) }
    }
}

/// The mutation an object write carries.
public struct ObjectWriteRequest: Sendable {
    /// The datastore's storage key.
    public var datastoreKey: Int64
    /// The object's class.
    public var className: String
    /// The object's ID.
    public var objectId: String
    /// The version the change was made on, if any: the changes committed after it are loaded for
    /// the merge. (For a push mutation chained to earlier ones of the same push, the chain's last
    /// version: the decision already knows what came before.)
    public var baseVersion: Int64?
    /// The idempotency scope (the user ID, or empty for anonymous and admin callers) and the
    /// mutation ID; `nil` for writes that are not idempotent (plain REST updates).
    public var mutation: (scope: String, id: MutationID)?
    /// The datastore's limits (``Limits/maxRecordsPerDatastore``, ``Limits/maxDatastoreBytes``)
    /// that `decide` enforces, for a backend whose concurrent writers decide on counts that other
    /// transactions may change before they commit (PostgreSQL): it checks them again at commit
    /// and, when a concurrent write took the room a decision counted on, runs the transaction
    /// again alone. `nil`: no limits.
    public var datastoreLimits: (records: Int, bytes: Int)?

    /// Creates a request.
    public init(
        datastoreKey: Int64, className: String, objectId: String, baseVersion: Int64?,
        mutation: (scope: String, id: MutationID)?, datastoreLimits: (records: Int, bytes: Int)? = nil
    ) {
        self.datastoreKey = datastoreKey
        self.className = className
        self.objectId = objectId
        self.baseVersion = baseVersion
        self.mutation = mutation
        self.datastoreLimits = datastoreLimits
    }
}

/// What `decide` sees inside the write transaction.
public struct ObjectWriteContext: Sendable {
    /// The datastore, with its current counters.
    public var datastore: DatastoreRecord
    /// The object as stored (a tombstone when deleted), or `nil` when it never existed.
    public var current: StoredObject?
    /// Changes committed after the request's base version, oldest first; empty when the base is
    /// current. When the base is absent and the object is a tombstone: the operations of the
    /// deleted incarnation, from the one that created it through the delete (empty when that
    /// history is not complete), so that the decider can tell whose incarnation it was.
    public var concurrentChanges: [OperationRecord]
    /// Whether the base version is older than the history kept: some changes since it were
    /// removed by the retention sweep (or the object, a swept tombstone, is gone), so the
    /// mutation cannot be merged and is refused with `historyExpired`.
    public var historyExpired: Bool = false
}

/// What `decide` returns.
public enum ObjectWriteDecision: Sendable {
    /// Store this new state. `snapshot.version` must be the next version. `merges` are the merge
    /// decisions made, returned to the client with the result.
    case write(snapshot: ObjectSnapshot, deleted: Bool, operation: OperationRecord, merges: [MergeDecision])
    /// Change nothing, but answer (and record) the mutation as applied at the current version:
    /// the merge left nothing to apply (e.g. the object was deleted concurrently), or the delete
    /// of an object already deleted.
    case unchanged(version: Int64, object: ObjectSnapshot?, merges: [MergeDecision])
    /// Refuse the mutation; the refusal is recorded under the mutation ID.
    case reject(RooftopError)
}

/// What happened to an object write.
public enum ObjectWriteOutcome: Sendable {
    /// The mutation ID was seen before: this is its recorded result (see
    /// ``ObjectStorage/mutationResults(scope:ids:)``), nothing was applied now.
    case replayed(MutationResult)
    /// The new state was written with this sequence number. `readersBefore` are who could
    /// read the previous version (for live notifications of lost access).
    case written(StoredObject, readersBefore: Set<String>, result: MutationResult)
    /// Nothing changed; the mutation was answered with this result.
    case unchanged(MutationResult)
    /// `decide` refused it.
    case rejected(RooftopError)
}

extension ObjectStorage {
    /// ``findStored(_:datastoreKey:readers:limit:)``, its objects decoded.
    /// - Throws: What the query and decoding a stored body throw.
    func find(_ query: Query, datastoreKey: Int64, readers: Set<String>?, limit: Int) async throws -> QueryPage {
        try await findStored(query, datastoreKey: datastoreKey, readers: readers, limit: limit).decoded()
    }
}

/// One page of query results as stored: each object's body is the stored JSON text.
public struct StoredQueryPage: Sendable {
    /// The objects, in the query's order (no readers: ``FeedObject/readers`` is empty).
    public var objects: [FeedObject]
    /// How many objects match in all.
    public var totalCount: Int

    /// The page, its objects decoded.
    /// - Throws: What decoding a stored body throws.
    public func decoded() throws -> QueryPage {
        QueryPage(objects: try objects.map { try $0.snapshot() }, totalCount: totalCount)
    }
}

/// One page of query results.
public struct QueryPage: Sendable {
    /// The objects, in the query's order.
    public var objects: [ObjectSnapshot]
    /// How many objects match in all.
    public var totalCount: Int

    /// Creates a page.
    public init(objects: [ObjectSnapshot], totalCount: Int) {
        self.objects = objects
        self.totalCount = totalCount
    }
}

/// An error a storage backend raises that says its files or server cannot be used now for a
/// reason that may pass (a full disk, a read-only or failing file system), as opposed to a bug
/// or bad input. The server answers such a request 503 with `retryLater`, and clients retry.
public protocol StorageFaultReporting: Error {
    /// What is wrong, when this error is such a fault; `nil` otherwise.
    var storageFault: String? { get }
}

extension RooftopError {
    /// The storage fault behind an error, looking through ``RooftopError/cause`` chains.
    static func storageFault(in error: any Error) -> String? {
        var current: (any Error)? = error
        for _ in 0..<8 {
            guard let error = current else { return nil }
            if let fault = (error as? any StorageFaultReporting)?.storageFault { return fault }
            current = (error as? RooftopError)?.cause
        }
        return nil
    }
}

/// What one retention sweep removed.
public struct HistorySweep: Sendable, Equatable {
    /// Datastores whose history moved forward.
    public var datastores = 0
    /// Tombstones removed (with their operations and reader history).
    public var tombstones = 0
    /// Operations removed from live objects' logs.
    public var operations = 0
    /// Reader history rows removed from live objects.
    public var readerRows = 0
    /// Mutation results removed.
    public var mutationResults = 0
    /// Reader sets removed: sets of readers no object has any more.
    public var readerSets = 0

    /// An empty sweep.
    public init() {}

    /// Whether nothing was removed.
    public var isEmpty: Bool { self == HistorySweep() }
}
