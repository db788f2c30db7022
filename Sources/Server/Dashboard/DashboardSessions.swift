import Crypto
import Foundation
import RooftopShared
import Synchronization

/// The dashboard's sign-in sessions: the admin key, checked once, is exchanged for a short-lived
/// token in a cookie (`Secure`, `HttpOnly`, `SameSite=Strict`); the key itself is never stored in
/// the browser nor put in a URL.
///
/// A token is `v1.EXPIRY.NONCE.MAC`: its expiry (milliseconds), a random nonce, and an HMAC of both
/// (base64url, like session tokens and checkpoints)
/// with a key every server process shares (``ServerServices/dashboardKey``), so any process behind
/// a load balancer accepts it. Signing out revokes the nonce in this process and clears the
/// cookie; elsewhere the token stays valid until it expires (``lifetime``).
///
/// Forms carry a CSRF token: an HMAC of the session's nonce, checked on every POST.
final class DashboardSessions: Sendable {
    /// How long a session lasts.
    static let lifetime: Int64 = 30 * 60 * 1000
    /// The cookie's name.
    static let cookieName = "rooftop_dashboard"

    private let key: SymmetricKey
    private let clock: @Sendable () -> Timestamp
    private let revoked = Mutex<[String: Int64]>([:])

    init(key: [UInt8], clock: @escaping @Sendable () -> Timestamp) {
        self.key = SymmetricKey(data: key)
        self.clock = clock
    }

    /// A signed-in session.
    struct Session: Sendable {
        var nonce: String
        var expiresAt: Int64
    }

    /// A new session's token.
    func start() -> (token: String, session: Session) {
        var generator = SystemRandomNumberGenerator()
        let nonce = SessionToken.base64URL((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let expiresAt = clock().millisecondsSinceEpoch.addingSaturating(Self.lifetime)
        let body = "v1.\(expiresAt).\(nonce)"
        return (body + "." + mac(body), Session(nonce: nonce, expiresAt: expiresAt))
    }

    /// The session a token stands for; `nil` for a token that is malformed, forged, expired or
    /// revoked here.
    func session(token: String?) -> Session? {
        guard let token else { return nil }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "v1", let expiresAt = Int64(parts[1]) else { return nil }
        guard authentic(String(parts[3]), of: "v1.\(parts[1]).\(parts[2])") else { return nil }
        let now = clock().millisecondsSinceEpoch
        guard expiresAt > now else { return nil }
        let nonce = String(parts[2])
        guard revoked.withLock({ $0[nonce] == nil }) else { return nil }
        return Session(nonce: nonce, expiresAt: expiresAt)
    }

    /// Revokes a session in this process.
    func revoke(_ session: Session) {
        let now = clock().millisecondsSinceEpoch
        revoked.withLock { revoked in
            revoked = revoked.filter { $0.value > now }
            revoked[session.nonce] = session.expiresAt
        }
    }

    /// The CSRF token of a session's forms.
    func csrfToken(for session: Session) -> String {
        mac("csrf." + session.nonce)
    }

    /// Whether a form's CSRF token is its session's.
    func checkCSRF(_ token: String?, for session: Session) -> Bool {
        guard let token else { return false }
        return authentic(token, of: "csrf." + session.nonce)
    }

    private func mac(_ text: String) -> String {
        SessionToken.base64URL(Array(HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: key)))
    }

    /// Whether `code` is the MAC of `text` (compared in constant time, by CryptoKit).
    private func authentic(_ code: String, of text: String) -> Bool {
        guard let bytes = CheckpointCodec.base64URLDecode(code) else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(bytes, authenticating: Data(text.utf8), using: key)
    }
}
