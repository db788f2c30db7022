import Foundation
import Rooftop
import RooftopShared
import Testing

/// Two users on two ``RooftopClient``s in one process, each with its own cache file, against the
/// real server: what each sees locally and remotely follows the ACLs, an object shared later
/// arrives through a pull, and a cache file restores its own user and objects only.
@Suite("Client sync: two users, two cache files", .sharedServer())
struct ClientSyncAccountsTests {
    @Test("each user sees what its ACLs allow, locally and remotely; sharing arrives by pull; cache files stay apart")
    func twoUsersTwoFiles() async throws {
        let (server, api) = try SharedServer.require()
        let className = Unique.name("Note")
        try await withSyncHarness { harness in
            let ada = try await api.newUser("ada")
            let bob = try await api.newUser("bob")
            let adaFile = harness.cacheFile("ada")
            let adaClient = try await harness.client(server, file: adaFile)
            let bobClient = try await harness.client(server, file: harness.cacheFile("bob"))
            try await adaClient.logIn(ada)
            try await bobClient.logIn(bob)

            // Each saves objects in the app datastore; the class's default ACL is creator-only.
            let adaPrivate = adaClient.object(className)
            adaPrivate["text"] = "ada's secret"
            try await adaPrivate.save()
            let adaLater = adaClient.object(className)
            adaLater["text"] = "shared later"
            try await adaLater.save()
            let bobOwn = bobClient.object(className)
            bobOwn["text"] = "bob's"
            try await bobOwn.save()
            #expect(adaPrivate.acl == ACL.only(ada.id), "the server gave the creator-only default ACL")

            // Remotely, each sees only its own objects.
            #expect(try await adaClient.remoteIds(className, in: .app) == [adaPrivate.objectId, adaLater.objectId])
            #expect(try await bobClient.remoteIds(className, in: .app) == [bobOwn.objectId])

            // Locally, after a pull, likewise (even ignoring ACLs: nothing else was stored).
            try await adaClient.sync.pull(datastore: .app, scope: .classes(className))
            try await bobClient.sync.pull(datastore: .app, scope: .classes(className))
            #expect(try await adaClient.localIds(className, in: .app) == [adaPrivate.objectId, adaLater.objectId])
            #expect(try await bobClient.localIds(className, in: .app, ignoringACLs: true) == [bobOwn.objectId])

            // Ada shares one object with Bob through its ACL; Bob's next pull brings it.
            adaLater.acl = .of((.user(ada.id), read: true, write: true), (.user(bob.id), read: true, write: false))
            try await adaLater.save()
            #expect(!(await bobClient.hasLocalCopy(className, adaLater.objectId, in: .app)))
            let pulled = try await bobClient.sync.pull(datastore: .app, scope: .classes(className))
            #expect(pulled == 1, "exactly the shared object changed for Bob")
            #expect(try await bobClient.localIds(className, in: .app) == [bobOwn.objectId, adaLater.objectId])
            let sharedOnBob = try await bobClient.query(className, in: .app).fromLocalDatastore().getObject(adaLater.objectId)
            #expect(sharedOnBob.string("text") == "shared later")
            #expect(try await bobClient.remoteIds(className, in: .app) == [bobOwn.objectId, adaLater.objectId])

            // Bob may read it but not write it: the server refuses his save, and Ada's copy is unchanged.
            sharedOnBob["text"] = "bob was here"
            let refused = await #expect(throws: RooftopError.self) { try await sharedOnBob.save() }
            #expect(refused?.code == .disallowed || refused?.code == .notFound, "\(String(describing: refused))")
            try await adaLater.fetch()
            #expect(adaLater.string("text") == "shared later")

            // A third client on Ada's file (Ada's app restarted) restores Ada and Ada's objects only.
            await harness.shutdown(adaClient)
            let reopened = try await harness.client(server, file: adaFile)
            #expect(reopened.currentUser?.objectId == ada.id)
            #expect(reopened.currentUser?.username == ada.username)
            #expect(try await reopened.localIds(className, in: .app, ignoringACLs: true) == [adaPrivate.objectId, adaLater.objectId])
            #expect(!(await reopened.hasLocalCopy(className, bobOwn.objectId, in: .app)))
            let restored = try await reopened.query(className, in: .app).fromLocalDatastore().getObject(adaPrivate.objectId)
            #expect(restored.string("text") == "ada's secret")
            // And the restored session still works against the server.
            #expect(try await reopened.remoteIds(className, in: .app) == [adaPrivate.objectId, adaLater.objectId])
            #expect(bobClient.currentUser?.objectId == bob.id)
        }
    }
}
