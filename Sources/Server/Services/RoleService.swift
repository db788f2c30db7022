import RooftopShared

/// Creating roles and changing their members. Each role has an ACL (Parse's model): read lets a
/// caller see the role and its members, write lets it change the members or delete the role. A
/// role created without an ACL is readable and writable by its creator only (by admins only when
/// the admin key created it). The admin key may do anything. A role the caller may not read is
/// answered as missing.
///
/// After every change the role cache is dropped and live subscribers get their effective roles
/// recomputed, so that notifications follow membership at once.
final class RoleService: Sendable {
    private let storage: any Storage
    private let roles: RoleDirectory
    private let live: LiveHub

    private let cluster: ClusterLink

    init(storage: any Storage, roles: RoleDirectory, live: LiveHub, cluster: ClusterLink) {
        self.cluster = cluster
        self.storage = storage
        self.roles = roles
        self.live = live
    }

    func create(_ request: CreateRoleRequest, by context: AccessContext) async throws -> RoleInfo {
        try request.validate()
        guard context.isAdmin || context.isAuthenticated else {
            throw RooftopError(.auth, "creating a role needs a signed-in user or the admin key")
        }
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

    func update(_ name: String, _ request: UpdateRoleRequest, by context: AccessContext) async throws -> RoleInfo {
        for id in request.addUsers + request.removeUsers { try Identifier.validate(id, as: .objectId) }
        for role in request.addRoles + request.removeRoles { try Identifier.validate(role, as: .className) }
        try await authorize(name, context)
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

    private func rolesChanged() async throws {
        await roles.invalidate()
        await cluster.send(.rolesChanged)
        await live.refreshRoles(try await roles.graph())
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
