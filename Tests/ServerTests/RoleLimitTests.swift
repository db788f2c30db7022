import Foundation
import Logging
import RooftopSQL
import RooftopShared
import Testing

@testable import RooftopServer

/// Role writes are bounded: at most ``RoleInfo/maxNamesPerWrite`` names per list, and no user
/// made to hold more than ``RoleInfo/maxRolesPerUser`` roles (each a principal that every query
/// of the user checks). Refusals are `sizeLimit` and change nothing.
@Suite("Roles: bounded writes and memberships")
struct RoleLimitTests {
    /// Runs `body` with a role service over a fresh SQLite storage.
    private func withRoleService(_ body: (RoleService, any Storage) async throws -> Void) async throws {
        let fixture = try SQLiteFixture()
        defer { try? fixture.destroy() }
        let storage = try await fixture.open()
        let cluster = ClusterLink(storage: storage, logger: Logger(label: "role-limit-tests"))
        let service = RoleService(
            storage: storage, roles: RoleDirectory(storage: storage),
            classes: ClassDirectory(storage: storage, cluster: cluster), live: LiveHub(), cluster: cluster)
        do {
            try await body(service, storage)
        } catch {
            try? await storage.close()
            throw error
        }
        try await storage.close()
    }

    private func code(_ operation: () async throws -> Void) async -> RooftopError.Code? {
        do {
            try await operation()
            return nil
        } catch let error as RooftopError {
            return error.code
        } catch {
            return nil
        }
    }

    @Test("a list of more than 1,000 names is refused with sizeLimit, in a creation and an update")
    func namesPerWrite() async throws {
        try await withRoleService { service, storage in
            let users = (0...RoleInfo.maxNamesPerWrite).map { "u\($0)" }
            #expect(await code { _ = try await service.create(CreateRoleRequest(name: "Big", users: users), by: .admin) } == .sizeLimit)
            #expect(try await storage.role(named: "Big") == nil, "nothing half-applied")
            _ = try await service.create(CreateRoleRequest(name: "Team", users: Array(users.prefix(1_000))), by: .admin)
            for request in [
                UpdateRoleRequest(addUsers: users), UpdateRoleRequest(removeUsers: users),
                UpdateRoleRequest(addRoles: users.map { "R" + $0 }), UpdateRoleRequest(removeRoles: users.map { "R" + $0 }),
            ] {
                #expect(await code { _ = try await service.update("Team", request, by: .admin) } == .sizeLimit)
            }
            #expect(try await storage.role(named: "Team")?.users.count == 1_000)
        }
    }

    @Test("no user is made to hold more than 1,000 roles, directly or through a child role")
    func rolesPerUser() async throws {
        try await withRoleService { service, storage in
            // The victim already holds 999 roles (written straight to the storage: fast).
            for index in 0..<(RoleInfo.maxRolesPerUser - 1) {
                try await storage.insertRole(RoleRecord(name: "R\(index)", acl: ACL(), users: ["victim"]))
            }
            try await storage.insertRole(RoleRecord(name: "Spare", acl: ACL()))
            try await storage.insertRole(RoleRecord(name: "Other", acl: ACL()))
            // The 1,000th is fine.
            _ = try await service.update("Spare", UpdateRoleRequest(addUsers: ["victim"]), by: .admin)
            // The 1,001st is not, as a direct member or through a child role holding the victim.
            #expect(await code { _ = try await service.update("Other", UpdateRoleRequest(addUsers: ["victim"]), by: .admin) } == .sizeLimit)
            #expect(await code { _ = try await service.update("Other", UpdateRoleRequest(addRoles: ["R0"]), by: .admin) } == .sizeLimit)
            #expect(await code {
                _ = try await service.create(CreateRoleRequest(name: "New", users: ["victim"]), by: .admin)
            } == .sizeLimit)
            #expect(try await storage.role(named: "Other") == RoleRecord(name: "Other", acl: ACL()), "nothing applied")
            #expect(try await storage.role(named: "New") == nil)
            #expect(try await storage.roleGraph().effectiveRoles(ofUser: "victim").count == RoleInfo.maxRolesPerUser)
            // Others are still added freely.
            _ = try await service.update("Other", UpdateRoleRequest(addUsers: ["someone"]), by: .admin)
        }
    }
}

/// However many principals a caller holds, the readers filter binds a bounded number of
/// arguments (``SQLTextSet``): SQLite builds with the default limit allow 32,766 (Debian's allows
/// 250,000, so the storage tests alone would not notice), PostgreSQL 65,535.
@Suite("SQL: large principal sets bound as one argument")
struct PrincipalBindingTests {
    @Test("a query's readers filter binds at most 64 principals one by one, and 40,000 as one JSON array")
    func boundedArguments() throws {
        let many = Set((0..<40_000).map { "role:R\($0)" })
        for dialect in [SQLDialect.sqlite, .postgres] {
            let compiler = SQLQueryCompiler(dialect: dialect, layout: .server)
            let select = compiler.select(Query("T"), scope: .datastore(1), readers: many, limit: 10)
            #expect(select.arguments.count < 10, "\(select.arguments.count) arguments")
            let count = compiler.count(Query("T"), scope: .datastore(1), readers: many)
            #expect(count.arguments.count < 10)
            let few = compiler.count(Query("T"), scope: .datastore(1), readers: ["*", "u1"])
            #expect(few.arguments.contains(.text("u1")), "small sets are bound one by one, as before")
        }
        #expect(SQLiteStorage.principalList(many).arguments.count == 1)
        #expect(SQLTextSet.jsonArray(["a\"b", "c\\d", "\u{1}"]) == #"["a\"b","c\\d","\u0001"]"#)
    }

    @Test("the JSON array naming a reader set keeps its stored form: only quotes, backslashes and control characters escaped")
    func readerSetTextForm() throws {
        #expect(SQLTextSet.jsonArray([]) == "[]")
        #expect(SQLTextSet.jsonArray([""]) == #"[""]"#)
        #expect(SQLTextSet.jsonArray(["\u{1F}", "\u{7F}", "\t\n", "é", "😀", "role:Ed\u{0}"]) == "[\"\\u001f\",\"\u{7F}\",\"\\u0009\\u000a\",\"é\",\"😀\",\"role:Ed\\u0000\"]")
        #expect(SQLIndexRows.readerSetText(["u2", "*", "role:B", "role:A"]) == #"["*","role:A","role:B","u2"]"#)
        // Any text reads back as itself.
        var random = SystemRandomNumberGenerator()
        let alphabet: [Character] = ["a", "Z", "\"", "\\", "\u{0}", "\u{1F}", " ", "é", "😀", "\u{7F}", "/", "\u{2028}"]
        for _ in 0..<500 {
            let texts = (0..<Int.random(in: 0...4, using: &random)).map { _ in
                String((0..<Int.random(in: 0...12, using: &random)).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &random)] })
            }
            let text = SQLTextSet.jsonArray(texts)
            #expect(try JSONDecoder().decode([String].self, from: Data(text.utf8)) == texts, "\(text)")
        }
    }
}
