/// A request to create a role.
///
/// Wire form: `{"name": "Moderators", "users": ["u1"], "roles": ["Admins"], "acl": {...}}`
/// (`users`, `roles` and `acl` optional).
public struct CreateRoleRequest: Hashable, Sendable, Codable {
    /// The new role's name: an ID (1-64 of `A-Z a-z 0-9 . - _ + / =`), not starting with `:`.
    public var name: String
    /// The users to list directly.
    public var users: [String]
    /// The child roles to list directly (their members join the new role).
    public var roles: [String]
    /// Who may read and change the role.
    public var acl: ACL?

    /// Creates a request.
    public init(name: String, users: [String] = [], roles: [String] = [], acl: ACL? = nil) {
        self.name = name
        self.users = users
        self.roles = roles
        self.acl = acl
    }

    /// Decodes the wire form; missing lists are empty.
    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, allowed: CodingKeys.allCases.map(\.rawValue), in: "role creation")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.name = try container.decode(String.self, forKey: .name)
        self.users = try container.decodeIfPresent([String].self, forKey: .users) ?? []
        self.roles = try container.decodeIfPresent([String].self, forKey: .roles) ?? []
        self.acl = try container.decodeIfPresent(ACL.self, forKey: .acl)
    }

    /// Checks the role name, the names of the child roles and the users, and how many are listed.
    /// - Throws: ``RooftopError/Code/illegalArgument`` for an invalid or reserved name;
    ///   ``RooftopError/Code/sizeLimit`` for more than ``RoleInfo/maxNamesPerWrite`` users or roles.
    public func validate() throws(RooftopError) {
        try RoleInfo.validateName(name)
        try RoleInfo.validateCount(users, field: "users")
        try RoleInfo.validateCount(roles, field: "roles")
        for role in roles { try RoleInfo.validateName(role) }
        for user in users where !Identifier.isValid(user) || Identifier.isReserved(user) {
            throw RooftopError(.illegalArgument, "invalid user ID '\(user.prefix(80))'", field: "users")
        }
    }

    private enum CodingKeys: String, CodingKey, CaseIterable { case name, users, roles, acl }
}
