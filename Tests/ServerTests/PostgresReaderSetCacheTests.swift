import RooftopTestSupport
import Testing

@testable import RooftopServer

/// The process's cache of committed reader sets stays within its capacity at ten times as many
/// sets, and answers only what it was told.
@Suite("PostgreSQL: reader-set cache")
struct PostgresReaderSetCacheTests {
    @Test("ten times its capacity: never more than the capacity kept, every kept ID the one given")
    func boundedAtTenTimes() {
        let cache = PostgresReaderSetCache(capacity: 64)
        var kept: [String: Int64] = [:]
        for index in 0..<640 {
            let text = #"["u\#(index)"]"#
            cache.keep(text, Int64(index))
            kept[text] = Int64(index)
            #expect(cache.count <= 64)
            #expect(cache.id(of: text) == Int64(index))
        }
        var found = 0
        for (text, id) in kept {
            if let cached = cache.id(of: text) {
                #expect(cached == id)
                found += 1
            }
        }
        #expect(found == cache.count && found > 0)
        #expect(cache.id(of: #"["never"]"#) == nil)
        // Keeping a set already kept does not empty a full cache.
        let before = cache.count
        if let (text, id) = kept.first(where: { cache.id(of: $0.key) != nil }) {
            cache.keep(text, id)
            #expect(cache.count == before)
        }
    }

    @Test("an entry is forgotten once its time to live has passed")
    func timeToLive() async throws {
        let cache = PostgresReaderSetCache(capacity: 8, timeToLive: .milliseconds(50))
        cache.keep(#"["u1"]"#, 7)
        try await TestWait.until("the entry expires") { cache.id(of: #"["u1"]"#) == nil }
        #expect(cache.count == 0, "an expired entry is removed when it is asked for")
        cache.keep(#"["u1"]"#, 9)
        let long = PostgresReaderSetCache(capacity: 8, timeToLive: .seconds(3600))
        long.keep(#"["u1"]"#, 9)
        #expect(long.id(of: #"["u1"]"#) == 9)
    }
}
