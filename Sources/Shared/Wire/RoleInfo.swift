/// A role as stored: its name, direct member users and direct child roles, and the ACL that says
/// who may read and change the role itself (as in Parse, a role is an object with an ACL).
///
/// Wire form: `{"name": "Moderators", "users": ["u1", "u2"], "roles": ["Admins"],
/// "acl": {"role:Admins": {"read": true, "write": true}}}` (`acl` optional; `users` and `roles`
/// sorted). Members of a child role (`Admins` here) are members of this role too.
public struct RoleInfo: Hashable, Sendable, Codable {
    /// The role's name, used in principals as `role:Name`.
    public var name: String
    /// The users listed directly, sorted.
    public var users: [String]
    /// The child roles listed directly, sorted.
    public var roles: [String]
    /// Who may read and change the role; `nil` for no restriction beyond the server's rules.
    public var acl: ACL?

    /// Creates a role description; members are sorted and de-duplicated.
    public init(name: String, users: [String] = [], roles: [String] = [], acl: ACL? = nil) {
        self.name = name
        self.users = sortedUnique(users)
        self.roles = sortedUnique(roles)
        self.acl = acl
    }
}

extension RoleGraph {
    /// Builds a graph from stored roles.
    ///
    /// ```swift
    /// let graph = RoleGraph(roles: try await server.roles())
    /// ```
    public init<S: Sequence<RoleInfo>>(roles: S) {
        var users: [String: Set<String>] = [:]
        var children: [String: Set<String>] = [:]
        for role in roles {
            users[role.name, default: []].formUnion(role.users)
            children[role.name, default: []].formUnion(role.roles)
        }
        self.init(users: users, childRoles: children)
    }
}

/// Sorts by UTF-8 bytes and drops duplicates.
func sortedUnique(_ values: [String]) -> [String] {
    Array(Set(values)).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
}
