import Foundation
import RooftopShared
import Testing

@testable import Rooftop
import RooftopTestSupport

/// Every fetch policy of Backbeam's SDK (and remoteElseLocal) with the server up and down.
@Suite("Fetch policies", .timeLimit(.minutes(5)))
struct FetchPolicyTests {
    /// Scores 10, 20, ... 100 (`s1` ... `s10`) on `server`, and a client of it (signed out).
    private func scores(_ server: RealSyncServer) async throws -> (RooftopClient, RooftopQuery) {
        for index in 1...10 { try await server.put("GameScore", "s\(index)", ["score": .int(Int64(index * 10))]) }
        let client = try server.client()
        let top = client.query("GameScore").order(by: "score", descending: true).limit(3)
        return (client, top)
    }

    @Test("remoteOnly (the default) reads the server and never the cache")
    func remoteOnly() async throws {
        try await withRealServer { server in
            let (_, top) = try await scores(server)
            let result = try await top.find()
            #expect(result.objectIds == ["s10", "s9", "s8"])
            #expect(result.totalCount == 10 && !result.fromCache)
            _ = try await top.find(policy: .remoteAndStore)
            server.isOnline = false
            let error = await #expect(throws: RooftopError.self) { try await top.find(policy: .remoteOnly) }
            #expect(error?.code == .noConnection, "a cached result does not help remoteOnly")
        }
    }

    @Test("localOnly fails with notCached until the query is cached, and never uses the network")
    func localOnly() async throws {
        try await withRealServer { server in
            let (_, top) = try await scores(server)
            let error = await #expect(throws: RooftopError.self) { try await top.find(policy: .localOnly) }
            #expect(error?.code == .notCached)
            #expect(server.requestCount == 0)
            _ = try await top.find(policy: .remoteAndStore)
            server.isOnline = false
            let cached = try await top.find(policy: .localOnly)
            #expect(cached.objectIds == ["s10", "s9", "s8"])
            #expect(cached.totalCount == 10 && cached.fromCache)
            #expect(server.requestCount == 1)
            let other = await #expect(throws: RooftopError.self) { try await top.limit(4).find(policy: .localOnly) }
            #expect(other?.code == .notCached, "another page is another query")
        }
    }

    @Test("localAndRemote yields the cache, then the network")
    func localAndRemoteTwice() async throws {
        try await withRealServer { server in
            let (_, top) = try await scores(server)
            _ = try await top.find(policy: .remoteAndStore)
            try await server.put("GameScore", "s11", ["score": 110])
            var results: [FetchResult] = []
            for try await result in top.results(policy: .localAndRemote) { results.append(result) }
            #expect(results.map(\.fromCache) == [true, false])
            #expect(results.first?.objectIds == ["s10", "s9", "s8"])
            #expect(results.last?.objectIds == ["s11", "s10", "s9"])
            #expect(results.last?.totalCount == 11)
            let cachedS9 = try #require(results.first?.objects[1])
            let remoteS9 = try #require(results.last?.objects[2])
            #expect(cachedS9.objectId == "s9" && cachedS9 === remoteS9, "one instance per object across results")
        }
    }

    @Test("localAndRemote yields once without a cache, and fails after the cache when offline")
    func localAndRemoteEdges() async throws {
        try await withRealServer { server in
            let (_, top) = try await scores(server)
            var fresh: [FetchResult] = []
            for try await result in top.results(policy: .localAndRemote) { fresh.append(result) }
            #expect(fresh.map(\.fromCache) == [false])
            _ = try await top.find(policy: .remoteAndStore)
            server.isOnline = false
            var offline: [FetchResult] = []
            let error = await #expect(throws: RooftopError.self) {
                for try await result in top.results(policy: .localAndRemote) { offline.append(result) }
            }
            #expect(error?.code == .noConnection)
            #expect(offline.map(\.fromCache) == [true])
            await #expect(throws: RooftopError.self, "find returns the network's result") {
                try await top.find(policy: .localAndRemote)
            }
        }
    }

    @Test("localOrRemote answers from the cache when there is one, else from the network")
    func localOrRemote() async throws {
        try await withRealServer { server in
            let (_, top) = try await scores(server)
            let first = try await top.find(policy: .localOrRemote)
            #expect(!first.fromCache && first.objectIds == ["s10", "s9", "s8"])
            #expect(server.requestCount == 1)
            _ = try await top.find(policy: .remoteAndStore)
            try await server.put("GameScore", "s11", ["score": 110])
            let second = try await top.find(policy: .localOrRemote)
            #expect(second.fromCache && second.objectIds == ["s10", "s9", "s8"], "the cache, not the newer server state")
            #expect(server.requestCount == 2)
            var once: [FetchResult] = []
            for try await result in top.results(policy: .localOrRemote) { once.append(result) }
            #expect(once.count == 1 && once.first?.fromCache == true)
        }
    }

    @Test("localOrRemote offline: the cache when there is one, else the connectivity error")
    func localOrRemoteOffline() async throws {
        try await withRealServer { server in
            let (_, top) = try await scores(server)
            server.isOnline = false
            let error = await #expect(throws: RooftopError.self) { try await top.find(policy: .localOrRemote) }
            #expect(error?.code == .noConnection)
            server.isOnline = true
            _ = try await top.find(policy: .remoteAndStore)
            server.isOnline = false
            let cached = try await top.find(policy: .localOrRemote)
            #expect(cached.fromCache && cached.objectIds == ["s10", "s9", "s8"])
        }
    }

    @Test("remoteAndStore offline fails and keeps the previous cached result")
    func remoteAndStoreOffline() async throws {
        try await withRealServer { server in
            let (_, top) = try await scores(server)
            _ = try await top.find(policy: .remoteAndStore)
            server.isOnline = false
            let error = await #expect(throws: RooftopError.self) { try await top.find(policy: .remoteAndStore) }
            #expect(error?.code == .noConnection)
            #expect(try await top.find(policy: .localOnly).objectIds == ["s10", "s9", "s8"])
        }
    }

    @Test("stopping the iteration of results cancels the request")
    func resultsCancellation() async throws {
        try await withRealServer { server in
            let (_, top) = try await scores(server)
            server.stall(true)
            let consumer = Task {
                var received = 0
                for try await _ in top.results() { received += 1 }
                return received
            }
            try await TestWait.until("the request is made") { server.requestCount == 1 }
            consumer.cancel()
            try await TestWait.until("the request is cancelled") { server.cancelledCount == 1 }
            #expect(try await consumer.value == 0, "the iteration ended without a result")
        }
    }

    @Test("remoteAndStore replaces the cached result: new objects pinned, dropped ones collected")
    func remoteAndStoreReplaces() async throws {
        try await withRealServer { server in
            let (client, top) = try await scores(server)
            let stored = try await top.find(policy: .remoteAndStore)
            #expect(!stored.fromCache)
            let hash = try QueryCacheKey.hash(top.query, in: .app)
            let label = LocalStore.queryLabel(hash)
            #expect(
                try Set(client.core.store.objects(scope: client.core.scope, pinnedWith: label).map(\.key.objectId)) == ["s10", "s9", "s8"])
            try await server.put("GameScore", "s11", ["score": 110])
            try await server.put("GameScore", "s9", ["score": 5])
            try await server.put("GameScore", "s8", ["score": 6])
            try await client.object("GameScore", id: "s8").pin(label: "Mine")
            _ = try await top.find(policy: .remoteAndStore)
            #expect(
                try client.core.store.queryCache(scope: client.core.scope, hash: hash)?.objects.map(\.objectId) == ["s11", "s10", "s7"])
            #expect(
                try Set(client.core.store.objects(scope: client.core.scope, pinnedWith: label).map(\.key.objectId)) == [
                    "s11", "s10", "s7",
                ])
            let s9 = ObjectKey(datastore: .app, className: "GameScore", objectId: "s9")
            let s8 = ObjectKey(datastore: .app, className: "GameScore", objectId: "s8")
            #expect(try client.core.store.object(s9, scope: client.core.scope) == nil, "no longer cached and held by nothing else")
            #expect(try client.core.store.object(s8, scope: client.core.scope) != nil, "no longer cached but pinned with another label")
            server.isOnline = false
            #expect(try await top.find(policy: .localOnly).objectIds == ["s11", "s10", "s7"])
        }
    }

    @Test("remoteElseLocal falls back to the cache on connectivity errors only")
    func remoteElseLocal() async throws {
        try await withRealServer { server in
            let (_, top) = try await scores(server)
            server.isOnline = false
            let uncached = await #expect(throws: RooftopError.self) { try await top.find(policy: .remoteElseLocal) }
            #expect(uncached?.code == .noConnection, "nothing cached: the connectivity error")
            server.isOnline = true
            #expect(try await !top.find(policy: .remoteElseLocal).fromCache)
            _ = try await top.find(policy: .remoteAndStore)
            for code in [RooftopError.Code.noConnection, .timeout, .network] {
                server.fail(with: RooftopError(code, "down"))
                let result = try await top.find(policy: .remoteElseLocal)
                #expect(result.fromCache && result.objectIds == ["s10", "s9", "s8"], "falls back on \(code)")
                #expect(try await top.count(policy: .remoteElseLocal) == 10)
            }
            for code in [RooftopError.Code.server, .disallowed, .auth] {
                server.fail(with: RooftopError(code, "refused"))
                let error = await #expect(throws: RooftopError.self) { try await top.find(policy: .remoteElseLocal) }
                #expect(error?.code == code, "no fallback on \(code)")
            }
        }
    }

    @Test("a cached result is evaluated again: local changes show, non-matching objects drop out")
    func cachedResultSeesLocalChanges() async throws {
        try await withRealServer { server in
            let (client, _) = try await scores(server)
            let high = client.query("GameScore").where(Field("score") >= 50).order(by: "score", descending: true).limit(4)
            let stored = try await high.find(policy: .remoteAndStore)
            #expect(stored.objectIds == ["s10", "s9", "s8", "s7"] && stored.totalCount == 6)
            server.isOnline = false
            let s9 = try #require(stored.objects.first { $0.objectId == "s9" })
            s9["score"] = 1
            stored.objects[0]["score"] = 75
            let cached = try await high.find(policy: .localOnly)
            #expect(cached.objectIds == ["s8", "s10", "s7"], "re-ordered by the unsaved score, s9 no longer matches")
            #expect(cached.totalCount == 5)
            s9.revert()
            #expect(try await high.find(policy: .localOnly).objectIds == ["s9", "s8", "s10", "s7"])
            #expect(try await high.count(policy: .localOnly) == 6)
        }
    }

    @Test("paging: each page has its total count, and pages are cached separately")
    func paging() async throws {
        try await withRealServer { server in
            let (client, _) = try await scores(server)
            let byScore = client.query("GameScore").order(by: "score")
            var pages: [[String]] = []
            for offset in stride(from: 0, to: 10, by: 4) {
                let page = try await byScore.limit(4).offset(offset).find(policy: .remoteAndStore)
                #expect(page.totalCount == 10)
                pages.append(page.objectIds)
            }
            #expect(pages == [["s1", "s2", "s3", "s4"], ["s5", "s6", "s7", "s8"], ["s9", "s10"]])
            server.isOnline = false
            let second = try await byScore.limit(4).offset(4).find(policy: .localOnly)
            #expect(second.objectIds == ["s5", "s6", "s7", "s8"], "the cached page is not skipped again")
            #expect(second.totalCount == 10 && second.fromCache)
        }
    }

    @Test("count follows the policy")
    func count() async throws {
        try await withRealServer { server in
            let (_, top) = try await scores(server)
            let over50 = top.where(Field("score") > 50)
            #expect(try await over50.count() == 5)
            await #expect(throws: RooftopError.self) { try await over50.count(policy: .localOnly) }
            _ = try await over50.find(policy: .remoteAndStore)
            try await server.put("GameScore", "s11", ["score": 110])
            #expect(try await over50.count(policy: .localOrRemote) == 5)
            #expect(try await over50.count(policy: .remoteOnly) == 6)
            server.isOnline = false
            #expect(try await over50.count(policy: .localOnly) == 5)
        }
    }

    @Test("first returns the first result or nil")
    func first() async throws {
        try await withRealServer { server in
            let (_, top) = try await scores(server)
            #expect(try await top.first()?.objectId == "s10")
            #expect(try await top.where(Field("score") > 1000).first() == nil)
        }
    }
}
