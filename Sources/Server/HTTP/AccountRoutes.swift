import Hummingbird
import RooftopShared

/// Sign-up, log-in, log-out, the current user, users (administration), roles, and class
/// permissions.
struct AccountRoutes {
    let services: ServerServices

    /// The most users a page lists, and the default.
    static let maxUserPage = 1000

    /// A `limit` query parameter: 1...1000, default 100.
    /// - Throws: `illegalArgument` for anything else.
    static func pageLimit(_ text: String?) throws -> Int {
        guard let text else { return 100 }
        guard let limit = Int(text), (1...maxUserPage).contains(limit) else {
            throw RooftopError(.illegalArgument, "'limit' must be an integer within 1...\(maxUserPage)", field: "limit")
        }
        return limit
    }

    func register(on api: APIRoutes) {
        let services = self.services
        api.on(API.signUp) { body, _, _ in try await services.auth.signUp(body) }
        api.on(API.logIn) { body, _, context in try await services.auth.logIn(body, clientAddress: context.clientAddress) }
        api.on(API.logOut) { _, context in
            guard let token = context.sessionToken else { throw RooftopError(.auth, "not logged in") }
            try await services.auth.logOut(token: token)
            return NoBody()
        }
        api.on(API.getCurrentUser) { _, context in
            let userId = try context.requireUser()
            guard let user = try await services.storage.user(id: userId) else {
                throw RooftopError(.auth, "the user no longer exists")
            }
            return try await services.auth.userInfo(user)
        }

        // Administration of users: the admin key only (checked by APIRoutes, before any body).
        api.on(API.listUsers) { request, _ in
            let limit = try Self.pageLimit(request.uri.queryParameters.get("limit"))
            return try await services.auth.users(after: request.uri.queryParameters.get("after"), limit: limit)
        }
        api.on(API.getUser) { _, context in
            let user = try await services.auth.existingUser(id: try context.parameter("userId"))
            return try await services.auth.userInfo(user)
        }
        api.on(API.setUserPassword) { body, _, context in
            try await services.auth.setPassword(body, userId: try context.parameter("userId"))
            return NoBody()
        }
        api.on(API.listUserSessions) { _, context in
            SessionList(sessions: try await services.auth.sessions(ofUser: try context.parameter("userId")))
        }
        api.on(API.revokeUserSessions) { _, context in
            RevokedSessions(revoked: try await services.auth.revokeSessions(userId: try context.parameter("userId")))
        }

        api.on(API.createRole) { body, _, context in try await services.roleService.create(body, by: context.access) }
        api.on(API.getRole) { _, context in
            try await services.roleService.get(try context.parameter("name"), by: context.access)
        }
        api.on(API.updateRole) { body, _, context in
            try await services.roleService.update(try context.parameter("name"), body, by: context.access)
        }
        api.on(API.deleteRole) { _, context in
            try await services.roleService.delete(try context.parameter("name"), by: context.access)
            return NoBody()
        }

        api.on(API.getClassSettings) { _, context in
            let className = try context.parameter("className")
            try Identifier.validate(className, as: .className, allowReserved: className == RoleService.permissionClass)
            return try await services.classes.settings(of: className)
        }
        api.on(API.putClassSettings) { body, _, context in
            let className = try context.parameter("className")
            try Identifier.validate(className, as: .className, allowReserved: className == RoleService.permissionClass)
            // Members left out keep their values: a ClassPermissionsRequest changes permissions only.
            return try await services.classes.change(className, with: body)
        }
    }
}
