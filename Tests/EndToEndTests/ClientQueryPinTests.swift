import Foundation
import Rooftop
import RooftopShared
import Testing

/// Pins and labels (as in Parse's local datastore) with objects from the real server: pinning query results,
/// `fromPin` queries (also offline, from the cache file), pinned objects kept up to date by
/// fetches, finds and saves, labels holding objects independently, recursive pins through
/// pointers, and the labels of cached query results.
@Suite("Client queries: pins", .sharedServer(), .timeLimit(.minutes(5)))
struct ClientQueryPinTests {
    @Test("query results pinned under labels are read back with fromPin, offline too")
    func pinResultsUnderLabels() async throws {
        let (server, api) = try SharedServer.require()
        let scene = try await ClientScoreScene.make(server, api)
        try await scene.online { client async throws in
            let query = client.query(scene.className).order(by: "score")
            try await client.pinAll(try await query.where(Field("score") > 50).find().objects, label: "high")
            try await client.pinAll(try await query.where(Field("score") <= 30).find().objects, label: "low")
            #expect(try await query.fromPin("high").find().objectIds == scene.ids(60, 70, 80, 90, 100))
            #expect(try await query.fromPin("low").find().objectIds == scene.ids(10, 20, 30))
            #expect(try await query.fromPin().find().objects.isEmpty, "nothing under the default label")
        }
        try await scene.offline { client async throws in
            let query = client.query(scene.className).order(by: "score")
            let high = try await query.fromPin("high").where(Field("score") > 80).find()
            #expect(high.objectIds == scene.ids(90, 100))
            #expect(high.totalCount == 2 && high.fromCache)
            #expect(try await query.fromPin("low").limit(2).offset(1).find().objectIds == scene.ids(20, 30))
            #expect(try await query.fromLocalDatastore().find().objectIds == scene.ids(10, 20, 30, 60, 70, 80, 90, 100))
            let elsewhere = await #expect(throws: RooftopError.self) {
                try await query.fromPin("high").getObject(scene.ids(10)[0])
            }
            #expect(elsewhere?.code == .notFound, "pinned, but with another label")
            #expect(try await query.fromPin("low").getObject(scene.ids(10)[0]).int("score") == 10)
        }
    }

    @Test("a pinned object's stored copy follows fetches, server results and saves")
    func pinnedObjectsFollowTheServer() async throws {
        let (server, api) = try SharedServer.require()
        let scene = try await ClientScoreScene.make(server, api, count: 2)
        let id = scene.ids(10)[0]
        func setScore(_ score: Int64) async throws {
            let reply = try await api.send(
                .PATCH, APIClient.objectPath(.app, scene.className, id),
                body: ObjectWriteBody(fields: ["score": .int(score)]), token: scene.user.token)
            guard reply.status == 200 else { throw FixtureError("update answered \(reply.status): \(reply.text)") }
        }
        func storedScore() async throws -> Int64? {
            try await scene.offline { client async throws in
                try await client.query(scene.className).fromPin("p").getObject(id).int("score")
            }
        }
        try await scene.online { client async throws in
            try await client.query(scene.className).getObject(id).pin(label: "p")
        }
        #expect(try await storedScore() == 10)

        try await setScore(11)
        try await scene.online { client async throws in
            let object = try await client.query(scene.className).fromPin("p").getObject(id)
            #expect(object.int("score") == 10)
            try await object.fetch()
            #expect(object.int("score") == 11)
        }
        #expect(try await storedScore() == 11, "a fetch updates the stored copy")

        try await setScore(12)
        try await scene.online { client async throws in
            _ = try await client.query(scene.className).find(policy: .remoteOnly)
        }
        #expect(try await storedScore() == 12, "a query's answer updates the stored copy")

        try await scene.online { client async throws in
            let object = client.object(scene.className, id: id)
            #expect(object.int("score") == 12, "loaded from the local datastore")
            object["score"] = 13
            try await object.save()
        }
        #expect(try await storedScore() == 13, "a save updates the stored copy")
        let other = scene.ids(20)[0]
        try await scene.offline { client async throws in
            let missing = await #expect(throws: RooftopError.self) {
                try await client.query(scene.className).fromLocalDatastore().getObject(other)
            }
            #expect(missing?.code == .notFound, "objects only found, never pinned, are not stored")
        }
    }

    @Test("a new object pinned before it is saved is stored, and saving it stores the server's state")
    func pinBeforeSaving() async throws {
        let (server, api) = try SharedServer.require()
        let scene = try await ClientScoreScene.make(server, api, count: 1)
        let id: String = try await scene.online { client async throws in
            let draft = client.object(scene.className)
            draft["score"] = 7
            try await draft.pin(label: "drafts")
            return draft.objectId
        }
        try await scene.offline { client async throws in
            let draft = try await client.query(scene.className).fromPin("drafts").getObject(id)
            #expect(draft.int("score") == 7 && draft.version == 0 && draft.createdAt == nil)
        }
        try await scene.online { client async throws in
            let draft = client.object(scene.className, id: id)
            #expect(draft.int("score") == 7, "loaded from the local datastore")
            #expect(draft.hasUnsavedChanges, "a pinned draft's changes come back unsaved, as in Parse")
            try await draft.save()
        }
        try await scene.offline { client async throws in
            let saved = try await client.query(scene.className).fromPin("drafts").getObject(id)
            #expect(saved.int("score") == 7)
            #expect(saved.version > 0 && saved.createdAt != nil, "the stored copy is the server's state")
        }
        #expect(try await api.count(Query(scene.className), as: scene.user) == 2)

        // A fetched object pinned with an unsaved change: the change comes back unsaved, on top
        // of the fetched state (which does not take it in).
        let ten = scene.ids(10)[0]
        try await scene.online { client async throws in
            let object = try await client.query(scene.className).getObject(ten)
            object["score"] = 11
            try await object.pin(label: "edited")
        }
        try await scene.online { client async throws in
            let object = client.object(scene.className, id: ten)
            #expect(object.int("score") == 11 && object.hasUnsavedChanges)
            object.revert()
            #expect(object.int("score") == 10, "the stored server state is the fetched one")
            object["score"] = 12
            try await object.save()
        }
        let saved = try await api.find(Query(scene.className).where(Field("score") == 12), as: scene.user)
        #expect(saved.ids == [ten])
    }

    @Test("removing one label keeps the objects another label holds")
    func labelsHoldIndependently() async throws {
        let (server, api) = try SharedServer.require()
        let scene = try await ClientScoreScene.make(server, api, count: 3)
        try await scene.online { client async throws in
            let query = client.query(scene.className).order(by: "score")
            let objects = try await query.find().objects
            try #require(objects.count == 3)
            try await client.pinAll(Array(objects[0...1]), label: "a")
            try await client.pinAll(Array(objects[1...2]), label: "b")
            #expect(try objects[1].pinLabels() == ["a", "b"])

            try await client.unpinAll(label: "a")
            #expect(try await query.fromPin("a").find().objects.isEmpty)
            #expect(try await query.fromLocalDatastore().find().objectIds == scene.ids(20, 30))
            #expect(try objects[1].pinLabels() == ["b"])
            #expect(try objects[0].pinLabels().isEmpty)

            try await objects[2].unpin(label: "b")
            #expect(try await query.fromLocalDatastore().find().objectIds == scene.ids(20))
        }
        try await scene.offline { client async throws in
            #expect(try await client.query(scene.className).fromLocalDatastore().find().objectIds == scene.ids(20))
            #expect(try await client.query(scene.className).fromPin("b").find().objectIds == scene.ids(20))
        }
    }

    @Test("pinning is recursive through pointers to objects fetched with includes")
    func recursivePin() async throws {
        let (server, api) = try SharedServer.require()
        let user = try await api.newUser("shelf")
        let books = Unique.name("Book")
        let file = ClientQueryFixture.cacheFile()
        let (bookId, authorId, companyId) = try await ClientQueryFixture.withClient(server, as: user) { writer async throws in
            let company = writer.object("PinCompany")
            company["name"] = "Acme"
            try await company.save()
            let author = writer.object("PinAuthor")
            author["name"] = "Ada"
            author["company"] = .pointer(Pointer(className: "PinCompany", objectId: company.objectId))
            try await author.save()
            let book = writer.object(books)
            book["title"] = "Notes"
            book["author"] = .pointer(Pointer(className: "PinAuthor", objectId: author.objectId))
            try await book.save()
            return (book.objectId, author.objectId, company.objectId)
        }
        try await ClientQueryFixture.withClient(server, as: user, storage: .file(path: file)) { reader async throws in
            let page = try await reader.query(books).including("author", "company").find()
            let book = try #require(page.objects.first)
            try await book.pin(label: "shelf")
            #expect(try await reader.query("PinAuthor").fromPin("shelf").find().objectIds == [authorId])
            #expect(try await reader.query("PinCompany").fromPin("shelf").find().objectIds == [companyId])
        }
        try await ClientQueryFixture.withOfflineClient(server, storage: .file(path: file)) { offline async throws in
            let book = try await offline.query(books).fromPin("shelf").getObject(bookId)
            let author = try #require(try book.object("author"))
            #expect(author.string("name") == "Ada")
            #expect(try author.object("company")?.string("name") == "Acme")
            let withIncludes = try await offline.query(books).fromPin("shelf").including("author", "company").find()
            #expect(Set(withIncludes.included.map(\.objectId)) == [authorId, companyId], "local includes too")
            #expect(try author.pinLabels() == ["shelf"])
        }
    }

    @Test("a cached query result holds its objects under its own label, beside the app's labels")
    func cachedResultsUnderALabel() async throws {
        let (server, api) = try SharedServer.require()
        let scene = try await ClientScoreScene.make(server, api, count: 4)
        try await scene.online { client async throws in
            let query = client.query(scene.className).where(Field("score") >= 30).order(by: "score")
            let stored = try await query.find(policy: .remoteAndStore)
            #expect(stored.objectIds == scene.ids(30, 40))
            let thirty = try #require(stored.objects.first)
            let labels = try thirty.pinLabels()
            #expect(labels.count == 1 && labels.allSatisfy { $0.hasPrefix("_query:") }, "\(labels)")
            let queryLabel = try #require(labels.first)
            #expect(try await client.query(scene.className).fromPin(queryLabel).find().idSet == Set(scene.ids(30, 40)))
            try await thirty.pin(label: "keep")

            try await scene.delete(30)
            try await scene.delete(40)
            let empty = try await query.find(policy: .remoteAndStore)
            #expect(empty.objects.isEmpty && empty.totalCount == 0)
            #expect(try await query.find(policy: .localOnly).objects.isEmpty, "an empty result is cached too")
            #expect(try thirty.pinLabels() == ["keep"], "the app's label still holds it")
            let local = try await client.query(scene.className).fromLocalDatastore().find()
            #expect(local.objectIds == scene.ids(30), "only the object the app pinned stays stored")
        }
    }
}
