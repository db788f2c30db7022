@testable import Rooftop
import RooftopShared
import Testing
import RooftopTestSupport

@Suite("Datastores: offline use, migration at sign-in, manager, sync, status", .timeLimit(.minutes(5)))
struct DatastoreTests {
    @Test("a private datastore works offline and without an account; at sign-in its changes merge into the user's")
    func migration() async throws {
        try await withRealServer { server in
            // Another device of Ann's stored a preference in her default datastore.
            let device = try server.client()
            _ = try await device.signUpForTest("ann")
            let prefs = ObjectKey(datastore: .default, className: "Preference", objectId: "prefs")
            try await server.push(
                [Mutation(datastore: .default, className: "Preference", objectId: "prefs", change: .update([FieldUpdate("theme", .set("dark"))]))],
                as: device)
            let requestsBefore = server.requestLog.count
            server.offline = true

            let client = try server.client()
            let settings = try await client.datastores.open(.default)
            let local = settings.object("Preference", id: "prefs")
            local["volume"] = 3
            try await local.saveEventually()
            let note = settings.object("Note")
            note["text"] = "written before signing in"
            try await note.saveEventually()
            try await note.pin(label: "drafts")
            #expect(server.requestLog.count == requestsBefore, "nothing needed the server")
            #expect(try await client.datastores.list().map(\.id) == [.default])
            #expect(try await settings.sync().isEmpty, "without an account there is no server to sync with")
            let status = try settings.currentStatus()
            #expect(status.outgoing && status.downloading && !status.uploading)
            #expect(try settings.objects("Note").map(\.objectId) == [note.objectId])

            server.offline = false
            try await client.logIn(username: "ann", password: "secret-password")
            try await client.outbox.waitUntilIdle()
            #expect(try await server.object(prefs, as: client)?.fields == ["theme": "dark", "volume": 3], "merged on the server")
            #expect(try await server.object(note.key, as: client)?.fields["text"] == "written before signing in")
            #expect(try note.pinLabels().contains("drafts"), "pins moved to the user")

            let changed = try await settings.sync()
            #expect(Set(changed.keys) == ["Preference", "Note"])
            #expect(local.string("theme") == "dark" && local.int("volume") == 3, "the local copy has both devices' fields")
            #expect(try !settings.currentStatus().outgoing)
        }
    }

    @Test("sync() returns what remote changes touched per class, deleted records included and marked")
    func syncResult() async throws {
        try await withRealServer { server in
            let client = try server.client()
            _ = try await client.signUpForTest("ann")
            let datastore = try await client.datastores.open(.default)
            let keys = try await server.seed(2, as: client)
            let first = try await datastore.sync()
            #expect(first["Item"]?.map(\.key).sorted { $0.objectId < $1.objectId } == keys)
            try await server.delete(keys[0], as: client)
            try await server.update(keys[1], as: client, [FieldUpdate("i", .set(5))])
            let second = try await datastore.sync()
            let items = try #require(second["Item"])
            #expect(items.count == 2)
            let deleted = try #require(items.first { $0.key == keys[0] })
            #expect(deleted.isDeleted && deleted["i"] == nil)
            let updated = try #require(items.first { $0.key == keys[1] })
            #expect(!updated.isDeleted && updated.int("i") == 5)
            #expect(try await datastore.sync().isEmpty, "nothing new")
        }
    }

    @Test("create, list, delete and uncache")
    func manager() async throws {
        try await withRealServer { server in
            let client = try server.client()
            let ann = try await client.signUpForTest("ann")
            let shared = try await client.datastores.create(title: "Trip")
            #expect(shared.id.isShareable)
            #expect(try shared.info()?.title == "Trip")
            let settings = try await client.datastores.open(.default)
            #expect(try await client.datastores.list().map(\.id) == [.default, shared.id].sorted())

            try await server.seed(2, as: client)
            try await settings.sync()
            let draft = settings.object("Note")
            draft["text"] = "unsent"
            server.offline = true
            try await draft.saveEventually()
            #expect(try await client.datastores.list().map(\.id).contains(shared.id), "offline: the local list")
            try client.datastores.uncache(.default)
            #expect(try client.storedKeys().isEmpty)
            #expect(try !client.outbox.hasPendingWrites, "unsent changes are discarded by uncache")
            #expect(try client.core.store.checkpoint(scope: ann.objectId, datastore: .default) == nil)

            server.offline = false
            try await client.datastores.delete(shared.id)
            #expect(try shared.info() == nil)
            await #expect(throws: RooftopError.self) { try await client.sync.pull(datastore: shared.id) }
            #expect(try await settings.sync()["Item"]?.count == 2, "uncached: downloaded whole again")
        }
    }

    @Test("the status stream follows the queue, the pulls and the connection")
    func statusStream() async throws {
        try await withRealServer { server in
            let client = try server.client()
            _ = try await client.signUpForTest("ann")
            let datastore = try await client.datastores.open(.default)
            let statuses = StreamRecorder(datastore.status)
            try await statuses.first("the first status") { $0.downloading && !$0.outgoing }
            server.pushGate.close()
            let note = datastore.object("Note")
            note["text"] = "hi"
            try await note.saveEventually()
            try await statuses.first("uploading") { $0.outgoing && $0.uploading }
            server.pushGate.open()
            try await statuses.first("acknowledged") { !$0.outgoing && !$0.uploading && $0.connected }
            try await datastore.sync()
            try await statuses.first("pulled") { !$0.downloading }
            server.offline = true
            note["text"] = "again"
            try await note.saveEventually()
            try await statuses.first("offline") { $0.outgoing && !$0.connected && $0.lastError?.code == .noConnection }
        }
    }

    @Test("a datastore's changes name its objects changed locally, by sync, and deleted; never another datastore's")
    func contentChanges() async throws {
        // A function of its own, not the closure's body: Swift 6.3.1's region analysis
        // (SendNonSendable) crashed on this test as a closure.
        try await withRealServer { server in try await contentChanges(on: server) }
    }

    private func contentChanges(on server: RealSyncServer) async throws {
        let client = try server.client()
        _ = try await client.signUpForTest("ann")
        let datastore = try await client.datastores.open(.default)
        let changes = StreamRecorder(datastore.changes)
        let local = datastore.object("Note")
        local["text"] = "draft"
        try await changes.first("the unsaved edit") { $0.contains(local.key) }
        try await local.saveEventually()
        let other = client.object("Note", in: .app)
        other["text"] = "elsewhere"
        try await other.saveEventually()
        let keys = try await server.seed(2, as: client)
        try await datastore.sync()
        try await changes.first("the first pulled object") { $0.contains(keys[0]) }
        try await changes.first("the second pulled object") { $0.contains(keys[1]) }
        try await server.delete(keys[0], as: client)
        let before = changes.elements.count
        try await datastore.sync()
        try await TestWait.until("the deletion") { changes.elements.dropFirst(before).contains { $0.contains(keys[0]) } }
        #expect(changes.elements.allSatisfy { !$0.contains(other.key) }, "changes of :app are not this datastore's")
        #expect(changes.elements.allSatisfy { !$0.isEmpty })
        await server.shutdown(client)
        try await TestWait.until("the stream ends with the client") { changes.isFinished }
    }
}
