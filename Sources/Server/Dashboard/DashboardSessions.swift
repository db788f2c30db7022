import Foundation
import RooftopShared

/// The dashboard's sign-in sessions: the admin key, checked once, is exchanged for a random
/// token in a cookie (`Secure`, `HttpOnly`, `SameSite=Strict`); the key itself is never stored in
/// the browser nor put in a URL.
///
/// The server keeps only the token's SHA-256, in the storage every server process shares (as it
/// keeps users' sessions): a copy of the database cannot be turned into a session, and signing
/// out — or starting a server with another admin key (``AdminKey``) — ends the session in every
/// process at once. Each page reads it back, one indexed lookup.
///
/// Forms carry a CSRF token: the SHA-256 of `csrf.` and the session's token. Only a page the
/// session's cookie loaded can know it (the cookie is `HttpOnly`, and another site's page can
/// neither read it nor the dashboard's pages), and it does not reveal the session's token.
final class DashboardSessions: Sendable {
    /// How long a session lasts.
    static let lifetime: Int64 = 30 * 60 * 1000
    /// The cookie's name.
    static let cookieName = "rooftop_dashboard"
    /// The longest token looked up; longer cookies are no session.
    static let maxTokenBytes = 128

    private let storage: any AccountStorage
    private let clock: ServerClock

    init(storage: any AccountStorage, clock: ServerClock) {
        self.storage = storage
        self.clock = clock
    }

    /// A signed-in session.
    struct Session: Sendable {
        var token: String
        var expiresAt: Int64
    }

    /// Starts a session; returns the cookie's token.
    /// - Throws: Storage errors.
    func start() async throws -> (token: String, session: Session) {
        let token = SessionToken.generate()
        let now = clock.now()
        let expiresAt = now.millisecondsSinceEpoch.addingSaturating(Self.lifetime)
        try await storage.insertDashboardSession(
            tokenHash: SessionToken.hash(token), expiresAt: Timestamp(millisecondsSinceEpoch: expiresAt), now: now)
        return (token, Session(token: token, expiresAt: expiresAt))
    }

    /// The session a cookie's token stands for; `nil` for a token that is missing, unknown,
    /// expired or ended.
    /// - Throws: Storage errors.
    func session(token: String?) async throws -> Session? {
        guard let token, !token.isEmpty, token.utf8.count <= Self.maxTokenBytes else { return nil }
        guard let expiry = try await storage.dashboardSessionExpiry(tokenHash: SessionToken.hash(token)),
            expiry.millisecondsSinceEpoch > clock.now().millisecondsSinceEpoch
        else { return nil }
        return Session(token: token, expiresAt: expiry.millisecondsSinceEpoch)
    }

    /// Ends a session, in every server process.
    /// - Throws: Storage errors.
    func revoke(_ session: Session) async throws {
        try await storage.deleteDashboardSession(tokenHash: SessionToken.hash(session.token))
    }

    /// The CSRF token of a session's forms.
    func csrfToken(for session: Session) -> String {
        SessionToken.hash("csrf." + session.token)
    }

    /// Whether a form's CSRF token is its session's. Both sides are hashed before they are
    /// compared, so the time taken says nothing of how much of the token matched.
    func checkCSRF(_ token: String?, for session: Session) -> Bool {
        guard let token, token.utf8.count <= 2 * Self.maxTokenBytes else { return false }
        return SessionToken.hash(token) == SessionToken.hash(csrfToken(for: session))
    }
}
