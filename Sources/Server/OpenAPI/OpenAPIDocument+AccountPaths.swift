/// The operational endpoints (`APIRouter.swift`) and the account, role and class endpoints
/// (`AccountRoutes.swift`).
extension OpenAPIDocument {
    static var operationalOperations: [OpenAPIOperation] {
        [
            OpenAPIOperation(
                "get", "/health", id: "getHealth", tag: "Operations", summary: "Liveness",
                description: "Answers while the server is up.", access: .open,
                success: .init(200, "The server is up.", schema: "HealthStatus"), failures: []),
            OpenAPIOperation(
                "get", "/metrics", id: "getMetrics", tag: "Operations", summary: "Prometheus metrics",
                description: "Request counts and durations and the process metrics, in the Prometheus text format.",
                access: .open,
                success: .init(
                    200, "The metrics.", contentType: "text/plain; version=0.0.4",
                    schema: ["type": "string", "description": "The Prometheus text exposition format."]),
                failures: []),
            OpenAPIOperation(
                "get", "/openapi.json", id: "getOpenAPIDocument", tag: "Operations", summary: "This document",
                description: "The OpenAPI 3.1 description of the API.", access: .open,
                success: .init(
                    200, "The document.", contentType: "application/json",
                    schema: ["type": "object", "description": "An OpenAPI 3.1 document."]),
                failures: []),
            OpenAPIOperation(
                "get", "/v1/info", id: "getServerInfo", tag: "Operations", summary: "Server version and limits",
                description: "The server's version, the protocol version it speaks and the limits it enforces, so that clients can check sizes before queueing a change.",
                access: .anyCaller, success: .init(200, "The server information.", schema: "ServerInfo"),
                failures: [.unauthorized, .internalError]),
        ]
    }

    static var accountOperations: [OpenAPIOperation] {
        [
            OpenAPIOperation(
                "post", "/v1/users", id: "signUp", tag: "Accounts", summary: "Sign up",
                description: "Creates an account and signs it in.", access: .anyCaller,
                body: ("SignUpRequest", "The new account."),
                success: .init(201, "The account was created; its session.", schema: "Session"),
                failures: [.badRequest, .unauthorized, .conflict, .contentTooLarge, .internalError]),
            OpenAPIOperation(
                "post", "/v1/login", id: "logIn", tag: "Accounts", summary: "Log in",
                description: "Signs in with a user name and password. Repeated failures for one user name or address are throttled (`429 retryLater`).",
                access: .anyCaller, body: ("LogInRequest", "The credentials."),
                success: .init(200, "The new session.", schema: "Session"),
                failures: [.badRequest, .unauthorized, .contentTooLarge, .tooManyRequests, .internalError]),
            OpenAPIOperation(
                "post", "/v1/logout", id: "logOut", tag: "Accounts", summary: "Log out",
                description: "Revokes the session whose token the request carries.", access: .signedIn,
                success: .init(204, "The session was revoked."), failures: [.unauthorized, .internalError]),
            OpenAPIOperation(
                "get", "/v1/users/me", id: "getCurrentUser", tag: "Accounts", summary: "The signed-in user",
                description: "The signed-in user, with their effective roles.", access: .signedIn,
                success: .init(200, "The user.", schema: "UserInfo"), failures: [.unauthorized, .internalError]),
            OpenAPIOperation(
                "post", "/v1/roles", id: "createRole", tag: "Accounts", summary: "Create a role",
                description: "Creates a role with the request's ACL; without one, only its creator may read and change it (only admins, when the admin key created it). Needs a signed-in user or the admin key.",
                access: .anyCaller,
                body: ("CreateRoleRequest", "The role."), success: .init(201, "The role.", schema: "RoleInfo"),
                failures: [.badRequest, .unauthorized, .forbidden, .conflict, .contentTooLarge, .internalError]),
            OpenAPIOperation(
                "get", "/v1/roles/{name}", id: "getRole", tag: "Accounts", summary: "Read a role",
                description: "A role, its direct members and its ACL, for callers the role's ACL lets read it (and admins); others get 404.", access: .anyCaller,
                parameters: ["RoleName"], success: .init(200, "The role.", schema: "RoleInfo"),
                failures: [.unauthorized, .notFound, .internalError]),
            OpenAPIOperation(
                "patch", "/v1/roles/{name}", id: "updateRole", tag: "Accounts", summary: "Change a role's members",
                description: "Adds and removes direct users and child roles. Needs write access by the role's ACL, or the admin key.",
                access: .anyCaller, parameters: ["RoleName"], body: ("UpdateRoleRequest", "The change."),
                success: .init(200, "The role after the change.", schema: "RoleInfo"),
                failures: [.badRequest, .unauthorized, .forbidden, .notFound, .contentTooLarge, .internalError]),
            OpenAPIOperation(
                "delete", "/v1/roles/{name}", id: "deleteRole", tag: "Accounts", summary: "Delete a role",
                description: "Deletes a role. Needs write access by the role's ACL, or the admin key.", access: .anyCaller,
                parameters: ["RoleName"], success: .init(204, "The role was deleted."),
                failures: [.badRequest, .unauthorized, .forbidden, .notFound, .internalError]),
            OpenAPIOperation(
                "get", "/v1/classes/{className}", id: "getClassSettings", tag: "Classes",
                summary: "Read a class's settings",
                description: "The class's permissions and merge rules (the defaults for a class never configured).",
                access: .anyCaller, parameters: ["ClassName"],
                success: .init(200, "The settings.", schema: "ClassSettings"),
                failures: [.badRequest, .unauthorized, .internalError]),
            OpenAPIOperation(
                "put", "/v1/classes/{className}", id: "putClassSettings", tag: "Classes",
                summary: "Change a class's settings",
                description: "Replaces the class's permissions and/or merge rules with those in the body; members left out keep their values. Admin key only.",
                access: .admin, parameters: ["ClassName"], body: ("ClassSettingsBody", "The settings to change."),
                success: .init(200, "The settings as saved.", schema: "ClassSettings"),
                failures: [.badRequest, .unauthorized, .forbidden, .contentTooLarge, .internalError]),
        ]
    }
}
