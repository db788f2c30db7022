import Foundation
import RooftopShared
import Testing

/// Datastore access: private datastores are per user; shareable ones give viewers read access,
/// editors write access, and everyone else a 404 (existence is not revealed); the owner's role is
/// fixed.
@Suite("Access: private and shareable datastores", .sharedServer())
struct AccessDatastoreTests {
    @Test("private 'default' is per user: two users writing to it never see each other's objects")
    func privateDefaultPerUser() async throws {
        let (_, client) = try SharedServer.require()
        let ada = try await client.newUser("ada")
        let bob = try await client.newUser("bob")
        let className = Unique.name("Note")
        // The same object ID in both users' 'default' is two different objects.
        let sharedId = ObjectID.generate()
        let adaNote = try await client.create(
            className, in: .default, fields: ["who": .string("ada")], acl: .publicReadWrite, objectId: sharedId, as: ada)
        let bobNote = try await client.create(
            className, in: .default, fields: ["who": .string("bob")], acl: .publicReadWrite, objectId: sharedId, as: bob)
        #expect(adaNote.version == 1)
        #expect(bobNote.version == 1, "bob's create must not have updated ada's object")

        for (user, name) in [(ada, "ada"), (bob, "bob")] {
            let found = try await client.find(Query(className), in: .default, as: user)
            #expect(found.objects.map { $0.fields["who"] } == [.string(name)])
            let got = try await client.get(adaNote, as: user).decode(ObjectWithIncludes.self)
            #expect(got.object.fields["who"] == .string(name))
            let pulled = try await client.pullAll(.default, classes: [className], as: user).changes
            #expect(pulled.count == 1)
            if case .upsert(let object) = pulled.first { #expect(object.fields["who"] == .string(name)) }
        }
        let anonymous = try await client.sendQuery(Query(className), in: .default)
        #expect(anonymous.status == 401)
        #expect(anonymous.error?.code == .auth)
    }

    @Test("a shareable datastore is invisible (404) to users without a role, and listed for its owner")
    func shareableInvisibleWithoutRole() async throws {
        let (_, client) = try SharedServer.require()
        let owner = try await client.newUser("owner")
        let stranger = try await client.newUser("stranger")
        let datastore = try await client.createShareable(by: owner, title: "Trip")
        #expect(datastore.role == .owner)
        #expect(datastore.id.kind == .shareable)
        let object = try await client.create(
            "Stop", in: datastore.id, fields: ["n": .int(1)], acl: .publicReadWrite, as: owner)

        let replies = [
            try await client.send(.GET, "/v1/datastores/\(datastore.id.rawValue)", token: stranger.token),
            try await client.get(object, as: stranger),
            try await client.sendQuery(Query("Stop"), in: datastore.id, as: stranger),
            try await client.sendCount(Query("Stop"), in: datastore.id, as: stranger),
            try await client.sendPull(datastore.id, as: stranger),
            try await client.update(object, fields: ["n": .int(2)], as: stranger),
            try await client.delete(object, as: stranger),
            try await client.get(object),
        ]
        for reply in replies {
            #expect(reply.status == 404, "\(reply.text)")
            #expect(reply.error?.code == .notFound)
        }
        // An ID that was never created answers the same way.
        let unknown = try await client.send(.GET, "/v1/datastores/.\(Unique.name("nothing"))", token: stranger.token)
        #expect(unknown.status == 404)
        let listed: DatastoreList = try await client.call(API.listDatastores, token: owner.token)
        #expect(listed.datastores.map(\.id).contains(datastore.id))
        let notListed: DatastoreList = try await client.call(API.listDatastores, token: stranger.token)
        #expect(!notListed.datastores.map(\.id).contains(datastore.id))
        #expect(try await client.get(object, as: owner).status == 200)
    }

    @Test("a viewer reads but cannot write (403 disallowed); an editor writes")
    func viewerAndEditorUsers() async throws {
        let (_, client) = try SharedServer.require()
        let owner = try await client.newUser("owner")
        let viewer = try await client.newUser("viewer")
        let editor = try await client.newUser("editor")
        let datastore = try await client.createShareable(by: owner).id
        #expect(try await client.setRole(.viewer, for: viewer.principal, on: datastore, by: owner).status == 200)
        #expect(try await client.setRole(.editor, for: editor.principal, on: datastore, by: owner).status == 200)
        let object = try await client.create("Stop", in: datastore, fields: ["n": .int(1)], acl: .publicReadWrite, as: owner)

        try await expectCanRead(object, as: viewer)
        let writes = [
            try await client.update(object, fields: ["n": .int(2)], as: viewer),
            try await client.delete(object, as: viewer),
            try await client.send(
                .POST, APIClient.objectPath(datastore, "Stop"), body: ObjectWriteBody(fields: ["n": .int(3)]), token: viewer.token),
            try await client.setRole(.editor, for: viewer.principal, on: datastore, by: viewer),
        ]
        for reply in writes {
            #expect(reply.status == 403, "\(reply.text)")
            #expect(reply.error?.code == .disallowed)
        }
        let info: DatastoreInfo = try await client.call(.GET, "/v1/datastores/\(datastore.rawValue)", token: viewer.token)
        #expect(info.role == .viewer)

        try await expectCanRead(object, as: editor)
        #expect(try await client.update(object, fields: ["n": .int(4)], as: editor).status == 200)
        let created = try await client.create("Stop", in: datastore, fields: ["n": .int(5)], acl: .publicReadWrite, as: editor)
        #expect(try await client.delete(created, as: editor).status == 204)
        // Editors may share further, but not beyond editor.
        #expect(try await client.setRole(.viewer, for: viewer.principal, on: datastore, by: editor).status == 200)
    }

    @Test("roles for a role principal and for the public (*)")
    func rolePrincipalAndPublic() async throws {
        let (_, client) = try SharedServer.require()
        let owner = try await client.newUser("owner")
        let member = try await client.newUser("member")
        let stranger = try await client.newUser("stranger")
        let team = Unique.name("Team")
        try await client.createRole(team, users: [member])
        let datastore = try await client.createShareable(by: owner).id
        let object = try await client.create("Stop", in: datastore, fields: ["n": .int(1)], acl: .publicReadWrite, as: owner)

        #expect(try await client.setRole(.editor, for: .role(team), on: datastore, by: owner).status == 200)
        #expect(try await client.update(object, fields: ["n": .int(2)], as: member).status == 200)
        #expect(try await client.get(object, as: stranger).status == 404)

        let memberList: DatastoreList = try await client.call(API.listDatastores, token: member.token)
        #expect(memberList.datastores.first { $0.id == datastore }?.role == .editor, "shared with the member's team")

        #expect(try await client.setRole(.viewer, for: .everyone, on: datastore, by: owner).status == 200)
        try await expectCanRead(object, as: stranger)
        // Public access is by ID: public datastores are not listed to every user.
        let strangerList: DatastoreList = try await client.call(API.listDatastores, token: stranger.token)
        #expect(!strangerList.datastores.map(\.id).contains(datastore))
        #expect(try await client.get(object).status == 200, "anonymous callers hold *")
        let write = try await client.update(object, fields: ["n": .int(3)], as: stranger)
        #expect(write.status == 403)
        #expect(write.error?.code == .disallowed)
        let anonymousWrite = try await client.update(object, fields: ["n": .int(3)])
        #expect(anonymousWrite.status == 403)
        // The member keeps the better of its roles.
        #expect(try await client.update(object, fields: ["n": .int(4)], as: member).status == 200)

        // Taking a role away (none) closes the datastore again.
        #expect(try await client.setRole(.none, for: .everyone, on: datastore, by: owner).status == 200)
        #expect(try await client.get(object, as: stranger).status == 404)
        #expect(try await client.setRole(.none, for: .role(team), on: datastore, by: owner).status == 200)
        #expect(try await client.get(object, as: member).status == 404)
    }

    @Test("the owner's role cannot be changed, and nobody can be made owner")
    func ownerRoleFixed() async throws {
        let (_, client) = try SharedServer.require()
        let owner = try await client.newUser("owner")
        let editor = try await client.newUser("editor")
        let datastore = try await client.createShareable(by: owner).id
        #expect(try await client.setRole(.editor, for: editor.principal, on: datastore, by: owner).status == 200)
        for (role, principal, by) in [
            (SharingRole.viewer, owner.principal, editor), (.none, owner.principal, editor),
            (.none, owner.principal, owner), (.owner, editor.principal, owner),
        ] {
            let reply = try await client.setRole(role, for: principal, on: datastore, by: by)
            #expect([400, 403].contains(reply.status), "\(role) for \(principal): \(reply.text)")
            #expect(reply.error?.code != nil)
        }
        let info: DatastoreInfo = try await client.call(.GET, "/v1/datastores/\(datastore.rawValue)", token: owner.token)
        #expect(info.role == .owner)
        let roles: DatastoreSharing = try await client.call(
            .GET, "/v1/datastores/\(datastore.rawValue)/roles", token: owner.token)
        #expect(roles.owner == owner.id)
        #expect(roles.roles == [editor.principal: .editor])
    }

    @Test("losing the datastore role: the next pull fails with notFound")
    func pullAfterLosingRole() async throws {
        let (_, client) = try SharedServer.require()
        let owner = try await client.newUser("owner")
        let viewer = try await client.newUser("viewer")
        let datastore = try await client.createShareable(by: owner).id
        #expect(try await client.setRole(.viewer, for: viewer.principal, on: datastore, by: owner).status == 200)
        let object = try await client.create("Stop", in: datastore, fields: ["n": .int(1)], acl: .publicReadWrite, as: owner)
        let first = try await client.pullAll(datastore, as: viewer)
        #expect(first.changes.objectIds == [object.objectId])
        #expect(try await client.setRole(.none, for: viewer.principal, on: datastore, by: owner).status == 200)
        let again = try await client.sendPull(datastore, since: first.checkpoint, as: viewer)
        #expect(again.status == 404, "\(again.text)")
        #expect(again.error?.code == .notFound)
    }

    /// Checks that `user` can get, query, count and pull `object`.
    private func expectCanRead(_ object: ObjectSnapshot, as user: TestUser) async throws {
        let (_, client) = try SharedServer.require()
        #expect(try await client.get(object, as: user).status == 200)
        #expect(try await client.find(Query(object.className), in: object.datastore, as: user).ids.contains(object.objectId))
        #expect(try await client.count(Query(object.className), in: object.datastore, as: user) >= 1)
        let pulled = try await client.pullAll(object.datastore, classes: [object.className], as: user).changes
        #expect(pulled.objectIds.contains(object.objectId))
    }
}
