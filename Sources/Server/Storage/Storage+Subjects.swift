import RooftopShared

// The parts of ``Storage``, by subject. Each server service depends on the part it uses (the
// pull on the change feed, the sweeper on retention, ...), and each backend's files follow the
// subjects (`SQLiteStorage+ChangeFeed.swift`, `PostgresStorage+ChangeFeed.swift`, ...). The two
// guarantees every backend gives, atomic object writes and a gap-free feed, are on ``Storage``.

/// Named settings and server secrets, shared by every server process using the storage.
public protocol SettingsStorage: Sendable {
    /// A named server secret, created by `make` on first use and the same for every server
    /// process sharing the storage afterwards.
    func secret(named name: String, make: @Sendable () -> [UInt8]) async throws -> [UInt8]

    /// A named setting, or `nil`.
    func setting(named name: String) async throws -> String?

    /// Stores a named setting.
    func setSetting(named name: String, to value: String) async throws
}

/// Users, their sessions and the dashboard's sessions.
public protocol AccountStorage: Sendable {
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
}

/// Roles and their members.
public protocol RoleStorage: Sendable {
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
}

/// Datastores, their sharing roles, and the lists of them administration reads.
public protocol DatastoreStorage: Sendable {
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

    /// Every datastore in key order, after `key`, at most `limit` (administration).
    func allDatastores(afterKey key: Int64, limit: Int) async throws -> [DatastoreRecord]

    /// The classes with objects (not deleted) in a datastore, in byte order (administration).
    func classNames(datastoreKey: Int64) async throws -> [String]
}

/// Class settings: permissions, default ACL, merge rules, declared indexes.
public protocol ClassStorage: Sendable {
    /// A class's permissions and merge rules, or `nil` for the defaults.
    func classSettings(named className: String) async throws -> ClassSettings?

    /// Stores a class's permissions and merge rules.
    func saveClassSettings(_ settings: ClassSettings) async throws
}

/// Objects: their writes (each atomic on its own, a push in one transaction), the results
/// recorded under mutation IDs, their operations, and queries over them.
public protocol ObjectStorage: Sendable {
    /// An object (or its tombstone).
    func object(datastoreKey: Int64, className: String, objectId: String) async throws -> StoredObject?

    /// Live objects by pointer, for includes.
    func objects(datastoreKey: Int64, pointers: [Pointer]) async throws -> [StoredObject]

    /// Runs `body` in one write transaction and commits it durably: the writes `body` makes
    /// through the ``ObjectWriter`` (each atomic on its own) are all committed, or none when
    /// `body` or the commit throws. `body` may run twice (a backend whose writers run at once
    /// runs it again, alone, when a concurrent writer took room under a limit it counted on), so
    /// it keeps its state inside. (What each write guarantees: ``Storage``.)
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
}

/// The change feed pulls read, in commit order, and what a change of a caller's principals
/// changed for it.
public protocol ChangeFeedStorage: Sendable {
    /// Objects (tombstones included) changed after `sequence`, in sequence order, at most
    /// `limit`, their bodies as stored (a pull sends them without decoding them). The feed is
    /// gap-free (``Storage``): no change numbered at or below one read commits later.
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

/// How long history is kept: the retention sweep.
public protocol RetentionStorage: Sendable {
    /// One step of the retention sweep (see docs/server.md, "Retention"). Each datastore whose
    /// mark was taken at or before `cutoff` moves its ``DatastoreRecord/historyFrom`` up to the
    /// mark's sequence, and then loses the tombstones, operations and reader history at or below
    /// it; datastores without a pending mark take one at `now`. Mutation results recorded at or
    /// before `cutoff` are deleted. Works in small transactions, so writers wait little.
    /// - Returns: What was removed.
    func sweepHistory(cutoff: Timestamp, now: Timestamp) async throws -> HistorySweep
}
