import Logging
import RooftopShared

extension RooftopClient {
    /// The roles: create them, change their users and child roles, delete them (as Parse's
    /// `PFRole`). Roles are granted in ACLs (`role:Name`) and in datastore sharing.
    public var roles: RoleManager { RoleManager(core: core) }
}

/// Roles on the server (`client.roles`): a role is a named group of users and child roles; the
/// members of a child role are members of its parents. Who may read or change a role is its own
/// ACL: by default only its creator.
///
/// The signed-in user's effective roles, which local queries use to apply ACLs offline, are
/// reloaded after each change (a change the server made is kept even when that reload cannot
/// reach it; ``RooftopClient/refreshCurrentUser()`` reloads them later). Changes others make
/// arrive with the next pull, which tells the client its effective roles when they changed.
///
/// ```swift
/// try await client.roles.create("Moderators", users: [alice.id])
/// try await client.roles.create("Admins", users: [bob.id])
/// try await client.roles.add(roles: ["Admins"], to: "Moderators")   // admins moderate too
/// post.acl = ACL([.role("Moderators"): .readWrite, .everyone: .readOnly])
/// ```
public struct RoleManager: Sendable {
    let core: ClientCore

    /// Creates a role.
    /// - Parameters:
    ///   - name: The role's name: 1-64 of `A-Z a-z 0-9 . - _ + / =`, not starting with `:`.
    ///   - users: User IDs to list directly (default none).
    ///   - roles: Child roles, whose members join this role (default none).
    ///   - acl: Who may read and change the role (default: only the signed-in user).
    /// - Returns: The role as stored.
    /// - Throws: `illegalArgument` for an invalid name (checked before sending), `exists` when the
    ///   name is taken or was a deleted role's (those stay reserved), `disallowed` when the server
    ///   does not let this user create roles (the admin decides who may: the `create` permission
    ///   of the reserved class `:Role`, nobody by default), `sizeLimit` for more than 1,000 users
    ///   or roles, `auth` without an account, network errors.
    @discardableResult
    public func create(_ name: String, users: [String] = [], roles: [String] = [], acl: ACL? = nil)
        async throws -> RoleInfo
    {
        let request = CreateRoleRequest(name: name, users: users, roles: roles, acl: acl)
        try request.validate()
        let role = try await core.api.createRole(request)
        try await reloadCurrentUser()
        return role
    }

    /// A role: its direct users and child roles, and its ACL.
    /// - Throws: `notFound` when there is no such role or its ACL does not let the user read it;
    ///   network errors.
    public func get(_ name: String) async throws -> RoleInfo {
        try await core.api.role(named: name)
    }

    /// Adds users and child roles to a role.
    /// - Parameters:
    ///   - users: User IDs to add (default none).
    ///   - roles: Child roles to add (default none).
    ///   - name: The role to change.
    /// - Returns: The role after the change.
    /// - Throws: `disallowed` when the role's ACL does not let the user change it, `notFound`,
    ///   network errors.
    @discardableResult
    public func add(users: [String] = [], roles: [String] = [], to name: String) async throws -> RoleInfo {
        try await update(name, UpdateRoleRequest(addUsers: users, addRoles: roles))
    }

    /// Removes users and child roles from a role.
    /// - Parameters:
    ///   - users: User IDs to remove (default none).
    ///   - roles: Child roles to remove (default none).
    ///   - name: The role to change.
    /// - Returns: The role after the change.
    /// - Throws: As ``add(users:roles:to:)``.
    @discardableResult
    public func remove(users: [String] = [], roles: [String] = [], from name: String) async throws
        -> RoleInfo
    {
        try await update(name, UpdateRoleRequest(removeUsers: users, removeRoles: roles))
    }

    /// Deletes a role; the ACLs and sharing that name it no longer grant anything.
    /// - Throws: `disallowed`, `notFound`, network errors.
    public func delete(_ name: String) async throws {
        try await core.api.deleteRole(named: name)
        try await reloadCurrentUser()
    }

    private func update(_ name: String, _ request: UpdateRoleRequest) async throws(RooftopError) -> RoleInfo {
        let role = try await core.api.updateRole(named: name, request)
        try await reloadCurrentUser()
        return role
    }

    /// Reloads the signed-in user's effective roles; when the server cannot be reached now, the
    /// change stands and the roles reload later.
    private func reloadCurrentUser() async throws(RooftopError) {
        guard core.currentSession != nil else { return }
        do {
            _ = try await core.refreshUser()
        } catch where error.isConnectivity {
            // The role change is done; the cached roles catch up at the next refresh.
            ClientCore.logger.notice(
                "the user's roles were not reloaded after a role change; they catch up at the next refresh",
                metadata: ["error": "\(error)"])
        }
    }
}
