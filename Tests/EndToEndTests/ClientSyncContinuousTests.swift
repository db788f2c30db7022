import Foundation
import Rooftop
import RooftopShared
import Testing
import RooftopTestSupport

/// Continuous sync over the real server's live WebSocket: a client keeping a shared datastore in
/// sync gets another user's changes without pulling, and after the server restarts it reconnects
/// and picks up what changed while it was away.
@Suite("Client sync: continuous")
struct ClientSyncContinuousTests {
    @Test("another user's saves, edits and deletes arrive without an explicit pull")
    func changesArriveLive() async throws {
        try await withSyncHarness { harness in
            let server = try await harness.startServer()
            let live = try await harness.liveWatch(writerServer: server, watcherServer: server)
            let (datastore, writer, watcher) = (live.datastore, live.writer, live.watcher)

            let note = writer.object("Note", in: datastore)
            note["text"] = "first"
            note.acl = .publicReadWrite
            try await note.save()
            try await TestWait.until("the new note on the watcher") {
                await watcher.hasLocalCopy("Note", note.objectId, in: datastore)
            }
            let seen = try await watcher.query("Note", in: datastore).fromLocalDatastore().getObject(note.objectId)
            #expect(seen.string("text") == "first")

            note["text"] = "second"
            try await note.saveEventually()
            try await TestWait.until("the edit on the watcher") { seen.string("text") == "second" }
            #expect(seen.version == 2)

            try await note.delete()
            try await TestWait.until("the delete on the watcher") { seen.isDeleted }
            #expect(!(await watcher.hasLocalCopy("Note", note.objectId, in: datastore)))
            await watcher.sync.stop()
        }
    }

    /// While the watcher's server is down, the data directory is served for a moment on another
    /// port, where a change is made: the watcher cannot hear of it, so it arrives only if the
    /// reconnected watcher catches up on its own.
    @Test("continuous sync reconnects after a server restart and catches up on changes made while away")
    func reconnectsAndCatchesUp() async throws {
        try await withSyncHarness { harness in
            let first = try await harness.startServer()
            let port = first.port
            let api = try harness.api(first)
            let (owner, guest) = (try await api.newUser("owner"), try await api.newUser("guest"))
            let datastore = try await api.shareableDatastore(owner: owner, sharedWith: [guest], role: .viewer)
            let before = try await api.create("Note", in: datastore, fields: ["text": "before"], acl: .publicReadWrite, as: owner)
            let watcher = try await harness.client(first, file: harness.cacheFile("watcher"))
            try await watcher.logIn(guest)
            let watched = try await watcher.datastores.open(datastore)
            try await watcher.sync.startContinuous(datastores: [datastore])
            try await TestWait.until("the first object on the watcher") {
                await watcher.hasLocalCopy("Note", before.objectId, in: datastore)
            }
            try await TestWait.until("the watcher is connected") { try watched.currentStatus().connected }

            await harness.stop(first)
            try await TestWait.until("the watcher notices the drop") { !(try watched.currentStatus().connected) }

            // Changes the watcher cannot hear of: made on another port.
            let detour = try await harness.startServer(dataDirectory: first.dataDirectory)
            try #require(detour.port != port, "the detour server must not be reachable by the watcher")
            let detourAPI = try harness.api(detour)
            let during = try await detourAPI.create(
                "Note", in: datastore, fields: ["text": "while away"], acl: .publicReadWrite, as: owner)
            let edit = try await detourAPI.update(before, fields: ["text": "edited while away"], as: owner)
            #expect(edit.status == 200, "\(edit.text)")
            await harness.stop(detour)
            #expect(!(await watcher.hasLocalCopy("Note", during.objectId, in: datastore)))

            // The server is back where the watcher looks for it.
            let second = try await harness.startServer(dataDirectory: first.dataDirectory, port: port)
            try await TestWait.until(within: .seconds(60), "the change made while away") {
                await watcher.hasLocalCopy("Note", during.objectId, in: datastore)
            }
            let local = watcher.query("Note", in: datastore).fromLocalDatastore()
            try await TestWait.until("the edit made while away") {
                try await local.getObject(before.objectId).string("text") == "edited while away"
            }
            #expect(try await local.getObject(during.objectId).string("text") == "while away")
            #expect(try watched.currentStatus().connected)

            // And it hears of new changes again.
            let secondAPI = try harness.api(second)
            let after = try await secondAPI.create("Note", in: datastore, fields: ["text": "after"], acl: .publicReadWrite, as: owner)
            try await TestWait.until("a change after the reconnect") {
                await watcher.hasLocalCopy("Note", after.objectId, in: datastore)
            }
            #expect(try await watcher.localIds("Note", in: datastore) == [before.objectId, during.objectId, after.objectId])
            await watcher.sync.stop()
        }
    }
}
