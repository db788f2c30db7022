import Foundation
import RooftopShared
import Testing

@testable import Rooftop

@Suite("Query building, text form and cache keys")
struct QueryBuilderTests {
    @Test("builder methods refine a copy of the shared query")
    func builder() throws {
        let (client, _) = try offlineClient()
        let base = client.query("GameScore")
        let query = base.where(Field("score") > 100).order(by: "score", descending: true).limit(10).offset(20)
            .including("author", "company")
        #expect(
            query.query
                == Query("GameScore").where(Field("score") > 100).order(by: "score", descending: true)
                .limit(10).offset(20).including("author", "company"))
        #expect(base.query == Query("GameScore"), "the original is untouched")
        #expect(query.source == .server && !query.ignoresACLs && query.datastore == .app)
        let local = query.fromLocalDatastore().ignoringACLs()
        #expect(local.source == .localDatastore && local.ignoresACLs && local.isLocal)
        #expect(query.fromPin("HighScores").source == .pin("HighScores"))
        #expect(query.fromPin().source == .pin(LocalStore.defaultLabel))
        #expect(local.fromServer().source == .server)
        let other = try DatastoreID("team-notes")
        #expect(query.in(other).datastore == other)
    }

    @Test("text adds its clauses to the query")
    func textForm() throws {
        let (client, _) = try offlineClient()
        let query = try client.query("GameScore").where(Field("cheatMode") == false)
            .text(
                "where score > ? and playerName = ? order by score desc limit 5 offset 10 include author",
                [100, "Sean"])
        #expect(
            query.query.predicate
                == (Field("cheatMode") == false && (Field("score") > 100 && Field("playerName") == "Sean")))
        #expect(query.query.order == [QueryOrder("score", descending: true)])
        #expect(query.query.limit == 5 && query.query.offset == 10)
        #expect(query.query.includes == [["author"]])
        let kept = try client.query("GameScore").limit(3).offset(6).text("where score > 1")
        #expect(kept.query.limit == 3 && kept.query.offset == 6, "clauses the text lacks keep the query's")
    }

    @Test("a text that does not parse throws invalidQuery with the position")
    func textErrors() throws {
        let (client, _) = try offlineClient()
        let error = #expect(throws: RooftopError.self) { try client.query("GameScore").text("where score >> 3") }
        #expect(error?.code == .invalidQuery)
        #expect(error?.position == 13)
        let count = #expect(throws: RooftopError.self) { try client.query("GameScore").text("where score > ?", []) }
        #expect(count?.code == .invalidQuery && count?.position == 14)
    }

    @Test("cache keys are stable and tell queries and datastores apart")
    func cacheKeys() throws {
        let query = Query("GameScore").where(Field("score") > 100).order(by: "score").limit(10)
        let key = try QueryCacheKey.hash(query, in: .app)
        #expect(key == (try QueryCacheKey.hash(query, in: .app)))
        #expect(key.count == 16 && key.allSatisfy(\.isHexDigit))
        #expect(key != (try QueryCacheKey.hash(query.offset(10), in: .app)), "each page has its own entry")
        #expect(key != (try QueryCacheKey.hash(query, in: try DatastoreID("other"))))
        #expect(key != (try QueryCacheKey.hash(query.including("author"), in: .app)))
        // FNV-1a test vectors.
        #expect(QueryCacheKey.fnv1a([]) == 0xcbf2_9ce4_8422_2325)
        #expect(QueryCacheKey.hex(QueryCacheKey.fnv1a(Array("a".utf8))) == "af63dc4c8601ec8c")
    }
}
