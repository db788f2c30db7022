/// The app's roles and their direct memberships, answering "which roles does this user hold?".
///
/// Semantics are Parse's: a role has member users and member (child) roles. When role
/// `A` is one of role `B`'s child roles, every member of `A` is also a member of `B`. Membership
/// is therefore transitive upwards: a user in `A` holds `A`, `B`, and every role that contains
/// `B`, and so on. Cycles (`A` in `B` and `B` in `A`) are harmless: the walk visits each role
/// once, and everyone in the cycle holds every role of the cycle.
///
/// The graph is a plain value, so a server can build it from its tables and a client can keep a
/// copy for offline role-based ACL checks.
///
/// ```swift
/// // Moderators are also Members; u1 is a Moderator.
/// let graph = RoleGraph(users: ["Moderators": ["u1"]], childRoles: ["Members": ["Moderators"]])
/// graph.effectiveRoles(ofUser: "u1")   // ["Moderators", "Members"]
/// ```
public struct RoleGraph: Hashable, Sendable {
    /// Each role's direct member users, by role name.
    public let users: [String: Set<String>]
    /// Each role's direct child roles (roles whose members are also members of it), by role name.
    public let childRoles: [String: Set<String>]
    /// For each role, the roles it is a direct child of (the reverse of ``childRoles``).
    private let parents: [String: Set<String>]
    /// For each user, the roles that list the user directly.
    private let directRolesByUser: [String: Set<String>]

    /// Builds a graph from direct memberships.
    /// - Parameters:
    ///   - users: Role name → the users listed in the role directly.
    ///   - childRoles: Role name → the roles listed in the role (their members join it).
    public init(users: [String: Set<String>] = [:], childRoles: [String: Set<String>] = [:]) {
        self.users = users
        self.childRoles = childRoles
        var parents: [String: Set<String>] = [:]
        for (parent, children) in childRoles {
            for child in children { parents[child, default: []].insert(parent) }
        }
        self.parents = parents
        var byUser: [String: Set<String>] = [:]
        for (role, members) in users {
            for member in members { byUser[member, default: []].insert(role) }
        }
        self.directRolesByUser = byUser
    }

    /// An empty graph: no roles.
    public static let empty = RoleGraph()

    /// Every role name that appears in the graph, as a role with members or as a child role.
    public var roleNames: Set<String> {
        Set(users.keys).union(childRoles.keys).union(parents.keys)
    }

    /// The roles a user holds: those listing the user directly, and, transitively, every role
    /// that lists one of those as a child role.
    /// - Parameter userId: The user.
    /// - Returns: The role names; empty for a user in no role.
    public func effectiveRoles(ofUser userId: String) -> Set<String> {
        ancestors(of: directRolesByUser[userId] ?? [])
    }

    /// The roles whose members include every member of `role`: the role itself and every role
    /// it is a child of, transitively.
    public func effectiveRoles(ofRole role: String) -> Set<String> {
        ancestors(of: [role])
    }

    /// Whether a user holds a role, directly or through child roles.
    public func isMember(_ userId: String, of role: String) -> Bool {
        effectiveRoles(ofUser: userId).contains(role)
    }

    /// Every user who holds a role: its direct users and, transitively, the users of its child
    /// roles.
    public func members(of role: String) -> Set<String> {
        var result: Set<String> = []
        var visited: Set<String> = []
        var pending = [role]
        while let next = pending.popLast() {
            guard visited.insert(next).inserted else { continue }
            result.formUnion(users[next] ?? [])
            pending.append(contentsOf: childRoles[next] ?? [])
        }
        return result
    }

    /// The start roles plus every role reachable through "is a child of" edges. An explicit
    /// work list rather than recursion, so that deep chains cannot overflow the stack, and a
    /// visited set so that cycles terminate.
    private func ancestors(of start: Set<String>) -> Set<String> {
        var visited: Set<String> = []
        var pending = Array(start)
        while let next = pending.popLast() {
            guard visited.insert(next).inserted else { continue }
            pending.append(contentsOf: parents[next] ?? [])
        }
        return visited
    }
}
