import Hummingbird
import RooftopShared

/// Sign-up, log-in, log-out, the current user, roles, and class permissions.
struct AccountRoutes {
    let services: ServerServices

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
            try Identifier.validate(className, as: .className)
            return try JSONBody.response(try await services.classes.settings(of: className))
        }
        api.put("classes/:className") { request, context in
            try context.requireAdmin()
            let className = try context.parameter("className")
            try Identifier.validate(className, as: .className)
            let body = try await RequestBody.decode(ClassSettingsBody.self, from: request, limits: limits)
            if let named = body.className, named != className {
                throw RooftopError(
                    .illegalArgument, "the body names class '\(named)' but the path '\(className)'", field: "className")
            }
            // Members left out keep their values: a ClassPermissionsRequest changes permissions only.
            var settings = try await services.classes.settings(of: className)
            if let permissions = body.permissions { settings.permissions = permissions }
            if let mergeRules = body.mergeRules {
                for field in mergeRules.keys { try Identifier.validate(field, as: .field) }
                settings.mergeRules = mergeRules
            }
            try await services.classes.save(settings)
            return try JSONBody.response(settings)
        }
    }
}
