import RooftopSQL
import RooftopShared
import Synchronization
import Testing

@testable import RooftopServer
import RooftopTestSupport

/// A page read order first (walking an index in the query's order, each object tested) holds
/// what one read matches first does, and the SQLite storage picks between them by the count of
/// the matches (``SQLPagePlan``).
///
/// Replay a failure with `ROOFTOP_TEST_SEEDS=<seed> swift test --filter SQLPagePlan`.
@Suite("Query pages read order first or matches first")
struct SQLPagePlanTests {
    /// Random queries per dataset, and as many again of the shape a field's range walks.
    static let queriesPerDataset = 200

    @Test("order-first pages agree with QueryEvaluator.run, walking object IDs and a field's range")
    func orderFirstAgrees() async throws {
        let compiler = SQLQueryCompiler(dialect: .sqlite, layout: .serverSQLite)
        var walked: [SQLQueryCompiler.WalkedOrder: Int] = [:]
        for seed in TestSeeds.seeds(fixed: [5, 6, 7]) {
            try await withStorage(SQLiteFixture.factory) { storage, _ in
                let sqlite = try #require(storage as? SQLiteStorage)
                sqlite.pagePlan.withLock { $0 = .orderFirst }
                var rng = SeededGenerator(seed: seed)
                let dataset = try await DifferentialDataset.write(into: storage, using: &rng)
                var mismatches = 0
                for index in 0..<(2 * Self.queriesPerDataset) {
                    let query = index % 2 == 0 ? DifferentialQueries.query(&rng) : Self.walkedRange(&rng)
                    try query.validate()
                    if let order = compiler.walkedOrder(of: query) { walked[Self.kind(order), default: 0] += 1 }
                    let readers = rng.pick(DifferentialDataset.readerSets)
                    let outcome = try await DifferentialCheck.compare(query, readers: readers, dataset: dataset, storage: storage)
                    if let report = outcome.mismatch {
                        mismatches += 1
                        Issue.record("seed \(seed), query #\(index): \(report)")
                        if mismatches >= 5 { break }
                    }
                }
                // Every index row the writes made is in its object's partition (a row left in
                // partition 0 is one no condition finds).
                let misplaced = try await sqlite.pool.read { db in
                    try Int.fetchOne(
                        db,
                        sql: """
                            SELECT (SELECT count(*) FROM object_fields WHERE partition = 0)
                                + (SELECT count(*) FROM object_elements WHERE partition = 0)
                                + (SELECT count(*) FROM object_fields f JOIN objects o ON o.key = f.object_key
                                   JOIN object_partitions p ON p.key = f.partition
                                   WHERE p.datastore_key != o.datastore_key OR p.class_name != o.class_name)
                            """) ?? -1
                }
                #expect(misplaced == 0, "seed \(seed): \(misplaced) index rows outside their object's partition")
            }
        }
        // Both walks were compared, often.
        #expect(walked[.objectId, default: 0] > Self.queriesPerDataset / 2, "\(walked)")
        #expect(walked[.field("score"), default: 0] > Self.queriesPerDataset / 2, "\(walked)")
    }

    /// `.field("score")` for every walked field (the counts above group by kind).
    private static func kind(_ order: SQLQueryCompiler.WalkedOrder) -> SQLQueryCompiler.WalkedOrder {
        if case .field = order { return .field("score") }
        return order
    }

    /// A query ordered by a field with comparisons of that field at its top level (what a walk
    /// of the field's range reads), mostly with other conditions and order keys after it.
    static func walkedRange(_ rng: inout SeededGenerator) -> Query {
        let field = rng.pick(["score", "n", "name", "when", "data", "tags"])
        var operands: [QueryPredicate] = (0..<rng.int(1...2)).map { _ in
            .comparison(
                field: field, op: rng.pick([.less, .lessOrEqual, .greater, .greaterOrEqual, .equal]),
                value: DifferentialQueries.value(for: field, &rng))
        }
        if rng.chance(60) { operands.append(DifferentialQueries.predicate(&rng, depth: 1)) }
        operands.shuffle(using: &rng)
        let order =
            [QueryOrder(field, descending: rng.chance(50))]
            + (0..<rng.pick([0, 0, 1, 2])).map { _ in
                QueryOrder(rng.pick(DifferentialQueries.fields), descending: rng.chance(50))
            }
        return Query(
            className: rng.chance(85) ? "T" : "U", predicate: operands.count == 1 ? operands[0] : .and(operands),
            order: order, limit: rng.chance(30) ? nil : rng.int(0...15), offset: rng.chance(60) ? 0 : rng.int(0...10))
    }

    @Test("the cheaper plan by the counts: a walk where matches are many, the matches where they are few")
    func cheapestByCounts() throws {
        let compiler = SQLQueryCompiler(dialect: .sqlite, layout: .serverSQLite)
        let equal = Query(className: "T", predicate: .comparison(field: "category", op: .equal, value: .string("a")), limit: 100)
        let range = Query(
            className: "T",
            predicate: .and([
                .comparison(field: "score", op: .greaterOrEqual, value: .int(10)),
                .comparison(field: "score", op: .less, value: .int(20)),
            ]),
            order: [QueryOrder("score", descending: true)], limit: 50)
        // (query, matches, scope's size, whether the page is read order first)
        let cases: [(Query, Int, Int?, Bool)] = [
            (equal, 5_000, 100_000, true),  // 2,000 objects walked, not 5,000 sorted
            (equal, 500, 100_000, false),  // 20,000 walked: read the 500
            (equal, 5_000, Int.max, false),  // a size that overflows the estimate: no walk
            (equal, 5_000, nil, false),  // a store that does not say its size: no walk in ID order
            (equal, 0, 100_000, false),  // no match: no page read at all (below)
            (range, 50 * SQLQueryRunner<Int>.fieldWalkFactor, nil, true),
            (range, 50 * SQLQueryRunner<Int>.fieldWalkFactor - 1, nil, false),
        ]
        for (query, matches, size, walks) in cases {
            for abandoned in [false, true] {
                let selects = Mutex<[String]>([])
                let budgets = Mutex<[Int]>([])
                var runner = SQLQueryRunner<Int>(
                    compiler: compiler, scope: .datastore(1), unindexedFields: { [] },
                    objects: { select in
                        selects.withLock { $0.append(select.sql) }
                        return []
                    },
                    snapshot: { _ in throw RooftopError(.internal, "not read") },
                    count: { _ in matches })
                runner.pagePlan = .cheapest
                runner.scopeSize = size.map { size in { size } }
                runner.boundedObjects = { select, budget in
                    selects.withLock { $0.append(select.sql) }
                    budgets.withLock { $0.append(budget) }
                    return abandoned ? nil : []
                }
                let page = try runner.find(query, readers: ["*"], limit: query.limit ?? 0)
                #expect(page.totalCount == matches)
                let read = selects.withLock { $0 }
                guard matches > 0 else {
                    #expect(read.isEmpty, "a page past every match is read: \(read)")
                    continue
                }
                let limit = query.limit ?? 0
                let walk = try #require(compiler.orderFirst(query, scope: .datastore(1), readers: ["*"], limit: limit)?.sql)
                let matchesFirst = compiler.select(query, scope: .datastore(1), readers: ["*"], limit: limit).sql
                // A walk is bounded by the matches the other plan reads; abandoned, that plan reads the page.
                let expected = walks ? (abandoned ? [walk, matchesFirst] : [walk]) : [matchesFirst]
                #expect(read == expected, "\(matches) matches of \(size.map(String.init) ?? "?"): \(read)")
                #expect(budgets.withLock { $0 } == (walks ? [matches] : []))
            }
        }
        // A condition read from the documents (no rows of the field): not counted first, where a
        // page that is not full needs no count, and the count would read every document again.
        var rowless = compiler
        rowless.indexedFields = ["category", "score"]
        let counts = Mutex(0)
        var documents = SQLQueryRunner<Int>(
            compiler: rowless, scope: .datastore(1), unindexedFields: { [] }, objects: { _ in [1, 2] },
            snapshot: { _ in throw RooftopError(.internal, "not read") },
            count: { _ in counts.withLock { $0 += 1 }; return 2 })
        documents.pagePlan = .cheapest
        documents.scopeSize = { 100_000 }
        documents.boundedObjects = { _, _ in Issue.record("walked"); return [] }
        let other = Query(className: "T", predicate: .comparison(field: "other", op: .equal, value: .int(1)), limit: 100)
        #expect(!rowless.readsIndexesOnly(other) && rowless.readsIndexesOnly(equal))
        // A built-in column without rows: `objectId` is in the index every object has; `createdAt`
        // is stored after the document, read with it.
        #expect(rowless.readsIndexesOnly(Query(className: "T", predicate: .comparison(field: "objectId", op: .equal, value: "a"))))
        #expect(!rowless.readsIndexesOnly(Query(className: "T", predicate: .comparison(field: "createdAt", op: .greater, value: .int(0)))))
        #expect(try documents.find(other, readers: ["*"], limit: 100).totalCount == 2)
        #expect(counts.withLock { $0 } == 0)

        // A store that cannot bound a walk does not walk.
        var unbounded = SQLQueryRunner<Int>(
            compiler: compiler, scope: .datastore(1), unindexedFields: { [] }, objects: { _ in [] },
            snapshot: { _ in throw RooftopError(.internal, "not read") }, count: { _ in 5_000 })
        unbounded.pagePlan = .cheapest
        unbounded.scopeSize = { 100_000 }
        let selects = Mutex<[String]>([])
        unbounded.objects = { select in
            selects.withLock { $0.append(select.sql) }
            return []
        }
        _ = try unbounded.find(equal, readers: ["*"], limit: 100)
        #expect(selects.withLock { $0 } == [compiler.select(equal, scope: .datastore(1), readers: ["*"], limit: 100).sql])
    }

    @Test("a walk whose matches all lie at the end of its order gives up at its bound: the matches are read first")
    func skewedWalkGivesUp() async throws {
        try await withStorage(SQLiteFixture.factory) { storage, _ in
            let sqlite = try #require(storage as? SQLiteStorage)
            let datastore = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil)
            // IDs in creation order (as generated IDs are): the last 600 of 5,000 are "late";
            // every eighth is "spread", evenly over the order.
            try await RawObjects.insert(
                sqlite, datastoreKey: datastore.key, className: "T", count: 5000,
                objectId: { "T-" + String(repeating: "0", count: 5 - String($0).count) + String($0) }
            ) {
                ["category": .string($0 > 4400 ? "late" : "early"), "spread": .bool($0 % 8 == 0)]
            }
            try await sqlite.pool.write { db in
                try db.execute(sql: "UPDATE datastores SET record_count = 5000 WHERE key = ?", arguments: [datastore.key])
            }
            func page(_ predicate: QueryPredicate) async throws -> (ids: [String], total: Int, walks: (completed: Int, abandoned: Int)) {
                let before = sqlite.pageWalks.withLock { $0 }
                let page = try await storage.find(
                    Query(className: "T", predicate: predicate, limit: 50), datastoreKey: datastore.key,
                    readers: nil, limit: 50)
                let after = sqlite.pageWalks.withLock { $0 }
                return (page.objects.map(\.objectId), page.totalCount, (after.completed - before.completed, after.abandoned - before.abandoned))
            }
            // 600 matches in 5,000: the counts say a walk reads about 420 objects; it would read 4,450.
            let late = try await page(.comparison(field: "category", op: .equal, value: "late"))
            #expect(late.total == 600)
            #expect(late.ids == (4401...4450).map { "T-0\($0)" })
            #expect(late.walks == (0, 1), "the walk gives up: \(late.walks)")
            // Spread evenly, the walk reads what the counts say, and ends.
            let spread = try await page(.comparison(field: "spread", op: .equal, value: true))
            #expect(spread.total == 625)
            #expect(spread.ids == (1...50).map { "T-" + String(repeating: "0", count: 5 - String($0 * 8).count) + String($0 * 8) })
            #expect(spread.walks == (1, 0), "the walk ends at the page's end: \(spread.walks)")
        }
    }
}

/// The plans SQLite makes for both kinds of page, at a scale where the choice shows: 5,000 objects
/// of 1 KB in a datastore with others beside them.
@Suite("Query pages: SQLite's plans")
struct SQLPagePlanShapeTests {
    @Test("an order-first page walks its index in order and stops; matches first sorts the matches")
    func plans() async throws {
        try await withStorage(SQLiteFixture.factory) { storage, _ in
            let sqlite = try #require(storage as? SQLiteStorage)
            let main = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil)
            let other = try await storage.openOrCreateDatastore(id: .app, ownerId: nil, title: nil)
            for (datastore, first) in [(main, Int64(1_000_001)), (other, Int64(2_000_001))] {
                try await RawObjects.insert(sqlite, datastoreKey: datastore.key, className: "T", firstKey: first, count: 5000) {
                    ["category": .string("c\($0 % 20)"), "score": .int(Int64($0 * 7 % 5000))]
                }
            }
            let compiler = try await RawObjects.compiler(sqlite, datastoreKey: main.key, className: "T")
            let scope = SQLFragment.datastore(main.key)
            let equal = Query(className: "T", predicate: .comparison(field: "category", op: .equal, value: "c7"), limit: 100)
            let range = Query(
                className: "T",
                predicate: .and([
                    .comparison(field: "score", op: .greaterOrEqual, value: 1000),
                    .comparison(field: "score", op: .less, value: 2000),
                ]),
                order: [QueryOrder("score", descending: true)], limit: 50)

            // In object ID order: the objects' own index, no sort.
            let byId = try await RawObjects.plan(sqlite, try #require(compiler.orderFirst(equal, scope: scope, readers: ["*"], limit: 100)))
            #expect(byId.hasPrefix("SEARCH o USING INDEX sqlite_autoindex_objects_1"), "\(byId)")
            #expect(!byId.contains("TEMP B-TREE"), "\(byId)")
            // In the range of a field: its rows in the index's order, ties on the score sorted alone.
            let byScore = try await RawObjects.plan(sqlite, try #require(compiler.orderFirst(range, scope: scope, readers: ["*"], limit: 50)))
            #expect(byScore.hasPrefix("SEARCH w USING COVERING INDEX object_fields_by_value"), "\(byScore)")
            #expect(byScore.contains("USE TEMP B-TREE FOR RIGHT PART OF ORDER BY"), "\(byScore)")
            #expect(!byScore.contains("SCAN"), "\(byScore)")
            // Matches first: the matches found by the value index, then sorted.
            let matches = try await RawObjects.plan(sqlite, compiler.select(range, scope: scope, readers: ["*"], limit: 50))
            #expect(matches.contains("USE TEMP B-TREE FOR ORDER BY"), "\(matches)")
        }
    }

    @Test("near within a distance and a box read the value index alone, and find what the evaluator finds")
    func pointPlans() async throws {
        try await withStorage(SQLiteFixture.factory) { storage, _ in
            let sqlite = try #require(storage as? SQLiteStorage)
            let main = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil)
            // 4,000 points in a box of 1°×1°, as the benchmark's, spread evenly.
            let points = try (0..<4000).map { index in
                try GeoPoint(latitude: 40 + Double(index % 63) / 63, longitude: -4 + Double(index * 37 % 4000) / 4000)
            }
            try await RawObjects.insert(sqlite, datastoreKey: main.key, className: "T", count: points.count) {
                ["loc": .geoPoint(points[$0 - 1]), "n": .int(Int64($0))]
            }
            let compiler = try await RawObjects.compiler(sqlite, datastoreKey: main.key, className: "T")
            let scope = SQLFragment.datastore(main.key)
            let center = try GeoPoint(latitude: 40.5, longitude: -3.5)
            let southwest = try GeoPoint(latitude: 40.2, longitude: -3.8)
            let northeast = try GeoPoint(latitude: 40.3, longitude: -3.6)
            let cases: [(QueryPredicate, (GeoPoint) -> Bool)] = [
                (.near(field: "loc", point: center, maxDistanceMeters: 5000), { $0.distanceMeters(to: center) <= 5000 }),
                (
                    .withinBox(field: "loc", southwest: southwest, northeast: northeast),
                    { (40.2...40.3).contains($0.latitude) && (-3.8 ... -3.6).contains($0.longitude) }
                ),
            ]
            for (predicate, holds) in cases {
                let query = Query(className: "T", predicate: predicate, limit: 20)
                let plan = try await RawObjects.plan(sqlite, compiler.select(query, scope: scope, readers: ["*"], limit: 20))
                // The points' keys say it all: no lookup of a row per point of the band.
                #expect(plan.contains("SEARCH f USING COVERING INDEX object_fields_by_value"), "\(plan)")
                let expected = points.filter(holds).count
                #expect(expected > 20)
                #expect(try await storage.count(query, datastoreKey: main.key, readers: nil) == expected, "\(predicate)")
            }
        }
    }
}
