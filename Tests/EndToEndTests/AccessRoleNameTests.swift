import Foundation
import RooftopShared
import Testing

/// Role names are grants, so taking one is controlled: creating a role needs the admin key or the
/// `create` permission of class `:Role` (nobody else by default), and a deleted role's name stays
/// reserved, so that a new role never inherits the ACLs, class permissions and sharing that named
/// the old one.
///
/// One test, in order: it changes the server-wide `:Role` permission.
@Suite("Access: role creation and deleted role names", .sharedServer())
struct AccessRoleNameTests {
    @Test("role squatting: refused by default, allowed by the :Role permission, never over a deleted role's grants")
    func squatting() async throws {
        let (_, client) = try SharedServer.require()
        let (alice, mallory, maker) = (
            try await client.newUser("alice"), try await client.newUser("mallory"), try await client.newUser("maker")
        )
        let editors = Unique.name("Editors")
        let className = Unique.name("Doc")

        // By default only the admin key creates roles: a signed-in user may not take an unused name.
        let squat = try await client.send(API.createRole, body: CreateRoleRequest(name: editors), token: mallory.token)
        #expect(squat.status == 403, "\(squat.text)")
        #expect(squat.error?.code == .disallowed)
        let anonymous = try await client.send(API.createRole, body: CreateRoleRequest(name: editors))
        #expect(anonymous.status == 401)
        #expect(try await client.send(.GET, "/v1/roles/\(editors)", admin: true).status == 404, "nothing was created")

        // The admin key creates it; an object, a datastore and a class permission grant it.
        try await client.createRole(editors, users: [alice])
        let secret = try await client.create(
            className, fields: ["text": "for editors only"], acl: .of((.role(editors), read: true, write: true)),
            as: alice)
        #expect(try await client.get(secret, as: alice).status == 200)
        let shared = try await client.createShareable(by: alice)
        #expect(try await client.setRole(.editor, for: .role(editors), on: shared.id, by: alice).status == 200)

        // Deleted: its grants stay where they are, and its name stays reserved, even once signed-in
        // users may create roles, and for the admin key.
        #expect(try await client.send(.DELETE, "/v1/roles/\(editors)", admin: true).status == 204)
        try await client.setPermissions(ClassPermissions(create: .authenticated), of: ":Role")
        let retaken = try await client.send(
            API.createRole, body: CreateRoleRequest(name: editors, users: [mallory.id]), token: mallory.token)
        #expect(retaken.status == 409, "\(retaken.text)")
        #expect(retaken.error?.code == .exists)
        let byAdmin = try await client.send(API.createRole, body: CreateRoleRequest(name: editors), admin: true)
        #expect(byAdmin.status == 409)
        #expect(try await client.get(secret, as: mallory).status == 404, "the old grant reaches no one new")
        #expect(try await client.send(.GET, "/v1/datastores/\(shared.id.rawValue)", token: mallory.token).status != 200)
        // An unused name is free to signed-in users now.
        let fresh = try await client.send(
            API.createRole, body: CreateRoleRequest(name: Unique.name("Fresh")), token: mallory.token)
        #expect(fresh.status == 201, "\(fresh.text)")

        // Narrowed to the members of one role.
        let makers = Unique.name("RoleMakers")
        try await client.createRole(makers, users: [maker])
        try await client.setPermissions(ClassPermissions(create: PermissionRule(principals: [.role(makers)])), of: ":Role")
        let refused = try await client.send(
            API.createRole, body: CreateRoleRequest(name: Unique.name("Other")), token: mallory.token)
        #expect(refused.status == 403, "\(refused.text)")
        let allowed = try await client.send(
            API.createRole, body: CreateRoleRequest(name: Unique.name("Team")), token: maker.token)
        #expect(allowed.status == 201, "\(allowed.text)")
        // Role writes are bounded: more than 1,000 names in a list is a clear 413, changing nothing.
        let tooMany = (0...1_000).map { "u\($0)" }
        let flood = try await client.send(
            .PATCH, "/v1/roles/\(makers)", body: UpdateRoleRequest(addUsers: tooMany), admin: true)
        #expect(flood.status == 413, "\(flood.text)")
        #expect(flood.error?.code == .sizeLimit)
        let bigRole = try await client.send(
            API.createRole, body: CreateRoleRequest(name: Unique.name("Big"), roles: tooMany.map { "R" + $0 }),
            admin: true)
        #expect(bigRole.status == 413)
        let unchanged: RoleInfo = try await client.call(.GET, "/v1/roles/\(makers)", admin: true)
        #expect(unchanged.users == [maker.id])
        // The class `:Role` is only a permission: it holds no objects.
        let object = try await client.send(
            .POST, APIClient.objectPath(.app, ":Role"), body: ObjectWriteBody(fields: ["x": 1]), token: maker.token)
        #expect(object.status == 400)
    }
}
