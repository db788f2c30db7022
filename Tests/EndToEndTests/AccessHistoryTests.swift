import Foundation
import RooftopShared
import Testing

/// An object's history (`GET …/objects/{id}/operations`) reveals nothing its caller could not
/// read: not the changes of an earlier object under the same ID (re-created after a delete,
/// possibly by someone else), not what was written before an ACL change let the caller in.
@Suite("Access: object history", .sharedServer())
struct AccessHistoryTests {
    /// `GET …/operations?after=<version>` of `object`.
    private func operations(
        _ client: APIClient, _ object: ObjectSnapshot, after version: Int64, as user: TestUser? = nil, admin: Bool = false
    ) async throws -> APIClient.Reply {
        try await client.send(
            .GET, APIClient.objectPath(object.datastore, object.className, object.objectId) + "/operations?after=\(version)",
            token: user?.token, admin: admin)
    }

    @Test("re-created ID: the new creator gets 410 for history from before its creation, never the deleted object's values")
    func recreatedID() async throws {
        let (_, client) = try SharedServer.require()
        let (alice, bob) = (try await client.newUser("alice"), try await client.newUser("bob"))
        let className = Unique.name("Note")
        let secret = "alice-secret-" + UUID().uuidString
        let original = try await client.create(
            className, fields: ["text": .string(secret)], acl: .of((alice.principal, read: true, write: true)),
            as: alice)
        let changed = try await client.update(original, fields: ["text": .string(secret + "-v2")], as: alice)
        #expect(changed.status == 200, "\(changed.text)")
        #expect(try await client.delete(original, as: alice).status == 204)

        // A push "based on" a version of alice's deleted object loses to the delete, and its
        // merge decisions (field values at that version) are not shown to bob, who could not read it.
        let based = try await client.push(
            Mutations.update(.app, className, original.objectId, base: 1, [FieldUpdate("text", .set("guess"))]),
            token: bob.token)
        #expect(based.isApplied && based.appliedObject == nil, "\(based)")
        #expect(based.merges.isEmpty)
        #expect(!"\(based)".contains(secret))

        // Bob takes the ID (any unused or deleted ID may be created by whoever may create in the class).
        let taken = try await client.create(
            className, fields: ["text": "bob's"], acl: .of((bob.principal, read: true, write: true)),
            objectId: original.objectId, as: bob)
        #expect(taken.version == 4, "a new incarnation after versions 1-3 of the deleted one")
        for after: Int64 in [0, 1, 2] {
            let reply = try await operations(client, taken, after: after, as: bob)
            #expect(reply.status == 410, "after \(after): \(reply.text)")
            #expect(reply.error?.code == .historyExpired)
            #expect(!reply.text.contains(secret), "the deleted object's values never reach bob")
            #expect(!reply.text.contains(alice.id))
        }
        // From the delete on, only bob's own incarnation.
        let own = try await operations(client, taken, after: 3, as: bob)
        #expect(own.status == 200, "\(own.text)")
        #expect(try own.decode(OperationList.self).operations.map(\.version) == [4])
        #expect(!own.text.contains(secret))
        #expect(try await client.update(taken, fields: ["text": "bob's, edited"], as: bob).status == 200)
        let later = try await operations(client, taken, after: 4, as: bob)
        #expect(try later.decode(OperationList.self).operations.map(\.version) == [5])
        // The earlier incarnation is not part of this object's history for the admin key either.
        #expect(try await operations(client, taken, after: 0, admin: true).status == 410)
        // Alice, who may not read bob's object, is answered as for a missing one.
        #expect(try await operations(client, taken, after: 3, as: alice).status == 404)
    }

    @Test("ACL widened: a new reader gets 410 for history from before the change, and what follows it")
    func widenedACL() async throws {
        let (_, client) = try SharedServer.require()
        let (alice, bob) = (try await client.newUser("alice"), try await client.newUser("bob"))
        let className = Unique.name("Note")
        let secret = "private-draft-" + UUID().uuidString
        let object = try await client.create(
            className, fields: ["text": .string(secret)], acl: .of((alice.principal, read: true, write: true)),
            as: alice)
        #expect(try await client.update(object, fields: ["text": "published"], as: alice).status == 200)
        // Version 3 lets bob read.
        let widened = try await client.update(
            object, fields: [:],
            acl: .of((alice.principal, read: true, write: true), (bob.principal, read: true, write: false)), as: alice)
        #expect(widened.status == 200, "\(widened.text)")
        #expect(try widened.decode(WriteResponse.self).version == 3)

        for after: Int64 in [0, 1, 2] {
            let reply = try await operations(client, object, after: after, as: bob)
            #expect(reply.status == 410, "after \(after): \(reply.text)")
            #expect(reply.error?.code == .historyExpired)
            #expect(!reply.text.contains(secret), "what was written before bob could read never reaches him")
        }
        // The same rule for everyone but the admin key: the history since the change is what is answered.
        #expect(try await operations(client, object, after: 1, as: alice).status == 410)
        let all = try await operations(client, object, after: 0, admin: true)
        #expect(try all.decode(OperationList.self).operations.map(\.version) == [1, 2, 3])
        #expect(try await operations(client, object, after: 3, as: bob).decode(OperationList.self).operations.isEmpty)
        #expect(try await client.update(object, fields: ["text": "edited"], as: alice).status == 200)
        let since = try await operations(client, object, after: 3, as: bob)
        #expect(since.status == 200, "\(since.text)")
        #expect(try since.decode(OperationList.self).operations.map(\.version) == [4])
    }
}
