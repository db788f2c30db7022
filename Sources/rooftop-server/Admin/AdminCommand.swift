import ArgumentParser
import Foundation
import NIOHTTP1
import RooftopShared

/// `rooftop-server admin`: administers a running server over HTTPS with the admin key.
struct Admin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Administer a running server over HTTPS with the admin key.",
        discussion: """
            Every command takes --server, --admin-key, --ca and --app-id (or ROOFTOP_SERVER_URL, \
            ROOFTOP_ADMIN_KEY, ROOFTOP_CA, ROOFTOP_APP_ID). Answers are printed as JSON.
            """,
        subcommands: [
            Export.self, Import.self, Tail.self, AdminRoles.self, AdminClasses.self, AdminDatastores.self,
            AdminUsers.self,
        ])
}

/// Runs `body` with an open connection, printing its answer as JSON; the connection is closed on
/// every path.
func withAdminAPI(_ connection: AdminConnection, _ body: (AdminAPI) async throws -> (any Encodable)?) async throws {
    let api = try connection.open()
    do {
        if let answer = try await body(api) {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(answer), as: UTF8.self))
        }
        try await api.shutdown()
    } catch {
        try await api.shutdown()
        throw error
    }
}

/// Sends one request with the admin key and prints its answer, decoded as `T`, as JSON.
func printCall<T: Codable & Sendable>(
    _ connection: AdminConnection, _ type: T.Type, _ method: HTTPMethod, _ path: String, body: (any Encodable)? = nil
) async throws {
    try await withAdminAPI(connection) { api in
        let answer: T = try await api.call(method, path, body: body)
        return answer
    }
}

/// `rooftop-server admin roles …`.
struct AdminRoles: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "roles", abstract: "Create, read, change and delete roles.",
        subcommands: [Create.self, Get.self, Add.self, Remove.self, Delete.self])

    struct Members: ParsableArguments {
        @Option(name: .customLong("user"), help: "A user ID (repeatable).")
        var users: [String] = []
        @Option(name: .customLong("role"), help: "A child role (repeatable).")
        var roles: [String] = []
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a role (with no ACL: only admins may read and change it).")
        @OptionGroup var connection: AdminConnection
        @Argument(help: "The role's name.") var name: String
        @OptionGroup var members: Members
        func run() async throws {
            try await withAdminAPI(connection) { api in
                let request = CreateRoleRequest(name: name, users: members.users, roles: members.roles)
                try request.validate()
                let role: RoleInfo = try await api.call(.POST, "/v1/roles", body: request)
                return role
            }
        }
    }

    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a role: its users, child roles and ACL.")
        @OptionGroup var connection: AdminConnection
        @Argument(help: "The role's name.") var name: String
        func run() async throws {
            try await printCall(connection, RoleInfo.self, .GET, "/v1/roles/" + AdminAPI.escape(name))
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add users and child roles to a role.")
        @OptionGroup var connection: AdminConnection
        @Argument(help: "The role's name.") var name: String
        @OptionGroup var members: Members
        func run() async throws {
            try await printCall(connection, RoleInfo.self, .PATCH, "/v1/roles/" + AdminAPI.escape(name),
                body: UpdateRoleRequest(addUsers: members.users, addRoles: members.roles))
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove users and child roles from a role.")
        @OptionGroup var connection: AdminConnection
        @Argument(help: "The role's name.") var name: String
        @OptionGroup var members: Members
        func run() async throws {
            try await printCall(connection, RoleInfo.self, .PATCH, "/v1/roles/" + AdminAPI.escape(name),
                body: UpdateRoleRequest(removeUsers: members.users, removeRoles: members.roles))
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a role.")
        @OptionGroup var connection: AdminConnection
        @Argument(help: "The role's name.") var name: String
        func run() async throws {
            try await withAdminAPI(connection) { api in
                try await api.send(.DELETE, "/v1/roles/" + AdminAPI.escape(name))
                return nil
            }
        }
    }
}

/// `rooftop-server admin classes …`.
struct AdminClasses: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "classes", abstract: "Read and replace a class's settings (permissions, default ACL, merge rules).",
        subcommands: [Get.self, Set.self])

    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a class's settings.")
        @OptionGroup var connection: AdminConnection
        @Argument(help: "The class.") var className: String
        func run() async throws {
            try await printCall(connection, ClassSettings.self, .GET, "/v1/classes/" + AdminAPI.escape(className))
        }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a class's settings with a JSON document (as `classes get` prints it; members left out keep their values).")
        @OptionGroup var connection: AdminConnection
        @Argument(help: "The class.") var className: String
        @Option(help: "The settings' JSON file (default standard input).") var file: String?
        func run() async throws {
            let data = try file.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
                ?? FileHandle.standardInput.readToEnd() ?? Data()
            // Sent as written: members left out keep their values (the server checks the rest).
            let document: JSONValue
            do {
                document = try JSONDecoder().decode(JSONValue.self, from: data)
            } catch {
                throw ValidationError("the settings are not JSON: \(error)")
            }
            guard case .object = document else { throw ValidationError("the settings must be a JSON object") }
            try await printCall(connection, ClassSettings.self, .PUT, "/v1/classes/" + AdminAPI.escape(className),
                body: document)
        }
    }
}

/// `rooftop-server admin datastores …`.
struct AdminDatastores: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "datastores", abstract: "Read datastores, their usage and sharing; share and delete them.",
        subcommands: [Get.self, Sharing.self, Share.self, Delete.self])

    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a datastore with its usage against the limits.")
        @OptionGroup var connection: AdminConnection
        @Argument(help: "The datastore (:app or .ID).") var datastore: String
        func run() async throws {
            let id = try DatastoreID.parse(datastore)
            try await printCall(connection, DatastoreInfo.self, .GET, AdminAPI.datastorePath(id))
        }
    }

    struct Sharing: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a shareable datastore's owner and roles.")
        @OptionGroup var connection: AdminConnection
        @Argument(help: "The datastore (.ID).") var datastore: String
        func run() async throws {
            let id = try DatastoreID.parse(datastore)
            try await printCall(connection, DatastoreSharing.self, .GET, AdminAPI.datastorePath(id, "/roles"))
        }
    }

    struct Share: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Give a principal a role on a shareable datastore (none takes it away).")
        @OptionGroup var connection: AdminConnection
        @Argument(help: "The datastore (.ID).") var datastore: String
        @Option(help: "Who: * for everyone, a user ID, or role:Name.") var principal: String
        @Option(help: "editor, viewer or none.") var role: String
        func run() async throws {
            let id = try DatastoreID.parse(datastore)
            let who: Principal
            do { who = try Principal(principal) } catch { throw ValidationError(error.message) }
            guard let sharingRole = SharingRole.allCases.first(where: { $0.name == role }), sharingRole != .owner else {
                throw ValidationError("'\(role)' is not a sharing role (editor, viewer, none)")
            }
            try await printCall(connection, DatastoreInfo.self, .PUT, AdminAPI.datastorePath(id, "/roles"),
                body: SetRoleRequest(principal: who, role: sharingRole))
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a datastore and its objects.")
        @OptionGroup var connection: AdminConnection
        @Argument(help: "The datastore (.ID).") var datastore: String
        func run() async throws {
            let id = try DatastoreID.parse(datastore)
            try await withAdminAPI(connection) { api in
                try await api.send(.DELETE, AdminAPI.datastorePath(id))
                return nil
            }
        }
    }
}

/// `rooftop-server admin users …`.
struct AdminUsers: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users", abstract: "List, create and read users; set passwords; list and end sessions.",
        subcommands: [List.self, Create.self, Get.self, SetPassword.self, Sessions.self, Revoke.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List users in user-name order, every page.")
        @OptionGroup var connection: AdminConnection
        @Option(help: "Start after this user name.") var after: String?
        func run() async throws {
            try await withAdminAPI(connection) { api in
                var users: [UserInfo] = []
                var next = after
                repeat {
                    let query = next.map { "?limit=1000&after=" + AdminAPI.escape($0) } ?? "?limit=1000"
                    let page: UserList = try await api.call(.GET, "/v1/users" + query)
                    users += page.users
                    next = page.next
                } while next != nil
                return users
            }
        }
    }

    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a user with their effective roles.")
        @OptionGroup var connection: AdminConnection
        @Argument(help: "The user's ID.") var userId: String
        func run() async throws {
            try await printCall(connection, UserInfo.self, .GET, "/v1/users/" + AdminAPI.escape(userId))
        }
    }

    struct SetPassword: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-password", abstract: "Set a user's password; their sessions end.")
        @OptionGroup var connection: AdminConnection
        @Argument(help: "The user's ID.") var userId: String
        @Option(help: "The new password (or ROOFTOP_NEW_PASSWORD).") var password: String?
        func run() async throws {
            guard let password = password ?? ProcessInfo.processInfo.environment["ROOFTOP_NEW_PASSWORD"] else {
                throw ValidationError("a password is needed: --password or ROOFTOP_NEW_PASSWORD")
            }
            try await withAdminAPI(connection) { api in
                try await api.send(.PUT, "/v1/users/\(AdminAPI.escape(userId))/password", body: SetPasswordRequest(password: password))
                return nil
            }
        }
    }

    struct Sessions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a user's sessions, newest first.")
        @OptionGroup var connection: AdminConnection
        @Argument(help: "The user's ID.") var userId: String
        func run() async throws {
            try await printCall(connection, SessionList.self, .GET, "/v1/users/\(AdminAPI.escape(userId))/sessions")
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "End all of a user's sessions.")
        @OptionGroup var connection: AdminConnection
        @Argument(help: "The user's ID.") var userId: String
        func run() async throws {
            try await printCall(connection, RevokedSessions.self, .DELETE, "/v1/users/\(AdminAPI.escape(userId))/sessions")
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a user and print it (the sign-up's session is logged out at once).")
        @OptionGroup var connection: AdminConnection
        @Option(help: "The user name.") var username: String
        @Option(help: "The password (or ROOFTOP_NEW_PASSWORD).") var password: String?
        @Option(help: "An email address.") var email: String?
        func run() async throws {
            guard let password = password ?? ProcessInfo.processInfo.environment["ROOFTOP_NEW_PASSWORD"] else {
                throw ValidationError("a password is needed: --password or ROOFTOP_NEW_PASSWORD")
            }
            try await withAdminAPI(connection) { api in
                let session: Session = try await api.call(
                    .POST, "/v1/users", body: SignUpRequest(username: username, password: password, email: email))
                try await api.send(.POST, "/v1/logout", sessionToken: session.sessionToken)
                return session.user
            }
        }
    }
}
