import GRDB
import RooftopShared

extension SQLiteStorage {
    /// See ``DatastoreStorage/datastore(id:ownerId:)``.
    public func datastore(id: DatastoreID, ownerId: String?) async throws -> DatastoreRecord? {
        try pointRead { db in
            try Self.datastore(
                db, where: "scope = ? AND id = ?", arguments: [DatastoreRecord.scope(of: id, ownerId: ownerId), id.rawValue])
        }
    }

    /// See ``DatastoreStorage/datastore(key:)``.
    public func datastore(key: Int64) async throws -> DatastoreRecord? {
        try pointRead { db in
            try Self.datastore(db, where: "key = ?", arguments: [key])
        }
    }

    /// The datastore `condition` (on `datastores d`) selects, if any, with its sharing roles
    /// (``datastoreColumns``).
    /// - Throws: GRDB's errors; what ``datastore(from:)`` throws.
    static func datastore(_ db: Database, where condition: String, arguments: StatementArguments) throws -> DatastoreRecord? {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT \(datastoreColumns) FROM datastores d WHERE \(condition)"),
                arguments: arguments)
        else { return nil }
        return try datastore(from: row)
    }

    /// The datastores `condition` (on `datastores d`, with its ordering and limit) selects, with
    /// their sharing roles (``datastoreColumns``).
    /// - Throws: GRDB's errors; what ``datastore(from:)`` throws.
    static func datastores(_ db: Database, where condition: String, arguments: StatementArguments) throws -> [DatastoreRecord] {
        try Row.fetchAll(db, sql: "SELECT \(datastoreColumns) FROM datastores d WHERE \(condition)", arguments: arguments)
            .map(datastore(from:))
    }

    /// The columns ``datastore(from:)`` reads, `FROM datastores d`: the datastore's row and its
    /// sharing roles (a JSON array of `[principal, role]` pairs, `NULL` when it has none), in one
    /// statement, so that a read of a datastore by ID or key is one statement (every REST request
    /// on a datastore makes one).
    static let datastoreColumns = """
        d.*, (SELECT json_group_array(json_array(CAST(r.principal AS TEXT), CAST(r.role AS TEXT))) FROM datastore_roles r
            WHERE r.datastore_key = d.key HAVING count(*) > 0) AS sharing_roles
        """

    /// The datastore of a row of ``datastoreColumns``. A sharing row naming no principal or role
    /// this server reads grants nothing (``DatastoreRecord/sharingRoles(_:datastoreKey:logger:)``).
    /// - Throws: `internal` when the sharing roles' column is not a list of pairs; what
    ///   `DatastoreID.init(_:)` throws for a stored ID it does not accept.
    static func datastore(from row: Row) throws -> DatastoreRecord {
        let key: Int64 = row["key"]
        var pairs: [(principal: String, role: String)] = []
        if let text: String = row["sharing_roles"] {
            let decoded: [[String]]
            do {
                decoded = try DocumentCoding.decode([[String]].self, from: text)
            } catch {
                throw RooftopError(.internal, "the sharing roles of datastore \(key) cannot be read")
            }
            for pair in decoded {
                guard pair.count == 2 else { throw RooftopError(.internal, "a sharing role of datastore \(key) is not a pair") }
                pairs.append((principal: pair[0], role: pair[1]))
            }
        }
        let roles = DatastoreRecord.sharingRoles(pairs, datastoreKey: key)
        let idText: String = row["id"]
        let id = try DatastoreID(idText)
        var record = DatastoreRecord(
            key: key, id: id, ownerId: row["owner_id"], title: row["title"],
            createdAt: Timestamp(millisecondsSinceEpoch: row["created_at"]), sequence: row["sequence"],
            recordCount: row["record_count"], sizeBytes: row["size_bytes"], roles: roles)
        record.historyFrom = row["history_from"]
        return record
    }

    /// See ``DatastoreStorage/openOrCreateDatastore(id:ownerId:title:)``.
    public func openOrCreateDatastore(id: DatastoreID, ownerId: String?, title: String?) async throws -> DatastoreRecord {
        try await pool.write { db in
            let scope = DatastoreRecord.scope(of: id, ownerId: ownerId)
            if let existing = try Self.datastore(db, where: "scope = ? AND id = ?", arguments: [scope, id.rawValue]) {
                return existing
            }
            // A key never used before (see the v2 migration); the allocator table stays empty.
            try db.execute(sql: "INSERT INTO datastore_keys DEFAULT VALUES")
            let key = db.lastInsertedRowID
            try db.execute(sql: "DELETE FROM datastore_keys WHERE key = ?", arguments: [key])
            try db.execute(
                sql: """
                    INSERT INTO datastores (key, id, scope, owner_id, title, created_at, size_bytes)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    key, id.rawValue, scope, id.kind == .app ? nil : ownerId, title,
                    Timestamp.now.millisecondsSinceEpoch, SizeAccounting.datastoreBaseBytes,
                ])
            guard let created = try Self.datastore(db, where: "key = ?", arguments: [key]) else {
                throw RooftopError(.internal, "datastore \(id) vanished after creation")
            }
            return created
        }
    }

    /// See ``DatastoreStorage/datastores(ownedBy:sharedWith:)``.
    public func datastores(ownedBy ownerId: String, sharedWith principals: Set<String>) async throws -> [DatastoreRecord] {
        try await pool.read { db in
            let (placeholders, principalArguments) = Self.principalList(principals)
            let shared = principals.isEmpty
                ? ""
                : " OR key IN (SELECT datastore_key FROM datastore_roles WHERE principal IN (\(placeholders)) AND role != 'none')"
            var arguments: [any DatabaseValueConvertible] = [ownerId]
            if !principals.isEmpty { arguments.append(contentsOf: principalArguments) }
            return try Self.datastores(
                db, where: "owner_id = ?\(shared) ORDER BY id, key", arguments: StatementArguments(arguments))
        }
    }

    /// See ``DatastoreStorage/allDatastores(afterKey:limit:)``.
    public func allDatastores(afterKey key: Int64, limit: Int) async throws -> [DatastoreRecord] {
        try await pool.read { db in
            try Self.datastores(db, where: "key > ? ORDER BY key LIMIT ?", arguments: [key, limit])
        }
    }

    /// See ``DatastoreStorage/classNames(datastoreKey:)``.
    public func classNames(datastoreKey: Int64) async throws -> [String] {
        try await pool.read { db in
            try String.fetchAll(
                db, sql: "SELECT DISTINCT class_name FROM objects WHERE datastore_key = ? AND deleted = 0 ORDER BY class_name",
                arguments: [datastoreKey])
        }
    }

    /// See ``Storage/statistics()``.
    public func statistics() async throws -> StorageStatistics {
        try await pool.read { db in
            StorageStatistics(
                users: try Int.fetchOne(db, sql: "SELECT count(*) FROM users") ?? 0,
                datastores: try Int.fetchOne(db, sql: "SELECT count(*) FROM datastores") ?? 0,
                objects: try Int.fetchOne(db, sql: "SELECT coalesce(sum(record_count), 0) FROM datastores") ?? 0)
        }
    }

    /// See ``DatastoreStorage/setRole(_:for:datastoreKey:)``.
    public func setRole(_ role: SharingRole, for principal: Principal, datastoreKey: Int64) async throws {
        try await pool.write { db in
            if role == .none {
                try db.execute(
                    sql: "DELETE FROM datastore_roles WHERE datastore_key = ? AND principal = ?",
                    arguments: [datastoreKey, principal.description])
            } else {
                try db.execute(
                    sql: """
                        INSERT INTO datastore_roles (datastore_key, principal, role) VALUES (?, ?, ?)
                        ON CONFLICT(datastore_key, principal) DO UPDATE SET role = excluded.role
                        """,
                    arguments: [datastoreKey, principal.description, role.name])
            }
        }
    }

    /// See ``DatastoreStorage/deleteDatastore(key:)``.
    public func deleteDatastore(key: Int64) async throws {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM datastores WHERE key = ?", arguments: [key])
        }
    }
}
