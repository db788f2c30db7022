import Foundation
import Rooftop
import RooftopShared
import Testing

/// Cached query results and pulls: what a sync brings — deletions, changes that move objects
/// out of a query, lost access — shows in the cached results read locally.
@Suite("Client queries: cached results follow sync", .sharedServer(), .timeLimit(.minutes(5)))
struct ClientQueryCacheSyncTests {
    @Test("a pulled deletion and a pulled change update the cached results of a private datastore")
    func pulledChangesReachCachedResults() async throws {
        let (server, api) = try SharedServer.require()
        let user = try await api.newUser("cache")
        let file = ClientQueryFixture.cacheFile()
        try await ClientQueryFixture.withClient(server, as: user) { laptop async throws in
            let laptopTasks = try await laptop.datastores.open(.default)
            var tasks: [RooftopObject] = []
            for n in 1...3 {
                let task = laptopTasks.object("Task")
                task["n"] = .int(Int64(n))
                try await task.save()
                tasks.append(task)
            }
            try await ClientQueryFixture.withClient(server, as: user, storage: .file(path: file)) { phone async throws in
                let phoneTasks = try await phone.datastores.open(.default)
                try await phoneTasks.sync()
                let ordered = phone.query("Task", in: .default).order(by: "n")
                let counted = phone.query("Task", in: .default).where(Field("n") >= 1).order(by: "n")
                #expect(try await ordered.find(policy: .remoteAndStore).objectIds == tasks.map(\.objectId))
                #expect(try await counted.find(policy: .remoteAndStore).totalCount == 3)

                try await tasks[1].delete()
                tasks[2]["n"] = 0
                try await tasks[2].save()
                try await phoneTasks.sync()

                let cached = try await ordered.find(policy: .localOnly)
                #expect(cached.objectIds == [tasks[2].objectId, tasks[0].objectId], "deleted one gone, changed one moved")
                #expect(cached.totalCount == 2)
                let filtered = try await counted.find(policy: .localOnly)
                #expect(filtered.objectIds == [tasks[0].objectId], "the changed one no longer matches")
                #expect(filtered.totalCount == 1)
            }
        }
        try await ClientQueryFixture.withOfflineClient(server, storage: .file(path: file)) { phone async throws in
            let cached = try await phone.query("Task", in: .default).order(by: "n").find(policy: .localOnly)
            #expect(cached.objects.map { $0.int("n") } == [0, 1])
        }
    }

    @Test("a cached result keeps its included objects, read offline and replaced with the result")
    func cachedIncludes() async throws {
        let (server, api) = try SharedServer.require()
        let user = try await api.newUser("includes")
        let books = Unique.name("Book")
        let file = ClientQueryFixture.cacheFile()
        try await ClientQueryFixture.withClient(server, as: user) { writer async throws in
            let author = writer.object("CacheAuthor")
            author["name"] = "Ada"
            try await author.save()
            let book = writer.object(books)
            book["title"] = "Notes"
            book["author"] = .pointer(Pointer(className: "CacheAuthor", objectId: author.objectId))
            try await book.save()
            let query = { (client: RooftopClient) in client.query(books).including("author") }
            try await ClientQueryFixture.withClient(server, as: user, storage: .file(path: file)) { reader async throws in
                let stored = try await query(reader).find(policy: .remoteAndStore)
                #expect(stored.included.map(\.objectId) == [author.objectId])
            }
            try await ClientQueryFixture.withOfflineClient(server, storage: .file(path: file)) { offline async throws in
                let cached = try await query(offline).find(policy: .localOnly)
                #expect(cached.objectIds == [book.objectId])
                #expect(cached.included.map { $0.string("name") } == ["Ada"], "the included author is cached too")
            }
            author["name"] = "Ada Lovelace"
            try await author.save()
            try await ClientQueryFixture.withClient(server, as: user, storage: .file(path: file)) { reader async throws in
                _ = try await query(reader).find(policy: .remoteAndStore)
            }
            try await ClientQueryFixture.withOfflineClient(server, storage: .file(path: file)) { offline async throws in
                let cached = try await query(offline).find(policy: .localOnly)
                #expect(cached.included.map { $0.string("name") } == ["Ada Lovelace"])
            }
            try await book.delete()
            try await ClientQueryFixture.withClient(server, as: user, storage: .file(path: file)) { reader async throws in
                #expect(try await query(reader).find(policy: .remoteAndStore).objects.isEmpty)
                let authors = try await reader.query("CacheAuthor").fromLocalDatastore().ignoringACLs().find()
                #expect(authors.objects.isEmpty, "the included author left with the result that held it")
            }
        }
    }

    @Test("losing access through a role: the next pull tells the client its roles and purges the cached copies")
    func revocationPurges() async throws {
        let (server, api) = try SharedServer.require()
        let scene = try await ClientACLScene.make(api)
        try await ClientQueryFixture.withClient(server, as: scene.alice, storage: .file(path: ClientQueryFixture.cacheFile())) {
            client async throws in
            let scope = SyncScope.classes(scene.className)
            try await client.sync.pull(datastore: .app, scope: scope)
            let query = client.query(scene.className)
            _ = try await query.find(policy: .remoteAndStore)
            #expect(try await query.fromLocalDatastore().find().idSet == scene.readable(by: scene.alice))

            try await api.updateRole(scene.editors, UpdateRoleRequest(removeUsers: [scene.alice.id]))
            try await client.sync.pull(datastore: .app, scope: scope)
            #expect(client.currentUser?.roles.isEmpty == true, "the pull told the client its roles changed")
            let left: Set = [scene.publicDoc, scene.aliceDoc]
            #expect(try await query.fromLocalDatastore().ignoringACLs().find().idSet == left, "purged, not just hidden")
            #expect(try await query.find(policy: .localOnly).idSet == left)
            #expect(try await query.find(policy: .localOnly).totalCount == 2)
        }
    }
}
