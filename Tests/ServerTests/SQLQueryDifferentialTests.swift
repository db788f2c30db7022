import GRDB
import RooftopSQL
import RooftopShared
import Testing

@testable import RooftopServer
import RooftopTestSupport

/// The server's SQL must answer every query exactly as ``QueryEvaluator`` does: the same objects
/// in the same order, the same total count, the same `count`. Random datasets are written through
/// the storage; random valid queries run both ways, under random reader sets.
///
/// Replay a failure with `ROOFTOP_TEST_SEEDS=<seed> swift test --filter SQLQueryDifferential`.
@Suite("SQL queries agree with the evaluator")
struct SQLQueryDifferentialTests {
    /// Queries per dataset (one dataset per seed).
    static let queriesPerDataset = 250

    @Test("find and count agree with QueryEvaluator.run on random data and queries", arguments: StorageBackend.tested)
    func randomQueries(backend: StorageBackend) async throws {
        var evaluated = 0
        var total = 0
        for seed in TestSeeds.seeds(fixed: [1, 2, 3, 4]) {
            let (matching, unindexed) = try await withStorage(backend.factory) { storage, _ in
                try await Self.check(seed: seed, storage: storage, queries: Self.queriesPerDataset)
            }
            // The comparison means little if almost every query matches nothing.
            #expect(matching * 3 >= Self.queriesPerDataset, "seed \(seed): only \(matching) queries matched anything")
            evaluated += unindexed
            total += Self.queriesPerDataset
        }
        // Both ways of answering are compared: SQL alone, and SQL candidates decided by the
        // evaluator when a condition or order needs a value too long to index (counted on SQLite,
        // whose tables the test reads).
        if backend == .sqlite {
            #expect(evaluated > total / 20 && evaluated < total * 19 / 20, "\(evaluated) of \(total) queries evaluated")
        }
    }

    /// Writes the seed's dataset and checks `queries` random queries over it; returns how many
    /// matched at least one object, and how many the SQLite storage answered with the evaluator's
    /// help (values too long to index). Stops after a few mismatches so a bug does not flood the log.
    static func check(seed: UInt64, storage: any Storage, queries: Int) async throws -> (matching: Int, evaluated: Int) {
        var rng = SeededGenerator(seed: seed)
        let dataset = try await DifferentialDataset.write(into: storage, using: &rng)
        let unindexed = try await (storage as? SQLiteStorage)?.pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT class_name, field FROM unindexed_fields WHERE datastore_key = ? AND objects > 0",
                arguments: [dataset.datastoreKey]
            ).reduce(into: [String: Set<String>]()) { $0[$1["class_name"], default: []].insert($1["field"]) }
        }
        let compiler = SQLQueryCompiler(dialect: .sqlite, layout: .server)
        var evaluated = 0
        var mismatches = 0
        var matching = 0
        for index in 0..<queries {
            let query = DifferentialQueries.query(&rng)
            let readers = rng.pick(DifferentialDataset.readerSets)
            try query.validate()
            if let unindexed, compiler.evaluation(of: query, unindexed: unindexed[query.className] ?? []) != nil {
                evaluated += 1
            }
            let outcome = try await DifferentialCheck.compare(
                query, readers: readers, dataset: dataset, storage: storage)
            if outcome.totalCount > 0 { matching += 1 }
            if let report = outcome.mismatch {
                mismatches += 1
                Issue.record("seed \(seed), query #\(index): \(report)")
                if mismatches >= 5 { break }
            }
        }
        return (matching, evaluated)
    }
}
