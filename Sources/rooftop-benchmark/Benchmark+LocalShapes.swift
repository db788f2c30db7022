import Foundation
import GRDB
import Rooftop
import RooftopSQLite
import RooftopShared

/// One shape of local query: the query the app runs on its local datastore, and the raw SQLite
/// query it becomes on a plain table of the same records with the obvious indexes. Both run with
/// the same parameters, drawn from one seeded stream per shape, and both answers are checked
/// against the data set.
struct LocalQueryShape: Sendable {
    /// One run's parameters: the query's, the raw query's, and how many rows both must answer.
    struct Run: Sendable {
        var values: [Value]
        var raw: [DatabaseValue]
        var expected: Int
    }

    /// The phase names: `client local <name>` and `sqlite <name>` (the first shape keeps the
    /// historical `client local query` / `sqlite query`, so that runs of earlier versions compare).
    var name: String
    /// The local query's text (its predicate only, for a count).
    var text: String
    /// Whether the shape counts (`count()`) instead of finding a page.
    var isCount: Bool
    /// The raw SQLite statement.
    var rawSQL: String
    /// The field an index of the raw table leads with that its statement reads (`nil`: none, a
    /// count of the class). The local query has its counterpart only when a declared index of
    /// the class leads with it (`--indexes`); the report says so beside the ratio otherwise.
    var rawIndexedField: String?
    /// Draws one run.
    var draw: @Sendable (inout SeededGenerator, Dataset) throws -> Run

    var localPhase: String { name == "eq order" ? "client local query" : "client local \(name)" }
    var rawPhase: String { name == "eq order" ? "sqlite query" : "sqlite \(name)" }

    /// The shapes the issue names: equality with order and limit, range, prefix, `or`, list
    /// `contains`, `near` within a distance, and counts of the class and of one category.
    static let all: [LocalQueryShape] = [
        LocalQueryShape(
            name: "eq order", text: "where category = ? order by score desc limit 50", isCount: false,
            rawSQL: "SELECT body FROM query_records WHERE category = ? ORDER BY score DESC LIMIT 50",
            rawIndexedField: "category"
        ) { random, dataset in
            let category = randomCategory(&random)
            return Run(
                values: [.string(category)], raw: [category.databaseValue],
                expected: min(50, dataset.categoryCounts[category] ?? 0))
        },
        LocalQueryShape(
            name: "range", text: "where score >= ? and score < ? order by score limit 50", isCount: false,
            rawSQL: "SELECT body FROM query_records WHERE score >= ? AND score < ? ORDER BY score LIMIT 50",
            rawIndexedField: "score"
        ) { random, dataset in
            scoreRange(&random, dataset, limit: 50)
        },
        LocalQueryShape(
            name: "prefix", text: "where category starts with ? limit 50", isCount: false,
            rawSQL: "SELECT body FROM query_records WHERE category >= ? AND category < ? ORDER BY id LIMIT 50",
            rawIndexedField: "category"
        ) { random, dataset in
            // `cat-0` or `cat-1`: ten categories each, half the records.
            let digit = Int.random(in: 0..<2, using: &random)
            let prefix = "cat-\(digit)"
            let matches = dataset.categoryCounts.filter { $0.key.hasPrefix(prefix) }.values.reduce(0, +)
            return Run(
                values: [.string(prefix)], raw: [prefix.databaseValue, "cat-\(digit + 1)".databaseValue],
                expected: min(50, matches))
        },
        LocalQueryShape(
            name: "or", text: "where category = ? or category = ? order by score desc limit 50", isCount: false,
            rawSQL: "SELECT body FROM query_records WHERE category = ? OR category = ? ORDER BY score DESC LIMIT 50",
            rawIndexedField: "category"
        ) { random, dataset in
            let first = randomCategory(&random)
            let second = randomCategory(&random)
            let matches = Set([first, second]).map { dataset.categoryCounts[$0] ?? 0 }.reduce(0, +)
            return Run(
                values: [.string(first), .string(second)], raw: [first.databaseValue, second.databaseValue],
                expected: min(50, matches))
        },
        LocalQueryShape(
            name: "contains", text: "where tags contains ? limit 50", isCount: false,
            rawSQL: """
                SELECT body FROM query_records WHERE id IN (SELECT id FROM query_tags WHERE tag = ?)
                ORDER BY id LIMIT 50
                """,
            rawIndexedField: "tags"
        ) { random, dataset in
            let tag = Dataset.tags[Int.random(in: 0..<Dataset.tags.count, using: &random)]
            return Run(values: [.string(tag)], raw: [tag.databaseValue], expected: min(50, dataset.tagCounts[tag] ?? 0))
        },
        LocalQueryShape(
            name: "near 5km", text: "where location near ? within ? meters limit 20", isCount: false,
            rawSQL: """
                SELECT body FROM query_records WHERE latitude BETWEEN ? AND ? AND longitude BETWEEN ? AND ?
                AND rooftop_distance(latitude, longitude, ?, ?) <= ?
                ORDER BY rooftop_distance(latitude, longitude, ?, ?) LIMIT 20
                """,
            rawIndexedField: "location"
        ) { random, dataset in
            let point = try Dataset.randomPoint(using: &random)
            let meters = 5000.0
            // A box that holds the circle (a degree of latitude is at least 110.5 km).
            let latitudeSpan = meters / 110_000
            let longitudeSpan = meters / (110_000 * cos(point.latitude * .pi / 180))
            let raw: [DatabaseValue] = [
                (point.latitude - latitudeSpan).databaseValue, (point.latitude + latitudeSpan).databaseValue,
                (point.longitude - longitudeSpan).databaseValue, (point.longitude + longitudeSpan).databaseValue,
                point.latitude.databaseValue, point.longitude.databaseValue, meters.databaseValue,
                point.latitude.databaseValue, point.longitude.databaseValue,
            ]
            return Run(
                values: [.geoPoint(point), .double(meters)], raw: raw,
                expected: min(20, dataset.locationCount(near: point, within: meters)))
        },
        LocalQueryShape(name: "count all", text: "", isCount: true, rawSQL: "SELECT count(*) FROM query_records") {
            _, dataset in Run(values: [], raw: [], expected: dataset.objects.count)
        },
        LocalQueryShape(
            name: "count eq", text: "where category = ?", isCount: true,
            rawSQL: "SELECT count(*) FROM query_records WHERE category = ?",
            rawIndexedField: "category"
        ) { random, dataset in
            let category = randomCategory(&random)
            return Run(values: [.string(category)], raw: [category.databaseValue], expected: dataset.categoryCounts[category] ?? 0)
        },
        // The count behind a `range` page's total (its matches counted, which the raw `range`
        // query, a page alone, does not do). Last, so that the shapes before it draw the
        // parameters they drew before it was added.
        LocalQueryShape(
            name: "range count", text: "where score >= ? and score < ?", isCount: true,
            rawSQL: "SELECT count(*) FROM query_records WHERE score >= ? AND score < ?",
            rawIndexedField: "score"
        ) { random, dataset in
            scoreRange(&random, dataset, limit: nil)
        },
    ]

    /// A run over scores from a random one up to 10,000 above it (about 1% of the records),
    /// answering at most `limit` of them (all: `nil`).
    private static func scoreRange(_ random: inout SeededGenerator, _ dataset: Dataset, limit: Int?) -> Run {
        let lower = Int64.random(in: 0..<990_000, using: &random)
        let upper = lower + 10_000
        let matches = dataset.scoreCount(from: lower, below: upper)
        return Run(
            values: [.int(lower), .int(upper)], raw: [lower.databaseValue, upper.databaseValue],
            expected: limit.map { min($0, matches) } ?? matches)
    }

    private static func randomCategory(_ random: inout SeededGenerator) -> String {
        Dataset.categories[Int.random(in: 0..<Dataset.categories.count, using: &random)]
    }
}

extension Benchmark {
    /// The runs of one shape: the same parameters for the local and the raw phase, whatever
    /// else drew from ``random`` in between.
    func runs(of shape: LocalQueryShape, number: Int) throws -> [LocalQueryShape.Run] {
        var random = SeededGenerator(seed: settings.seed).derived(0x51A9E + UInt64(number))
        return try (0..<settings.localRepeats).map { _ in try shape.draw(&random, dataset) }
    }

    /// Phases `client local …`: each shape answered from the library's local datastore, every
    /// answer's size checked against the data set (and its order, where it has one).
    func clientLocalQueries(_ client: RooftopClient) async throws {
        let clock = ContinuousClock()
        for (number, shape) in settings.measuredShapes {
            let runs = try runs(of: shape, number: number)
            try await measure(shape.localPhase, unit: "query") { samples in
                for run in runs {
                    let query = try client.query(Dataset.className, in: datastore).text(shape.text, run.values)
                        .fromLocalDatastore()
                    let start = clock.now
                    let answered: Int
                    if shape.isCount {
                        answered = try await query.count()
                        await samples.add([clock.now - start])
                    } else {
                        let result = try await query.find()
                        await samples.add([clock.now - start])
                        answered = result.objects.count
                        if shape.name == "eq order" || shape.name == "or" {
                            let scores = result.objects.compactMap { $0.int("score") }
                            try require(scores == scores.sorted(by: >), "local \(shape.name): not ordered by score")
                        }
                    }
                    try require(
                        answered == run.expected,
                        "local \(shape.name) \(run.values) answered \(answered), not \(run.expected)")
                }
                return (runs.count, [:])
            }
        }
    }

    /// Phases `sqlite …`: the raw SQLite query each local shape becomes, on a table of the same
    /// records with their category, score and location in columns (indexed on `(category,
    /// score)`, `score` and `latitude`) and their tags in a table indexed on `(tag, id)`; the
    /// bodies read, not decoded.
    func measureRawQueries(_ pool: DatabasePool) async throws {
        let encoder = JSONEncoder()
        let rows = try dataset.objects.map { object in
            (object, String(decoding: try encoder.encode(object.fields), as: UTF8.self))
        }
        try await pool.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE query_records (id TEXT PRIMARY KEY, category TEXT NOT NULL, score INTEGER NOT NULL,
                    latitude REAL NOT NULL, longitude REAL NOT NULL, body TEXT NOT NULL);
                    CREATE INDEX query_records_by_category ON query_records(category, score);
                    CREATE INDEX query_records_by_score ON query_records(score);
                    CREATE INDEX query_records_by_latitude ON query_records(latitude);
                    CREATE TABLE query_tags (tag TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (tag, id)) WITHOUT ROWID;
                    """)
            let insert = try db.makeStatement(
                sql: "INSERT INTO query_records (id, category, score, latitude, longitude, body) VALUES (?, ?, ?, ?, ?, ?)")
            let tag = try db.makeStatement(sql: "INSERT OR IGNORE INTO query_tags (tag, id) VALUES (?, ?)")
            for (object, body) in rows {
                try insert.execute(arguments: [
                    object.objectId, object.category, object.score, object.location.latitude,
                    object.location.longitude, body,
                ])
                for element in object.tags { try tag.execute(arguments: [element, object.objectId]) }
            }
            try db.execute(sql: "ANALYZE")
        }
        let clock = ContinuousClock()
        for (number, shape) in settings.measuredShapes {
            let runs = try runs(of: shape, number: number)
            try await measure(shape.rawPhase, unit: "query") { samples in
                let durations = try await pool.read { db -> [Duration] in
                    let select = try db.makeStatement(sql: shape.rawSQL)
                    var durations: [Duration] = []
                    for run in runs {
                        let start = clock.now
                        let answered: Int
                        if shape.isCount {
                            answered = try Int.fetchOne(select, arguments: StatementArguments(run.raw)) ?? 0
                        } else {
                            answered = try String.fetchAll(select, arguments: StatementArguments(run.raw)).count
                        }
                        durations.append(clock.now - start)
                        guard answered == run.expected else {
                            throw BenchmarkError.wrongResult(
                                "the raw \(shape.name) query answered \(answered), not \(run.expected)")
                        }
                    }
                    return durations
                }
                await samples.add(durations)
                return (runs.count, [:])
            }
        }
    }
}
