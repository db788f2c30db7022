import Foundation
import GRDB
import RooftopShared

/// Users and their sessions (``AccountStorage``; the dashboard's sessions are in
/// `SQLiteStorage+Dashboard.swift`).
extension SQLiteStorage {
    /// See ``AccountStorage/insertUser(_:)``.
    public func insertUser(_ user: UserRecord) async throws {
        let key = SignUpRequest.usernameKey(user.username)
        try await pool.write { db in
            if try Bool.fetchOne(
                db, sql: "SELECT 1 FROM users WHERE username = ? OR name_key = ?", arguments: [user.username, key]) == true
            {
                throw RooftopError.usernameTaken(user.username)
            }
            try db.execute(
                sql: "INSERT INTO users (id, username, name_key, email, password_hash, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [
                    user.id, user.username, key, user.email, user.passwordHash, user.createdAt.millisecondsSinceEpoch,
                ])
        }
    }

    /// See ``AccountStorage/user(id:)``.
    public func user(id: String) async throws -> UserRecord? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM users WHERE id = ?", arguments: [id]).map(Self.user(from:))
        }
    }

    /// See ``AccountStorage/user(logInName:)``.
    public func user(logInName name: String) async throws -> UserRecord? {
        let lookup = UserNameLookup(name)
        return try await pool.read { db in
            lookup.choose(
                try Row.fetchAll(
                    db, sql: "SELECT * FROM users WHERE username IN (?, ?) OR name_key = ?",
                    arguments: [lookup.name, lookup.normalized, lookup.key]
                ).map(Self.user(from:)))
        }
    }

    private static func user(from row: Row) -> UserRecord {
        UserRecord(
            id: row["id"], username: row["username"], email: row["email"], passwordHash: row["password_hash"],
            createdAt: Timestamp(millisecondsSinceEpoch: row["created_at"]))
    }

    /// See ``AccountStorage/insertSession(_:)``.
    public func insertSession(_ session: SessionRecord) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "INSERT INTO sessions (token_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
                arguments: [
                    session.tokenHash, session.userId, session.createdAt.millisecondsSinceEpoch,
                    session.expiresAt.millisecondsSinceEpoch,
                ])
        }
    }

    /// See ``AccountStorage/session(tokenHash:)``.
    public func session(tokenHash: String) async throws -> SessionRecord? {
        try pointRead { db in
            // Every request's: prepared once.
            try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM sessions WHERE token_hash = ?"), arguments: [tokenHash])
                .map(Self.session(from:))
        }
    }

    /// See ``AccountStorage/deleteSession(tokenHash:)``.
    public func deleteSession(tokenHash: String) async throws {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM sessions WHERE token_hash = ?", arguments: [tokenHash])
        }
    }

    /// See ``AccountStorage/deleteSessions(expiredBefore:)``.
    public func deleteSessions(expiredBefore time: Timestamp) async throws -> Int {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM sessions WHERE expires_at < ?", arguments: [time.millisecondsSinceEpoch])
            return db.changesCount
        }
    }

    /// See ``AccountStorage/users(after:limit:)``.
    public func users(after username: String?, limit: Int) async throws -> [UserRecord] {
        try await pool.read { db in
            // SQLite compares text by its bytes (BINARY): UTF-8 order.
            try Row.fetchAll(
                db, sql: "SELECT * FROM users WHERE username > ? ORDER BY username LIMIT ?",
                arguments: [username ?? "", limit]
            ).map(Self.user(from:))
        }
    }

    /// See ``AccountStorage/sessions(userId:)``.
    public func sessions(userId: String) async throws -> [SessionRecord] {
        try await pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM sessions WHERE user_id = ? ORDER BY created_at DESC", arguments: [userId]
            ).map(Self.session(from:))
        }
    }

    /// See ``AccountStorage/deleteSessions(userId:)``.
    public func deleteSessions(userId: String) async throws -> [String] {
        try await pool.write { db in
            let hashes = try String.fetchAll(
                db, sql: "SELECT token_hash FROM sessions WHERE user_id = ?", arguments: [userId])
            try db.execute(sql: "DELETE FROM sessions WHERE user_id = ?", arguments: [userId])
            return hashes
        }
    }

    /// See ``AccountStorage/setPasswordHash(_:userId:)``.
    public func setPasswordHash(_ hash: String, userId: String) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "UPDATE users SET password_hash = ? WHERE id = ?", arguments: [hash, userId])
            return db.changesCount > 0
        }
    }

    private static func session(from row: Row) -> SessionRecord {
        SessionRecord(
            tokenHash: row["token_hash"], userId: row["user_id"],
            createdAt: Timestamp(millisecondsSinceEpoch: row["created_at"]),
            expiresAt: Timestamp(millisecondsSinceEpoch: row["expires_at"]))
    }
}
