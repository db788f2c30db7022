import Foundation
import NIOCore
import PostgresNIO
import RooftopShared

/// Users and their sessions (``AccountStorage``; the dashboard's sessions are in
/// `PostgresStorage+Dashboard.swift`).
extension PostgresStorage {
    /// See ``AccountStorage/insertUser(_:)``.
    public func insertUser(_ user: UserRecord) async throws {
        let key = SignUpRequest.usernameKey(user.username)
        let inserted = try await read { session in
            // Any unique column: the ID, the name or its key.
            try session.execute(
                """
                INSERT INTO users (id, username, name_key, email, password_hash, created_at)
                VALUES (\(user.id), \(user.username), \(key), \(user.email), \(user.passwordHash),
                \(user.createdAt.millisecondsSinceEpoch))
                ON CONFLICT DO NOTHING
                """)
        }
        guard inserted == 1 else { throw RooftopError.usernameTaken(user.username) }
    }

    private static let userColumns = "id, username, email, password_hash, created_at"

    /// See ``AccountStorage/user(id:)``.
    public func user(id: String) async throws -> UserRecord? {
        try await read { session in
            try session.query("SELECT \(unescaped: Self.userColumns) FROM users WHERE id = \(id)").first.map(Self.user)
        }
    }

    /// See ``AccountStorage/user(logInName:)``.
    public func user(logInName name: String) async throws -> UserRecord? {
        let lookup = UserNameLookup(name)
        return try await read { session in
            lookup.choose(
                try session.query(
                    """
                    SELECT \(unescaped: Self.userColumns) FROM users
                    WHERE username IN (\(lookup.name), \(lookup.normalized)) OR name_key = \(lookup.key)
                    """
                ).map(Self.user))
        }
    }

    private static func user(_ row: PostgresRow) throws -> UserRecord {
        let (id, username, email, hash, created) = try row.decode((String, String, String?, String, Int64).self)
        return UserRecord(
            id: id, username: username, email: email, passwordHash: hash,
            createdAt: Timestamp(millisecondsSinceEpoch: created))
    }

    /// See ``AccountStorage/insertSession(_:)``.
    public func insertSession(_ record: SessionRecord) async throws {
        try await read { session in
            try session.execute(
                """
                INSERT INTO sessions (token_hash, user_id, created_at, expires_at)
                VALUES (\(record.tokenHash), \(record.userId), \(record.createdAt.millisecondsSinceEpoch),
                \(record.expiresAt.millisecondsSinceEpoch))
                """)
        }
    }

    /// See ``AccountStorage/session(tokenHash:)``.
    public func session(tokenHash: String) async throws -> SessionRecord? {
        try await read { session in
            try session.query(
                "SELECT token_hash, user_id, created_at, expires_at FROM sessions WHERE token_hash = \(tokenHash)"
            ).first.map(Self.session)
        }
    }

    /// See ``AccountStorage/deleteSession(tokenHash:)``.
    public func deleteSession(tokenHash: String) async throws {
        try await read { session in
            try session.execute("DELETE FROM sessions WHERE token_hash = \(tokenHash)")
        }
    }

    /// See ``AccountStorage/deleteSessions(expiredBefore:)``.
    public func deleteSessions(expiredBefore time: Timestamp) async throws -> Int {
        try await read { session in
            try session.execute("DELETE FROM sessions WHERE expires_at < \(time.millisecondsSinceEpoch)")
        }
    }

    /// See ``AccountStorage/users(after:limit:)``.
    public func users(after username: String?, limit: Int) async throws -> [UserRecord] {
        try await read { session in
            // COLLATE "C": byte order, as SQLite's.
            try session.query(
                """
                SELECT \(unescaped: Self.userColumns) FROM users WHERE username COLLATE "C" > \(username ?? "")
                ORDER BY username COLLATE "C" LIMIT \(limit)
                """
            ).map(Self.user)
        }
    }

    /// See ``AccountStorage/sessions(userId:)``.
    public func sessions(userId: String) async throws -> [SessionRecord] {
        try await read { session in
            try session.query(
                """
                SELECT token_hash, user_id, created_at, expires_at FROM sessions WHERE user_id = \(userId)
                ORDER BY created_at DESC
                """
            ).map(Self.session)
        }
    }

    /// See ``AccountStorage/deleteSessions(userId:)``.
    public func deleteSessions(userId: String) async throws -> [String] {
        try await read { session in
            try session.query("DELETE FROM sessions WHERE user_id = \(userId) RETURNING token_hash").map {
                try $0.decode(String.self)
            }
        }
    }

    /// See ``AccountStorage/setPasswordHash(_:userId:)``.
    public func setPasswordHash(_ hash: String, userId: String) async throws -> Bool {
        try await read { session in
            try session.execute("UPDATE users SET password_hash = \(hash) WHERE id = \(userId)") > 0
        }
    }

    private static func session(_ row: PostgresRow) throws -> SessionRecord {
        let (hash, user, created, expires) = try row.decode((String, String, Int64, Int64).self)
        return SessionRecord(
            tokenHash: hash, userId: user, createdAt: Timestamp(millisecondsSinceEpoch: created),
            expiresAt: Timestamp(millisecondsSinceEpoch: expires))
    }
}
