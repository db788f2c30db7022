import GRDB
import GRDBSQLite
import Synchronization

/// Compiled statements of query text for the connections of one database, a bounded number per
/// connection. A query's SQL varies with its shape (conditions, the length of an `IN` list), so
/// GRDB's statement cache, which keeps every text it is given for as long as the connection
/// lives, cannot hold them; compiling each again cost a tenth of a local query. Here each
/// connection keeps at most ``budget`` texts: a new text past the budget clears that connection's
/// caches and starts counting again. GRDB clears them only all together
/// (``Database/releaseMemory()``, run on the connection's own thread): its other cached
/// statements, its schema cache and SQLite's page cache of that connection go too, once per
/// ``budget`` new texts, and are filled again as they are used. (A cache of its own statements
/// could evict one at a time, but a statement must be finalized on its connection's thread, and
/// the entries of connections GRDB has closed could then never be dropped.)
///
/// ```swift
/// let statements = QueryStatements()
/// let rows = try Row.fetchAll(statements.statement(fragment.sql, db), arguments: arguments)
/// ```
package final class QueryStatements: Sendable {
    /// The most query texts one connection keeps compiled.
    package let budget: Int
    /// The texts each connection was given since its caches were last cleared, by connection.
    /// Keyed by the connection's address, so an entry may outlive its connection (GRDB closes a
    /// pool's readers under memory pressure), and a new connection at the same address inherits
    /// it; at most ``maxConnections`` are tracked. Either way a connection holds at most twice
    /// the budget: texts it was never given but counted, or given but forgotten, only move when
    /// it is cleared.
    private let texts = Mutex<[UInt: Set<String>]>([:])
    /// The most connections whose texts are tracked.
    static let maxConnections = 32

    /// Statements for the connections of one database.
    /// - Parameter budget: The most texts a connection keeps compiled (default 64).
    package init(budget: Int = 64) {
        self.budget = max(budget, 1)
    }

    /// The compiled statement of `sql` on `db`, from `db`'s cache when it holds it.
    /// - Throws: `DatabaseError` when `sql` does not compile.
    package func statement(_ sql: String, _ db: Database) throws -> Statement {
        let connection = UInt(bitPattern: db.sqliteConnection)
        let clear = texts.withLock { texts -> Bool in
            if texts[connection]?.contains(sql) == true { return false }
            if texts[connection] == nil, texts.count >= QueryStatements.maxConnections { texts = [:] }
            var known = texts[connection] ?? []
            let full = known.count >= budget
            if full { known = [] }
            known.insert(sql)
            texts[connection] = known
            return full
        }
        if clear { db.releaseMemory() }
        return try db.cachedStatement(sql: sql)
    }

    /// The texts given to any connection since its caches were last cleared (for tests: which
    /// statements queries ran).
    package var givenTexts: Set<String> {
        texts.withLock { $0.values.reduce(into: Set<String>()) { $0.formUnion($1) } }
    }

    /// How many statements `db` holds compiled now, cached or not (`sqlite3_next_stmt`).
    package static func compiledCount(_ db: Database) -> Int {
        guard let connection = db.sqliteConnection else { return 0 }
        var count = 0
        var statement = sqlite3_next_stmt(connection, nil)
        while let current = statement {
            count += 1
            statement = sqlite3_next_stmt(connection, current)
        }
        return count
    }
}
