import Foundation
import Hummingbird
import RooftopShared

/// `/dashboard/users…`: users page by page, one user's roles and sessions, creating a user,
/// ending a user's sessions and setting a password.
struct DashboardUsersController {
    let pages: DashboardPages

    func register(on dashboard: RouterGroup<DashboardPages.Context>) {
        let services = pages.services
        dashboard.get("users") { request, _ in
            await pages.page(request, "Users", "users") { _ in
                let found = try await services.auth.users(after: DashboardForm.query(request)["after"], limit: DashboardPages.pageSize)
                return UserListPage(
                    users: found.users.map { user in
                        UserListPage.Row(
                            link: DashboardPath.user(user.objectId), username: user.username, id: user.objectId,
                            email: user.email ?? "", roles: user.roles.joined(separator: ", "),
                            createdAt: user.createdAt?.description ?? "")
                    },
                    next: found.next.map { "/dashboard/users?after=" + DashboardPath.segment($0) })
            }
        }
        dashboard.post("users") { request, _ in
            await pages.action(request) { _, form in
                let signUp = SignUpRequest(
                    username: try form.required("username"), password: form["password"] ?? "",
                    email: (form["email"] ?? "").isEmpty ? nil : form["email"])
                let session = try await services.auth.signUp(signUp)
                // An account made here signs in nowhere: its sign-up session ends at once.
                try await services.auth.logOut(token: session.sessionToken)
                return DashboardPath.user(session.user.objectId) + "?done=created"
            }
        }
        dashboard.get("users/:userId") { request, context in
            await pages.page(request, "User", "user") { _ in
                let userId = try context.parameter("userId")
                let record = try await services.auth.existingUser(id: userId)
                let info = try await services.auth.userInfo(record)
                let sessions = try await services.auth.sessions(ofUser: userId)
                return UserPage(
                    title: "User \(record.username)", id: record.id, email: record.email ?? "",
                    roles: info.roles.joined(separator: ", "), createdAt: record.createdAt.description,
                    sessions: sessions.map {
                        UserPage.Session(
                            id: String($0.id.prefix(16)) + "…", createdAt: $0.createdAt.description,
                            expiresAt: $0.expiresAt.description)
                    },
                    revokeAction: DashboardPath.user(userId) + "/revoke",
                    passwordAction: DashboardPath.user(userId) + "/password")
            }
        }
        dashboard.post("users/:userId/revoke") { request, context in
            await pages.action(request) { _, _ in
                let userId = try context.parameter("userId")
                _ = try await services.auth.revokeSessions(userId: userId)
                return DashboardPath.user(userId) + "?done=revoked"
            }
        }
        dashboard.post("users/:userId/password") { request, context in
            await pages.action(request) { _, form in
                let userId = try context.parameter("userId")
                try await services.auth.setPassword(SetPasswordRequest(password: form["password"] ?? ""), userId: userId)
                return DashboardPath.user(userId) + "?done=password"
            }
        }
    }
}

/// `/dashboard/roles…`: the roles, one role's users, child roles and ACL, and creating, changing
/// and deleting roles (through the role service, as the admin).
struct DashboardRolesController {
    let pages: DashboardPages

    func register(on dashboard: RouterGroup<DashboardPages.Context>) {
        let services = pages.services
        dashboard.get("roles") { request, _ in
            await pages.page(request, "Roles", "roles") { _ in
                let graph = try await services.roles.graph()
                return RoleListPage(roles: graph.roleNames.sorted().map { NamedLink(name: $0, link: DashboardPath.role($0)) })
            }
        }
        dashboard.post("roles") { request, _ in
            await pages.action(request) { _, form in
                let role = try await services.roleService.create(
                    CreateRoleRequest(name: try form.required("name")), by: .admin)
                return DashboardPath.role(role.name) + "?done=created"
            }
        }
        dashboard.get("roles/:name") { request, context in
            await pages.page(request, "Role", "role") { _ in
                let name = try context.parameter("name")
                let role = try await services.roleService.get(name, by: .admin)
                return RolePage(
                    title: "Role \(role.name)", users: role.users,
                    children: role.roles.map { NamedLink(name: $0, link: DashboardPath.role($0)) },
                    acl: try role.acl.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) } ?? "none",
                    updateAction: DashboardPath.role(name), deleteAction: DashboardPath.role(name) + "/delete")
            }
        }
        dashboard.post("roles/:name") { request, context in
            await pages.action(request) { _, form in
                let name = try context.parameter("name")
                let users = (form["user"] ?? "").isEmpty ? [] : [form["user"] ?? ""]
                let children = (form["child"] ?? "").isEmpty ? [] : [form["child"] ?? ""]
                let request = form["change"] == "remove"
                    ? UpdateRoleRequest(removeUsers: users, removeRoles: children)
                    : UpdateRoleRequest(addUsers: users, addRoles: children)
                _ = try await services.roleService.update(name, request, by: .admin)
                return DashboardPath.role(name) + "?done=saved"
            }
        }
        dashboard.post("roles/:name/delete") { request, context in
            await pages.action(request) { _, form in
                guard form["confirm"] == "yes" else { throw RooftopError(.illegalArgument, "confirm the deletion") }
                try await services.roleService.delete(try context.parameter("name"), by: .admin)
                return "/dashboard/roles?done=deleted"
            }
        }
    }
}

/// `/dashboard/classes…`: a class's settings (permissions, merge rules, declared indexes) as
/// JSON, edited through the class directory as the REST API's `PUT /v1/classes/{className}`.
struct DashboardClassesController {
    let pages: DashboardPages

    func register(on dashboard: RouterGroup<DashboardPages.Context>) {
        let services = pages.services
        dashboard.get("classes") { request, _ in
            if let name = DashboardForm.query(request)["name"], !name.isEmpty {
                guard try await pages.session(request) != nil else { return DashboardPages.redirect("/dashboard/login") }
                return DashboardPages.redirect(DashboardPath.classSettings(String(name)))
            }
            return await pages.page(request, "Classes", "classes") { _ in EmptyPage() }
        }
        dashboard.get("classes/:className") { request, context in
            await pages.page(request, "Class settings", "class") { _ in
                let className = try context.parameter("className")
                try Identifier.validate(className, as: .className)
                let settings = try await services.classes.settings(of: className)
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                return ClassPage(
                    title: "Class \(className)", json: String(decoding: try encoder.encode(settings), as: UTF8.self),
                    saveAction: DashboardPath.classSettings(className))
            }
        }
        dashboard.post("classes/:className") { request, context in
            await pages.action(request) { _, form in
                let className = try context.parameter("className")
                try Identifier.validate(className, as: .className)
                let change: ClassSettingsChange
                do {
                    change = try JSONDecoder().decode(ClassSettingsChange.self, from: Data((form["settings"] ?? "").utf8))
                } catch let error as DecodingError {
                    throw RequestBody.describe(error)
                }
                try await services.classes.change(className, with: change)
                return DashboardPath.classSettings(className) + "?done=saved"
            }
        }
    }
}
