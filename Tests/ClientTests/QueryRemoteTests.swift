import Foundation
import RooftopShared
import Testing

@testable import Rooftop
import RooftopTestSupport

/// Queries answered by the server: what they do to live objects and local copies.
@Suite("Remote queries", .timeLimit(.minutes(5)))
struct QueryRemoteTests {
    @Test("a query sends the shared query model and reads the page and the total count")
    func wire() async throws {
        try await withRealServer { server in
            let client = try await server.writerClient()
            for index in 1...5 { try await server.put("GameScore", "g\(index)", ["score": .int(Int64(index))]) }
            let before = server.requests.count
            let page = try await client.query("GameScore").where(Field("score") > 1).order(by: "score").limit(2).offset(1)
                .find()
            #expect(page.objectIds == ["g3", "g4"])
            #expect(page.totalCount == 4)
            #expect(Array(server.requests.dropFirst(before)) == ["POST /v1/datastores/:app/query"])
            let other = try DatastoreID("scores")
            try await server.put("GameScore", "x1", ["score": 1], in: other)
            #expect(try await client.query("GameScore").in(other).find().objectIds == ["x1"])
        }
    }

    @Test("stored objects returned by a query are updated locally; unstored ones are not stored")
    func storedCopiesUpdated() async throws {
        try await withRealServer { server in
            let client = try await server.writerClient()
            try await server.put("GameScore", "g1", ["score": 1])
            try await server.put("GameScore", "g2", ["score": 2])
            let g1 = try await client.query("GameScore").getObject("g1")
            try await g1.pin()
            try await server.put("GameScore", "g1", ["score": 100])
            _ = try await client.query("GameScore").find()
            let key = g1.key
            #expect(try client.core.store.object(key, scope: client.core.scope)?.local?["score"] == 100)
            #expect(g1.int("score") == 100)
            let g2 = ObjectKey(datastore: .app, className: "GameScore", objectId: "g2")
            #expect(try client.core.store.object(g2, scope: client.core.scope) == nil)
        }
    }

    @Test("queued changes stay on top of a newer server state")
    func queuedChangesOnTop() async throws {
        try await withRealServer { server in
            let client = try await server.writerClient()
            try await server.put("Counter", "c1", ["count": 1, "label": "a"])
            let counter = try await client.query("Counter").getObject("c1")
            // The increment stays queued: its push waits at the gate while the server's state
            // changes and the query runs (sent first, it would make the server's state 6, and
            // the later write of 10, on a stale base, would lose to it by the default rule).
            server.pushGate.close()
            try counter.increment("count", by: 5)
            try await counter.saveEventually()
            try await server.put("Counter", "c1", ["count": 10, "label": "b"])
            let result = try await client.query("Counter").find()
            #expect(result.objects.first === counter)
            #expect(counter.int("count") == 15, "server 10 + queued 5")
            #expect(counter.string("label") == "b")
        }
    }

    @Test("includes come with the result and with getObject")
    func includes() async throws {
        try await withRealServer { server in
            let client = try await server.writerClient()
            try await server.put("Company", "acme", ["name": "Acme"])
            try await server.put(
                "Author", "ann", ["name": "Ann", "company": .pointer(Pointer(className: "Company", objectId: "acme"))])
            try await server.put("Post", "p1", ["author": .pointer(Pointer(className: "Author", objectId: "ann"))])
            let result = try await client.query("Post").including("author", "company").find()
            #expect(result.included.map(\.objectId).sorted() == ["acme", "ann"])
            #expect(try result.objects.first?.object("author")?.object("company")?.string("name") == "Acme")
            let post = try await client.query("Post").including("author").getObject("p1")
            #expect(post === result.objects.first)
            #expect(server.requests.last == "GET /v1/datastores/:app/classes/Post/objects/p1?include=author")
            let missing = await #expect(throws: RooftopError.self) { try await client.query("Post").getObject("nope") }
            #expect(missing?.code == .notFound)
        }
    }

    @Test("remove(limit:) and removeAll delete on the server and drop the local copies")
    func remove() async throws {
        try await withRealServer { server in
            let client = try await server.writerClient()
            for index in 1...6 { try await server.put("GameScore", "g\(index)", ["score": .int(Int64(index))]) }
            let all = try await client.query("GameScore").find(policy: .remoteAndStore)
            #expect(all.objects.count == 6)
            let low = client.query("GameScore").where(Field("score") <= 4).order(by: "score")
            #expect(try await low.remove(limit: 2) == 2)
            #expect(try await server.object("GameScore", "g1") == nil)
            #expect(try await server.object("GameScore", "g2") == nil)
            #expect(try await server.object("GameScore", "g3") != nil)
            let local = client.query("GameScore").fromLocalDatastore().order(by: "score")
            #expect(try await local.find().objectIds == ["g3", "g4", "g5", "g6"])
            #expect(all.objects[0].snapshot.fields.isEmpty, "the live instance of a removed object is emptied")
            #expect(try await low.removeAll() == 2)
            #expect(try await local.find().objectIds == ["g5", "g6"])
            #expect(try await client.query("GameScore").count() == 2)
            let negative = await #expect(throws: RooftopError.self) { try await low.remove(limit: -1) }
            #expect(negative?.code == .illegalArgument)
            #expect(try await low.removeAll() == 0)
        }
    }

    @Test("a newer state held by a live object is not rolled back by an older answer")
    func noRollback() async throws {
        try await withRealServer { server in
            let client = try await server.writerClient()
            let old = try await server.put("GameScore", "g1", ["score": 1])
            let newer = try await server.put("GameScore", "g1", ["score": 2])
            let object = client.core.adopt(newer)
            #expect(client.core.adopt(old) === object)
            #expect(object.int("score") == 2 && object.version == newer.version)
        }
    }
}
