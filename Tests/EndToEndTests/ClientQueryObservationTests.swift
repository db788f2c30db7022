import Foundation
import Rooftop
import RooftopShared
import RooftopTestSupport
import Testing

/// Observing query results and objects end to end: the streams yield again when a fetch, a
/// stored query result or a sync brings a change made elsewhere on the server.
@Suite("Client queries: observation", .sharedServer(), .timeLimit(.minutes(5)))
struct ClientQueryObservationTests {
    @Test("a cached query's changes follow remoteAndStore and a fetch of one of its objects")
    func cachedQueryFollowsTheServer() async throws {
        let (server, api) = try SharedServer.require()
        var scene = try await ClientScoreScene.make(server, api, count: 5)
        try await scene.online { client async throws in
            let top = scene.top(client)
            let pages = StreamRecorder(top.changes())
            defer { pages.cancel() }
            let empty = try await pages.next("the first, empty result")
            #expect(empty.objects.isEmpty, "nothing cached yet")
            _ = try await top.find(policy: .remoteAndStore)
            let first = try await pages.next("the stored result") { !$0.objects.isEmpty }
            #expect(first.objectIds == scene.ids(50, 40, 30))
            #expect(first.fromCache)

            let sixty = try await scene.add(60)
            _ = try await top.find(policy: .remoteAndStore)
            let second = try await pages.next("the new score") { $0.objectIds.first == sixty }
            #expect(second.objectIds == scene.ids(60, 50, 40))

            let reply = try await api.update(
                ObjectSnapshot(className: scene.className, objectId: scene.ids(40)[0], datastore: .app),
                fields: ["score": .int(70)], as: scene.user)
            #expect(reply.status == 200)
            let forty = try #require(second.objects.last)
            try await forty.fetch()
            let third = try await pages.next("the fetched change") { $0.objectIds.first == forty.objectId }
            #expect(third.objectIds == [forty.objectId] + scene.ids(60, 50))
            #expect(third.objects.first?.int("score") == 70)
        }
    }

    @Test("a fromPin query's changes follow pinning and unpinning objects fetched from the server")
    func pinQueryFollowsLabels() async throws {
        let (server, api) = try SharedServer.require()
        let scene = try await ClientScoreScene.make(server, api, count: 3)
        try await scene.online { client async throws in
            let pinned = client.query(scene.className).fromPin("starred").order(by: "score")
            let pages = StreamRecorder(pinned.changes())
            defer { pages.cancel() }
            #expect(try await pages.next("the first result").objects.isEmpty)
            let objects = try await client.query(scene.className).order(by: "score").find().objects
            try await client.pinAll(Array(objects.prefix(2)), label: "starred")
            _ = try await pages.next("the pinned objects") { $0.objectIds == scene.ids(10, 20) }
            try await objects[0].unpin(label: "starred")
            _ = try await pages.next("the unpinned object leaving") { $0.objectIds == scene.ids(20) }
            objects[1]["score"] = 25
            let edited = try await pages.next("the unsaved edit") { $0.objects.first?.int("score") == 25 }
            #expect(edited.objectIds == scene.ids(20), "local queries see unsaved changes")
        }
    }

    @Test("a local query and an object observed on one device yield when a sync pulls another device's change")
    func syncBringsChanges() async throws {
        let (server, api) = try SharedServer.require()
        let user = try await api.newUser("devices")
        try await ClientQueryFixture.withClient(server, as: user, storage: .file(path: ClientQueryFixture.cacheFile())) {
            phone async throws in
            try await ClientQueryFixture.withClient(server, as: user) { laptop async throws in
                let phoneTasks = try await phone.datastores.open(.default)
                let laptopTasks = try await laptop.datastores.open(.default)
                let open = phone.query("Task", in: .default).fromLocalDatastore().where(Field("done") == false)
                let pages = StreamRecorder(open.changes())
                defer { pages.cancel() }
                #expect(try await pages.next("the first result").objects.isEmpty)

                let task = laptopTasks.object("Task")
                task["title"] = "water the plants"
                task["done"] = false
                try await task.save()
                try await phoneTasks.sync()
                let arrived = try await pages.next("the pulled task") { $0.objectIds == [task.objectId] }
                let phoneTask = try #require(arrived.objects.first)
                #expect(phoneTask.string("title") == "water the plants")

                let states = StreamRecorder(phoneTask.changes)
                defer { states.cancel() }
                _ = try await states.next("the current state")
                task["done"] = true
                try await task.save()
                try await phoneTasks.sync()
                let done = try await states.next("the pulled change") { $0?.fields["done"] == .bool(true) }
                #expect(done?.version == task.version)
                _ = try await pages.next("the task leaving the query") { $0.objects.isEmpty }
                try await task.delete()
                try await phoneTasks.sync()
                _ = try await states.next("the pulled deletion") { $0 == nil }
                #expect(phoneTask.isDeleted)
            }
        }
    }

    @Test("with continuous sync, an observed query follows another device without any call")
    func continuousSync() async throws {
        let (server, api) = try SharedServer.require()
        let user = try await api.newUser("continuous")
        try await ClientQueryFixture.withClient(server, as: user) { phone async throws in
            try await ClientQueryFixture.withClient(server, as: user) { laptop async throws in
                _ = try await phone.datastores.open(.default)
                let query = phone.query("Memo", in: .default).fromLocalDatastore().order(by: "n")
                let pages = StreamRecorder(query.changes())
                defer { pages.cancel() }
                try await phone.sync.startContinuous(datastores: [.default])
                let memos = try await laptop.datastores.open(.default)
                var ids: [String] = []
                for n in 1...3 {
                    let memo = memos.object("Memo")
                    memo["n"] = .int(Int64(n))
                    try await memo.save()
                    ids.append(memo.objectId)
                    let page = try await pages.next("memo \(n)") { $0.objectIds == ids }
                    #expect(page.objects.last?.int("n") == Int64(n))
                }
                await phone.sync.stop()
            }
        }
    }
}
