import Foundation
import Rooftop
import RooftopShared
import Testing

/// ACLs and roles through the client library, remotely and locally: the server filters what a
/// user may read; the client filters its local copies the same way with the user's cached
/// effective roles, and keeps each user's copies to that user.
@Suite("Client queries: ACLs and roles", .sharedServer(), .timeLimit(.minutes(5)))
struct ClientQueryACLTests {
    @Test("the same query remotely, from its cache, from a pin and from the local datastore gives each user the same set")
    func remoteAndLocalAgree() async throws {
        let (server, api) = try SharedServer.require()
        let scene = try await ClientACLScene.make(api)
        for user in [scene.alice, scene.bob, scene.carol] {
            let expected = scene.readable(by: user)
            let file = ClientQueryFixture.cacheFile()
            try await ClientQueryFixture.withClient(server, as: user, storage: .file(path: file)) { client async throws in
                let query = client.query(scene.className)
                let remote = try await query.find(policy: .remoteAndStore)
                #expect(remote.idSet == expected, "\(user.username) remotely")
                #expect(remote.totalCount == expected.count)
                let cached = try await query.find(policy: .localOnly)
                #expect(cached.idSet == expected, "\(user.username) from the cache")
                try await client.pinAll(remote.objects, label: "mine")
                #expect(try await query.fromPin("mine").find().idSet == expected, "\(user.username) from the pin")
                #expect(try await query.fromLocalDatastore().find().idSet == expected)
                #expect(try await query.fromLocalDatastore().count() == expected.count)
                for hidden in scene.all.subtracting(expected) {
                    let error = await #expect(throws: RooftopError.self) { try await query.getObject(hidden) }
                    #expect(error?.code == .notFound, "\(user.username) may not get \(hidden)")
                }
            }
            try await ClientQueryFixture.withOfflineClient(server, storage: .file(path: file)) { client async throws in
                let query = client.query(scene.className)
                #expect(try await query.find(policy: .localOnly).idSet == expected, "\(user.username) offline")
                #expect(try await query.fromLocalDatastore().find().idSet == expected)
                #expect(try await query.fromPin("mine").find().idSet == expected)
            }
        }
    }

    @Test("without an account only public objects are found")
    func anonymous() async throws {
        let (server, api) = try SharedServer.require()
        let scene = try await ClientACLScene.make(api)
        try await ClientQueryFixture.withClient(server) { client async throws in
            #expect(client.currentUser == nil)
            let found = try await client.query(scene.className).find(policy: .remoteAndStore)
            #expect(found.idSet == [scene.publicDoc])
            #expect(try await client.query(scene.className).find(policy: .localOnly).idSet == [scene.publicDoc])
        }
    }

    @Test("objects saved offline with ACLs are checked locally as the server checks them once sent")
    func localACLsBeforeSending() async throws {
        let (server, api) = try SharedServer.require()
        let scene = try await ClientACLScene.make(api)
        let file = ClientQueryFixture.cacheFile()
        let className = Unique.name("Draft")
        try await ClientQueryFixture.withClient(server, as: scene.alice, storage: .file(path: file)) { _ async throws in }
        var ids: [String: String] = [:]
        try await ClientQueryFixture.withOfflineClient(server, storage: .file(path: file)) { client async throws in
            let acls: [String: ACL?] = [
                "bob": .readable(by: scene.bob.principal), "editors": .readable(by: .role(scene.editors)),
                "staff": .readable(by: .role(scene.staff)), "unset": nil,
            ]
            for (name, acl) in acls {
                let draft = client.object(className)
                draft["name"] = .string(name)
                if let acl { draft.acl = acl }
                try await draft.saveEventually()
                ids[name] = draft.objectId
            }
            let local = try await client.query(className).fromLocalDatastore().find()
            #expect(Set(local.objects.compactMap { $0.string("name") }) == ["editors", "staff", "unset"])
            let all = try await client.query(className).fromLocalDatastore().ignoringACLs().find()
            #expect(all.objects.count == 4)
        }
        try await ClientQueryFixture.withClient(server, storage: .file(path: file)) { client async throws in
            try await client.outbox.waitUntilIdle()
            #expect(try client.outbox.rejected().isEmpty)
            let remote = try await client.query(className).find()
            #expect(Set(remote.objects.compactMap { $0.string("name") }) == ["editors", "staff", "unset"])
        }
        try await ClientQueryFixture.withClient(server, as: scene.bob) { client async throws in
            let remote = try await client.query(className).find()
            #expect(remote.objectIds == [ids["bob"]].compactMap { $0 })
        }
    }

    @Test("effective roles, through a child role too, are cached with the session and survive reopening")
    func rolesAreCached() async throws {
        let (server, api) = try SharedServer.require()
        let scene = try await ClientACLScene.make(api)
        let file = ClientQueryFixture.cacheFile()
        try await ClientQueryFixture.withClient(server, as: scene.alice, storage: .file(path: file)) { client async throws in
            #expect(client.currentUser?.roles == [scene.editors, scene.staff].sorted(), "direct and through the child role")
            _ = try await client.query(scene.className).find(policy: .remoteAndStore)
        }
        try await ClientQueryFixture.withOfflineClient(server, storage: .file(path: file)) { client async throws in
            #expect(client.currentUser?.objectId == scene.alice.id)
            #expect(client.currentUser?.roles == [scene.editors, scene.staff].sorted())
            let local = try await client.query(scene.className).fromLocalDatastore().find()
            #expect(local.idSet == scene.readable(by: scene.alice), "role ACLs checked offline with the cached roles")
            #expect(local.idSet.contains(scene.staffDoc), "the child role's membership counts")
        }
    }

    @Test("after leaving a role, a refreshed user no longer reads its objects locally; ignoringACLs still shows them")
    func leavingARole() async throws {
        let (server, api) = try SharedServer.require()
        let scene = try await ClientACLScene.make(api)
        let file = ClientQueryFixture.cacheFile()
        let withoutRoles: Set = [scene.publicDoc, scene.aliceDoc]
        try await ClientQueryFixture.withClient(server, as: scene.alice, storage: .file(path: file)) { client async throws in
            let query = client.query(scene.className)
            _ = try await query.find(policy: .remoteAndStore)
            try await api.updateRole(scene.editors, UpdateRoleRequest(removeUsers: [scene.alice.id]))

            let stale = try await query.find(policy: .localOnly)
            #expect(stale.idSet == scene.readable(by: scene.alice), "local checks use the cached roles until refreshed")
            let user = try await client.refreshCurrentUser()
            #expect(user.roles.isEmpty, "leaving Editors also leaves Staff (its parent)")
            #expect(client.currentUser?.roles.isEmpty == true)

            #expect(try await query.find(policy: .localOnly).idSet == withoutRoles)
            #expect(try await query.fromLocalDatastore().find().idSet == withoutRoles)
            let everything = try await query.fromLocalDatastore().ignoringACLs().find()
            #expect(everything.idSet == scene.readable(by: scene.alice), "ignoringACLs shows every stored object")
            let hidden = try await query.fromLocalDatastore().ignoringACLs().getObject(scene.editorsDoc)
            #expect(hidden.string("title") == "editors")
            let refused = await #expect(throws: RooftopError.self) {
                try await query.fromLocalDatastore().getObject(scene.editorsDoc)
            }
            #expect(refused?.code == .notFound)
            #expect(try await query.find(policy: .remoteOnly).idSet == withoutRoles, "the server agrees")
        }
        try await ClientQueryFixture.withOfflineClient(server, storage: .file(path: file)) { client async throws in
            #expect(client.currentUser?.roles.isEmpty == true, "the refreshed roles were stored")
            #expect(try await client.query(scene.className).find(policy: .localOnly).idSet == withoutRoles)
        }
    }

    @Test("roles gained and lost reach the offline ACL checks through a pull, without refreshing the user")
    func rolesThroughPulls() async throws {
        let (server, api) = try SharedServer.require()
        let scene = try await ClientACLScene.make(api)
        let file = ClientQueryFixture.cacheFile()
        let bobs: Set = [scene.publicDoc, scene.bobDoc]
        try await ClientQueryFixture.withClient(server, as: scene.bob, storage: .file(path: file)) { client async throws in
            let local = client.query(scene.className).fromLocalDatastore()
            try await client.sync.pull(datastore: .app)
            #expect(try await local.find().idSet == bobs)
            #expect(client.currentUser?.roles == [])

            // Alice's side: bob joins Editors (and so Staff, its parent).
            try await api.updateRole(scene.editors, UpdateRoleRequest(addUsers: [scene.bob.id]))
            try await client.sync.pull(datastore: .app)
            #expect(client.currentUser?.roles == [scene.editors, scene.staff].sorted(), "told by the pull")
            #expect(
                try await local.find().idSet == bobs.union([scene.editorsDoc, scene.staffDoc]),
                "the objects the pull brought are readable locally at once")

            try await api.updateRole(scene.editors, UpdateRoleRequest(removeUsers: [scene.bob.id]))
            try await client.sync.pull(datastore: .app)
            #expect(client.currentUser?.roles == [])
            #expect(try await local.find().idSet == bobs)
            #expect(try await local.ignoringACLs().find().idSet.isSubset(of: scene.all))
        }
        try await ClientQueryFixture.withOfflineClient(server, storage: .file(path: file)) { client async throws in
            #expect(client.currentUser?.roles == [], "the roles told were stored with the session")
            #expect(try await client.query(scene.className).fromLocalDatastore().find().idSet == bobs)
        }
    }

    @Test("another user signed in on the same client file sees none of the first user's cached objects")
    func usersAreSeparated() async throws {
        let (server, api) = try SharedServer.require()
        let scene = try await ClientACLScene.make(api)
        let file = ClientQueryFixture.cacheFile()
        try await ClientQueryFixture.withClient(server, as: scene.alice, storage: .file(path: file)) { client async throws in
            let query = client.query(scene.className)
            let mine = try await query.find(policy: .remoteAndStore)
            try await client.pinAll(mine.objects, label: "mine")
            try await client.logOut()
            try await client.logIn(username: scene.bob.username, password: scene.bob.password)

            let cached = await #expect(throws: RooftopError.self) { try await query.find(policy: .localOnly) }
            #expect(cached?.code == .notCached, "alice's cached result is not bob's")
            #expect(try await query.fromLocalDatastore().ignoringACLs().find().objects.isEmpty)
            #expect(try await query.fromPin("mine").ignoringACLs().find().objects.isEmpty)
            let missing = await #expect(throws: RooftopError.self) {
                try await query.fromLocalDatastore().ignoringACLs().getObject(scene.aliceDoc)
            }
            #expect(missing?.code == .notFound)
            #expect(mine.objects.count == 4, "alice's result is still held by the app")
            let aliceObject = client.object(scene.className, id: scene.aliceDoc)
            #expect(aliceObject["title"] == nil, "bob does not get alice's live instance: \(aliceObject)")
            #expect(try await query.find(policy: .remoteAndStore).idSet == scene.readable(by: scene.bob))
            try await client.logOut()
        }
        try await ClientQueryFixture.withClient(server, as: scene.alice, storage: .file(path: file)) { client async throws in
            let query = client.query(scene.className)
            #expect(try await query.find(policy: .localOnly).idSet == scene.readable(by: scene.alice), "kept for her next sign-in")
            #expect(try await query.fromPin("mine").find().idSet == scene.readable(by: scene.alice))
            #expect(!(try await query.fromLocalDatastore().ignoringACLs().find().idSet.contains(scene.bobDoc)))
        }
    }
}

/// Three users, two roles (Staff has Editors as a child role: Editors' members are Staff's
/// members), and documents of a new class in `:app` readable by different principals.
///
/// alice is in Editors (so in Staff), carol directly in Staff; bob in no role.
struct ClientACLScene: Sendable {
    var alice: TestUser
    var bob: TestUser
    var carol: TestUser
    var editors: String
    var staff: String
    var className: String
    var publicDoc: String
    var aliceDoc: String
    var bobDoc: String
    var editorsDoc: String
    var staffDoc: String
    var nobodyDoc: String

    static func make(_ api: APIClient) async throws -> ClientACLScene {
        let alice = try await api.newUser("alice")
        let bob = try await api.newUser("bob")
        let carol = try await api.newUser("carol")
        let editors = Unique.name("Editors")
        let staff = Unique.name("Staff")
        try await api.createRole(editors, users: [alice])
        try await api.createRole(staff, users: [carol], roles: [editors])
        let className = Unique.name("Doc")
        func create(_ title: String, _ acl: ACL) async throws -> String {
            try await api.create(className, fields: ["title": .string(title)], acl: acl, admin: true).objectId
        }
        return ClientACLScene(
            alice: alice, bob: bob, carol: carol, editors: editors, staff: staff, className: className,
            publicDoc: try await create("public", .readable(by: .everyone)),
            aliceDoc: try await create("alice", .readable(by: alice.principal)),
            bobDoc: try await create("bob", .readable(by: bob.principal)),
            editorsDoc: try await create("editors", .readable(by: .role(editors))),
            staffDoc: try await create("staff", .readable(by: .role(staff))),
            nobodyDoc: try await create("nobody", .readable(by: .user("someone-else"))))
    }

    /// Every document.
    var all: Set<String> { [publicDoc, aliceDoc, bobDoc, editorsDoc, staffDoc, nobodyDoc] }

    /// What a user may read.
    func readable(by user: TestUser) -> Set<String> {
        switch user.id {
        case alice.id: [publicDoc, aliceDoc, editorsDoc, staffDoc]
        case bob.id: [publicDoc, bobDoc]
        case carol.id: [publicDoc, staffDoc]
        default: [publicDoc]
        }
    }
}
