/// Who is making a request: the signed-in user (if any), the roles that user holds, and whether
/// the request carries the admin (master) key.
///
/// Every access decision (``ACL``, ``ClassPermissions``, ``DatastoreSharing``, ``AccessPolicy``)
/// takes a context. Its ``principals`` are what ACL entries and sharing roles are matched against:
/// `*` always, the user's ID when signed in, and `role:Name` for each effective role.
///
/// ```swift
/// let graph = RoleGraph(users: ["Moderators": ["u1"]], childRoles: [:])
/// let context = AccessContext(userId: "u1", roleGraph: graph)
/// context.principals   // ["*", "u1", "role:Moderators"]
/// ```
public struct AccessContext: Hashable, Sendable {
    /// The signed-in user's ID, or `nil` for an anonymous caller.
    public let userId: String?
    /// The names of every role the user belongs to, directly or through child roles. Always empty
    /// for an anonymous caller: roles have users as members, so a caller with no user has none.
    public let roles: Set<String>
    /// Whether the caller used the admin (master) key. An admin bypasses object ACLs, class-level
    /// permissions and datastore roles.
    public let isAdmin: Bool

    /// Creates a context.
    /// - Parameters:
    ///   - userId: The signed-in user, or `nil` for an anonymous caller (default `nil`).
    ///   - roles: The user's effective role names (see ``RoleGraph/effectiveRoles(ofUser:)``);
    ///     ignored when `userId` is `nil` (default empty).
    ///   - isAdmin: Whether the admin key was used (default `false`).
    public init(userId: String? = nil, roles: Set<String> = [], isAdmin: Bool = false) {
        self.userId = userId
        self.roles = userId == nil ? [] : roles
        self.isAdmin = isAdmin
    }

    /// A context for a user whose effective roles come from a role graph.
    /// - Parameters:
    ///   - userId: The signed-in user.
    ///   - roleGraph: The app's roles; the user's effective roles are computed from it.
    public init(userId: String, roleGraph: RoleGraph) {
        self.init(userId: userId, roles: roleGraph.effectiveRoles(ofUser: userId))
    }

    /// An anonymous caller: no user, no roles, no admin key.
    public static let anonymous = AccessContext()

    /// A caller with the admin (master) key and no user.
    public static let admin = AccessContext(isAdmin: true)

    /// Whether a user is signed in.
    public var isAuthenticated: Bool { userId != nil }

    /// The principals this caller acts as: `*`, the user (when signed in) and `role:Name` for each
    /// effective role. ACL entries and sharing roles for any of them apply to the caller.
    public var principals: Set<Principal> {
        var result: Set<Principal> = [.everyone]
        if let userId {
            result.insert(.user(userId))
            for role in roles { result.insert(.role(role)) }
        }
        return result
    }

    /// Whether the caller acts as this principal.
    public func holds(_ principal: Principal) -> Bool {
        switch principal {
        case .everyone: true
        case .user(let id): userId == id
        case .role(let name): userId != nil && roles.contains(name)
        }
    }
}
