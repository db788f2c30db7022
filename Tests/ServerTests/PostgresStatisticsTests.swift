import Logging
import RooftopShared
import RooftopTestSupport
import Synchronization
import Testing

@testable import RooftopServer

/// The planner's statistics are analyzed again as the object tables grow
/// (``PostgresStatistics``): once the writes reach the objects last counted, one analysis at a
/// time, none after close.
@Suite("PostgreSQL: planner statistics")
struct PostgresStatisticsTests {
    /// An analysis that waits until the test lets it end, counting its runs.
    final class Analysis: Sendable {
        private let state = Mutex((runs: 0, released: 0))
        let objects: Int64

        init(objects: Int64) { self.objects = objects }

        var runs: Int { state.withLock { $0.runs } }
        func release() { state.withLock { $0.released += 1 } }

        func run() async throws -> Int64 {
            let run = state.withLock { state in
                state.runs += 1
                return state.runs
            }
            try await TestWait.until("the analysis \(run) released") { state.withLock { $0.released >= run } }
            return objects
        }
    }

    @Test("a thousand writes start the first analysis, as many as the objects counted the next; one at a time; none after close")
    func thresholds() async throws {
        let statistics = PostgresStatistics(logger: Logger(label: "statistics-tests"))
        let analysis = Analysis(objects: 50_000)
        statistics.committed(999, analyze: analysis.run)
        #expect(!statistics.isAnalyzing && analysis.runs == 0)
        statistics.committed(1, analyze: analysis.run)
        try await TestWait.until("the first analysis runs") { analysis.runs == 1 }
        // While it runs, more writes start no second one.
        statistics.committed(100_000, analyze: analysis.run)
        #expect(analysis.runs == 1)
        analysis.release()
        try await TestWait.until("the first analysis ends") { !statistics.isAnalyzing }

        // 50,000 objects counted (and 1,000 writes when it started): the next analysis after
        // 50,000 more writes (the writes made during the first one count).
        statistics.committed(1, analyze: analysis.run)
        try await TestWait.until("the second analysis runs") { analysis.runs == 2 }
        analysis.release()
        try await TestWait.until("the second analysis ends") { !statistics.isAnalyzing }
        // It counted 50,000 objects, but 101,001 writes had committed when it started: those.
        statistics.committed(101_000, analyze: analysis.run)
        #expect(!statistics.isAnalyzing && analysis.runs == 2)
        statistics.committed(1, analyze: analysis.run)
        try await TestWait.until("the third analysis runs") { analysis.runs == 3 }

        // Close waits for the running one, then starts none.
        analysis.release()
        await statistics.close()
        #expect(!statistics.isAnalyzing)
        statistics.committed(1_000_000, analyze: analysis.run)
        #expect(!statistics.isAnalyzing && analysis.runs == 3)
    }

    @Test("an analysis that counts nothing (a role that may not analyze) still doubles the schedule")
    func countsNothing() async throws {
        let statistics = PostgresStatistics(logger: Logger(label: "statistics-tests"))
        let analysis = Analysis(objects: -1)
        statistics.committed(1_000, analyze: analysis.run)
        try await TestWait.until("the first analysis runs") { analysis.runs == 1 }
        analysis.release()
        try await TestWait.until("the first analysis ends") { !statistics.isAnalyzing }
        // The writes committed before it (1,000) stand for the objects: 999 more start none.
        statistics.committed(999, analyze: analysis.run)
        #expect(!statistics.isAnalyzing && analysis.runs == 1)
        statistics.committed(1, analyze: analysis.run)
        try await TestWait.until("the second analysis runs") { analysis.runs == 2 }
        analysis.release()
        await statistics.close()
    }

    @Test("objects written in bulk are analyzed without waiting for autovacuum",
        .enabled(if: PostgresTestCluster.enabled, "needs a PostgreSQL cluster"))
    func analyzedAfterBulkWrites() async throws {
        try await withStorage(PostgresFixture.factory) { storage, _ in
            let postgres = try #require(storage as? PostgresStorage)
            let key = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil).key
            #expect(try await Self.rowsCounted("objects", postgres) <= 0, "a new table is not analyzed")
            _ = try await PostgresBatchTests.push(storage, datastoreKey: key, count: 1_200, update: false, scope: "s")
            try await TestWait.until("the objects are analyzed") { try await Self.rowsCounted("objects", postgres) == 1_200 }
        }
    }

    /// The rows of `table` its last analysis counted (-1 before any).
    static func rowsCounted(_ table: String, _ postgres: PostgresStorage) async throws -> Int64 {
        try await postgres.read { session in
            try session.query("SELECT reltuples::bigint FROM pg_class WHERE oid = \(table)::regclass").first?
                .decode(Int64.self) ?? -1
        }
    }

    @Test("a push's recorded results are read by their keys: the results table is analyzed with the objects",
        .enabled(if: PostgresTestCluster.enabled, "needs a PostgreSQL cluster"))
    func recordedResultsByKey() async throws {
        try await withStorage(PostgresFixture.factory) { storage, _ in
            let postgres = try #require(storage as? PostgresStorage)
            let key = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil).key
            // Enough results that reading a few by key costs less than reading them all.
            _ = try await PostgresBatchTests.push(storage, datastoreKey: key, count: 5_000, update: false, scope: "s")
            try await TestWait.until("the results are analyzed") { try await Self.rowsCounted("mutation_results", postgres) == 5_000 }
            // The plan a connection caches for the statement after its first executions (the
            // generic one, for any scope and IDs). Without statistics of the results it tested
            // each of the scope's results against the IDs (a filter after reading all of them:
            // 30-76 ms a push of 500 at 20,000 results, growing with them).
            let ids = "ARRAY[" + (0..<500).map { "'m\($0)'" }.joined(separator: ",") + "]"
            let plan = try await postgres.transaction { session in
                try session.execute("SET LOCAL plan_cache_mode = force_generic_plan")
                try session.execute(
                    "PREPARE recorded_results(text, text[]) AS \(unescaped: PostgresStatements.RecordedResults.sql)")
                defer { _ = try? session.execute("DEALLOCATE recorded_results") }
                return try session.query("EXPLAIN EXECUTE recorded_results('s', \(unescaped: ids))").map {
                    try $0.decode(String.self)
                }
            }
            let mutationTests = plan.filter { $0.contains("mutation_id") }
            #expect(!mutationTests.isEmpty && mutationTests.allSatisfy { $0.contains("Index Cond") }, "\(plan.joined(separator: "\n"))")
        }
    }
}
