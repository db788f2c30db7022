import Foundation
import RooftopShared
import Testing

@testable import Rooftop
import RooftopTestSupport

/// The scenarios of Parse's local datastore guide not covered by ObjectTests, each named
/// after its section.
@Suite("Seed 000: local datastore scenarios", .timeLimit(.minutes(5)))
struct PinScenarioTests {
    @Test("one instance per object: a query returns the instance already in memory")
    func oneInstance() async throws {
        try await withRealServer { server in
            try await server.put("GameScore", "xWMyZ4YEGZ", ["score": 1337])
            let client = try server.client()
            let inMemory = client.object("GameScore", id: "xWMyZ4YEGZ")
            let found = try await client.query("GameScore").where(Field("objectId") == "xWMyZ4YEGZ").find()
            #expect(found.objects.first === inMemory)
            #expect(inMemory.int("score") == 1337)
        }
    }

    @Test("the current user is kept in the local datastore across restarts")
    func currentUserPersists() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rooftop-pin-\(UUID()).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let (client, _) = try offlineClient(storage: .file(path: path))
            try client.signInLocally("sean", roles: ["Players"])
            await client.shutdown()
        }
        let (reopened, _) = try offlineClient(storage: .file(path: path))
        #expect(reopened.currentUser?.objectId == "sean")
        #expect(reopened.currentUser?.roles == ["Players"])
        await reopened.shutdown()
    }

    @Test("pinning: pin and pinAll store objects, found by fromLocalDatastore")
    func pinAndPinAll() async throws {
        let (client, _) = try offlineClient()
        let gameScore = client.object("GameScore")
        gameScore["score"] = 1337
        gameScore["playerName"] = "Sean Plott"
        gameScore["cheatMode"] = false
        try await gameScore.pin()
        let others = (1...3).map { index in
            let score = client.object("GameScore")
            score["score"] = .int(Int64(index))
            return score
        }
        try await client.pinAll(others)
        let local = try await client.query("GameScore").fromLocalDatastore().order(by: "score", descending: true).find()
        #expect(local.objects.first === gameScore)
        #expect(local.totalCount == 4)
        #expect(try gameScore.pinLabels() == [LocalStore.defaultLabel])
    }

    @Test("retrieving: getObject from the local datastore")
    func retrieving() async throws {
        try await withRealServer { server in
            try await server.put("GameScore", "xWMyZ4YE", ["score": 1337])
            let client = try server.client()
            try await client.query("GameScore").getObject("xWMyZ4YE").pin()
            server.isOnline = false
            let query = client.query("GameScore").fromLocalDatastore()
            #expect(try await query.getObject("xWMyZ4YE").int("score") == 1337)
            let missing = await #expect(throws: RooftopError.self) { try await query.getObject("unknown") }
            #expect(missing?.code == .notFound)
            #expect(server.requestCount == 1, "the local lookups did not use the network")
        }
    }

    @Test("pinned objects are updated when fetched or saved")
    func updatedWhenFetchedOrSaved() async throws {
        try await withRealServer { server in
            try await server.put("GameScore", "g1", ["score": 1])
            let client = try server.client()
            let score = try await client.query("GameScore").getObject("g1")
            try await score.pin()
            try await server.put("GameScore", "g1", ["score": 2])
            try await score.fetch()
            let stored = { try client.core.store.object(score.key, scope: client.core.scope)?.local?["score"] }
            #expect(try stored() == 2, "updated by a fetch")
            score["score"] = 3
            try await score.save()
            #expect(try stored() == 3, "updated by a save")
            #expect(try await server.object("GameScore", "g1")?.fields["score"] == 3)
            server.isOnline = false
            #expect(try await client.query("GameScore").fromLocalDatastore().where(Field("score") == 3).count() == 1)
        }
    }

    @Test("unpinning: unpin and unpinAll remove objects from the local datastore")
    func unpinning() async throws {
        let (client, _) = try offlineClient()
        let scores = (1...3).map { index in
            let score = client.object("GameScore")
            score["score"] = .int(Int64(index))
            return score
        }
        try await client.pinAll(scores)
        try await scores[0].unpin()
        let local = client.query("GameScore").fromLocalDatastore()
        #expect(try await local.count() == 2)
        try await client.unpinAll(Array(scores[1...]))
        #expect(try await local.count() == 0)
        #expect(scores[1].int("score") == 2, "the live objects keep their state")
    }

    @Test("labels: an object stays while any label holds it; unpinAll(label:) drops a whole label")
    func labels() async throws {
        let (client, _) = try offlineClient()
        let someGameScores = (1...2).map { index in
            let score = client.object("GameScore")
            score["score"] = .int(Int64(index))
            return score
        }
        try await client.pinAll(someGameScores, label: "MyScores")
        let anotherGameScore = client.object("GameScore")
        anotherGameScore["score"] = 3
        try await anotherGameScore.pin(label: "MyScores")
        try await someGameScores[0].pin(label: "FriendScores")
        #expect(try someGameScores[0].pinLabels() == ["FriendScores", "MyScores"])
        try await client.unpinAll(label: "MyScores")
        let local = client.query("GameScore").fromLocalDatastore()
        #expect(try await local.find().objects.map(\.objectId) == [someGameScores[0].objectId])
        #expect(try await client.query("GameScore").fromPin("MyScores").count() == 0)
        try await someGameScores[0].unpin(label: "FriendScores")
        #expect(try await local.count() == 0)
    }

    @Test("caching query results: the HighScores flow, read back from the local datastore")
    func highScores() async throws {
        try await withRealServer { server in
            for (index, score) in [50, 300, 120, 990].enumerated() {
                try await server.put("GameScore", "g\(index)", ["score": .int(Int64(score))])
            }
            let client = try server.client()
            let query = client.query("GameScore").order(by: "score", descending: true)
            let scores = try await query.find().objects
            try await client.unpinAll(label: "HighScores")
            try await client.pinAll(scores, label: "HighScores")

            try await server.put("GameScore", "g0", ["score": 2000])
            try await server.put("GameScore", "g9", ["score": 1])
            let refreshed = try await query.find().objects
            try await client.unpinAll(label: "HighScores")
            try await client.pinAll(refreshed, label: "HighScores")

            server.isOnline = false
            let cached = try await query.fromLocalDatastore().find()
            #expect(cached.objects.map(\.objectId) == ["g0", "g3", "g1", "g2", "g9"])
            #expect(cached.objects.first?.int("score") == 2000)
            #expect(try await query.fromPin("HighScores").count() == 5)
        }
    }

    @Test("syncing local changes: fromPin(\"MyChanges\"), save each, unpin")
    func myChanges() async throws {
        try await withRealServer { server in
            let client = try await server.writerClient()
            let changed = (1...3).map { index in
                let score = client.object("GameScore")
                score["score"] = .int(Int64(index))
                return score
            }
            try await client.pinAll(changed, label: "MyChanges")
            let pending = try await client.query("GameScore").fromPin("MyChanges").find()
            #expect(pending.objects.count == 3)
            for score in pending.objects {
                try await score.save()
                try await score.unpin(label: "MyChanges")
            }
            #expect(try await client.query("GameScore").fromPin("MyChanges").count() == 0)
            #expect(try await client.query("GameScore").count() == 3, "all three reached the server")
            #expect(try await server.object("GameScore", changed[2].objectId)?.fields["score"] == 3)
        }
    }

    @Test("security: local queries apply ACLs; role ACLs work offline; ignoreACLs")
    func security() async throws {
        let (client, _) = try offlineClient()
        try client.signInLocally("u1", roles: ["Moderators"])
        var moderators = ACL()
        moderators.setReadAccess(true, for: .role("Moderators"))
        var admins = ACL()
        admins.setReadAccess(true, for: .role("Admins"))
        for (id, acl) in [("m", moderators), ("a", admins)] {
            let note = client.object("Note", id: id)
            note["text"] = .string(id)
            note.acl = acl
            try await note.pin()
        }
        let notes = client.query("Note").fromLocalDatastore()
        #expect(try await notes.find().objectIds == ["m"])
        #expect(try await notes.ignoringACLs().order(by: "text").find().objectIds == ["a", "m"])
    }
}
