import RooftopShared

/// Creating roles and changing their members. The admin key may do anything; a signed-in user
/// may create roles and then manage the roles they created.
///
/// After every change the role cache is dropped and live subscribers get their effective roles
/// recomputed, so that notifications follow membership at once.
final class RoleService: Sendable {
    private let storage: any Storage
    private let roles: RoleDirectory
    private let live: LiveHub

    init(storage: any Storage, roles: RoleDirectory, live: LiveHub) {
        self.storage = storage
        self.roles = roles
        self.live = live
    }

    func create(_ request: CreateRoleRequest, by context: AccessContext) async throws -> RoleInfo {
        try request.validate()
        guard context.isAdmin || context.isAuthenticated else {
            throw RooftopError(.auth, "creating a role needs a signed-in user or the admin key")
        }
        let record = RoleRecord(
            name: request.name, ownerId: context.isAdmin ? nil : context.userId, users: Set(request.users),
            childRoles: Set(request.roles))
        try await storage.insertRole(record)
        try await rolesChanged()
        return info(record)
    }

    func get(_ name: String, by context: AccessContext) async throws -> RoleInfo {
        guard let record = try await storage.role(named: name) else { throw RooftopError(.notFound, "no role named '\(name)'") }
        return info(record)
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
        await live.refreshRoles(try await roles.graph())
    }

    private func authorize(_ name: String, _ context: AccessContext) async throws {
        guard let record = try await storage.role(named: name) else { throw RooftopError(.notFound, "no role named '\(name)'") }
        guard context.isAdmin || (record.ownerId != nil && record.ownerId == context.userId) else {
            throw RooftopError(.disallowed, "only the role's creator or the admin key may change role '\(name)'")
        }
    }

    private func info(_ record: RoleRecord) -> RoleInfo {
        RoleInfo(name: record.name, users: record.users.sorted(), roles: record.childRoles.sorted())
    }
}
