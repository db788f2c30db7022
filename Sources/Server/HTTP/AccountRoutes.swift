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

    func register(on api: RouterGroup<RooftopRequestContext>) {
        let services = self.services
        let limits = services.limits
        api.post("users") { request, _ in
            let body = try await RequestBody.decode(SignUpRequest.self, from: request, limits: limits)
            return try JSONBody.response(try await services.auth.signUp(body), status: .created)
        }
        api.post("login") { request, context in
            let body = try await RequestBody.decode(LogInRequest.self, from: request, limits: limits)
            return try JSONBody.response(try await services.auth.logIn(body, clientAddress: context.clientAddress))
        }
        api.post("logout") { _, context in
            guard let token = context.sessionToken else { throw RooftopError(.auth, "not logged in") }
            try await services.auth.logOut(token: token)
            return Response(status: .noContent)
        }
        api.get("users/me") { _, context in
            let userId = try context.requireUser()
            guard let user = try await services.storage.user(id: userId) else {
                throw RooftopError(.auth, "the user no longer exists")
            }
            return try JSONBody.response(try await services.auth.userInfo(user))
        }

        // Administration of users: the admin key only.
        api.get("users") { request, context in
            try context.requireAdmin()
            let limit = try Self.pageLimit(request.uri.queryParameters.get("limit"))
            return try JSONBody.response(
                try await services.auth.users(after: request.uri.queryParameters.get("after"), limit: limit))
        }
        api.get("users/:userId") { _, context in
            try context.requireAdmin()
            let user = try await services.auth.existingUser(id: try context.parameter("userId"))
            return try JSONBody.response(try await services.auth.userInfo(user))
        }
        api.put("users/:userId/password") { request, context in
            try context.requireAdmin()
            let body = try await RequestBody.decode(SetPasswordRequest.self, from: request, limits: limits)
            try await services.auth.setPassword(body, userId: try context.parameter("userId"))
            return Response(status: .noContent)
        }
        api.get("users/:userId/sessions") { _, context in
            try context.requireAdmin()
            let sessions = try await services.auth.sessions(ofUser: try context.parameter("userId"))
            return try JSONBody.response(SessionList(sessions: sessions))
        }
        api.delete("users/:userId/sessions") { _, context in
            try context.requireAdmin()
            let revoked = try await services.auth.revokeSessions(userId: try context.parameter("userId"))
            return try JSONBody.response(RevokedSessions(revoked: revoked))
        }

        api.post("roles") { request, context in
            let body = try await RequestBody.decode(CreateRoleRequest.self, from: request, limits: limits)
            return try JSONBody.response(try await services.roleService.create(body, by: context.access), status: .created)
        }
        api.get("roles/:name") { _, context in
            try JSONBody.response(try await services.roleService.get(try context.parameter("name"), by: context.access))
        }
        api.patch("roles/:name") { request, context in
            let body = try await RequestBody.decode(UpdateRoleRequest.self, from: request, limits: limits)
            return try JSONBody.response(
                try await services.roleService.update(try context.parameter("name"), body, by: context.access))
        }
        api.delete("roles/:name") { _, context in
            try await services.roleService.delete(try context.parameter("name"), by: context.access)
            return Response(status: .noContent)
        }

        api.get("classes/:className") { _, context in
            let className = try context.parameter("className")
            try Identifier.validate(className, as: .className, allowReserved: className == RoleService.permissionClass)
            return try JSONBody.response(try await services.classes.settings(of: className))
        }
        api.put("classes/:className") { request, context in
            try context.requireAdmin()
            let className = try context.parameter("className")
            try Identifier.validate(className, as: .className, allowReserved: className == RoleService.permissionClass)
            let body = try await RequestBody.decode(ClassSettingsChange.self, from: request, limits: limits)
            // Members left out keep their values: a ClassPermissionsRequest changes permissions only.
            let settings = try await services.classes.change(className, with: body)
            return try JSONBody.response(settings)
        }
    }
}
