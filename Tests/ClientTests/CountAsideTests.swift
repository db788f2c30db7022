import Foundation
import GRDB
import RooftopSQL
import RooftopSQLite
import RooftopShared
import Synchronization
import Testing
import RooftopTestSupport

@testable import Rooftop

/// A full page's total is counted beside the page, in another read of the same snapshot
/// (``LocalStore/countAside(_:version:)``): the same totals as one read, never a count of another
/// snapshot than the page's, and pages that wait for counts never wait for one another.
@Suite(
    "Local store: a page's total counted beside it", .timeLimit(.minutes(2)),
    // A device of one core counts in the page's read alone.
    .enabled(if: LocalStore.maxCountsAside > 0))
struct CountAsideTests {
    /// A file store holding `count` `Thing`s in `:app` without an account, scored 0..<count,
    /// `score` declared; and its path's files to remove.
    private static func store(count: Int, maximumReaders: Int = 5) throws -> (LocalStore, String) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("aside-\(UUID().uuidString).sqlite").path
        let store = try LocalStore(.file(path: path), maximumReaders: maximumReaders)
        // Each full page takes its count beside it, whichever thread runs first.
        store.countsAsidePatiently.store(true, ordering: .relaxed)
        try store.declareIndexes([["score"]], of: "Thing")
        try store.write(scope: "") { transaction in
            for index in 0..<count { try put(transaction, id: "t\(index)", score: Int64(index)) }
        }
        return (store, path)
    }

    private static func put(_ transaction: StoreTransaction, id: String, score: Int64) throws {
        let key = ObjectKey(datastore: .app, className: "Thing", objectId: id)
        let object = ObjectSnapshot(
            className: "Thing", objectId: id, datastore: .app, fields: ["score": .int(score)], acl: nil, version: 1)
        try transaction.put(key, server: object, local: object, deleted: false, fresh: true)
    }

    /// Runs `body` on a thread of its own (not one of the few Swift's tasks share), and returns
    /// what it returned.
    private static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    private static func remove(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    private static func find(_ store: LocalStore, _ query: Query) throws(RooftopError) -> (ids: [String], total: Int) {
        let page = try store.find(query, scope: "", datastore: .app, pinnedWith: nil, readers: nil, excluding: [])
        return (page.rows.map(\.key.objectId), page.totalCount)
    }

    @Test("full pages of random ranges have the totals one read counts, counted beside them")
    func sameTotals() throws {
        let (store, path) = try Self.store(count: 2_000)
        defer {
            store.close()
            Self.remove(path)
        }
        #expect(store.countsAside)
        var random = SeededGenerator(seed: 11)
        var counted = 0
        for _ in 0..<60 {
            let lower = Int64(random.next() % 2_000)
            let width = Int64(random.next() % 600)
            let predicate = Field("score") >= lower && Field("score") < lower + width
            var query = Query(className: "Thing", predicate: predicate, order: [QueryOrder("score")])
            query.limit = 5
            query.offset = Int(random.next() % 3)
            // The count beside a page that was not full may still be on its way out: a page
            // finding no idle thread counts in its own read.
            let deadline = ContinuousClock.now + .seconds(20)
            while store.countThreads.busy > 0, ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.001) }
            let page = try Self.find(store, query)
            let expected = Int(max(Int64(0), min(lower + width, Int64(2_000)) - lower))
            // The runner counts unless the page is not full and holds the last matches.
            if !(page.ids.count < 5 && (query.offset == 0 || !page.ids.isEmpty)) { counted += 1 }
            #expect(page.total == expected, "\(predicate)")
            let first = Int(lower) + query.offset
            #expect(page.ids == (first..<min(first + 5, Int(lower) + expected)).map { "t\($0)" })
            #expect(try store.count(query, scope: "", datastore: .app, pinnedWith: nil, readers: nil, excluding: []) == expected)
        }
        // Every full page had its total counted beside it (a page that is not full needs none).
        #expect(store.countedAside.load(ordering: .relaxed) == counted)
    }

    @Test("a total read from the counts kept per key is read in the page's own read; a range's beside it")
    func keptCountsStayInTheRead() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("aside-\(UUID().uuidString).sqlite").path
        let store = try LocalStore(.file(path: path))
        defer {
            store.close()
            Self.remove(path)
        }
        store.countsAsidePatiently.store(true, ordering: .relaxed)
        try store.declareIndexes([["category", "score"]], of: "Thing")
        try store.write(scope: "") { transaction in
            for index in 0..<600 {
                let key = ObjectKey(datastore: .app, className: "Thing", objectId: "t\(index)")
                let object = ObjectSnapshot(
                    className: "Thing", objectId: key.objectId, datastore: .app,
                    fields: ["category": .string("c\(index % 3)"), "score": .int(Int64(index))], acl: nil, version: 1)
                try transaction.put(key, server: object, local: object, deleted: false, fresh: true)
            }
        }
        var equal = Query(className: "Thing", predicate: Field("category") == "c1", order: [QueryOrder("score")])
        equal.limit = 5
        for _ in 0..<20 { #expect(try Self.find(store, equal).total == 200) }
        #expect(store.countedAside.load(ordering: .relaxed) == 0)
        var range = Query(
            className: "Thing", predicate: Field("category") == "c1" && Field("score") >= 300, order: [QueryOrder("score")])
        range.limit = 5
        for _ in 0..<20 { #expect(try Self.find(store, range).total == 100) }
        #expect(store.countedAside.load(ordering: .relaxed) == 20)
    }

    @Test("a count beside a page is not taken from a snapshot holding another number of commits")
    func otherSnapshotRefused() async throws {
        let (store, path) = try Self.store(count: 100)
        defer {
            store.close()
            Self.remove(path)
        }
        let count = SQLFragment("SELECT count(*) FROM objects WHERE class_name = ?", [.text("Thing")])
        // The count once its read returned (one not begun when taken would be given up).
        func counted(_ version: Int) async throws -> Int? {
            let aside = try #require(store.startCount(count, version: version))
            let deadline = ContinuousClock.now + .seconds(20)
            while !aside.hasFinished, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(1)) }
            #expect(aside.hasFinished)
            return aside.take(needed: true)
        }
        let before = try #require(store.commits.settled)
        #expect(try await counted(before) == 100)
        try store.write(scope: "") { transaction in try Self.put(transaction, id: "late", score: -1) }
        // The page's read held `before` commits: a count of the store as it is now is refused.
        #expect(try await counted(before) == nil)
        let after = try #require(store.commits.settled)
        #expect(after == before + 1)
        #expect(try await counted(after) == 101)
        // A read's version is the number of commits its snapshot holds.
        #expect(try store.versionedRead { _, version in version } == after)
    }

    @Test("while a writer commits one object at a time, every page's total is its own snapshot's")
    func pageAndTotalAgreeUnderWrites() async throws {
        let (store, path) = try Self.store(count: 1_000)
        defer {
            store.close()
            Self.remove(path)
        }
        // The k-th commit stores one object scored -k: the first of a page in score order tells
        // how many commits its snapshot holds, and the total must be 1,000 more.
        // It writes until the pages are read (at most 20,000 commits). The writer and the readers
        // run on threads of their own, all at once.
        let reading = Atomic<Bool>(true)
        let writer = Task {
            try await Self.onThread { () -> Int in
                var k = 0
                while reading.load(ordering: .relaxed), k < 20_000 {
                    k += 1
                    try store.write(scope: "", durability: .deferred) { transaction in
                        try Self.put(transaction, id: "w\(k)", score: -Int64(k))
                    }
                }
                return k
            }
        }
        var ordered = Query(className: "Thing", predicate: Field("score") < 1_000_000, order: [QueryOrder("score")])
        ordered.limit = 3
        let query = ordered
        // Each reader's pages whose total was not their own snapshot's.
        let readers = (0..<2).map { _ in
            Task {
                try await Self.onThread { () -> [String] in
                    var wrong: [String] = []
                    for _ in 0..<400 {
                        let page = try Self.find(store, query)
                        guard let first = page.ids.first else {
                            wrong.append("an empty page")
                            continue
                        }
                        let commits = first.hasPrefix("w") ? Int(first.dropFirst()) ?? -1 : 0
                        if page.total != 1_000 + commits { wrong.append("first \(first), total \(page.total)") }
                    }
                    return wrong
                }
            }
        }
        for reader in readers {
            let wrong = try await reader.value
            #expect(wrong.isEmpty, "\(wrong.count) pages, e.g. \(wrong.prefix(3))")
        }
        reading.store(false, ordering: .relaxed)
        #expect(try await writer.value > 10)
        #expect(store.countedAside.load(ordering: .relaxed) > 0)
    }

    @Test("many more pages at once than the store has reader connections all answer")
    func morePagesThanConnections() async throws {
        // One reader connection, twelve threads reading pages at once, each of which may start
        // a count beside its page: a page that waited for a count not begun would wait for the
        // one connection, which its own read holds (the suite's time limit ends that).
        let (store, path) = try Self.store(count: 3_000, maximumReaders: 1)
        defer {
            store.close()
            Self.remove(path)
        }
        // As an app's store: a count not begun is given up (waiting for it instead hangs here).
        store.countsAsidePatiently.store(false, ordering: .relaxed)
        let pages = (0..<12).map { thread in
            Task {
                try await Self.onThread { () -> Int in
                    var right = 0
                    for round in 0..<20 {
                        let lower = Int64((thread * 37 + round * 101) % 2_500)
                        var query = Query(
                            className: "Thing", predicate: Field("score") >= lower && Field("score") < lower + 500,
                            order: [QueryOrder("score")])
                        query.limit = 10
                        let page = try Self.find(store, query)
                        if page.total == 500 && page.ids.first == "t\(lower)" { right += 1 }
                    }
                    return right
                }
            }
        }
        for page in pages { #expect(try await page.value == 20) }
    }
}
