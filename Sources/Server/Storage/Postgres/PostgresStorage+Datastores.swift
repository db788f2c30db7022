import PostgresNIO
import RooftopShared

extension PostgresStorage {
    /// A datastore row with its sharing roles, in one statement (one snapshot). Its sequence is
    /// the feed's head (``feedHead``).
    static let datastoreSelect = datastoreSelect(sequence: feedHead)

    /// ``datastoreSelect``, its sequence read as `sequence` says.
    static func datastoreSelect(sequence: String) -> String {
        """
        SELECT d.key, d.id, d.owner_id, d.title, d.created_at, \(sequence), d.record_count, d.size_bytes, \
        d.history_from, \
        ARRAY(SELECT r.principal FROM datastore_roles r WHERE r.datastore_key = d.key ORDER BY r.principal), \
        ARRAY(SELECT r.role FROM datastore_roles r WHERE r.datastore_key = d.key ORDER BY r.principal) \
        FROM datastores d
        """
    }

    /// The last change committed in datastore `d`, or its row's sequence, where changes were
    /// numbered before migration v9 (0 for a new datastore), when that is higher. A pull may not
    /// read up to it yet (``PostgresStatements/feedBound``): it waits for the older
    /// transactions still running.
    static let feedHead = """
        GREATEST(d.sequence, coalesce((SELECT max(o.sequence) FROM objects o WHERE o.datastore_key = d.key), 0))
        """

    static func datastore(_ row: PostgresRow) throws -> DatastoreRecord {
        let (key, id, owner, title, created, sequence, count, size, historyFrom, principals, roleNames) =
            try row.decode(
                (Int64, String, String?, String?, Int64, Int64, Int64, Int64, Int64, [String], [String]).self)
        let roles = DatastoreRecord.sharingRoles(
            zip(principals, roleNames).map { (principal: $0, role: $1) }, datastoreKey: key)
        var record = DatastoreRecord(
            key: key, id: try DatastoreID(id), ownerId: owner, title: title,
            createdAt: Timestamp(millisecondsSinceEpoch: created), sequence: sequence, recordCount: Int(count),
            sizeBytes: Int(size), roles: roles)
        record.historyFrom = historyFrom
        return record
    }

    /// See ``DatastoreStorage/datastore(id:ownerId:)``.
    public func datastore(id: DatastoreID, ownerId: String?) async throws -> DatastoreRecord? {
        let scope = DatastoreRecord.scope(of: id, ownerId: ownerId)
        return try await read { session in
            try session.query("\(unescaped: Self.datastoreSelect) WHERE d.scope = \(scope) AND d.id = \(id.rawValue)")
                .first.map(Self.datastore)
        }
    }

    /// See ``DatastoreStorage/datastore(key:)``.
    public func datastore(key: Int64) async throws -> DatastoreRecord? {
        try await read { session in
            try session.query("\(unescaped: Self.datastoreSelect) WHERE d.key = \(key)").first.map(Self.datastore)
        }
    }

    /// See ``DatastoreStorage/openOrCreateDatastore(id:ownerId:title:)``.
    public func openOrCreateDatastore(id: DatastoreID, ownerId: String?, title: String?) async throws -> DatastoreRecord {
        let scope = DatastoreRecord.scope(of: id, ownerId: ownerId)
        let owner = id.kind == .app ? nil : ownerId
        let created = Timestamp.now.millisecondsSinceEpoch
        return try await read { session in
            // Two processes creating it at once: one inserts, both read the same row.
            try session.execute(
                """
                INSERT INTO datastores (id, scope, owner_id, title, created_at, size_bytes)
                VALUES (\(id.rawValue), \(scope), \(owner), \(title), \(created), \(Int64(SizeAccounting.datastoreBaseBytes)))
                ON CONFLICT (scope, id) DO NOTHING
                """)
            guard
                let row = try session.query(
                    "\(unescaped: Self.datastoreSelect) WHERE d.scope = \(scope) AND d.id = \(id.rawValue)"
                ).first
            else { throw RooftopError(.internal, "datastore \(id) vanished after creation") }
            return try Self.datastore(row)
        }
    }

    /// See ``DatastoreStorage/datastores(ownedBy:sharedWith:)``.
    public func datastores(ownedBy ownerId: String, sharedWith principals: Set<String>) async throws -> [DatastoreRecord] {
        let principals = principals.sorted()
        return try await read { session in
            try session.query(
                """
                \(unescaped: Self.datastoreSelect) WHERE d.owner_id = \(ownerId)
                OR d.key IN (SELECT datastore_key FROM datastore_roles WHERE principal = ANY(\(principals)) AND role != 'none')
                ORDER BY d.id COLLATE "C", d.key
                """
            ).map(Self.datastore)
        }
    }

    /// See ``DatastoreStorage/allDatastores(afterKey:limit:)``.
    public func allDatastores(afterKey key: Int64, limit: Int) async throws -> [DatastoreRecord] {
        try await read { session in
            try session.query("\(unescaped: Self.datastoreSelect) WHERE d.key > \(key) ORDER BY d.key LIMIT \(limit)")
                .map(Self.datastore)
        }
    }

    /// See ``DatastoreStorage/classNames(datastoreKey:)``.
    public func classNames(datastoreKey: Int64) async throws -> [String] {
        try await read { session in
            try session.query(
                """
                SELECT DISTINCT class_name COLLATE "C" FROM objects WHERE datastore_key = \(datastoreKey) AND NOT deleted
                ORDER BY 1
                """
            ).map { try $0.decode(String.self) }
        }
    }

    /// See ``Storage/statistics()``.
    public func statistics() async throws -> StorageStatistics {
        try await read { session in
            let row = try session.query(
                """
                SELECT (SELECT count(*) FROM users), (SELECT count(*) FROM datastores),
                (SELECT coalesce(sum(record_count), 0)::bigint FROM datastores)
                """
            ).first
            guard let row else { return StorageStatistics(users: 0, datastores: 0, objects: 0) }
            let (users, datastores, objects) = try row.decode((Int64, Int64, Int64).self)
            return StorageStatistics(users: Int(users), datastores: Int(datastores), objects: Int(objects))
        }
    }

    /// See ``DatastoreStorage/setRole(_:for:datastoreKey:)``.
    public func setRole(_ role: SharingRole, for principal: Principal, datastoreKey: Int64) async throws {
        let name = principal.description
        try await read { session in
            if role == .none {
                try session.execute(
                    "DELETE FROM datastore_roles WHERE datastore_key = \(datastoreKey) AND principal = \(name)")
            } else {
                try session.execute(
                    """
                    INSERT INTO datastore_roles (datastore_key, principal, role) VALUES (\(datastoreKey), \(name), \(role.name))
                    ON CONFLICT (datastore_key, principal) DO UPDATE SET role = excluded.role
                    """)
            }
        }
    }

    /// See ``DatastoreStorage/deleteDatastore(key:)``.
    public func deleteDatastore(key: Int64) async throws {
        let seed = try await lockSeed()
        try await transaction { session in
            // Alone in the datastore, as writers lock it (``PostgresStatements/LockWrites``): the
            // writes in flight commit first, and those that start meanwhile find it gone.
            _ = try session.run(
                PostgresStatements.LockWritesAlone(
                    locks: PostgresObjectWriter.Locks(datastores: [key], objects: [], seed: seed)))
            // The objects go with the datastore (their foreign key), and their own rows, which
            // name them without one, with them.
            try session.execute(
                """
                WITH doomed AS (SELECT key FROM objects WHERE datastore_key = \(key)),
                \(unescaped: PostgresStatements.objectRowDeletes)
                DELETE FROM datastores WHERE key = \(key)
                """)
        }
    }

    // MARK: Roles

    /// See ``RoleStorage/insertRole(_:)``.
    public func insertRole(_ role: RoleRecord) async throws {
        let acl = try DocumentCoding.encode(role.acl)
        let users = role.users.sorted()
        let children = role.childRoles.sorted()
        let created = Timestamp.now.millisecondsSinceEpoch
        try await transaction { session in
            let inserted = try session.execute(
                "INSERT INTO roles (name, acl, created_at) VALUES (\(role.name), \(acl), \(created)) ON CONFLICT DO NOTHING")
            guard inserted == 1 else { throw RooftopError(.exists, "a role named '\(role.name)' exists") }
            // Checked after the insert: a delete of a role of this name that committed while the
            // insert waited on its row is seen here (and no later one can delete the new row).
            guard try session.query("SELECT 1 FROM retired_roles WHERE name = \(role.name)").isEmpty else {
                throw RooftopError(.exists, RoleRecord.retiredMessage(role.name))
            }
            try session.execute(
                "INSERT INTO role_users (role, user_id) SELECT \(role.name), unnest(\(users)::text[])")
            try session.execute(
                "INSERT INTO role_children (role, child) SELECT \(role.name), unnest(\(children)::text[])")
        }
    }

    /// See ``RoleStorage/role(named:)``.
    public func role(named name: String) async throws -> RoleRecord? {
        try await read { session in try Self.role(named: name, session) }
    }

    private static func role(named name: String, _ session: PostgresBlockingSession) throws -> RoleRecord? {
        guard
            let row = try session.query(
                """
                SELECT acl, ARRAY(SELECT user_id FROM role_users WHERE role = \(name)),
                ARRAY(SELECT child FROM role_children WHERE role = \(name))
                FROM roles WHERE name = \(name)
                """
            ).first
        else { return nil }
        let (acl, users, children) = try row.decode((String, [String], [String]).self)
        return RoleRecord(
            name: name, acl: try DocumentCoding.decode(ACL.self, from: acl), users: Set(users),
            childRoles: Set(children))
    }

    /// See ``RoleStorage/updateRole(named:addUsers:removeUsers:addRoles:removeRoles:)``.
    public func updateRole(
        named name: String, addUsers: Set<String>, removeUsers: Set<String>, addRoles: Set<String>,
        removeRoles: Set<String>
    ) async throws -> RoleRecord {
        let (addUsers, removeUsers) = (addUsers.sorted(), removeUsers.sorted())
        let (addRoles, removeRoles) = (addRoles.sorted(), removeRoles.sorted())
        return try await transaction { session in
            // The role's row locked: a concurrent delete waits, or has happened.
            guard try !session.query("SELECT 1 FROM roles WHERE name = \(name) FOR UPDATE").isEmpty else {
                throw RooftopError(.notFound, "no role named '\(name)'")
            }
            try session.execute(
                """
                INSERT INTO role_users (role, user_id) SELECT \(name), unnest(\(addUsers)::text[])
                ON CONFLICT DO NOTHING
                """)
            try session.execute("DELETE FROM role_users WHERE role = \(name) AND user_id = ANY(\(removeUsers))")
            try session.execute(
                """
                INSERT INTO role_children (role, child) SELECT \(name), unnest(\(addRoles)::text[])
                ON CONFLICT DO NOTHING
                """)
            try session.execute("DELETE FROM role_children WHERE role = \(name) AND child = ANY(\(removeRoles))")
            guard let role = try Self.role(named: name, session) else {
                throw RooftopError(.notFound, "no role named '\(name)'")
            }
            return role
        }
    }

    /// See ``RoleStorage/deleteRole(named:)``.
    public func deleteRole(named name: String) async throws {
        let retired = Timestamp.now.millisecondsSinceEpoch
        try await transaction { session in
            try session.execute("DELETE FROM role_children WHERE child = \(name)")
            guard try session.execute("DELETE FROM roles WHERE name = \(name)") > 0 else { return }
            try session.execute(
                "INSERT INTO retired_roles (name, retired_at) VALUES (\(name), \(retired)) ON CONFLICT DO NOTHING")
        }
    }

    /// See ``RoleStorage/roleGraph()``.
    public func roleGraph() async throws -> RoleGraph {
        try await read { session in
            var users: [String: Set<String>] = [:]
            var children: [String: Set<String>] = [:]
            let rows = try session.query(
                """
                SELECT r.name, ARRAY(SELECT user_id FROM role_users u WHERE u.role = r.name),
                ARRAY(SELECT child FROM role_children c WHERE c.role = r.name) FROM roles r
                """)
            for row in rows {
                let (name, members, childRoles) = try row.decode((String, [String], [String]).self)
                users[name] = Set(members)
                children[name] = Set(childRoles)
            }
            return RoleGraph(users: users, childRoles: children)
        }
    }
}
