import Foundation
import Rooftop
import RooftopShared
import Testing

/// Roles through the client library (`client.roles`) against the real server: members and child
/// roles grant what ACLs give the role, the role's own ACL decides who may change it, and the
/// signed-in user's cached effective roles follow the changes.
@Suite("Client roles", .sharedServer(), .timeLimit(.minutes(5)))
struct ClientRoleTests {
    @Test("create a role, add and remove users and child roles; ACLs naming it follow, on the server and locally")
    func membersAndChildRoles() async throws {
        let (server, api) = try SharedServer.require()
        let (alice, bob, carol) = (try await api.newUser("alice"), try await api.newUser("bob"), try await api.newUser("carol"))
        let moderators = Unique.name("Moderators")
        let admins = Unique.name("Admins")
        let className = Unique.name("Post")
        // Signed-in users may create roles on this server (the admin opens it; closed by default).
        try await api.setPermissions(ClassPermissions(create: .authenticated), of: ":Role")
        try await ClientQueryFixture.withClient(server, as: alice) { owner async throws in
            #expect(throws: RooftopError.self) { try RoleInfo.validateName(":reserved") }
            let refused = await #expect(throws: RooftopError.self) { try await owner.roles.create(":reserved") }
            #expect(refused?.code == .illegalArgument)

            let created = try await owner.roles.create(moderators, users: [alice.id])
            #expect(created.name == moderators && created.users == [alice.id])
            #expect(owner.currentUser?.roles.contains(moderators) == true, "the creator's cached roles were reloaded")
            let post = owner.object(className)
            post["text"] = "for moderators"
            post.acl = ACL([.role(moderators): .readWrite])
            try await post.save()

            try await ClientQueryFixture.withClient(server, as: bob) { other async throws in
                let hidden = await #expect(throws: RooftopError.self) { try await other.query(className).getObject(post.objectId) }
                #expect(hidden?.code == .notFound)
                let notMine = await #expect(throws: RooftopError.self) { try await other.roles.add(users: [bob.id], to: moderators) }
                #expect(notMine?.code == .notFound || notMine?.code == .disallowed, "\(String(describing: notMine))")
            }

            let withBob = try await owner.roles.add(users: [bob.id], to: moderators)
            #expect(withBob.users.sorted() == [alice.id, bob.id].sorted())
            try await ClientQueryFixture.withClient(server, as: bob) { other async throws in
                #expect(try await other.query(className).getObject(post.objectId).string("text") == "for moderators")
                #expect(other.currentUser?.roles.contains(moderators) == true)
            }

            // Carol is an admin; admins become moderators as a child role.
            try await owner.roles.create(admins, users: [carol.id])
            let withChild = try await owner.roles.add(roles: [admins], to: moderators)
            #expect(withChild.roles == [admins])
            #expect(try await owner.roles.get(moderators) == withChild)
            try await ClientQueryFixture.withClient(server, as: carol) { other async throws in
                #expect(other.currentUser?.roles.contains(moderators) == true, "through the child role")
                let found = try await other.query(className).find(policy: .remoteAndStore)
                #expect(found.objects.map(\.objectId) == [post.objectId])
                #expect(try await other.query(className).fromLocalDatastore().find().objects.count == 1, "local ACL check")
            }

            try await owner.roles.remove(users: [bob.id], roles: [admins], from: moderators)
            #expect(try await owner.roles.get(moderators).users == [alice.id])
            for user in [bob, carol] {
                try await ClientQueryFixture.withClient(server, as: user) { other async throws in
                    let gone = await #expect(throws: RooftopError.self) { try await other.query(className).getObject(post.objectId) }
                    #expect(gone?.code == .notFound, "\(user.username) left the role")
                }
            }

            try await owner.roles.delete(admins)
            let deleted = await #expect(throws: RooftopError.self) { try await owner.roles.get(admins) }
            #expect(deleted?.code == .notFound)
        }
    }
}
