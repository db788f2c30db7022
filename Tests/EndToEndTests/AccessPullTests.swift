import Foundation
import RooftopShared
import Testing

/// The change feed (pull) under the ACL matrix: upserts only of readable objects, removals when a
/// caller loses access (an ACL change, leaving a role), tombstones only to those who could read
/// the deleted object, and nothing at all about objects a caller never could read.
@Suite("Access: pull under ACLs and roles", .sharedServer())
struct AccessPullTests {
    @Test("a pull brings exactly the readable objects, as upserts, to every caller")
    func readableUpserts() async throws {
        let (_, client) = try SharedServer.require()
        let matrix = try await AccessMatrix.make(client)
        let className = Unique.name("Doc")
        let objects = try await matrix.createObjects(in: className)
        for caller in Caller.allCases {
            let expected = Set(objects.filter { $0.key.readers.contains(caller) }.map(\.value.objectId))
            let pulled = try await matrix.pull(className, as: caller).changes
            #expect(pulled.objectIds == expected, "\(caller)")
            for id in expected { #expect(pulled.kinds(of: id) == ["upsert"], "\(caller)") }
        }
    }

    @Test("an ACL change that hides an object sends a removal to those who lost it, and nothing to others")
    func removalAfterACLChange() async throws {
        let (_, client) = try SharedServer.require()
        let matrix = try await AccessMatrix.make(client)
        let className = Unique.name("Doc")
        let shown = try await client.create(className, fields: ["n": .int(1)], acl: matrix.acl(.publicRead), as: matrix.owner)
        let granted = try await client.create(className, fields: ["n": .int(2)], acl: matrix.acl(.userReadGrant), as: matrix.owner)
        var checkpoints: [Caller: Checkpoint] = [:]
        for caller in Caller.allCases { checkpoints[caller] = try await matrix.pull(className, as: caller).checkpoint }

        let owner = ACL.only(matrix.owner.id)
        #expect(try await matrix.update(shown, fields: [:], acl: owner, as: .owner).status == 200)
        #expect(try await matrix.update(granted, fields: [:], acl: owner, as: .owner).status == 200)

        for caller in Caller.allCases {
            let changes = try await matrix.pull(className, since: checkpoints[caller], as: caller).changes
            switch caller {
            case .owner, .admin:
                #expect(changes.kinds(of: shown.objectId) == ["upsert"], "\(caller)")
                #expect(changes.kinds(of: granted.objectId) == ["upsert"], "\(caller)")
            case .grantee:
                #expect(changes.kinds(of: shown.objectId) == ["removal"])
                #expect(changes.kinds(of: granted.objectId) == ["removal"])
            default:
                #expect(changes.kinds(of: shown.objectId) == ["removal"], "\(caller)")
                #expect(changes.kinds(of: granted.objectId).isEmpty, "\(caller) never could read it")
            }
        }
    }

    @Test("leaving a role, directly or by the child role leaving it, sends removals of what the role could read")
    func removalAfterLeavingRole() async throws {
        let (_, client) = try SharedServer.require()
        let matrix = try await AccessMatrix.make(client)
        let className = Unique.name("Doc")
        let objects = try await matrix.createObjects(in: className)
        let roleObject = try #require(objects[.roleReadWrite])
        var checkpoints: [Caller: Checkpoint] = [:]
        for caller in Caller.allCases { checkpoints[caller] = try await matrix.pull(className, as: caller).checkpoint }

        try await client.updateRole(matrix.role, UpdateRoleRequest(removeUsers: [matrix.member.id]))
        try await client.updateRole(matrix.role, UpdateRoleRequest(removeRoles: [matrix.childRole]))

        for caller in [Caller.member, .childMember] {
            let changes = try await matrix.pull(className, since: checkpoints[caller], as: caller).changes
            #expect(changes.kinds(of: roleObject.objectId) == ["removal"], "\(caller)")
            // Still readable: the public object, unchanged, is not mentioned again.
            #expect(changes.objectIds == [roleObject.objectId], "\(caller)")
            #expect(try await matrix.get(roleObject, as: caller).status == 404)
        }
        for caller in [Caller.owner, .other, .grantee, .anonymous, .admin] {
            let changes = try await matrix.pull(className, since: checkpoints[caller], as: caller).changes
            #expect(changes.isEmpty, "\(caller): \(changes)")
        }
    }

    @Test("leaving a role sends no removal of an object whose class the caller may no longer find")
    func noRemovalOfUnfindableClass() async throws {
        let (_, client) = try SharedServer.require()
        let matrix = try await AccessMatrix.make(client)
        let className = Unique.name("Doc")
        let objects = try await matrix.createObjects(in: className)
        let roleObject = try #require(objects[.roleReadWrite])
        let checkpoint = try await matrix.pull(className, as: .member).checkpoint
        try await client.setPermissions(ClassPermissions(find: .nobody), of: className)
        try await client.updateRole(matrix.role, UpdateRoleRequest(removeUsers: [matrix.member.id]))
        // Its feed leaves the class out entirely: a removal would name an object of it.
        let changes = try await matrix.pull(className, since: checkpoint, as: .member).changes
        #expect(changes.isEmpty, "\(changes)")
        #expect(!changes.objectIds.contains(roleObject.objectId))
    }

    @Test("leaving the role that let the caller find a class still sends removals and tombstones of what it lost")
    func lossesOfClassFoundThroughRole() async throws {
        let (_, client) = try SharedServer.require()
        let matrix = try await AccessMatrix.make(client)
        let className = Unique.name("Doc")
        let kept = try await client.create(className, fields: ["n": .int(1)], acl: matrix.acl(.roleReadWrite), as: matrix.owner)
        let deleted = try await client.create(className, fields: ["n": .int(2)], acl: matrix.acl(.roleReadWrite), as: matrix.owner)
        try await client.setPermissions(ClassPermissions(find: PermissionRule(principals: [.role(matrix.role)])), of: className)
        let checkpoint = try await matrix.pull(className, as: .member).checkpoint
        try await client.updateRole(matrix.role, UpdateRoleRequest(removeUsers: [matrix.member.id]))
        #expect(try await matrix.delete(deleted, as: .admin).status == 204)
        let changes = try await matrix.pull(className, since: checkpoint, as: .member).changes
        #expect(changes.kinds(of: kept.objectId) == ["removal"], "\(changes)")
        #expect(changes.kinds(of: deleted.objectId).contains("tombstone"), "\(changes)")
        // Someone who never could find the class hears nothing of it.
        let other = try await matrix.pull(className, as: .other).changes
        #expect(other.isEmpty, "\(other)")
    }

    @Test("an object hidden and then deleted, or deleted after the caller left its role, still ends with a tombstone")
    func tombstoneAfterLosingAccess() async throws {
        let (_, client) = try SharedServer.require()
        let matrix = try await AccessMatrix.make(client)
        let className = Unique.name("Doc")
        // Hidden from the grantee by an ACL change, then deleted, between two pulls: the feed
        // holds only the tombstone, whose last readers exclude the grantee, who still has a copy.
        let hidden = try await client.create(className, fields: ["n": .int(1)], acl: matrix.acl(.userReadGrant), as: matrix.owner)
        // Readable through the role; the member leaves the role, then the object is deleted.
        let roleObject = try await client.create(className, fields: ["n": .int(2)], acl: matrix.acl(.roleReadWrite), as: matrix.owner)
        var checkpoints: [Caller: Checkpoint] = [:]
        for caller in Caller.allCases { checkpoints[caller] = try await matrix.pull(className, as: caller).checkpoint }

        #expect(try await matrix.update(hidden, fields: [:], acl: .only(matrix.owner.id), as: .owner).status == 200)
        try await client.updateRole(matrix.role, UpdateRoleRequest(removeUsers: [matrix.member.id]))
        #expect(try await matrix.delete(hidden, as: .admin).status == 204)
        #expect(try await matrix.delete(roleObject, as: .admin).status == 204)

        let granteeChanges = try await matrix.pull(className, since: checkpoints[.grantee], as: .grantee).changes
        #expect(granteeChanges.kinds(of: hidden.objectId) == ["tombstone"], "\(granteeChanges)")
        let memberChanges = try await matrix.pull(className, since: checkpoints[.member], as: .member).changes
        #expect(memberChanges.kinds(of: roleObject.objectId) == ["tombstone"], "\(memberChanges)")
        // Those who never could read them hear nothing.
        for caller in [Caller.other, .anonymous] {
            let changes = try await matrix.pull(className, since: checkpoints[caller], as: caller).changes
            #expect(changes.kinds(of: hidden.objectId).isEmpty && changes.kinds(of: roleObject.objectId).isEmpty, "\(caller)")
        }
    }

    @Test("joining a role makes the objects it can read arrive on the next pull")
    func upsertsAfterJoiningRole() async throws {
        let (_, client) = try SharedServer.require()
        let matrix = try await AccessMatrix.make(client)
        let className = Unique.name("Doc")
        let objects = try await matrix.createObjects(in: className)
        let roleObject = try #require(objects[.roleReadWrite])
        let before = try await matrix.pull(className, as: .other)
        #expect(!before.changes.objectIds.contains(roleObject.objectId))

        try await client.updateRole(matrix.role, UpdateRoleRequest(addUsers: [matrix.other.id]))
        let after = try await matrix.pull(className, since: before.checkpoint, as: .other).changes
        #expect(after.kinds(of: roleObject.objectId) == ["upsert"])
        #expect(after.objectIds == [roleObject.objectId])
    }

    @Test("joining a role that reads more than a page of unchanged objects: small pages still bring them all")
    func manyUpsertsAfterJoiningRole() async throws {
        let (_, client) = try SharedServer.require()
        let matrix = try await AccessMatrix.make(client)
        let className = Unique.name("Doc")
        var roleObjects: Set<String> = []
        for n in 0..<3 {
            let object = try await client.create(
                className, fields: ["n": .int(Int64(n))], acl: matrix.acl(.roleReadWrite), as: matrix.owner)
            roleObjects.insert(object.objectId)
        }
        let mine = try await client.create(className, fields: ["n": .int(9)], acl: .only(matrix.other.id), as: matrix.other)
        let before = try await client.pullAll(.app, classes: [className], limit: 1, as: matrix.other)
        #expect(before.changes.objectIds == [mine.objectId])

        try await client.updateRole(matrix.role, UpdateRoleRequest(addUsers: [matrix.other.id]))
        let after = try await client.pullAll(
            .app, since: before.checkpoint, classes: [className], limit: 1, as: matrix.other)
        #expect(after.changes.objectIds.isSuperset(of: roleObjects), "\(after.changes)")
        #expect(after.changes.allSatisfy { if case .upsert = $0 { true } else { false } })
        // Nothing is lost for later pulls either.
        let object = try await client.create(className, fields: ["n": .int(10)], acl: matrix.acl(.roleReadWrite), as: matrix.owner)
        let later = try await client.pullAll(.app, since: after.checkpoint, classes: [className], limit: 1, as: matrix.other)
        #expect(later.changes.objectIds == [object.objectId])
    }

    @Test("a delete sends a tombstone only to those who could read the object")
    func tombstones() async throws {
        let (_, client) = try SharedServer.require()
        let matrix = try await AccessMatrix.make(client)
        let className = Unique.name("Doc")
        let objects = try await matrix.createObjects(in: className)
        var checkpoints: [Caller: Checkpoint] = [:]
        for caller in Caller.allCases { checkpoints[caller] = try await matrix.pull(className, as: caller).checkpoint }
        for object in objects.values { #expect(try await matrix.delete(object, as: .owner).status == 204) }

        for caller in Caller.allCases {
            let changes = try await matrix.pull(className, since: checkpoints[caller], as: caller).changes
            for (kind, object) in objects {
                let expected = kind.readers.contains(caller) ? ["tombstone"] : []
                #expect(changes.kinds(of: object.objectId) == expected, "\(caller), \(kind)")
            }
            // Pulling from scratch mentions only tombstones of objects the caller could read.
            let fresh = try await matrix.pull(className, as: caller).changes
            #expect(
                fresh.objectIds == Set(objects.filter { $0.key.readers.contains(caller) }.map(\.value.objectId)),
                "\(caller)")
        }
    }
}
