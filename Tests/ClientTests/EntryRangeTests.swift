import Foundation
import GRDB
import RooftopSQL
import RooftopSQLite
import RooftopShared
import Testing

@testable import Rooftop

/// A condition on a field that leads a declared index reads that index's entries from where its
/// range starts. SQLite reads a range of an index from the first lower bound among its terms,
/// whatever the others say: beside `c.k1 >= ?`, the term `c.k1 > X''` (the object has the field)
/// made it read every entry of the partition below the range as well. Counted here in SQLite's
/// instructions (its unit of work, ``RooftopSQLite/bounded(_:instructions:_:)``), not in time.
@Suite("Entry ranges start at their lower bound")
struct EntryRangeTests {
    /// Entries of one partition, one per score from 0.
    static let entries = 20_000

    /// An in-memory database with the local store's schema (its own migrations), holding
    /// `entries` objects of one class and their entries in partition 7, keyed by the scores
    /// 0..<entries (object keys from 1).
    private static func database() throws -> DatabaseQueue {
        let queue = try DatabaseQueue()
        try LocalStoreMigrations.migrator.migrate(queue)
        try queue.write { db in
            let object = try db.makeStatement(
                sql: "INSERT INTO objects (key, scope, datastore, class_name, object_id) VALUES (?, '', 'app', 'Thing', ?)")
            let entry = try db.makeStatement(
                sql: "INSERT INTO index_entries (partition, k1, k2, k3, k4, object_key, readable) VALUES (7, ?, X'', X'', X'', ?, 1)")
            for score in 0..<entries {
                try object.execute(arguments: [score + 1, "t\(score)"])
                try entry.execute(arguments: [Data(Value.int(Int64(score)).sortKey), score + 1])
            }
        }
        return queue
    }

    /// How many objects `predicate` holds for, read within `instructions` of SQLite's work
    /// (`nil`: it needed more).
    private static func matches(
        _ predicate: QueryPredicate, within instructions: Int, _ queue: DatabaseQueue
    ) throws -> Int? {
        var compiler = LocalStore.queryCompiler
        compiler.entryKeyed["score"] = .some(7)
        let condition = compiler.condition(predicate)
        return try queue.read { db in
            try RooftopSQLite.bounded(db, instructions: instructions) {
                try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM objects o WHERE " + condition.sql,
                    arguments: RooftopSQLite.arguments(condition.arguments)) ?? 0
            }
        }
    }

    @Test("a range near the top of the partition reads about its own entries, not those below it")
    func rangeReadsItsEntries() throws {
        let queue = try Self.database()
        let top = Int64(Self.entries)
        // 100 matches: a few instructions per entry and per object, far below the 19,900 entries
        // under the range.
        let budget = 5_000
        #expect(try Self.matches(Field("score") >= top - 100, within: budget, queue) == 100)
        #expect(try Self.matches(Field("score") > top - 101, within: budget, queue) == 100)
        #expect(
            try Self.matches(Field("score") >= top - 100 && Field("score") < top - 50, within: budget, queue) == 50)
        #expect(
            try Self.matches(
                .or([Field("score") >= top - 30, Field("score") < 20]), within: budget, queue) == 50)
        // The whole partition, which the bound cannot hold: what the old SQL read for each of
        // the above (the check can fail).
        #expect(try Self.matches(Field("score") >= 0, within: budget, queue) == nil)
        #expect(try Self.matches(Field("score") >= 0, within: 40 * Self.entries, queue) == Self.entries)
    }

    @Test("a range bounded only from above still leaves out objects without the field")
    func upperBoundKeepsPresence() throws {
        var compiler = LocalStore.queryCompiler
        compiler.entryKeyed["score"] = .some(7)
        #expect(compiler.condition(Field("score") < 5).sql.contains("c.k1 > X''"))
        #expect(!compiler.condition(Field("score") >= 5).sql.contains("X''"))
        #expect(!compiler.condition(Field("score") == 5).sql.contains("X''"))
        let queue = try Self.database()
        try queue.write { db in
            // An object without the field: its entry's key is empty.
            try db.execute(
                sql: "INSERT INTO objects (key, scope, datastore, class_name, object_id) VALUES (?, '', 'app', 'Thing', 'absent')",
                arguments: [Self.entries + 1])
            try db.execute(
                sql: "INSERT INTO index_entries (partition, k1, k2, k3, k4, object_key, readable) VALUES (7, X'', X'', X'', X'', ?, 1)",
                arguments: [Self.entries + 1])
        }
        #expect(try Self.matches(Field("score") < 5, within: 10_000, queue) == 5)
    }

    @Test("of several bounds each way, the range starts at the tightest: the others are left out")
    func redundantBounds() throws {
        let queue = try Self.database()
        let top = Int64(Self.entries)
        let budget = 5_000
        // Written loosest first, then tightest first: both read only the 100 entries at the top.
        let loosestFirst: QueryPredicate =
            Field("score") >= 5 && Field("score") > top - 101 && Field("score") < top + 50 && Field("score") <= top
        let tightestFirst: QueryPredicate =
            Field("score") >= top - 100 && Field("score") >= 0 && Field("score") <= top && Field("score") < top + 50
        #expect(try Self.matches(loosestFirst, within: budget, queue) == 100)
        #expect(try Self.matches(tightestFirst, within: budget, queue) == 100)
        // Bounds that leave nothing between them still answer nothing.
        #expect(try Self.matches(Field("score") > top - 50 && Field("score") < top - 60, within: budget, queue) == 0)

        // The reduction itself: the highest lower bound, the lowest upper one, strict over not
        // on the same key; an equality is kept beside them.
        let five = Value.int(5).sortKey
        let nine = Value.int(9).sortKey
        let bounds = SQLQueryCompiler.tightestBounds([
            (.greaterOrEqual, five), (.greater, nine), (.greaterOrEqual, nine), (.lessOrEqual, nine), (.less, nine),
            (.equal, five), (.less, Value.int(20).sortKey),
        ])
        #expect(bounds.map(\.op) == [.greater, .less, .equal])
        #expect(bounds.map(\.key) == [nine, nine, five])

        // A compound index's range (a page ordered by the field): one term each way.
        let index = SQLCompoundIndex(partition: 7, fields: ["score"])
        var query = Query(
            className: "Thing", predicate: Field("score") >= 5 && Field("score") >= 900 && Field("score") < 2_000,
            order: [QueryOrder("score")])
        query.limit = 10
        let page = LocalStore.queryCompiler.select(
            query, scope: SQLFragment("o.scope = ?", [.text("")]), readers: nil, limit: 10, indexes: [index])
        #expect(page.sql.components(separatedBy: "c.k1 >= ").count == 2, "\(page.sql)")
        #expect(page.arguments.contains(.blob(Value.int(900).sortKey)))
        #expect(!page.arguments.contains(.blob(five)))
    }
}
