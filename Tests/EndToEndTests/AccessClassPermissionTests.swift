import Foundation
import RooftopShared
import Testing

/// Class-level permissions set with the admin key (`PUT /v1/classes/:className`): each operation
/// refused by its rule, `requiresAuthentication`, role rules, and the class's default ACL.
@Suite("Access: class-level permissions", .sharedServer())
struct AccessClassPermissionTests {
    /// A class with one public, writable object, and the given permissions set afterwards.
    private func publicObject(permissions: ClassPermissions, by owner: TestUser) async throws -> ObjectSnapshot {
        let (_, client) = try SharedServer.require()
        let className = Unique.name("Guarded")
        let object = try await client.create(
            className, fields: ["n": .int(1)], acl: .publicReadWrite, as: owner)
        try await client.setPermissions(permissions, of: className)
        return object
    }

    @Test("the permissions set are read back")
    func readBack() async throws {
        let (_, client) = try SharedServer.require()
        let className = Unique.name("Guarded")
        let permissions = ClassPermissions(
            find: .authenticated, create: PermissionRule(principals: [.role("Editors")]), delete: .nobody,
            defaultACL: .publicReadCreatorWrite)
        try await client.setPermissions(permissions, of: className)
        let user = try await client.newUser()
        let reply = try await client.send(.GET, "/v1/classes/\(className)", token: user.token)
        #expect(reply.status == 200, "\(reply.text)")
        struct Settings: Decodable { var permissions: ClassPermissions }
        #expect(try reply.decode(Settings.self).permissions == permissions)
    }

    @Test("get refused by its rule: 403 for an existing object and for a missing one alike; admin passes")
    func getRefused() async throws {
        let (_, client) = try SharedServer.require()
        let owner = try await client.newUser()
        let object = try await publicObject(permissions: ClassPermissions(get: .nobody), by: owner)
        var missing = object
        missing.objectId = ObjectID.generate()
        let existing = try await client.get(object, as: owner)
        let absent = try await client.get(missing, as: owner)
        #expect(existing.status == 403, "\(existing.text)")
        #expect(existing.error?.code == .disallowed)
        // Whether the object exists is not revealed by a refusal.
        #expect(absent.status == existing.status)
        #expect(absent.error?.code == existing.error?.code)
        #expect(try await client.get(object, admin: true).status == 200)
        // find is still allowed: the object is found by a query.
        #expect(try await client.find(Query(object.className), as: owner).ids == [object.objectId])
    }

    @Test("find refused by its rule: queries and pulls refuse or leave the class out; get still works")
    func findRefused() async throws {
        let (_, client) = try SharedServer.require()
        let owner = try await client.newUser()
        let object = try await publicObject(permissions: ClassPermissions(find: .nobody), by: owner)
        let query = try await client.sendQuery(Query(object.className), as: owner)
        #expect(query.status == 403, "\(query.text)")
        #expect(query.error?.code == .disallowed)
        #expect(try await client.get(object, as: owner).status == 200)
        let pulled = try await client.pullAll(.app, classes: [object.className], as: owner).changes
        #expect(pulled.isEmpty, "\(pulled)")
        #expect(try await client.find(Query(object.className), admin: true).ids == [object.objectId])
    }

    @Test("count refused by its rule")
    func countRefused() async throws {
        let (_, client) = try SharedServer.require()
        let owner = try await client.newUser()
        let object = try await publicObject(permissions: ClassPermissions(count: .nobody), by: owner)
        let count = try await client.sendCount(Query(object.className), as: owner)
        #expect(count.status == 403, "\(count.text)")
        #expect(count.error?.code == .disallowed)
        #expect(try await client.count(Query(object.className), admin: true) == 1)
        #expect(try await client.find(Query(object.className), as: owner).ids == [object.objectId], "find is still allowed")
    }

    @Test("create, update and delete refused by their rules; nothing changes")
    func writesRefused() async throws {
        let (_, client) = try SharedServer.require()
        let owner = try await client.newUser()
        let object = try await publicObject(
            permissions: ClassPermissions(create: .nobody, update: .nobody, delete: .nobody), by: owner)

        let create = try await client.send(
            .POST, APIClient.objectPath(.app, object.className), body: ObjectWriteBody(fields: ["n": .int(2)]),
            token: owner.token)
        #expect(create.status == 403, "\(create.text)")
        #expect(create.error?.code == .disallowed)
        let update = try await client.update(object, fields: ["n": .int(3)], as: owner)
        #expect(update.status == 403, "\(update.text)")
        #expect(update.error?.code == .disallowed)
        let delete = try await client.delete(object, as: owner)
        #expect(delete.status == 403, "\(delete.text)")
        #expect(delete.error?.code == .disallowed)

        let stored = try await client.find(Query(object.className), admin: true)
        #expect(stored.ids == [object.objectId])
        #expect(stored.objects.first?.fields["n"] == .int(1))
        // The admin key passes every rule.
        #expect(try await client.update(object, fields: ["n": .int(4)], admin: true).status == 200)
    }

    @Test("requiresAuthentication lets every signed-in user through and no anonymous caller")
    func requiresAuthentication() async throws {
        let (_, client) = try SharedServer.require()
        let owner = try await client.newUser()
        let stranger = try await client.newUser()
        let rule = PermissionRule.authenticated
        let object = try await publicObject(
            permissions: ClassPermissions(get: rule, find: rule, count: rule, create: rule, update: rule, delete: rule),
            by: owner)
        for reply in [
            try await client.get(object),
            try await client.sendQuery(Query(object.className)),
            try await client.sendCount(Query(object.className)),
            try await client.update(object, fields: ["n": .int(9)]),
            try await client.send(
                .POST, APIClient.objectPath(.app, object.className),
                body: ObjectWriteBody(fields: ["n": .int(2)], acl: .publicReadWrite)),
        ] {
            #expect([401, 403].contains(reply.status), "\(reply.text)")
            #expect([RooftopError.Code.auth, .disallowed].contains(reply.error?.code))
        }
        #expect(try await client.get(object, as: stranger).status == 200)
        #expect(try await client.find(Query(object.className), as: stranger).ids == [object.objectId])
        #expect(try await client.count(Query(object.className), as: stranger) == 1)
        #expect(try await client.update(object, fields: ["n": .int(5)], as: stranger).status == 200)
        #expect(try await client.delete(object, as: stranger).status == 204)
    }

    @Test("a role rule lets members (also through a child role) through and refuses others")
    func roleRule() async throws {
        let (_, client) = try SharedServer.require()
        let matrix = try await AccessMatrix.make(client)
        let className = Unique.name("Guarded")
        try await client.setPermissions(
            ClassPermissions(create: PermissionRule(principals: [.role(matrix.role)])), of: className)
        for caller in [Caller.member, .childMember, .owner, .other] {
            let reply = try await client.send(
                .POST, APIClient.objectPath(.app, className), body: ObjectWriteBody(fields: ["by": .string(caller.rawValue)]),
                token: matrix.user(caller)?.token)
            let allowed = caller == .member || caller == .childMember
            #expect(reply.status == (allowed ? 201 : 403), "\(caller): \(reply.text)")
        }
    }

    @Test("the class default ACL publicReadCreatorWrite: everyone reads new objects, only the creator writes")
    func defaultACL() async throws {
        let (_, client) = try SharedServer.require()
        let creator = try await client.newUser()
        let reader = try await client.newUser()
        let className = Unique.name("Board")
        try await client.setPermissions(ClassPermissions(defaultACL: .publicReadCreatorWrite), of: className)
        let object = try await client.create(className, fields: ["n": .int(1)], as: creator)
        #expect(object.acl == .of((.everyone, read: true, write: false), (creator.principal, read: true, write: true)))
        #expect(try await client.get(object).status == 200)
        #expect(try await client.get(object, as: reader).status == 200)
        #expect(try await client.update(object, fields: ["n": .int(2)], as: reader).status == 403)
        #expect(try await client.update(object, fields: ["n": .int(3)], as: creator).status == 200)
        // An explicit ACL still wins over the default.
        let hidden = try await client.create(className, fields: ["n": .int(4)], acl: .only(creator.id), as: creator)
        #expect(try await client.get(hidden, as: reader).status == 404)
    }

    @Test("without a class setting, new objects without an ACL are private to their creator")
    func secureByDefault() async throws {
        let (_, client) = try SharedServer.require()
        let creator = try await client.newUser()
        let reader = try await client.newUser()
        let object = try await client.create(Unique.name("Note"), fields: ["n": .int(1)], as: creator)
        #expect(object.acl == .only(creator.id))
        #expect(try await client.get(object, as: reader).status == 404)
        #expect(try await client.get(object).status == 404)
        // An anonymous caller cannot create an object nobody could ever read.
        let anonymous = try await client.send(
            .POST, APIClient.objectPath(.app, object.className), body: ObjectWriteBody(fields: ["n": .int(2)]))
        #expect(anonymous.status == 403)
        #expect(anonymous.error?.code == .disallowed)
    }
}
