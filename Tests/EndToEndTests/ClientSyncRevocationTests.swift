import Foundation
import Rooftop
import RooftopShared
import Testing

/// Access taken away on the server purges the client's local copies at the next pull: an ACL
/// that no longer names the user, a role the user left, a sharing role set to none.
///
/// Each test first checks that the copy is there and readable locally (so that its absence later
/// means something), and after the pull checks the local datastore ignoring ACLs: the copy is
/// gone, not merely hidden.
@Suite("Client sync: revoked access purges local copies", .sharedServer())
struct ClientSyncRevocationTests {
    @Test("an ACL change that excludes the user removes its local copy at the next pull")
    func aclChange() async throws {
        let (server, api) = try SharedServer.require()
        let className = Unique.name("Memo")
        try await withSyncHarness { harness in
            let owner = try await api.newUser("owner")
            let reader = try await api.newUser("reader")
            let readable = ACL.of((owner.principal, read: true, write: true), (reader.principal, read: true, write: false))
            let memo = try await api.create(className, fields: ["text": "hello"], acl: readable, as: owner)
            let kept = try await api.create(className, fields: ["text": "still yours"], acl: readable, as: owner)
            let client = try await harness.client(server, file: harness.cacheFile("reader"))
            try await client.logIn(reader)
            try await client.sync.pull(datastore: .app, scope: .classes(className))
            let live = try await client.query(className).fromLocalDatastore().getObject(memo.objectId)
            #expect(live.string("text") == "hello")
            #expect(try await client.localIds(className, in: .app) == [memo.objectId, kept.objectId])

            let hidden = ACL.of((owner.principal, read: true, write: true))
            let reply = try await api.update(memo, fields: [:], acl: hidden, as: owner)
            #expect(reply.status == 200, "\(reply.text)")
            try await client.sync.pull(datastore: .app, scope: .classes(className))

            try await expectPurged(memo.objectId, className, in: .app, from: client, live: live)
            #expect(try await client.localIds(className, in: .app, ignoringACLs: true) == [kept.objectId])
            #expect(try await client.remoteIds(className, in: .app) == [kept.objectId])
        }
    }

    @Test("leaving a role that granted read removes the local copy at the next pull")
    func roleRemoval() async throws {
        let (server, api) = try SharedServer.require()
        let className = Unique.name("Memo")
        let role = Unique.name("readers")
        try await withSyncHarness { harness in
            let owner = try await api.newUser("owner")
            let reader = try await api.newUser("reader")
            try await api.createRole(role, users: [reader])
            let memo = try await api.create(
                className, fields: ["text": "for readers"],
                acl: .of((owner.principal, read: true, write: true), (.role(role), read: true, write: false)), as: owner)
            let client = try await harness.client(server, file: harness.cacheFile("reader"))
            try await client.logIn(reader)
            #expect(client.currentUser?.roles.contains(role) == true, "the session knows the role")
            try await client.sync.pull(datastore: .app, scope: .classes(className))
            let live = try await client.query(className).fromLocalDatastore().getObject(memo.objectId)
            #expect(live.string("text") == "for readers")

            try await api.updateRole(role, UpdateRoleRequest(removeUsers: [reader.id]))
            // The client's cached roles still name the role: only the purge can hide the copy.
            #expect(client.currentUser?.roles.contains(role) == true)
            try await client.sync.pull(datastore: .app, scope: .classes(className))

            try await expectPurged(memo.objectId, className, in: .app, from: client, live: live)
            #expect(try await client.remoteIds(className, in: .app).isEmpty)
        }
    }

    @Test("a sharing role set to none drops the shareable datastore's local copy at the next pull")
    func sharingRoleNone() async throws {
        let (server, api) = try SharedServer.require()
        let className = Unique.name("Stop")
        try await withSyncHarness { harness in
            let owner = try await api.newUser("owner")
            let guest = try await api.newUser("guest")
            let datastore = try await api.shareableDatastore(owner: owner, sharedWith: [guest], role: .viewer)
            let stops = [
                try await api.create(className, in: datastore, fields: ["n": 1], acl: .publicReadWrite, as: owner),
                try await api.create(className, in: datastore, fields: ["n": 2], acl: .publicReadWrite, as: owner),
            ]
            let client = try await harness.client(server, file: harness.cacheFile("guest"))
            try await client.logIn(guest)
            let opened = try await client.datastores.open(datastore)
            #expect(try await client.sync.pull(datastore: datastore) == 2)
            #expect(try await client.localIds(className, in: datastore) == Set(stops.map(\.objectId)))
            let live = try await client.query(className, in: datastore).fromLocalDatastore().getObject(stops[0].objectId)
            #expect(live.int("n") == 1)

            try await api.share(datastore, .none, with: guest, by: owner)
            let error = await #expect(throws: RooftopError.self) { try await client.sync.pull(datastore: datastore) }
            #expect(error?.code == .notFound, "\(String(describing: error))")

            for stop in stops {
                try await expectPurged(stop.objectId, className, in: datastore, from: client, live: stop.objectId == live.objectId ? live : nil)
            }
            #expect(try await client.localIds(className, in: datastore, ignoringACLs: true).isEmpty)
            #expect(try opened.currentStatus().needsReset, "the datastore's status asks for a reset")
        }
    }

    /// The object is gone from the client's local datastore: local queries (even ignoring ACLs)
    /// and `getObject` do not find it, and the live instance reports it deleted.
    private func expectPurged(
        _ objectId: String, _ className: String, in datastore: DatastoreID, from client: RooftopClient,
        live: RooftopObject?, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        #expect(
            !(try await client.localIds(className, in: datastore).contains(objectId)), sourceLocation: sourceLocation)
        #expect(!(await client.hasLocalCopy(className, objectId, in: datastore)), sourceLocation: sourceLocation)
        let error = await #expect(throws: RooftopError.self, sourceLocation: sourceLocation) {
            try await client.query(className, in: datastore).fromLocalDatastore().getObject(objectId)
        }
        #expect(error?.code == .notFound, sourceLocation: sourceLocation)
        if let live { #expect(live.isDeleted, "the live instance reports the deletion", sourceLocation: sourceLocation) }
    }
}
