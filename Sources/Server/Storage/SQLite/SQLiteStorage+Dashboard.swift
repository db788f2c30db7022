import GRDB
import RooftopShared

extension SQLiteStorage {
    /// See ``AccountStorage/insertDashboardSession(tokenHash:expiresAt:now:)``.
    public func insertDashboardSession(tokenHash: String, expiresAt: Timestamp, now: Timestamp) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "DELETE FROM dashboard_sessions WHERE expires_at < ?", arguments: [now.millisecondsSinceEpoch])
            try db.execute(
                sql: "INSERT INTO dashboard_sessions (token_hash, expires_at) VALUES (?, ?)",
                arguments: [tokenHash, expiresAt.millisecondsSinceEpoch])
        }
    }

    /// See ``AccountStorage/dashboardSessionExpiry(tokenHash:)``.
    public func dashboardSessionExpiry(tokenHash: String) async throws -> Timestamp? {
        try await pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT expires_at FROM dashboard_sessions WHERE token_hash = ?", arguments: [tokenHash])
                .map(Timestamp.init(millisecondsSinceEpoch:))
        }
    }

    /// See ``AccountStorage/deleteDashboardSession(tokenHash:)``.
    public func deleteDashboardSession(tokenHash: String) async throws {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM dashboard_sessions WHERE token_hash = ?", arguments: [tokenHash])
        }
    }

    /// See ``AccountStorage/deleteDashboardSessions()``.
    public func deleteDashboardSessions() async throws -> Int {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM dashboard_sessions")
            return db.changesCount
        }
    }
}
