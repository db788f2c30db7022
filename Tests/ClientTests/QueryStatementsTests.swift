import Foundation
import GRDB
import RooftopSQLite
import Testing

/// The compiled statements of query text are kept per connection up to a budget: a connection
/// given ten times as many distinct texts holds no more than its budget, answers each right, and
/// reuses a statement it holds.
@Suite("Query statements, bounded per connection")
struct QueryStatementsTests {
    @Test("ten times the budget of distinct texts: at most the budget stays compiled, and answers stay right")
    func tenTimesTheBudget() throws {
        let budget = 8
        let statements = QueryStatements(budget: budget)
        let database = try DatabaseQueue()
        try database.write { db in
            try db.execute(sql: "CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1), (2), (3)")
        }
        try database.read { db in
            let before = QueryStatements.compiledCount(db)
            var most = 0
            for round in 0..<(10 * budget) {
                // Distinct texts, as queries of different shapes are.
                let sql = "SELECT count(*) + \(round) FROM t WHERE n >= ?"
                let answer = try Int.fetchOne(statements.statement(sql, db), arguments: [2])
                #expect(answer == 2 + round)
                most = max(most, QueryStatements.compiledCount(db) - before)
            }
            #expect(most <= budget, "at most the budget compiled at once (\(most))")
            #expect(most >= budget / 2, "statements are kept, not compiled each time (\(most))")
            // A text held is the same statement, not compiled again.
            let held = "SELECT max(n) FROM t"
            let first = try statements.statement(held, db)
            #expect(try statements.statement(held, db) === first)
            #expect(try Int.fetchOne(first) == 3)
        }
    }

    @Test("each connection of a pool keeps its own texts")
    func perConnection() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rooftop-statements-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let pool = try DatabasePool(path: directory.appendingPathComponent("db.sqlite").path)
        try pool.write { db in try db.execute(sql: "CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (5)") }
        let statements = QueryStatements(budget: 4)
        var most = 0
        for round in 0..<40 {
            let (answer, compiled) = try pool.read { db in
                (try Int.fetchOne(statements.statement("SELECT n + \(round % 6) FROM t", db)), QueryStatements.compiledCount(db))
            }
            #expect(answer == 5 + round % 6)
            most = max(most, compiled)
        }
        // Six texts, a budget of four: every reader clears its own at its fifth text (GRDB's own
        // statements on the connection, a few, come on top).
        #expect(most <= 4 + 3, "a reader holds at most its budget (\(most))")
        let written = try pool.write { db in try Int.fetchOne(statements.statement("SELECT n FROM t", db)) }
        #expect(written == 5, "the writer too")
    }
}
