/// A signed-in session: the user, the token to send with requests, and when it expires.
///
/// Wire form: `{"user": {<UserInfo>}, "sessionToken": "r:9f8e...", "expiresAt": 1766371346123}`.
/// The token is a secret: ``description`` leaves it out.
public struct Session: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The signed-in user.
    public var user: UserInfo
    /// The bearer token for later requests.
    public var sessionToken: String
    /// When the token stops being accepted.
    public var expiresAt: Timestamp

    /// Creates a session.
    public init(user: UserInfo, sessionToken: String, expiresAt: Timestamp) {
        self.user = user
        self.sessionToken = sessionToken
        self.expiresAt = expiresAt
    }

    /// Whether the session has expired at a given time (pass the current time).
    public func isExpired(at now: Timestamp) -> Bool { now >= expiresAt }

    /// The user and expiry, without the token.
    public var description: String {
        "Session(user: \(user.username) [\(user.objectId)], expiresAt: \(expiresAt))"
    }
}
