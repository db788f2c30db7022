import Foundation
import Rooftop
import RooftopShared
import Testing

/// Datastores (as in the Dropbox Datastore API) through the client library against the real server: shareable
/// datastores created, listed, shared and unshared (``Datastore/share(_:with:)``), opened and used
/// by role, deleted and uncached; and a private datastore used without an account, moved to the
/// user at sign-in.
@Suite("Client datastores against the server", .sharedServer(), .timeLimit(.minutes(5)))
struct ClientDatastoreTests {
    @Test("a shareable datastore is created, listed, shared; an editor writes, a viewer reads and is refused writes")
    func shareByRole() async throws {
        let (server, api) = try SharedServer.require()
        let alice = try await api.newUser("owner")
        let bob = try await api.newUser("editor")
        let carol = try await api.newUser("viewer")
        try await ClientQueryFixture.withClient(server, as: alice) { owner async throws in
            let trip = try await owner.datastores.create(title: "Trip")
            #expect(trip.id.kind == .shareable)
            let listed = try #require(try await owner.datastores.list().first { $0.id == trip.id })
            #expect(listed.role == .owner && listed.title == "Trip" && listed.owner == alice.id)
            let plan = trip.object("Plan")
            plan["city"] = "Lisbon"
            // Objects get their class's default ACL (creator only) in every datastore: shared
            // objects say so.
            plan.acl = .publicReadWrite
            try await plan.save()

            try await trip.share(.editor, with: bob.principal)
            try await trip.share(.viewer, with: carol.principal)
            let sharing = try await trip.sharing()
            #expect(sharing.owner == alice.id)
            #expect(sharing.roles == [bob.principal: .editor, carol.principal: .viewer])

            try await ClientQueryFixture.withClient(server, as: bob) { editor async throws in
                let info = try #require(try await editor.datastores.list().first { $0.id == trip.id })
                #expect(info.role == .editor)
                let opened = try await editor.datastores.open(trip.id)
                let changed = try await opened.sync()
                #expect(changed["Plan"]?.map(\.objectId) == [plan.objectId])
                let copy = try #require(try opened.objects("Plan").first)
                #expect(copy.string("city") == "Lisbon")
                #expect(try await editor.query("Plan", in: trip.id).find().objectIds == [plan.objectId])
                copy["city"] = "Porto"
                try await copy.save()
                let note = opened.object("Note")
                note["text"] = "bring a hat"
                note.acl = .publicReadWrite
                try await note.saveEventually()
                try await opened.sync()
                #expect(try editor.outbox.hasPendingWrites == false)
            }

            try await ClientQueryFixture.withClient(server, as: carol) { viewer async throws in
                let info = try #require(try await viewer.datastores.list().first { $0.id == trip.id })
                #expect(info.role == .viewer)
                let opened = try await viewer.datastores.open(trip.id)
                try await opened.sync()
                let copy = try #require(try opened.objects("Plan").first)
                #expect(copy.string("city") == "Porto", "the viewer reads the editor's change")
                #expect(try opened.objects("Note").map { $0.string("text") } == ["bring a hat"])
                copy["city"] = "Faro"
                let refused = await #expect(throws: RooftopError.self) { try await copy.save() }
                #expect(refused?.code == .disallowed, "\(String(describing: refused))")
                copy.revert()
                let queued = opened.object("Note")
                queued["text"] = "not allowed"
                queued.acl = .publicReadWrite
                try await queued.saveEventually()
                try await viewer.sync.push(datastore: trip.id)
                let rejected = try viewer.outbox.rejected()
                #expect(rejected.map(\.key.objectId) == [queued.objectId])
                #expect(rejected.first?.error.code == .disallowed)
                #expect(try opened.objects("Note").map { $0.string("text") } == ["bring a hat"], "the refused note leaves the local view")
                let serverSide = try await viewer.query("Note", in: trip.id).find()
                #expect(serverSide.objects.map { $0.string("text") } == ["bring a hat"])
            }

            let changed = try await trip.sync()
            #expect(Set(changed.keys) == ["Plan", "Note"])
            #expect(plan.string("city") == "Porto", "the owner's instance follows the pull")

            // Taking the role away: the datastore is gone for Carol; sharing stays the owner's.
            try await trip.share(.none, with: carol.principal)
            #expect(try await trip.sharing().roles == [bob.principal: .editor])
            try await ClientQueryFixture.withClient(server, as: carol) { viewer async throws in
                #expect(try await viewer.datastores.list().contains { $0.id == trip.id } == false)
                let gone = await #expect(throws: RooftopError.self) { try await viewer.datastores.open(trip.id) }
                #expect(gone?.code == .notFound)
            }
            // Editors may change the sharing too (as in the Dropbox Datastore API: "read-write, includes ACL changes");
            // viewers may not.
            try await ClientQueryFixture.withClient(server, as: bob) { editor async throws in
                let opened = try await editor.datastores.open(trip.id)
                try await opened.share(.viewer, with: carol.principal)
            }
            try await ClientQueryFixture.withClient(server, as: carol) { viewer async throws in
                let opened = try await viewer.datastores.open(trip.id)
                let refused = await #expect(throws: RooftopError.self) { try await opened.share(.editor, with: carol.principal) }
                #expect(refused?.code == .disallowed, "a viewer cannot share: \(String(describing: refused))")
            }
            #expect(try await trip.sharing().roles == [bob.principal: .editor, carol.principal: .viewer])
        }
    }

    @Test("sharing with a role: the role's members list, open and read the datastore")
    func shareWithARole() async throws {
        let (server, api) = try SharedServer.require()
        let alice = try await api.newUser("owner")
        let dave = try await api.newUser("member")
        let erin = try await api.newUser("outsider")
        let readers = Unique.name("Readers")
        try await api.createRole(readers, users: [dave])
        try await ClientQueryFixture.withClient(server, as: alice) { owner async throws in
            let shared = try await owner.datastores.create(title: "Minutes")
            let minute = shared.object("Minute")
            minute["text"] = "agreed"
            minute.acl = .publicReadWrite
            try await minute.save()
            let reply = try await api.setRole(.viewer, for: .role(readers), on: shared.id, by: alice)
            #expect(reply.status == 200, "\(reply.text)")
            try await ClientQueryFixture.withClient(server, as: dave) { member async throws in
                #expect(try await member.datastores.list().first { $0.id == shared.id }?.role == .viewer)
                let opened = try await member.datastores.open(shared.id)
                try await opened.sync()
                #expect(try opened.objects("Minute").map { $0.string("text") } == ["agreed"])
            }
            try await ClientQueryFixture.withClient(server, as: erin) { outsider async throws in
                #expect(try await outsider.datastores.list().contains { $0.id == shared.id } == false)
                let error = await #expect(throws: RooftopError.self) { try await outsider.datastores.open(shared.id) }
                #expect(error?.code == .notFound)
                let query = await #expect(throws: RooftopError.self) { try await outsider.query("Minute", in: shared.id).find() }
                #expect(query?.code == .notFound, "\(String(describing: query))")
            }
        }
    }

    @Test("a deleted datastore leaves the lists and a member's copy; uncache drops and resync restores")
    func deleteAndUncache() async throws {
        let (server, api) = try SharedServer.require()
        let alice = try await api.newUser("owner")
        let bob = try await api.newUser("member")
        try await ClientQueryFixture.withClient(server, as: alice) { owner async throws in
            let shared = try await owner.datastores.create(title: "Short-lived")
            for city in ["Oslo", "Bergen"] {
                let plan = shared.object("Plan")
                plan["city"] = .string(city)
                plan.acl = .publicReadWrite
                try await plan.save()
            }
            try await shared.share(.editor, with: bob.principal)
            try await ClientQueryFixture.withClient(server, as: bob, storage: .file(path: ClientQueryFixture.cacheFile())) {
                member async throws in
                let opened = try await member.datastores.open(shared.id)
                try await opened.sync()
                #expect(try opened.objects("Plan").count == 2)

                try await member.pinAll(try opened.objects("Plan"), label: "favourites")
                try member.datastores.uncache(shared.id)
                #expect(try opened.objects("Plan").isEmpty, "uncache drops the local copy")
                #expect(try await member.query("Plan", in: shared.id).fromPin("favourites").find().objects.isEmpty, "and its pins")
                #expect(try await member.query("Plan", in: shared.id).fromLocalDatastore().find().objects.isEmpty)
                try await opened.sync()
                #expect(try opened.objects("Plan").count == 2, "the next sync downloads it whole again")

                let notOwner = await #expect(throws: RooftopError.self) { try await member.datastores.delete(shared.id) }
                #expect(notOwner?.code == .disallowed)

                try await owner.datastores.delete(shared.id)
                #expect(try await owner.datastores.list().contains { $0.id == shared.id } == false)
                let gone = await #expect(throws: RooftopError.self) { try await opened.sync() }
                #expect(gone?.code == .notFound)
                #expect(try opened.objects("Plan").isEmpty, "the lost datastore is purged locally")
                #expect(try opened.currentStatus().needsReset)
                #expect(try await member.datastores.list().contains { $0.id == shared.id } == false)
                let reopen = await #expect(throws: RooftopError.self) {
                    try member.datastores.uncache(shared.id)
                    _ = try await member.datastores.open(shared.id)
                }
                #expect(reopen?.code == .notFound)
            }
        }
    }

    @Test("a member's sync reports remote deletions; the datastore is listed, opened and read offline from the cache file")
    func deletionsAndOfflineUse() async throws {
        let (server, api) = try SharedServer.require()
        let alice = try await api.newUser("owner")
        let bob = try await api.newUser("member")
        let file = ClientQueryFixture.cacheFile()
        let anonymous = await #expect(throws: RooftopError.self) {
            try await ClientQueryFixture.withClient(server) { client async throws in
                _ = try await client.datastores.create(title: "nobody's")
            }
        }
        #expect(anonymous?.code == .auth, "creating a datastore needs an account")
        try await ClientQueryFixture.withClient(server, as: alice) { owner async throws in
            let shared = try await owner.datastores.create(title: "Groceries")
            var items: [RooftopObject] = []
            for name in ["milk", "bread"] {
                let item = shared.object("Item")
                item["name"] = .string(name)
                item.acl = .publicReadWrite
                try await item.save()
                items.append(item)
            }
            try await shared.share(.viewer, with: bob.principal)
            try await ClientQueryFixture.withClient(server, as: bob, storage: .file(path: file)) { member async throws in
                let opened = try await member.datastores.open(shared.id)
                #expect(try await opened.sync()["Item"]?.count == 2)
                try await items[0].delete()
                let changed = try await opened.sync()
                let deleted = try #require(changed["Item"]?.first)
                #expect(changed["Item"]?.count == 1)
                #expect(deleted.objectId == items[0].objectId && deleted.isDeleted)
                #expect(deleted["name"] == nil)
            }
            try await ClientQueryFixture.withOfflineClient(server, storage: .file(path: file)) { member async throws in
                let listed = try await member.datastores.list()
                #expect(listed.first { $0.id == shared.id }?.role == .viewer, "the list kept locally")
                let opened = try await member.datastores.open(shared.id)
                #expect(try opened.info()?.title == "Groceries")
                #expect(try opened.objects("Item").map { $0.string("name") } == ["bread"])
                let local = try await member.query("Item", in: shared.id).fromLocalDatastore().find()
                #expect(local.objectIds == [items[1].objectId])
                let error = await #expect(throws: RooftopError.self) { try await opened.sync() }
                #expect(error?.code == .noConnection)
            }
        }
    }

    @Test("a private datastore used without an account moves to the user at sign-in and merges with the server's")
    func localUseThenSignIn() async throws {
        let (server, api) = try SharedServer.require()
        let user = try await api.newUser("later")
        let file = ClientQueryFixture.cacheFile()
        // Another device of the user already has a note in the user's default datastore.
        let earlier: String = try await ClientQueryFixture.withClient(server, as: user) { device async throws in
            let notes = try await device.datastores.open(.default)
            let note = notes.object("Note")
            note["text"] = "from the other device"
            try await note.save()
            return note.objectId
        }
        var local: [String] = []
        try await ClientQueryFixture.withClient(server, storage: .file(path: file)) { client async throws in
            #expect(client.currentUser == nil)
            let notes = try await client.datastores.open(.default)
            for text in ["first", "second"] {
                let note = notes.object("Note")
                note["text"] = .string(text)
                try await note.saveEventually()
                local.append(note.objectId)
            }
            #expect(try await notes.sync().isEmpty, "no account: nothing to sync with")
            #expect(try client.outbox.hasPendingWrites)
            let noAccount = await #expect(throws: RooftopError.self) { try await client.sync.push() }
            #expect(noAccount?.code == .badState)
        }
        try await ClientQueryFixture.withOfflineClient(server, storage: .file(path: file)) { client async throws in
            #expect(client.currentUser == nil)
            let kept = try await client.query("Note", in: .default).fromLocalDatastore().find()
            #expect(kept.idSet == Set(local), "kept durably without an account")
        }
        try await ClientQueryFixture.withClient(server, storage: .file(path: file)) { client async throws in
            try await client.logIn(username: user.username, password: user.password)
            let moved = try await client.query("Note", in: .default).fromLocalDatastore().find()
            #expect(moved.idSet == Set(local), "the local objects moved to the user")
            try await client.outbox.waitUntilIdle()
            #expect(try client.outbox.rejected().isEmpty)
            let notes = try await client.datastores.open(.default)
            try await notes.sync()
            let all = try await client.query("Note", in: .default).fromLocalDatastore().find()
            #expect(all.idSet == Set(local + [earlier]), "merged with what the server had")
        }
        try await ClientQueryFixture.withClient(server, as: user) { device async throws in
            let remote = try await device.query("Note", in: .default).find()
            #expect(remote.idSet == Set(local + [earlier]))
            #expect(Set(remote.objects.compactMap { $0.string("text") }) == ["first", "second", "from the other device"])
        }
    }
}
