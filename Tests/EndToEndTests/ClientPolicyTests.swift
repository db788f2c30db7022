import Foundation
import Rooftop
import RooftopShared
import Testing

/// Every fetch policy of the client library against the real server, with the server up and
/// down. "Down" is a client over the same cache file pointed at a port that refuses
/// connections (``ClientPolicyRestartTests`` stops the real server instead).
///
/// Each test signs up its own user with its own class of scores (10 ... 100), so the tests share
/// one server.
@Suite("Client fetch policies against the server", .sharedServer(), .timeLimit(.minutes(5)))
struct ClientPolicyTests {
    @Test("remoteOnly reads the server and never the cache; down, it fails with noConnection")
    func remoteOnly() async throws {
        let (server, api) = try SharedServer.require()
        let scene = try await ClientScoreScene.make(server, api)
        try await scene.online { client async throws in
            let result = try await scene.top(client).find()
            #expect(result.objectIds == scene.ids(100, 90, 80))
            #expect(result.totalCount == 10)
            #expect(!result.fromCache)
            let error = await #expect(throws: RooftopError.self) { try await scene.top(client).find(policy: .localOnly) }
            #expect(error?.code == .notCached, "remoteOnly does not write the cache")
            #expect(try await scene.top(client).count() == 10)
            _ = try await scene.top(client).find(policy: .remoteAndStore)
        }
        try await scene.offline { client async throws in
            let error = await #expect(throws: RooftopError.self) { try await scene.top(client).find(policy: .remoteOnly) }
            #expect(error?.code == .noConnection, "a cached result does not help remoteOnly: \(String(describing: error))")
            let count = await #expect(throws: RooftopError.self) { try await scene.top(client).count() }
            #expect(count?.code == .noConnection)
        }
    }

    @Test("localOnly fails with notCached until remoteAndStore ran, then reads the cache, down too")
    func localOnly() async throws {
        let (server, api) = try SharedServer.require()
        var scene = try await ClientScoreScene.make(server, api)
        try await scene.online { client async throws in
            let error = await #expect(throws: RooftopError.self) { try await scene.top(client).find(policy: .localOnly) }
            #expect(error?.code == .notCached, "localOnly never asks the server")
        }
        try await scene.offline { client async throws in
            let error = await #expect(throws: RooftopError.self) { try await scene.top(client).find(policy: .localOnly) }
            #expect(error?.code == .notCached)
        }
        try await scene.online { client async throws in
            let stored = try await scene.top(client).find(policy: .remoteAndStore)
            #expect(stored.objectIds == scene.ids(100, 90, 80) && !stored.fromCache)
        }
        let newest = try await scene.add(110)
        try await scene.online { client async throws in
            let cached = try await scene.top(client).find(policy: .localOnly)
            #expect(cached.objectIds == scene.ids(100, 90, 80), "the server's new score stays unseen")
            #expect(cached.totalCount == 10)
            #expect(cached.fromCache)
            #expect(!cached.objectIds.contains(newest))
        }
        try await scene.offline { client async throws in
            let cached = try await scene.top(client).find(policy: .localOnly)
            #expect(cached.objectIds == scene.ids(100, 90, 80))
            #expect(cached.totalCount == 10 && cached.fromCache)
            #expect(try await scene.top(client).count(policy: .localOnly) == 10)
            #expect(try cached.objects.map { try #require($0.int("score")) } == [100, 90, 80])
            let other = await #expect(throws: RooftopError.self) {
                try await scene.top(client).offset(3).find(policy: .localOnly)
            }
            #expect(other?.code == .notCached, "another page is another query")
        }
    }

    @Test("localAndRemote yields the cached result, then the server's; down, the cached one and the error")
    func localAndRemote() async throws {
        let (server, api) = try SharedServer.require()
        var scene = try await ClientScoreScene.make(server, api)
        try await scene.online { client async throws in
            var fresh: [FetchResult] = []
            for try await result in scene.top(client).results(policy: .localAndRemote) { fresh.append(result) }
            #expect(fresh.map(\.fromCache) == [false], "nothing cached: only the server's result")
            #expect(fresh.first?.objectIds == scene.ids(100, 90, 80))
            _ = try await scene.top(client).find(policy: .remoteAndStore)
        }
        try await scene.add(110)
        try await scene.online { client async throws in
            var results: [FetchResult] = []
            for try await result in scene.top(client).results(policy: .localAndRemote) { results.append(result) }
            #expect(results.map(\.fromCache) == [true, false])
            #expect(results.first?.objectIds == scene.ids(100, 90, 80))
            #expect(results.first?.totalCount == 10)
            #expect(results.last?.objectIds == scene.ids(110, 100, 90))
            #expect(results.last?.totalCount == 11)
            let cached = try #require(results.first?.objects.first)
            let remote = try #require(results.last?.objects[1])
            #expect(cached === remote, "one live instance per object across both results")
            let found = try await scene.top(client).find(policy: .localAndRemote)
            #expect(found.objectIds == scene.ids(110, 100, 90) && !found.fromCache, "find returns the server's result")
        }
        try await scene.offline { client async throws in
            var results: [FetchResult] = []
            let error = await #expect(throws: RooftopError.self) {
                for try await result in scene.top(client).results(policy: .localAndRemote) { results.append(result) }
            }
            #expect(error?.code == .noConnection)
            #expect(results.map(\.fromCache) == [true])
            #expect(results.first?.objectIds == scene.ids(100, 90, 80), "localAndRemote does not store")
            var uncached: [FetchResult] = []
            let second = await #expect(throws: RooftopError.self) {
                for try await result in scene.top(client).limit(2).results(policy: .localAndRemote) {
                    uncached.append(result)
                }
            }
            #expect(second?.code == .noConnection)
            #expect(uncached.isEmpty, "nothing cached and no server: no result at all")
        }
    }

    @Test("localOrRemote reads the cache when there is one, otherwise the server, never both")
    func localOrRemote() async throws {
        let (server, api) = try SharedServer.require()
        var scene = try await ClientScoreScene.make(server, api)
        try await scene.online { client async throws in
            let first = try await scene.top(client).find(policy: .localOrRemote)
            #expect(first.objectIds == scene.ids(100, 90, 80) && !first.fromCache)
            let error = await #expect(throws: RooftopError.self) { try await scene.top(client).find(policy: .localOnly) }
            #expect(error?.code == .notCached, "localOrRemote does not store the server's result")
            _ = try await scene.top(client).find(policy: .remoteAndStore)
        }
        try await scene.add(110)
        try await scene.online { client async throws in
            var results: [FetchResult] = []
            for try await result in scene.top(client).results(policy: .localOrRemote) { results.append(result) }
            #expect(results.count == 1)
            #expect(results.first?.objectIds == scene.ids(100, 90, 80) && results.first?.fromCache == true)
            #expect(try await scene.top(client).count(policy: .localOrRemote) == 10, "the cached count")
            let uncached = try await scene.top(client).limit(2).find(policy: .localOrRemote)
            #expect(uncached.objectIds == scene.ids(110, 100) && !uncached.fromCache)
            #expect(uncached.totalCount == 11)
        }
        try await scene.offline { client async throws in
            let cached = try await scene.top(client).find(policy: .localOrRemote)
            #expect(cached.objectIds == scene.ids(100, 90, 80) && cached.fromCache)
            let error = await #expect(throws: RooftopError.self) {
                try await scene.top(client).limit(2).find(policy: .localOrRemote)
            }
            #expect(error?.code == .noConnection)
        }
    }

    @Test("remoteAndStore replaces the query's cache: an object deleted on the server leaves it")
    func remoteAndStoreReplaces() async throws {
        let (server, api) = try SharedServer.require()
        let scene = try await ClientScoreScene.make(server, api)
        try await scene.online { client async throws in
            let stored = try await scene.top(client).find(policy: .remoteAndStore)
            #expect(stored.objectIds == scene.ids(100, 90, 80))
            let labels = try #require(stored.objects.first).pinLabels()
            #expect(labels.contains { $0.hasPrefix("_query:") }, "cached objects are held by the query's label: \(labels)")
        }
        try await scene.delete(90)
        try await scene.online { client async throws in
            let stale = try await scene.top(client).find(policy: .localOnly)
            #expect(stale.objectIds == scene.ids(100, 90, 80), "the cache is stale until stored again")
            let stored = try await scene.top(client).find(policy: .remoteAndStore)
            #expect(stored.objectIds == scene.ids(100, 80, 70))
            #expect(stored.totalCount == 9)
            let stored90 = try await client.query(scene.className).fromLocalDatastore().find()
            #expect(stored90.idSet == Set(scene.ids(100, 80, 70)), "the deleted object is no longer stored")
        }
        try await scene.offline { client async throws in
            let cached = try await scene.top(client).find(policy: .localOnly)
            #expect(cached.objectIds == scene.ids(100, 80, 70))
            #expect(cached.totalCount == 9)
            let missing = await #expect(throws: RooftopError.self) {
                try await client.query(scene.className).fromLocalDatastore().getObject(scene.ids(90)[0])
            }
            #expect(missing?.code == .notFound)
        }
    }

    @Test("remoteElseLocal reads the server, falls back to the cache when down, and never hides a refusal")
    func remoteElseLocal() async throws {
        let (server, api) = try SharedServer.require()
        var scene = try await ClientScoreScene.make(server, api)
        try await scene.online { client async throws in
            let first = try await scene.top(client).find(policy: .remoteElseLocal)
            #expect(first.objectIds == scene.ids(100, 90, 80) && !first.fromCache)
            _ = try await scene.top(client).find(policy: .remoteAndStore)
        }
        try await scene.add(110)
        try await scene.online { client async throws in
            let fresh = try await scene.top(client).find(policy: .remoteElseLocal)
            #expect(fresh.objectIds == scene.ids(110, 100, 90) && !fresh.fromCache)
            #expect(try await scene.top(client).count(policy: .remoteElseLocal) == 11)
        }
        try await scene.offline { client async throws in
            let fallback = try await scene.top(client).find(policy: .remoteElseLocal)
            #expect(fallback.objectIds == scene.ids(100, 90, 80) && fallback.fromCache)
            #expect(try await scene.top(client).count(policy: .remoteElseLocal) == 10)
            let error = await #expect(throws: RooftopError.self) {
                try await scene.top(client).limit(2).find(policy: .remoteElseLocal)
            }
            #expect(error?.code == .noConnection, "nothing cached: the connectivity error")
        }
        var permissions = ClassPermissions.default
        permissions.find = .nobody
        try await api.setPermissions(permissions, of: scene.className)
        try await scene.online { client async throws in
            let error = await #expect(throws: RooftopError.self) { try await scene.top(client).find(policy: .remoteElseLocal) }
            #expect(error?.code == .disallowed, "a refusal is thrown, not answered from the cache")
        }
    }

    @Test("a cached result is evaluated again locally: unsaved and queued changes show, non-matches drop out")
    func cachedResultsReadLocalChanges() async throws {
        let (server, api) = try SharedServer.require()
        let scene = try await ClientScoreScene.make(server, api)
        try await scene.online { client async throws in
            let high = client.query(scene.className).where(Field("score") >= 50).order(by: "score", descending: true).limit(3)
            let stored = try await high.find(policy: .remoteAndStore)
            #expect(stored.objectIds == scene.ids(100, 90, 80) && stored.totalCount == 6)
            let ninety = try #require(stored.objects.dropFirst().first)
            ninety["score"] = 5
            let unsaved = try await high.find(policy: .localOnly)
            #expect(unsaved.objectIds == scene.ids(100, 80), "an unsaved change moves the object out of the result")
            #expect(unsaved.totalCount == 5)
            ninety.revert()
            let eighty = try #require(stored.objects.last)
            eighty["score"] = 95
            try await eighty.saveEventually()
            let queued = try await high.find(policy: .localOnly)
            #expect(queued.objectIds == scene.ids(100, 80, 90), "a queued change reorders the cached result")
            #expect(queued.objects[1].int("score") == 95)
            try await client.outbox.waitUntilIdle()
            #expect(try await high.find().objectIds == scene.ids(100, 80, 90), "the server agrees once it is sent")
        }
    }

    @Test("paging by limit and offset against the server, each page cached on its own")
    func paging() async throws {
        let (server, api) = try SharedServer.require()
        let scene = try await ClientScoreScene.make(server, api)
        let all = scene.ids(100, 90, 80, 70, 60, 50, 40, 30, 20, 10)
        try await scene.online { client async throws in
            let query = client.query(scene.className).order(by: "score", descending: true).limit(4)
            var seen: [String] = []
            for offset in [0, 4, 8] {
                let page = try await query.offset(offset).find(policy: .remoteAndStore)
                #expect(page.totalCount == 10)
                #expect(page.objects.count == min(4, 10 - offset))
                seen += page.objectIds
            }
            #expect(seen == all)
            let beyond = try await query.offset(12).find()
            #expect(beyond.objects.isEmpty && beyond.totalCount == 10)
            let text = try client.query(scene.className).text("where score >= ? order by score limit 2 offset 1", [50])
            let middle = try await text.find()
            #expect(middle.objectIds == scene.ids(60, 70))
            #expect(middle.totalCount == 6)
            #expect(try await text.count() == 6, "count ignores the page")
        }
        try await scene.offline { client async throws in
            let query = client.query(scene.className).order(by: "score", descending: true).limit(4)
            let second = try await query.offset(4).find(policy: .localOnly)
            #expect(second.objectIds == Array(all[4..<8]))
            #expect(second.totalCount == 10)
            let last = try await query.offset(8).find(policy: .localOnly)
            #expect(last.objectIds == Array(all[8...]))
        }
    }
}
