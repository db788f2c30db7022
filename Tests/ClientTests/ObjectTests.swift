import Foundation
@testable import Rooftop
import RooftopShared
import Testing

@Suite("Objects, identity map and offline writes")
struct ObjectTests {
    @Test("one live instance per object")
    func identityMap() throws {
        let (client, _) = try offlineClient()
        let a = client.object("GameScore", id: "g1")
        let b = client.object("GameScore", id: "g1")
        #expect(a === b)
        #expect(client.object("GameScore") !== client.object("GameScore"), "new objects get new IDs")
    }

    @Test("unsaved changes are tracked as operations and read back")
    func unsavedChanges() throws {
        let (client, _) = try offlineClient()
        let score = client.object("GameScore")
        score["score"] = 1337
        score["playerName"] = "Sean Plott"
        try score.increment("score", by: 3)
        try score.append("a", "b", to: "tags")
        #expect(score.int("score") == 1340)
        #expect(score.string("playerName") == "Sean Plott")
        #expect(score.list("tags") == ["a", "b"])
        #expect(score.hasUnsavedChanges)
        #expect(throws: RooftopError.self) { try score.increment("playerName") }
        score.revert()
        #expect(score["score"] == nil && !score.hasUnsavedChanges)
    }

    @Test("saveEventually is durable: the change survives a restart on the same file, queued once")
    func saveEventuallySurvivesRestart() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rooftop-client-\(UUID()).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let objectId: String
        do {
            let (client, _) = try offlineClient(storage: .file(path: path))
            let score = client.object("GameScore")
            objectId = score.objectId
            score["score"] = 10
            let queued = try await score.saveEventually()
            #expect(queued != nil)
            #expect(!score.hasUnsavedChanges)
            #expect(score.int("score") == 10)
            #expect(try score.pinLabels() == [LocalStore.pendingLabel])
            await client.shutdown()
        }
        let (reopened, _) = try offlineClient(storage: .file(path: path))
        let score = reopened.object("GameScore", id: objectId)
        #expect(score.int("score") == 10)
        let queue = try reopened.core.store.outbox(scope: "")
        #expect(queue.count == 1)
        #expect(queue.first?.mutation.change == .update([FieldUpdate("score", .set(10))]))
        await reopened.shutdown()
    }

    @Test("a direct save offline fails and keeps the changes unsaved")
    func saveOffline() async throws {
        let (client, transport) = try offlineClient()
        let score = client.object("GameScore")
        score["score"] = 1
        await #expect(throws: RooftopError.self) { try await score.save() }
        #expect(score.hasUnsavedChanges)
        #expect(transport.requestCount == 1)
    }

    @Test("deleteEventually removes the object from its local view at once")
    func deleteEventually() async throws {
        let (client, _) = try offlineClient()
        let note = client.object("Note")
        note["text"] = "hello"
        try await note.saveEventually()
        try await note.deleteEventually()
        let row = try client.core.store.object(note.key, scope: "")
        #expect(row?.deleted == true && row?.local == nil)
        #expect(try client.core.store.outbox(scope: "").count == 2)
    }

    @Test("pinning is recursive through pointers known locally")
    func recursivePin() async throws {
        let (client, _) = try offlineClient()
        let author = client.object("Author")
        author["name"] = "Ann"
        try await author.saveEventually()
        let post = client.object("Post")
        post["author"] = .pointer(Pointer(className: "Author", objectId: author.objectId))
        try await post.pin(label: "Reading")
        #expect(try client.core.store.objects(scope: "", pinnedWith: "Reading").map(\.key.className).sorted() == ["Author", "Post"])
        try await client.unpinAll(label: "Reading")
        #expect(try client.core.store.object(post.key, scope: "") == nil)
        #expect(try client.core.store.object(author.key, scope: "") != nil, "still held by its queued change")
    }
}
