import PostgresNIO
import RooftopShared

extension PostgresStorage {
    /// See ``AccountStorage/insertDashboardSession(tokenHash:expiresAt:now:)``.
    public func insertDashboardSession(tokenHash: String, expiresAt: Timestamp, now: Timestamp) async throws {
        try await transaction { session in
            try session.execute("DELETE FROM dashboard_sessions WHERE expires_at < \(now.millisecondsSinceEpoch)")
            try session.execute(
                """
                INSERT INTO dashboard_sessions (token_hash, expires_at)
                VALUES (\(tokenHash), \(expiresAt.millisecondsSinceEpoch))
                """)
        }
    }

    /// See ``AccountStorage/dashboardSessionExpiry(tokenHash:)``.
    public func dashboardSessionExpiry(tokenHash: String) async throws -> Timestamp? {
        try await read { session in
            try session.query("SELECT expires_at FROM dashboard_sessions WHERE token_hash = \(tokenHash)").first
                .map { Timestamp(millisecondsSinceEpoch: try $0.decode(Int64.self)) }
        }
    }

    /// See ``AccountStorage/deleteDashboardSession(tokenHash:)``.
    public func deleteDashboardSession(tokenHash: String) async throws {
        try await read { session in
            try session.execute("DELETE FROM dashboard_sessions WHERE token_hash = \(tokenHash)")
        }
    }

    /// See ``AccountStorage/deleteDashboardSessions()``.
    public func deleteDashboardSessions() async throws -> Int {
        try await read { session in try session.execute("DELETE FROM dashboard_sessions") }
    }
}
