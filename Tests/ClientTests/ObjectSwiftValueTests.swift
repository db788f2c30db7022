import Foundation
@testable import Rooftop
import RooftopShared
import Testing

private struct Player: RooftopModel {
    static let className = "Player"
    var objectId = ObjectID.generate()
    var name: String
}

@Suite("Objects: Swift values, typed reads, checked names")
struct ObjectSwiftValueTests {
    @Test("fields take Swift values from variables and read back as Swift types")
    func swiftValues() throws {
        let (client, _) = try offlineClient()
        let object = client.object("GameScore")
        let plays = 7
        let when = Date(timeIntervalSince1970: 1_763_779_346.5)
        let price = Decimal(string: "19.99")!
        let site = URL(string: "https://example.com/p")!
        let tags = ["a", "b"]
        let ratio: Float = 0.25
        let missing: Int? = nil
        object["plays"] = plays
        object["when"] = when
        object["price"] = price
        object["site"] = site
        object["tags"] = tags
        object["ratio"] = ratio
        object["photo"] = Data([1, 2, 3])
        object["gone"] = 1
        object["gone"] = missing
        #expect(object["plays"] == .int(7))
        #expect(object["when"] == .date(Timestamp(millisecondsSinceEpoch: 1_763_779_346_500)))
        #expect(object["gone"] == nil, "a nil optional unsets the field")
        let readPlays: Int? = object["plays"]
        #expect(readPlays == 7)
        #expect(object.value("when", as: Date.self) == when)
        #expect(object.value("price", as: Decimal.self) == price)
        #expect(object.decimal("price") == (try DecimalNumber("19.99")))
        #expect(object.value("site", as: URL.self) == site)
        #expect(object.value("tags", as: [String].self) == tags)
        #expect(object.value("ratio", as: Float.self) == ratio)
        #expect(object.value("photo", as: Data.self) == Data([1, 2, 3]))
        #expect(object.value("plays", as: String.self) == nil, "another kind reads as nil")
        #expect(object.value("plays", as: Int8.self) == 7)

        try object.increment("plays", by: plays)
        try object.increment("ratio", by: 0.5)
        try object.append(contentsOf: ["c"], to: "tags")
        try object.insert("z", at: 0, in: "tags")
        try object.replace(at: 1, with: "A", in: "tags")
        #expect(object.int("plays") == 14)
        #expect(object.double("ratio") == 0.75)
        #expect(object.value("tags", as: [String].self) == ["z", "A", "b", "c"])
        #expect(throws: RooftopError.self) { try object.increment("tags", by: 1) }
    }

    @Test("objects and models stored in a field are pointers; conditions take them too")
    func pointers() throws {
        let (client, _) = try offlineClient()
        let author = client.object("_User", id: "u1")
        let player = Player(name: "Ann")
        let post = client.object("Post")
        try post.set("author", to: author)
        try post.set("player", to: player)
        #expect(post.pointer("author") == Pointer(className: "_User", objectId: "u1"))
        #expect(post.pointer("player") == Pointer(className: "Player", objectId: player.objectId))
        #expect(try post.object("author") === author)
        #expect((Field("player") == player) == .comparison(field: "player", op: .equal, value: .pointer(player.pointer)))
        #expect((Field("author") == author) == .comparison(field: "author", op: .equal, value: author.rooftopValue))
        let query = try client.query("Post").text("where author = ? and score > ?", [author, 10])
        #expect(query.query.predicate == (Field("author") == author && Field("score") > 10))
    }

    @Test("an object assigned by subscript is stored as a pointer to it and reads back as the same instance")
    func objectBySubscript() throws {
        let (client, _) = try offlineClient()
        let owner = client.object("_User", id: "u1")
        let post = client.object("Post")
        post["owner"] = owner
        #expect(post.pointer("owner") == Pointer(className: "_User", objectId: "u1"))
        #expect(post.pendingChange()?.change == .update([FieldUpdate("owner", .set(owner.rooftopValue))], acl: nil))
        let read: RooftopObject? = post["owner"]
        #expect(read === owner)
        // Without a type to pick, the subscript still reads values; `nil` still unsets.
        post["score"] = 3
        let score = post["score"]
        #expect(score == .int(3))
        let absent: RooftopObject? = post["score"]
        #expect(absent == nil, "not a pointer")
        post["owner"] = nil as RooftopObject?
        #expect(post["owner"] == nil)
    }

    @Test("saveEventually refuses a record over the size limit before queueing it, as the server would")
    func sizeLimitBeforeQueueing() async throws {
        let (client, _) = try offlineClient()
        let note = client.object("Note")
        note["text"] = "short"
        try await note.saveEventually()
        note["text"] = .string(String(repeating: "x", count: Limits.default.maxRecordBytes))
        let refused = await #expect(throws: RooftopError.self) { try await note.saveEventually() }
        #expect(refused?.code == .sizeLimit)
        #expect(try client.core.store.outbox(scope: "").count == 1, "only the first change is queued")
        #expect(note.hasUnsavedChanges, "the refused change stays unsaved")
        let stored = try client.core.store.object(note.key, scope: "")?.local
        #expect(stored?["text"] == "short", "the stored view is the one before it")
        note["text"] = "short again"
        try await note.saveEventually()
        #expect(try client.core.store.outbox(scope: "").count == 2)

        // A record already over the limit (saved directly by another client, say) is not made
        // unsaveable: changes that leave it no larger are queued; one that grows it is not.
        let big = ObjectSnapshot(
            className: "Note", objectId: "big", fields: ["text": .string(String(repeating: "y", count: Limits.default.maxRecordBytes)), "n": 1],
            createdAt: Timestamp(millisecondsSinceEpoch: 1_000), updatedAt: Timestamp(millisecondsSinceEpoch: 1_000), version: 1)
        try client.core.storeServerState(big)
        let oversized = client.object("Note", id: "big")
        try oversized.increment("n", by: 1)
        try await oversized.saveEventually()
        oversized["text"] = .string(String(repeating: "y", count: Limits.default.maxRecordBytes + 10))
        let grown = await #expect(throws: RooftopError.self) { try await oversized.saveEventually() }
        #expect(grown?.code == .sizeLimit)
        #expect(try client.core.store.outbox(scope: "").count == 3)
    }

    @Test("the checked setter refuses a bad name at once; the subscript's bad name is refused when saved, nothing queued")
    func fieldNames() async throws {
        let (client, _) = try offlineClient()
        let object = client.object("Note")
        #expect(throws: RooftopError.self) { try object.set("a b", to: 1) }
        #expect(throws: RooftopError.self) { try object.set("createdAt", to: Date()) }
        #expect(throws: RooftopError.self) { try object.unset("objectId") }
        #expect(!object.hasUnsavedChanges, "a refused set records nothing")
        try object.set("title", to: "ok")

        object["bad name"] = "x"
        #expect(object.hasUnsavedChanges)
        let queued = await #expect(throws: RooftopError.self) { try await object.saveEventually() }
        #expect(queued?.code == .illegalArgument)
        #expect(queued?.field == "bad name")
        #expect(try client.core.store.outbox(scope: "").isEmpty, "nothing was queued")
        let saved = await #expect(throws: RooftopError.self) { try await object.save() }
        #expect(saved?.code == .illegalArgument)
        object["bad name"] = nil
        object.revert()
        object["updatedAt"] = 1
        let builtIn = await #expect(throws: RooftopError.self) { try await object.saveEventually() }
        #expect(builtIn?.code == .invalidOperation)
    }

    @Test("after shutdown the local datastore answers a clear error, never a crash")
    func closedStore() async throws {
        let (client, _) = try offlineClient()
        let object = client.object("Note")
        object["title"] = "before"
        try await object.saveEventually()
        await client.shutdown()
        object["title"] = "after"
        let error = await #expect(throws: RooftopError.self) { try await object.saveEventually() }
        #expect(error?.code == .cache)
        #expect(throws: RooftopError.self) { try client.core.store.outbox(scope: "") }
        // Many accesses racing the close: each either runs or is refused.
        let (racing, _) = try offlineClient()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<50 {
                group.addTask {
                    let note = racing.object("Note")
                    note["n"] = index
                    do {
                        try await note.saveEventually()
                    } catch let error as RooftopError {
                        #expect(error.code == .cache)
                    }
                }
            }
            group.addTask { await racing.shutdown() }
            try await group.waitForAll()
        }
    }
}
