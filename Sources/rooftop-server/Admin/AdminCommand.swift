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

/// Sends one request to `endpoint` at `path` with the admin key and prints its answer as JSON.
func printCall<Body: Encodable & Sendable, Answer: Codable & Sendable>(
    _ connection: AdminConnection, _ endpoint: APIEndpoint<Body, Answer>, _ path: String, body: Body? = nil
) async throws {
    try await withAdminAPI(connection) { api in try await api.call(endpoint, path, body: body) }
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
                let role: RoleInfo = try await api.call(API.createRole, body: request)
                return role
            }
        }
    }

    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a role: its users, child roles and ACL.")
        @OptionGroup var connection: AdminConnection
        @Argument(help: "The role's name.") var name: String
        func run() async throws {
            try await printCall(connection, API.getRole, API.getRole.path(name))
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add users and child roles to a role.")
        @OptionGroup var connection: AdminConnection
        @Argument(help: "The role's name.") var name: String
        @OptionGroup var members: Members
        func run() async throws {
            try await printCall(connection, API.updateRole, API.updateRole.path(name),
                body: UpdateRoleRequest(addUsers: members.users, addRoles: members.roles))
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove users and child roles from a role.")
        @OptionGroup var connection: AdminConnection
        @Argument(help: "The role's name.") var name: String
        @OptionGroup var members: Members
        func run() async throws {
            try await printCall(connection, API.updateRole, API.updateRole.path(name),
                body: UpdateRoleRequest(removeUsers: members.users, removeRoles: members.roles))
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a role.")
        @OptionGroup var connection: AdminConnection
        @Argument(help: "The role's name.") var name: String
        func run() async throws {
            try await withAdminAPI(connection) { api in
                try await api.send(API.deleteRole, API.deleteRole.path(name))
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
            try await printCall(connection, API.getClassSettings, API.getClassSettings.path(className))
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
            // Members left out keep their values; unknown members are refused here as the server would.
            let change: ClassSettingsChange
            do {
                change = try JSONDecoder().decode(ClassSettingsChange.self, from: data)
            } catch {
                throw ValidationError("the settings are not a class settings document: \(error)")
            }
            try await printCall(connection, API.putClassSettings, API.putClassSettings.path(className), body: change)
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
            try await printCall(connection, API.getDatastore, API.getDatastore.path(id.rawValue))
        }
    }

    struct Sharing: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a shareable datastore's owner and roles.")
        @OptionGroup var connection: AdminConnection
        @Argument(help: "The datastore (.ID).") var datastore: String
        func run() async throws {
            let id = try DatastoreID.parse(datastore)
            try await printCall(connection, API.getDatastoreSharing, API.getDatastoreSharing.path(id.rawValue))
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
            try await printCall(connection, API.setDatastoreRole, API.setDatastoreRole.path(id.rawValue),
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
                try await api.send(API.deleteDatastore, API.deleteDatastore.path(id.rawValue))
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
                    let query = next.map { "?limit=1000&after=" + APIOperation.escape($0) } ?? "?limit=1000"
                    let page = try await api.call(API.listUsers, API.listUsers.operation.path + query)
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
            try await printCall(connection, API.getUser, API.getUser.path(userId))
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
                try await api.send(
                    API.setUserPassword, API.setUserPassword.path(userId), body: SetPasswordRequest(password: password))
                return nil
            }
        }
    }

    struct Sessions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a user's sessions, newest first.")
        @OptionGroup var connection: AdminConnection
        @Argument(help: "The user's ID.") var userId: String
        func run() async throws {
            try await printCall(connection, API.listUserSessions, API.listUserSessions.path(userId))
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "End all of a user's sessions.")
        @OptionGroup var connection: AdminConnection
        @Argument(help: "The user's ID.") var userId: String
        func run() async throws {
            try await printCall(connection, API.revokeUserSessions, API.revokeUserSessions.path(userId))
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
                let session = try await api.call(
                    API.signUp, body: SignUpRequest(username: username, password: password, email: email))
                try await api.send(API.logOut, sessionToken: session.sessionToken)
                return session.user
            }
        }
    }
}
