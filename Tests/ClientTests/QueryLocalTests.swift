import Foundation
import GRDB
import RooftopShared
import Testing

@testable import Rooftop

/// Queries run in the local datastore: unsaved changes, ACLs with cached roles, includes.
@Suite("Local queries", .timeLimit(.minutes(5)))
struct QueryLocalTests {
    @Test("fromLocalDatastore sees unsaved changes of stored objects, and only stored objects")
    func unsavedChanges() async throws {
        let (client, transport) = try offlineClient()
        let joe = client.object("GameScore")
        joe["playerName"] = "Joe Bob"
        joe["score"] = 10
        try await joe.pin()
        let other = client.object("GameScore")
        other["playerName"] = "Ann"
        try await other.pin()
        let byJoe = client.query("GameScore").fromLocalDatastore().where(Field("playerName") == "Joe Bob")
        #expect(try await byJoe.find().objects.map(\.objectId) == [joe.objectId])
        other["playerName"] = "Joe Bob"
        let both = try await byJoe.order(by: "score").find()
        #expect(Set(both.objectIds) == [joe.objectId, other.objectId], "an unsaved change makes it match")
        #expect(both.fromCache && both.totalCount == 2)
        #expect(both.objects.contains { $0 === other }, "the live instance")
        let loose = client.object("GameScore")
        loose["playerName"] = "Joe Bob"
        #expect(try await byJoe.count() == 2, "an object never stored is not in the local datastore")
        #expect(transport.requestCount == 0)
    }

    @Test("a live instance that reads differently from its stored view (a write it has not caught up with) is judged as it reads")
    func liveInstanceLaggingBehindTheStore() async throws {
        let (client, _) = try offlineClient()
        let note = client.object("Note", id: "n1")
        note["text"] = "live"
        try await note.saveEventually()
        #expect(!note.hasUnsavedChanges)
        // The store takes a view the live instance has not been given yet (as between a commit and
        // its `committed` callback), same version.
        var stored = try #require(try client.core.store.object(note.key, scope: client.core.scope)?.local)
        stored.fields["text"] = "stored"
        try client.core.store.write(scope: client.core.scope) { transaction in
            try transaction.put(note.key, server: nil, local: stored, deleted: false)
        }
        let found = try await client.query("Note").fromLocalDatastore().where(Field("text") == "stored").find()
        #expect(found.objects.allSatisfy { $0.string("text") == "stored" }, "every object found matches as it reads")
    }

    @Test("a page's objects are made from their stored texts and decoded when first read")
    func pagesDecodeWhenRead() async throws {
        let (client, _) = try offlineClient()
        let store = client.core.store
        let created = Timestamp(millisecondsSinceEpoch: 1_700_000_000_000)
        try store.write(scope: client.core.scope) { transaction in
            for index in 0..<5 {
                let key = ObjectKey(datastore: .app, className: "Note", objectId: "n\(index)")
                let object = ObjectSnapshot(
                    className: "Note", objectId: key.objectId, datastore: .app,
                    fields: ["rank": .int(Int64(index)), "text": .string("note \(index)")], acl: nil,
                    createdAt: created, updatedAt: created, version: Int64(index + 1))
                try transaction.put(key, server: object, local: object, deleted: false)
            }
        }
        let query = client.query("Note").fromLocalDatastore().where(Field("rank") >= 1).order(by: "rank")
        let found = try await query.find()
        #expect(found.objects.map(\.objectId) == ["n1", "n2", "n3", "n4"] && found.totalCount == 4)
        #expect(found.objects.allSatisfy { !$0.isBaseDecoded }, "made from the texts, not decoded")
        let first = found.objects[0]
        #expect(first.version == 2 && first.createdAt == created && first.string("text") == "note 1")
        #expect(first.isBaseDecoded && !found.objects[1].isBaseDecoded, "each decodes on its own first read")
        // An edit applies on the decoded state, and the next page finds the same instances.
        first["text"] = "edited"
        #expect(first.snapshot.fields == ["rank": .int(1), "text": .string("edited")] && first.version == 2)
        let again = try await query.find()
        #expect(zip(again.objects, found.objects).allSatisfy { $0 === $1 }, "the identity map's instances")
        #expect(again.objects[0].string("text") == "edited", "the unsaved change, evaluated in Swift")
        #expect(found.objects[3].snapshot == (try store.object(found.objects[3].key, scope: client.core.scope)?.local))
    }

    @Test("a stored text that is no object: the page still answers, and its instance reads as a new object")
    func undecodableStoredText() async throws {
        let (client, _) = try offlineClient()
        let note = client.object("Note", id: "n1")
        note["text"] = "hello"
        try await note.saveEventually()
        let key = note.key
        // A fresh client reads the store, with no live instance of the object yet.
        client.core.registry.removeAll()
        try client.core.store.write(scope: client.core.scope) { transaction in
            try transaction.db.execute(
                sql: "UPDATE objects SET server = '{\"not\": \"an object\"}', local = NULL, local_is_server = 1 WHERE object_id = 'n1'")
        }
        let found = try await client.query("Note").fromLocalDatastore().find()
        let object = try #require(found.objects.first)
        #expect(object.key == key && object !== note)
        #expect(object.snapshot.fields.isEmpty && object.version == 0, "read as a new object (and logged)")
        // Now live, its row is decoded again by the next query, which fails as it always did.
        await #expect(throws: RooftopError.self) { try await client.query("Note").fromLocalDatastore().find() }
    }

    @Test("objects deleted locally are not found")
    func deletedLocally() async throws {
        let (client, _) = try offlineClient()
        let note = client.object("Note")
        note["text"] = "bye"
        try await note.saveEventually()
        let notes = client.query("Note").fromLocalDatastore()
        #expect(try await notes.count() == 1)
        try await note.deleteEventually()
        #expect(try await notes.count() == 0)
        await #expect(throws: RooftopError.self) { try await notes.getObject(note.objectId) }
    }

    @Test("ACLs apply locally, role ACLs through the cached effective roles; ignoringACLs skips them")
    func acls() async throws {
        let (client, _) = try offlineClient()
        try client.signInLocally("alice", roles: ["Staff"])
        var staffOnly = ACL()
        staffOnly.setReadAccess(true, for: .role("Staff"))
        var bobOnly = ACL()
        bobOnly.setReadAccess(true, for: .user("bob"))
        var publicRead = ACL()
        publicRead.setReadAccess(true, for: .everyone)
        let notes = [("staff", staffOnly), ("bob", bobOnly), ("public", publicRead), ("alice", ACL.only("alice"))]
        for (id, acl) in notes {
            let note = client.object("Note", id: id)
            note["text"] = .string(id)
            note.acl = acl
            try await note.pin()
        }
        let query = client.query("Note").fromLocalDatastore().order(by: "text")
        #expect(try await query.find().objectIds == ["alice", "public", "staff"])
        #expect(try await query.ignoringACLs().find().objectIds == ["alice", "bob", "public", "staff"])
        #expect(try await query.getObject("staff").objectId == "staff")
        let hidden = await #expect(throws: RooftopError.self) { try await query.getObject("bob") }
        #expect(hidden?.code == .notFound)
        #expect(try await query.ignoringACLs().getObject("bob").objectId == "bob")

        let kept = try client.core.store.read { try LocalStore.flagReaders(scope: "alice", $0) }
        #expect(kept == ["*", "alice", "role:Staff"], "the readable flags are kept for alice's principals")
        // Other principals while the flags are kept for these: each object's readers are tested
        // (left as they are), or the flags are made theirs first; the answers agree.
        let store = client.core.store
        let stored = Query(className: "Note", order: [QueryOrder("text")])
        let withoutRole: Set<String> = ["*", "alice"]
        for keeping in [false, true] {
            let page = try store.find(
                stored, scope: "alice", datastore: .app, pinnedWith: nil, readers: withoutRole, excluding: [],
                keepingFlags: keeping)
            #expect(page.rows.map(\.key.objectId) == ["alice", "public"], "keeping flags: \(keeping)")
            #expect(page.totalCount == 2)
            let counted = try store.count(
                Query(className: "Note"), scope: "alice", datastore: .app, pinnedWith: nil, readers: withoutRole,
                excluding: [], keepingFlags: keeping)
            #expect(counted == 2, "keeping flags: \(keeping)")
            let now = try store.read { try LocalStore.flagReaders(scope: "alice", $0) }
            #expect(now == (keeping ? withoutRole : kept), "keeping flags: \(keeping)")
        }

        try client.core.updateUser(UserInfo(objectId: "alice", username: "alice", roles: []))
        #expect(try await query.find().objectIds == ["alice", "public"], "the role was revoked")
        #expect(try await query.count() == 2)
        // Written while the flags are kept for alice without the role, then the role comes back:
        // every flag is computed again, this one's included.
        let late = client.object("Note", id: "late")
        late["text"] = "late"
        late.acl = staffOnly
        try await late.saveEventually()
        #expect(try await query.find().objectIds == ["alice", "public"])
        try client.core.updateUser(UserInfo(objectId: "alice", username: "alice", roles: ["Staff"]))
        #expect(try await query.find().objectIds == ["alice", "late", "public", "staff"], "the role was granted again")
        #expect(try await query.count() == 4)
        let publicOnly = client.object("Note", id: "later")
        publicOnly["text"] = "later"
        publicOnly.acl = publicRead
        try await publicOnly.saveEventually()
        #expect(try await query.count() == 5, "a write sets its object's flag for the kept principals")
        try client.core.end()
        #expect(try await query.find().objectIds == [], "signed out: these rows belong to alice's scope")
    }

    @Test("an anonymous user reads public objects and objects without an ACL only")
    func anonymous() async throws {
        let (client, _) = try offlineClient()
        var publicRead = ACL()
        publicRead.setReadAccess(true, for: .everyone)
        for (id, acl) in [("open", nil), ("public", publicRead), ("private", ACL.only("alice"))] as [(String, ACL?)] {
            let note = client.object("Note", id: id)
            note["text"] = .string(id)
            if let acl { note.acl = acl }
            try await note.pin()
        }
        #expect(
            try await client.query("Note").fromLocalDatastore().order(by: "text").find().objectIds == [
                "open", "public",
            ])
    }

    @Test("fromPin runs over one label's objects")
    func fromPin() async throws {
        let (client, _) = try offlineClient()
        let a = client.object("GameScore")
        a["score"] = 1
        let b = client.object("GameScore")
        b["score"] = 2
        try await client.pinAll([a, b], label: "MyScores")
        let c = client.object("GameScore")
        c["score"] = 3
        try await c.pin(label: "Other")
        let mine = client.query("GameScore").fromPin("MyScores").order(by: "score", descending: true)
        #expect(try await mine.find().objects.map(\.objectId) == [b.objectId, a.objectId])
        #expect(try await mine.getObject(a.objectId) === a)
        await #expect(throws: RooftopError.self) { try await mine.getObject(c.objectId) }
        #expect(try await client.query("GameScore").fromPin().count() == 0, "nothing has the unnamed pin")
    }

    @Test("includes resolve through the local datastore and stay with the result")
    func includes() async throws {
        let (client, _) = try offlineClient()
        let company = client.object("Company", id: "acme")
        company["name"] = "Acme"
        let author = client.object("Author", id: "ann")
        author["name"] = "Ann"
        author["company"] = .pointer(Pointer(className: "Company", objectId: "acme"))
        try await client.pinAll([company, author])
        let post = client.object("Post", id: "p1")
        post["author"] = .pointer(Pointer(className: "Author", objectId: "ann"))
        post["title"] = "Hello"
        try await post.pin()
        let result = try await client.query("Post").fromLocalDatastore().including("author", "company").find()
        #expect(result.objectIds == ["p1"])
        #expect(result.included.map(\.objectId).sorted() == ["acme", "ann"])
        #expect(result.included.contains { $0 === author }, "the live instance")
        #expect(try post.object("author")?.string("name") == "Ann")
    }

    @Test("results of every kind go through the identity map")
    func identityAcrossResults() async throws {
        try await withRealServer { server in
            try await server.put("GameScore", "g1", ["score": 1, "playerName": "Sean"])
            let client = try server.client()
            let held = client.object("GameScore", id: "g1")
            let remote = try await client.query("GameScore").find(policy: .remoteAndStore)
            #expect(remote.objects.first === held, "the same instance as the one already in memory, as in Parse")
            #expect(held.string("playerName") == "Sean")
            let local = try await client.query("GameScore").fromLocalDatastore().find()
            #expect(local.objects.first === held)
            let byId = try await client.query("GameScore").getObject("g1")
            #expect(byId === held)
        }
    }

    @Test("the identity map holds the live instances only: pages made and dropped leave nothing behind")
    func identityMapKeepsLiveInstancesOnly() async throws {
        let (client, _) = try offlineClient()
        let registry = client.core.registry
        // Over ten times the 1,024 entries the map used to grow by before looking for dead ones
        // (and not a multiple of them, where it looked).
        let keys = (0..<10_500).map { ObjectKey(datastore: .app, className: "Note", objectId: "n\($0)") }
        var held: [RooftopObject] = []
        for (index, key) in keys.enumerated() {
            let made = registry.instance(for: key) { RooftopObject(key: key, base: nil, core: client.core) }
            if index.isMultiple(of: 100) { held.append(made) }
        }
        #expect(registry.count == held.count, "each dropped instance left the map as it went")
        for object in held {
            #expect(registry.existing(object.key) === object, "a held instance is still the one found")
        }
        let first = held[0].key
        held.removeAll()
        #expect(registry.count == 0 && registry.existing(first) == nil)

        // An entry that already holds another instance stays when an older one goes.
        let key = keys[0]
        var older: RooftopObject? = registry.instance(for: key) { RooftopObject(key: key, base: nil, core: client.core) }
        registry.removeAll()
        let newer = registry.instance(for: key) { RooftopObject(key: key, base: nil, core: client.core) }
        #expect(older !== newer)
        weak var gone = older
        older = nil
        #expect(gone == nil, "the older instance went")
        #expect(registry.existing(key) === newer && registry.count == 1)

        // Pages of stored objects, found and dropped: nothing stays behind them.
        let created = Timestamp(millisecondsSinceEpoch: 1_700_000_000_000)
        try client.core.store.write(scope: client.core.scope) { transaction in
            for index in 0..<2_000 {
                let key = ObjectKey(datastore: .app, className: "Page", objectId: "p\(index)")
                let object = ObjectSnapshot(
                    className: "Page", objectId: key.objectId, datastore: .app, fields: ["rank": .int(Int64(index))],
                    acl: nil, createdAt: created, updatedAt: created, version: 1)
                try transaction.put(key, server: object, local: object, deleted: false)
            }
        }
        for start in stride(from: 0, to: 2_000, by: 500) {
            let page = try await client.query("Page").fromLocalDatastore().where(Field("rank") >= start)
                .order(by: "rank").limit(500).find()
            #expect(page.objects.count == 500 && page.objects.first?.int("rank") == Int64(start))
        }
        #expect(registry.count == 1, "only the instance still held")

        // A large page held at once, then let go: the map gives its room back.
        let largeKeys = (0..<10_500).map { ObjectKey(datastore: .app, className: "Large", objectId: "l\($0)") }
        var large: [RooftopObject]? = largeKeys.map { key in
            registry.instance(for: key) { RooftopObject(key: key, base: nil, core: client.core) }
        }
        #expect(large?.count == largeKeys.count && registry.count == largeKeys.count + 1)
        #expect(registry.capacity >= largeKeys.count)
        large = nil
        #expect(large == nil && registry.count == 1 && registry.capacity <= ObjectRegistry.shrinkFloor * 2)
        withExtendedLifetime(newer) {}
    }
}
