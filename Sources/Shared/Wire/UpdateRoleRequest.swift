/// A request to change a role's direct members.
///
/// Wire form: `{"addUsers": ["u3"], "removeUsers": ["u1"], "addRoles": ["Admins"],
/// "removeRoles": []}` (every member optional, missing means empty). Removals apply after
/// additions, so a name in both ends up removed.
public struct UpdateRoleRequest: Hashable, Sendable, Codable {
    /// Users to add.
    public var addUsers: [String]
    /// Users to remove.
    public var removeUsers: [String]
    /// Child roles to add.
    public var addRoles: [String]
    /// Child roles to remove.
    public var removeRoles: [String]

    /// Creates a request.
    public init(
        addUsers: [String] = [], removeUsers: [String] = [], addRoles: [String] = [], removeRoles: [String] = []
    ) {
        self.addUsers = addUsers
        self.removeUsers = removeUsers
        self.addRoles = addRoles
        self.removeRoles = removeRoles
    }

    /// Decodes the wire form; missing lists are empty.
    /// - Throws: `DecodingError` for a member of the wrong type or a key outside the four lists
    ///   (a misspelled `"addUser"` must not answer success without changing the role).
    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, allowed: CodingKeys.allCases.map(\.rawValue), in: "role update")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.addUsers = try container.decodeIfPresent([String].self, forKey: .addUsers) ?? []
        self.removeUsers = try container.decodeIfPresent([String].self, forKey: .removeUsers) ?? []
        self.addRoles = try container.decodeIfPresent([String].self, forKey: .addRoles) ?? []
        self.removeRoles = try container.decodeIfPresent([String].self, forKey: .removeRoles) ?? []
    }

    /// Checks how many names each list holds (the names themselves are checked by the server).
    /// - Throws: ``RooftopError/Code/sizeLimit`` for a list of more than ``RoleInfo/maxNamesPerWrite``.
    public func validateCounts() throws(RooftopError) {
        try RoleInfo.validateCount(addUsers, field: "addUsers")
        try RoleInfo.validateCount(removeUsers, field: "removeUsers")
        try RoleInfo.validateCount(addRoles, field: "addRoles")
        try RoleInfo.validateCount(removeRoles, field: "removeRoles")
    }

    /// The role after the change: additions first, then removals.
    public func applied(to role: RoleInfo) -> RoleInfo {
        let users = Set(role.users).union(addUsers).subtracting(removeUsers)
        let roles = Set(role.roles).union(addRoles).subtracting(removeRoles)
        return RoleInfo(name: role.name, users: Array(users), roles: Array(roles), acl: role.acl)
    }

    private enum CodingKeys: String, CodingKey, CaseIterable { case addUsers, removeUsers, addRoles, removeRoles }
}
