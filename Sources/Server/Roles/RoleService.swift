import RooftopShared

/// Creating roles and changing their members. Each role has an ACL (Parse's model): read lets a
/// caller see the role and its members, write lets it change the members or delete the role. A
/// role created without an ACL is readable and writable by its creator only (by admins only when
/// the admin key created it). The admin key may do anything. A role the caller may not read is
/// answered as missing.
///
/// Who may create roles is the `create` permission of the reserved class ``permissionClass``
/// (`:Role`), set with `PUT /v1/classes/:Role` (admin key): nobody but the admin key by default,
/// since a role name grants whatever ACLs, class permissions and sharing name it. A signed-in user
/// is needed besides (or the admin key).
///
/// A deleted role's name stays reserved (the storage keeps it): grants naming `role:Name` are
/// left where they are, and no later role can take the name and inherit them.
///
/// After every change the role cache is dropped and live subscribers get their effective roles
/// recomputed, so that notifications follow membership at once.
final class RoleService: Sendable {
    /// The reserved class whose `create` permission says who may create roles (only `create` is
    /// consulted; it holds no objects).
    static let permissionClass = ":Role"

    private let storage: any RoleStorage
    private let roles: RoleDirectory
    private let classes: ClassDirectory
    private let live: LiveHub

    private let cluster: ClusterLink

    init(storage: any RoleStorage, roles: RoleDirectory, classes: ClassDirectory, live: LiveHub, cluster: ClusterLink) {
        self.cluster = cluster
        self.storage = storage
        self.roles = roles
        self.classes = classes
        self.live = live
    }

    /// Creates a role.
    /// - Throws: `auth` for an anonymous caller; `disallowed` when the `create` permission of
    ///   ``permissionClass`` does not allow the caller; `illegalArgument` for invalid names;
    ///   `exists` when the name is taken or was a deleted role's; storage errors.
    func create(_ request: CreateRoleRequest, by context: AccessContext) async throws -> RoleInfo {
        try request.validate()
        guard context.isAdmin || context.isAuthenticated else {
            throw RooftopError(.auth, "creating a role needs a signed-in user or the admin key")
        }
        guard try await classes.permissions(of: Self.permissionClass).allows(.create, for: context) else {
            throw RooftopError(
                .disallowed,
                "creating roles is not allowed for this caller: the create permission of class \(Self.permissionClass) decides who may")
        }
        try await checkRolesPerUser(request.name, addUsers: Set(request.users), addRoles: Set(request.roles))
        let acl = request.acl ?? context.userId.map(ACL.only) ?? ACL()
        let record = RoleRecord(
            name: request.name, acl: acl, users: Set(request.users), childRoles: Set(request.roles))
        try await storage.insertRole(record)
        try await rolesChanged()
        return info(record)
    }

    func get(_ name: String, by context: AccessContext) async throws -> RoleInfo {
        info(try await readable(name, context))
    }

    /// Changes a role's members.
    /// - Throws: `illegalArgument` for invalid names; `sizeLimit` for a list of more than
    ///   ``RoleInfo/maxNamesPerWrite`` names or a user who would hold more than
    ///   ``RoleInfo/maxRolesPerUser`` roles; `notFound`/`disallowed` by the role's ACL.
    func update(_ name: String, _ request: UpdateRoleRequest, by context: AccessContext) async throws -> RoleInfo {
        try request.validateCounts()
        for id in request.addUsers + request.removeUsers { try Identifier.validate(id, as: .objectId) }
        for role in request.addRoles + request.removeRoles { try Identifier.validate(role, as: .className) }
        try await authorize(name, context)
        try await checkRolesPerUser(name, addUsers: Set(request.addUsers), addRoles: Set(request.addRoles))
        let record = try await storage.updateRole(
            named: name, addUsers: Set(request.addUsers), removeUsers: Set(request.removeUsers),
            addRoles: Set(request.addRoles), removeRoles: Set(request.removeRoles))
        try await rolesChanged()
        return info(record)
    }

    func delete(_ name: String, by context: AccessContext) async throws {
        try await authorize(name, context)
        try await storage.deleteRole(named: name)
        try await rolesChanged()
    }

    /// Refuses a role write after which a user would hold more than ``RoleInfo/maxRolesPerUser``
    /// roles: each of the users it adds to `name`, and each member of the child roles it adds, then
    /// holds `name` and every role above it. Judged on the cached graph, before the write: writes
    /// made at the same time may overshoot a little, which queries bear (they do not bind one
    /// variable per principal, ``SQLTextSet``).
    /// - Throws: `sizeLimit` without naming the user (who may be a member the caller cannot see).
    private func checkRolesPerUser(_ name: String, addUsers: Set<String>, addRoles: Set<String>) async throws {
        guard !addUsers.isEmpty || !addRoles.isEmpty else { return }
        let graph = try await roles.graph()
        var users = graph.users
        var children = graph.childRoles
        users[name, default: []].formUnion(addUsers)
        children[name, default: []].formUnion(addRoles)
        let changed = RoleGraph(users: users, childRoles: children)
        var affected = addUsers
        for child in addRoles { affected.formUnion(changed.members(of: child)) }
        for user in affected where changed.effectiveRoles(ofUser: user).count > RoleInfo.maxRolesPerUser {
            throw RooftopError(
                .sizeLimit,
                "a user this change adds to role '\(name)' would hold more than \(RoleInfo.maxRolesPerUser) roles")
        }
    }

    /// Tells this process's caches, the other processes and live subscribers of a committed role
    /// change — in a task of its own, so that a request cancelled at its deadline after the commit
    /// does not leave them holding the old roles.
    private func rolesChanged() async throws {
        let (roles, cluster, live) = (self.roles, self.cluster, self.live)
        try await Task {
            roles.invalidate()
            await cluster.send(.rolesChanged)
            await live.refreshRoles(try await roles.graph())
        }.value
    }

    /// The role, when the caller may read it; `notFound` otherwise (existence is not revealed).
    private func readable(_ name: String, _ context: AccessContext) async throws -> RoleRecord {
        guard let record = try await storage.role(named: name),
            context.isAdmin || record.acl.allowsRead(for: context)
        else { throw RooftopError(.notFound, "no role named '\(name)'") }
        return record
    }

    private func authorize(_ name: String, _ context: AccessContext) async throws {
        let record = try await readable(name, context)
        guard context.isAdmin || record.acl.allowsWrite(for: context) else {
            throw RooftopError(.disallowed, "the ACL of role '\(name)' does not let you change it")
        }
    }

    private func info(_ record: RoleRecord) -> RoleInfo {
        RoleInfo(name: record.name, users: record.users.sorted(), roles: record.childRoles.sorted(), acl: record.acl)
    }
}
