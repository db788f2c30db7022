/// A page of users, for administration: `GET /v1/users?after=NAME&limit=N` with the admin key.
///
/// Wire form: `{"users": [<UserInfo>, ...], "next": "zoe"}` (`next`, the name to continue after,
/// only when there may be more).
public struct UserList: Hashable, Sendable, Codable {
    /// The users, in user-name order.
    public var users: [UserInfo]
    /// The `after` of the next page; `nil` on the last page.
    public var next: String?

    /// Creates a page.
    public init(users: [UserInfo], next: String?) {
        self.users = users
        self.next = next
    }
}

/// One of a user's sessions, for administration (never its token).
///
/// Wire form: `{"id": "3f2a…", "createdAt": 1763779346123, "expiresAt": 1766371346123}`.
public struct SessionInfo: Hashable, Sendable, Codable {
    /// The session's ID: the SHA-256 of its token, in hex (the token cannot be derived from it).
    public var id: String
    /// When the user signed in.
    public var createdAt: Timestamp
    /// When it stops being valid.
    public var expiresAt: Timestamp

    /// Creates a description.
    public init(id: String, createdAt: Timestamp, expiresAt: Timestamp) {
        self.id = id
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

/// A user's sessions: `GET /v1/users/{id}/sessions`.
///
/// Wire form: `{"sessions": [<SessionInfo>, ...]}`, newest first.
public struct SessionList: Hashable, Sendable, Codable {
    /// The sessions, newest first.
    public var sessions: [SessionInfo]

    /// Creates a list.
    public init(sessions: [SessionInfo]) { self.sessions = sessions }
}

/// How many sessions an administrator ended: `DELETE /v1/users/{id}/sessions`.
///
/// Wire form: `{"revoked": 2}`.
public struct RevokedSessions: Hashable, Sendable, Codable {
    /// The number of sessions ended.
    public var revoked: Int

    /// Creates an answer.
    public init(revoked: Int) { self.revoked = revoked }
}

/// A new password set by an administrator: `PUT /v1/users/{id}/password`.
///
/// Wire form: `{"password": "…"}`.
public struct SetPasswordRequest: Hashable, Sendable, Codable {
    /// The new password (the rules of ``SignUpRequest``).
    public var password: String

    /// Creates a request.
    public init(password: String) { self.password = password }

    /// Decodes the wire form, refusing unknown keys.
    /// - Throws: `DecodingError` for a missing password or another key.
    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, allowed: ["password"], in: "password change")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.password = try container.decode(String.self, forKey: .password)
    }

    private enum CodingKeys: String, CodingKey { case password }

    /// Checks the password's length.
    /// - Throws: ``RooftopError/Code/illegalArgument`` (field `password`); the message never
    ///   contains the password.
    public func validate() throws(RooftopError) {
        try SignUpRequest(username: "x", password: password).validate()
    }
}
