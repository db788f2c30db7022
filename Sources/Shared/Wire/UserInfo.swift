/// What a client learns about a user: identity and effective roles.
///
/// The roles are the user's effective roles (direct and through child roles, see ``RoleGraph``),
/// so a client can evaluate role-based ACLs offline (``accessContext``).
///
/// Wire form: `{"objectId": "u1", "username": "ada", "email": "ada@example.com",
/// "roles": ["Members", "Moderators"], "createdAt": 1763779346123}` (`email` and `createdAt`
/// optional; `roles` sorted).
public struct UserInfo: Hashable, Sendable, Codable {
    /// The user's ID (the principal used in ACLs).
    public var objectId: String
    /// The user name.
    public var username: String
    /// The e-mail address, when known and visible to the caller.
    public var email: String?
    /// The user's effective role names, sorted.
    public var roles: [String]
    /// When the account was created.
    public var createdAt: Timestamp?

    /// Creates user information; `roles` are sorted and de-duplicated.
    public init(
        objectId: String, username: String, email: String? = nil, roles: [String] = [], createdAt: Timestamp? = nil
    ) {
        self.objectId = objectId
        self.username = username
        self.email = email
        self.roles = Array(Set(roles)).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        self.createdAt = createdAt
    }

    /// The access context of this user acting with these roles (no admin key).
    public var accessContext: AccessContext {
        AccessContext(userId: objectId, roles: Set(roles))
    }
}
