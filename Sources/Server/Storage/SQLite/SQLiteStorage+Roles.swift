import GRDB
import RooftopShared

extension SQLiteStorage {
    /// See ``RoleStorage/insertRole(_:)``.
    public func insertRole(_ role: RoleRecord) async throws {
        try await pool.write { db in
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM roles WHERE name = ?", arguments: [role.name]) == true {
                throw RooftopError(.exists, "a role named '\(role.name)' exists")
            }
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM retired_roles WHERE name = ?", arguments: [role.name]) == true {
                throw RooftopError(.exists, RoleRecord.retiredMessage(role.name))
            }
            try db.execute(
                sql: "INSERT INTO roles (name, acl, created_at) VALUES (?, ?, ?)",
                arguments: [role.name, try DocumentCoding.encode(role.acl), Timestamp.now.millisecondsSinceEpoch])
            for user in role.users {
                try db.execute(sql: "INSERT INTO role_users (role, user_id) VALUES (?, ?)", arguments: [role.name, user])
            }
            for child in role.childRoles {
                try db.execute(sql: "INSERT INTO role_children (role, child) VALUES (?, ?)", arguments: [role.name, child])
            }
        }
    }

    /// See ``RoleStorage/role(named:)``.
    public func role(named name: String) async throws -> RoleRecord? {
        try await pool.read { db in try Self.role(named: name, in: db) }
    }

    private static func role(named name: String, in db: Database) throws -> RoleRecord? {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM roles WHERE name = ?", arguments: [name]) else {
            return nil
        }
        let users = try String.fetchAll(db, sql: "SELECT user_id FROM role_users WHERE role = ?", arguments: [name])
        let children = try String.fetchAll(db, sql: "SELECT child FROM role_children WHERE role = ?", arguments: [name])
        let acl = try DocumentCoding.decode(ACL.self, from: row["acl"])
        return RoleRecord(name: name, acl: acl, users: Set(users), childRoles: Set(children))
    }

    /// See ``RoleStorage/updateRole(named:addUsers:removeUsers:addRoles:removeRoles:)``.
    public func updateRole(
        named name: String, addUsers: Set<String>, removeUsers: Set<String>, addRoles: Set<String>,
        removeRoles: Set<String>
    ) async throws -> RoleRecord {
        try await pool.write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM roles WHERE name = ?", arguments: [name]) == true else {
                throw RooftopError(.notFound, "no role named '\(name)'")
            }
            for user in addUsers {
                try db.execute(
                    sql: "INSERT OR IGNORE INTO role_users (role, user_id) VALUES (?, ?)", arguments: [name, user])
            }
            for user in removeUsers {
                try db.execute(sql: "DELETE FROM role_users WHERE role = ? AND user_id = ?", arguments: [name, user])
            }
            for child in addRoles {
                try db.execute(
                    sql: "INSERT OR IGNORE INTO role_children (role, child) VALUES (?, ?)", arguments: [name, child])
            }
            for child in removeRoles {
                try db.execute(sql: "DELETE FROM role_children WHERE role = ? AND child = ?", arguments: [name, child])
            }
            guard let role = try Self.role(named: name, in: db) else {
                throw RooftopError(.notFound, "no role named '\(name)'")
            }
            return role
        }
    }

    /// See ``RoleStorage/deleteRole(named:)``.
    public func deleteRole(named name: String) async throws {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM role_children WHERE child = ?", arguments: [name])
            try db.execute(sql: "DELETE FROM roles WHERE name = ?", arguments: [name])
            guard db.changesCount > 0 else { return }
            try db.execute(
                sql: "INSERT OR IGNORE INTO retired_roles (name, retired_at) VALUES (?, ?)",
                arguments: [name, Timestamp.now.millisecondsSinceEpoch])
        }
    }

    /// See ``RoleStorage/roleGraph()``.
    public func roleGraph() async throws -> RoleGraph {
        try await pool.read { db in
            var users: [String: Set<String>] = [:]
            var children: [String: Set<String>] = [:]
            for name in try String.fetchAll(db, sql: "SELECT name FROM roles") {
                users[name] = []
                children[name] = []
            }
            for row in try Row.fetchAll(db, sql: "SELECT role, user_id FROM role_users") {
                users[row["role"], default: []].insert(row["user_id"])
            }
            for row in try Row.fetchAll(db, sql: "SELECT role, child FROM role_children") {
                children[row["role"], default: []].insert(row["child"])
            }
            return RoleGraph(users: users, childRoles: children)
        }
    }
}
