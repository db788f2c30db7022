import RooftopShared
import RooftopSQL

/// A user account as stored.
public struct UserRecord: Sendable, Hashable {
    /// The user's ID (an object ID).
    public var id: String
    /// The unique user name, as signed up, in NFC (``SignUpRequest/normalizedUsername(_:)``;
    /// a user stored before names had keys keeps its former form if that NFC form is another
    /// user's name). Storage gives it its key (``SignUpRequest/usernameKey(_:)``), unique too.
    public var username: String
    /// The e-mail address, if given.
    public var email: String?
    /// The bcrypt hash of the password.
    public var passwordHash: String
    /// When the account was created.
    public var createdAt: Timestamp

    /// Creates a record.
    public init(id: String, username: String, email: String?, passwordHash: String, createdAt: Timestamp) {
        self.id = id
        self.username = username
        self.email = email
        self.passwordHash = passwordHash
        self.createdAt = createdAt
    }
}

/// A log-in session as stored: only the SHA-256 of its token is kept.
public struct SessionRecord: Sendable, Hashable {
    /// The hex SHA-256 of the session token.
    public var tokenHash: String
    /// The user it belongs to.
    public var userId: String
    /// When it was created.
    public var createdAt: Timestamp
    /// When it stops being valid.
    public var expiresAt: Timestamp

    /// Creates a record.
    public init(tokenHash: String, userId: String, createdAt: Timestamp, expiresAt: Timestamp) {
        self.tokenHash = tokenHash
        self.userId = userId
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

/// A role as stored, with its direct members.
public struct RoleRecord: Sendable, Hashable {
    /// The role's name.
    public var name: String
    /// Who may see the role (read) and change its members or delete it (write), besides admins.
    public var acl: ACL
    /// Users who are direct members.
    public var users: Set<String>
    /// Roles whose members are also members of this role.
    public var childRoles: Set<String>

    /// Creates a record.
    public init(name: String, acl: ACL, users: Set<String> = [], childRoles: Set<String> = []) {
        self.name = name
        self.acl = acl
        self.users = users
        self.childRoles = childRoles
    }

    /// The refusal of a new role named as a deleted one (``RoleStorage/deleteRole(named:)``).
    static func retiredMessage(_ name: String) -> String {
        "the name '\(name)' belonged to a deleted role and stays reserved, so that no new role inherits what was granted to it: choose another name"
    }
}

/// A datastore as stored.
public struct DatastoreRecord: Sendable, Hashable {
    /// The storage's own key for the datastore (unique across all users).
    public var key: Int64
    /// The datastore's ID as clients name it.
    public var id: DatastoreID
    /// The owner: the user for private and shareable datastores, `nil` for `:app`.
    public var ownerId: String?
    /// An optional title.
    public var title: String?
    /// When it was created.
    public var createdAt: Timestamp
    /// The sequence number of the last change committed in the datastore (0 when none).
    public var sequence: Int64
    /// Live (not deleted) objects in the datastore.
    public var recordCount: Int
    /// The datastore's size by the Dropbox Datastore API's accounting.
    public var sizeBytes: Int
    /// Roles for principals (shareable datastores only).
    public var roles: [Principal: SharingRole]
    /// The oldest sequence the datastore's history still covers: tombstones, operations and
    /// reader history at or below it were removed by the retention sweep, so a checkpoint or
    /// base version from before it cannot be served (`historyExpired`). 0 until the first sweep
    /// removes anything.
    public var historyFrom: Int64 = 0

    /// Creates a record.
    public init(
        key: Int64, id: DatastoreID, ownerId: String?, title: String?, createdAt: Timestamp, sequence: Int64 = 0,
        recordCount: Int = 0, sizeBytes: Int = SizeAccounting.datastoreBaseBytes, roles: [Principal: SharingRole] = [:]
    ) {
        self.key = key
        self.id = id
        self.ownerId = ownerId
        self.title = title
        self.createdAt = createdAt
        self.sequence = sequence
        self.recordCount = recordCount
        self.sizeBytes = sizeBytes
        self.roles = roles
    }

    /// The sharing state, for access decisions; `nil` when the stored state is inconsistent
    /// (then nobody but an admin has a role: access fails closed).
    public var sharing: DatastoreSharing? {
        try? DatastoreSharing(datastore: id, owner: ownerId, roles: roles)
    }

    /// The caller's role on this datastore.
    public func role(for context: AccessContext) -> SharingRole {
        if context.isAdmin { return .owner }
        return sharing?.effectiveRole(for: context) ?? .none
    }
}

/// An object as stored: its latest snapshot, whether it is deleted (a tombstone), and the
/// datastore sequence number of its last change.
public struct StoredObject: Sendable, Hashable {
    /// The object's latest state (fields empty for a tombstone).
    public var snapshot: ObjectSnapshot
    /// Whether the object is deleted.
    public var isDeleted: Bool
    /// The datastore sequence number of the last change.
    public var sequence: Int64
    /// Principals that may read the current version (`*` when the ACL is absent); for a
    /// tombstone, those who could read the last version before the delete.
    public var readers: Set<String>
    /// Every principal that could read some version of the object (filled by the change feed,
    /// which sends removals only to users who could once read the object).
    public var formerReaders: Set<String>

    /// Creates a record.
    public init(
        snapshot: ObjectSnapshot, isDeleted: Bool, sequence: Int64, readers: Set<String>,
        formerReaders: Set<String> = []
    ) {
        self.snapshot = snapshot
        self.isDeleted = isDeleted
        self.sequence = sequence
        self.readers = readers
        self.formerReaders = formerReaders.union(readers)
    }

    /// The readers an object with this ACL has: its principals with read access, or `*` when
    /// there is no ACL.
    public static func readers(of acl: ACL?) -> Set<String> {
        SQLIndexRows.readers(of: acl)
    }
}

extension DatastoreRecord {
    /// The storage's `scope` of a datastore ID (both backends key datastores by `(scope, id)`):
    /// the owner for private datastores, whose IDs repeat across users; empty otherwise.
    static func scope(of id: DatastoreID, ownerId: String?) -> String {
        id.kind == .private ? (ownerId ?? "") : ""
    }
}

/// What is stored, counted for administration.
public struct StorageStatistics: Sendable, Hashable {
    /// User accounts.
    public var users: Int
    /// Datastores of every kind.
    public var datastores: Int
    /// Objects not deleted, over every datastore.
    public var objects: Int

    /// Creates statistics.
    public init(users: Int, datastores: Int, objects: Int) {
        self.users = users
        self.datastores = datastores
        self.objects = objects
    }
}

/// An object as the change feed reads it: its envelope and readers, with its body (fields, ACL,
/// field versions) left as the stored JSON text, not decoded. A pull sends the body as stored
/// (``PullPage``); only what needs the values decodes it (``snapshot()``).
public struct FeedObject: Sendable, Hashable {
    /// The object's class.
    public var className: String
    /// The object's ID in its class.
    public var objectId: String
    /// The datastore's ID, as stored.
    public var datastoreId: String
    /// The stored body: a JSON object with `fields`, and `acl` and `fieldVersions` when set.
    public var body: String
    /// When the object was created, in milliseconds since 1970.
    public var createdAt: Int64?
    /// When the object was last updated, in milliseconds since 1970.
    public var updatedAt: Int64?
    /// The object's version.
    public var version: Int64
    /// Whether the object is deleted (a tombstone).
    public var isDeleted: Bool
    /// The datastore sequence number of the last change.
    public var sequence: Int64
    /// Principals that may read the current version: the object's reader set
    /// (``SQLIndexRows/readerSet(of:)``, so `*` alone when everyone may), or a tombstone's
    /// readers of its last version.
    public var readers: Set<String>
    /// Every principal that could read some version (``StoredObject/formerReaders``), `readers`
    /// included.
    public var formerReaders: Set<String>

    /// Creates a record (`formerReaders` takes in `readers`).
    public init(
        className: String, objectId: String, datastoreId: String, body: String, createdAt: Int64?, updatedAt: Int64?,
        version: Int64, isDeleted: Bool, sequence: Int64, readers: Set<String>, formerReaders: Set<String>
    ) {
        self.className = className
        self.objectId = objectId
        self.datastoreId = datastoreId
        self.body = body
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.version = version
        self.isDeleted = isDeleted
        self.sequence = sequence
        self.readers = readers
        // Most objects' history adds nobody: their sets are shared, not copied.
        self.formerReaders = formerReaders.isEmpty ? readers : formerReaders.union(readers)
    }

    /// The object, its body decoded (fields empty for a tombstone).
    /// - Throws: What decoding the body or the datastore ID throws.
    public func snapshot() throws -> ObjectSnapshot {
        let body = try StoredObjectBody.decodeDocument(self.body)
        return ObjectSnapshot(
            className: className, objectId: objectId, datastore: try DatastoreID(datastoreId), fields: body.fields,
            acl: body.acl, createdAt: createdAt.map(Timestamp.init(millisecondsSinceEpoch:)),
            updatedAt: updatedAt.map(Timestamp.init(millisecondsSinceEpoch:)), version: version,
            fieldVersions: body.fieldVersions)
    }
}
