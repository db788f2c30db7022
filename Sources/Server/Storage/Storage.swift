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
///   datastore's counters and the mutation's result — or nothing. ``writeObjects(_:)`` runs many
///   such writes in one transaction (a push), each atomic on its own, and commits them together,
///   durably, before it returns: nothing is acknowledged that a crash could lose.
/// - **Gap-free change feed.** Within a datastore, each change has a sequence number above the
///   object's previous one, and the feed (``changes(datastoreKey:after:limit:classes:)``) reads
///   only where nothing can still commit: once a reader has seen sequence `n`, no change numbered
///   at or below `n` commits later. Numbers increase but need not be consecutive. (SQLite numbers
///   changes in commit order, one writer at a time. PostgreSQL numbers them in ranges that
///   follow transaction IDs, and its feed stops below the oldest transaction still running:
///   see ``PostgresStatements/FeedBase``.)
public protocol Storage: Sendable {
    /// Creates or migrates the schema. Called once at start-up.
    func prepare() async throws

    /// Releases connections and files.
    func close() async throws

    // MARK: Settings

    /// A named server secret, created by `make` on first use and the same for every server
    /// process sharing the storage afterwards.
    func secret(named name: String, make: @Sendable () -> [UInt8]) async throws -> [UInt8]

    /// A named setting, or `nil`.
    func setting(named name: String) async throws -> String?

    /// Stores a named setting.
    func setSetting(named name: String, to value: String) async throws

    // MARK: Users and sessions

    /// Stores a new user, with its name's key (``SignUpRequest/usernameKey(_:)``), which no other
    /// user may have.
    /// - Throws: ``RooftopError/Code/exists`` when the user name or its key is taken: a name that
    ///   differs from another only in case, Unicode form, width or invisible characters.
    func insertUser(_ user: UserRecord) async throws

    /// The user with this ID.
    func user(id: String) async throws -> UserRecord?

    /// The user a log-in under `name` is for: the one named exactly `name`, else the one named its
    /// NFC form, else the one whose name key is its key (``UserNameLookup``).
    func user(logInName name: String) async throws -> UserRecord?

    /// Stores a new session.
    func insertSession(_ session: SessionRecord) async throws

    /// The session whose token hashes to `tokenHash`, expired or not.
    func session(tokenHash: String) async throws -> SessionRecord?

    /// Deletes a session (log-out).
    func deleteSession(tokenHash: String) async throws

    /// Deletes sessions that expired before `time`; returns how many.
    func deleteSessions(expiredBefore time: Timestamp) async throws -> Int

    /// Users in user-name order (by UTF-8 bytes), after `username` when given, at most `limit`.
    func users(after username: String?, limit: Int) async throws -> [UserRecord]

    /// Stores a dashboard session: the SHA-256 of its token (``SessionToken/hash(_:)``) and when
    /// it expires; sessions expired before `now` are removed at the same time.
    func insertDashboardSession(tokenHash: String, expiresAt: Timestamp, now: Timestamp) async throws

    /// When the dashboard session whose token hashes to `tokenHash` expires; `nil` when there is
    /// none (signed out, or ended when the admin key changed).
    func dashboardSessionExpiry(tokenHash: String) async throws -> Timestamp?

    /// Ends one dashboard session (signing out), in every server process.
    func deleteDashboardSession(tokenHash: String) async throws

    /// Ends every dashboard session (the admin key changed); returns how many there were.
    func deleteDashboardSessions() async throws -> Int

    /// A user's sessions, expired or not, newest first.
    func sessions(userId: String) async throws -> [SessionRecord]

    /// Deletes a user's sessions; returns their token hashes.
    func deleteSessions(userId: String) async throws -> [String]

    /// Replaces a user's password hash; `false` when there is no such user.
    func setPasswordHash(_ hash: String, userId: String) async throws -> Bool

    /// Every datastore in key order, after `key`, at most `limit` (administration).
    func allDatastores(afterKey key: Int64, limit: Int) async throws -> [DatastoreRecord]

    /// The classes with objects (not deleted) in a datastore, in byte order (administration).
    func classNames(datastoreKey: Int64) async throws -> [String]

    /// How many users, datastores and objects (from the datastores' counters) are stored.
    func statistics() async throws -> StorageStatistics

    // MARK: Retention

    /// One step of the retention sweep (see docs/server.md, "Retention"). Each datastore whose
    /// mark was taken at or before `cutoff` moves its ``DatastoreRecord/historyFrom`` up to the
    /// mark's sequence, and then loses the tombstones, operations and reader history at or below
    /// it; datastores without a pending mark take one at `now`. Mutation results recorded at or
    /// before `cutoff` are deleted. Works in small transactions, so writers wait little.
    /// - Returns: What was removed.
    func sweepHistory(cutoff: Timestamp, now: Timestamp) async throws -> HistorySweep

    // MARK: Roles

    /// Stores a new role.
    /// - Throws: ``RooftopError/Code/exists`` when the name is taken, or was a deleted role's
    ///   (those names stay reserved, see ``deleteRole(named:)``).
    func insertRole(_ role: RoleRecord) async throws

    /// The role with this name.
    func role(named name: String) async throws -> RoleRecord?

    /// Changes a role's direct members.
    /// - Throws: ``RooftopError/Code/notFound`` when the role does not exist.
    func updateRole(
        named name: String, addUsers: Set<String>, removeUsers: Set<String>, addRoles: Set<String>,
        removeRoles: Set<String>
    ) async throws -> RoleRecord

    /// Deletes a role and its memberships, and keeps its name reserved for good: grants naming
    /// `role:<name>` (object ACLs, class permissions, datastore sharing) stay where they are, and
    /// no later role may take the name and inherit them.
    func deleteRole(named name: String) async throws

    /// Every role's direct members, for computing effective roles.
    func roleGraph() async throws -> RoleGraph

    // MARK: Datastores

    /// The datastore a caller means by `id`: for a private ID, the one owned by `ownerId`; for a
    /// shareable ID or `:app`, the only one.
    func datastore(id: DatastoreID, ownerId: String?) async throws -> DatastoreRecord?

    /// The datastore with this storage key.
    func datastore(key: Int64) async throws -> DatastoreRecord?

    /// Returns the datastore, creating it first when it does not exist (private datastores and
    /// `:app`; shareable ones with a generated ID).
    func openOrCreateDatastore(id: DatastoreID, ownerId: String?, title: String?) async throws -> DatastoreRecord

    /// Datastores owned by the user or shared with one of the principals.
    func datastores(ownedBy ownerId: String, sharedWith principals: Set<String>) async throws -> [DatastoreRecord]

    /// Sets or clears (`.none`) a principal's role on a datastore.
    func setRole(_ role: SharingRole, for principal: Principal, datastoreKey: Int64) async throws

    /// Deletes a datastore with all its objects.
    func deleteDatastore(key: Int64) async throws

    // MARK: Classes

    /// A class's permissions and merge rules, or `nil` for the defaults.
    func classSettings(named className: String) async throws -> ClassSettings?

    /// Stores a class's permissions and merge rules.
    func saveClassSettings(_ settings: ClassSettings) async throws

    // MARK: Objects

    /// An object (or its tombstone).
    func object(datastoreKey: Int64, className: String, objectId: String) async throws -> StoredObject?

    /// Live objects by pointer, for includes.
    func objects(datastoreKey: Int64, pointers: [Pointer]) async throws -> [StoredObject]

    /// Runs `body` in one write transaction and commits it durably: the writes `body` makes
    /// through the ``ObjectWriter`` (each atomic on its own) are all committed, or none when
    /// `body` or the commit throws. `body` may run twice (a backend whose writers run at once
    /// runs it again, alone, when a concurrent writer took room under a limit it counted on), so
    /// it keeps its state inside.
    /// - Throws: What `body` throws; storage errors (then nothing is committed).
    func writeObjects<T: Sendable>(_ body: @Sendable (any ObjectWriter) throws -> T) async throws -> T

    /// The first results recorded for these mutation IDs in an idempotency scope; IDs never seen
    /// are absent. One read, whatever the number of IDs. A result keeps its status, version and
    /// merge decisions (or error); an applied result that left an object carries the object's
    /// current state (a later one when it changed since; none when it was deleted since).
    func mutationResults(scope: String, ids: [MutationID]) async throws -> [MutationID: MutationResult]

    /// The changes committed to an object after `version`, oldest first. The operation of an
    /// object's first creation keeps its version, prior values and origin, not its updates or ACL:
    /// no base version precedes it, so no merge reads them.
    func operations(datastoreKey: Int64, className: String, objectId: String, after version: Int64) async throws
        -> [OperationRecord]

    /// Runs a query over live objects, filtered by readers (`nil`: no filtering, for admins),
    /// exactly as ``QueryEvaluator`` would, including conditions on values too long to index
    /// (``Value/indexedKeyLimit``): its page as stored, each body not decoded (an answer splices
    /// them in as they are; ``find(_:datastoreKey:readers:limit:)`` decodes them).
    func findStored(_ query: Query, datastoreKey: Int64, readers: Set<String>?, limit: Int) async throws
        -> StoredQueryPage

    /// Counts live objects matching a query's predicate.
    func count(_ query: Query, datastoreKey: Int64, readers: Set<String>?) async throws -> Int

    // MARK: Change feed

    /// Objects (tombstones included) changed after `sequence`, in sequence order, at most
    /// `limit`, their bodies as stored (a pull sends them without decoding them).
    func changes(datastoreKey: Int64, after sequence: Int64, limit: Int, classes: Set<String>?) async throws
        -> [FeedObject]

    /// The last `limit` objects (tombstones included) changed, newest first (the dashboard's
    /// view of the feed).
    func recentChanges(datastoreKey: Int64, limit: Int) async throws -> [FeedObject]

    /// How many objects changed after `sequence` that one of `readers` could ever read (all when
    /// `nil`): an estimate of what a pull has left, which never counts objects the caller could
    /// not hear of.
    func changeCount(datastoreKey: Int64, after sequence: Int64, classes: Set<String>?, readers: Set<String>?)
        async throws -> Int

    /// Live objects, changed at or before `sequence`, that one of `formerPrincipals` could read
    /// at `sequence` and none of `currentPrincipals` can read now: what a user lost access to.
    func lostAccess(
        datastoreKey: Int64, atSequence sequence: Int64, formerPrincipals: Set<String>,
        currentPrincipals: Set<String>
    ) async throws -> [Pointer]

    /// Live objects, changed at or before `sequence`, that none of `formerPrincipals` could read
    /// at `sequence` and one of `currentPrincipals` can read now: what a user gained access to
    /// without the objects changing (joining a role). Oldest change first, at most `limit`.
    func gainedAccess(
        datastoreKey: Int64, atSequence sequence: Int64, formerPrincipals: Set<String>,
        currentPrincipals: Set<String>, limit: Int
    ) async throws -> [FeedObject]
}


extension Storage {
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
    /// ``Storage/mutationResults(scope:ids:)``), nothing was applied now.
    case replayed(MutationResult)
    /// The new state was written with this sequence number. `readersBefore` are who could
    /// read the previous version (for live notifications of lost access).
    case written(StoredObject, readersBefore: Set<String>, result: MutationResult)
    /// Nothing changed; the mutation was answered with this result.
    case unchanged(MutationResult)
    /// `decide` refused it.
    case rejected(RooftopError)
}

extension Storage {
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
