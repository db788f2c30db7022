import Foundation
import GRDB
import RooftopSQL
import RooftopShared

/// Who may read each stored object, decided once per write instead of once per query.
///
/// A local query of a signed-in user keeps only the objects their principals (`*`, their user
/// ID, their roles) may read. Tested per candidate against its reader set's members, that costs
/// index probes per object: a count of a million objects spent seconds on it. So each object row has a
/// `readable` flag, and the table `readable_for` records, per scope, the principals the flags
/// of that scope were computed for:
/// - a write of an object sets its flag for the recorded principals (``StoreTransaction/put(_:server:local:deleted:fresh:)``);
/// - a query whose principals are the recorded ones tests the flag (`o.readable = 1`, in the
///   same index as the class); a query with other principals (the user's roles changed) first
///   computes again the flags of the objects naming a principal gained or lost
///   (``keepReadableFlags(scope:for:)``), and records the principals;
/// - a query reads the recorded principals in its own read transaction, so it never tests flags
///   computed for others; without a record (a store migrated from an earlier version, or moved
///   objects) it tests the reader sets as before until the flags are computed.
extension LocalStore {
    /// The principals the `readable` flags of `scope` are kept for, `nil` when they are not
    /// kept (no record).
    static func flagReaders(scope: String, _ db: Database) throws -> Set<String>? {
        guard
            let text = try String.fetchOne(
                db.cachedStatement(sql: "SELECT principals FROM readable_for WHERE scope = ?"), arguments: [scope])
        else { return nil }
        // A record that does not read back is no record: the flags are computed again.
        // Read by every query: with the document reader, not `JSONDecoder`.
        let principals = try? DocumentReader.read(text) { reader in
            var principals = Set<String>()
            try reader.readArray { principals.insert(try $0.readString()) }
            return principals
        }
        return principals
    }

    /// Makes the `readable` flags of `scope` those of `readers`: nothing when they already are.
    /// When flags are kept for other principals (the user's roles changed), only the objects
    /// that name a principal gained or lost among their readers can change, and only those are
    /// read; without a record, every object of the scope is computed again. Either way a row is
    /// written only when its flag changes.
    /// - Throws: `cache` when the store cannot be read or written.
    func keepReadableFlags(scope: String, for readers: Set<String>) throws(RooftopError) {
        guard try read({ db in try LocalStore.flagReaders(scope: scope, db) }) != readers else { return }
        try write(scope: scope) { transaction in
            // Read again in the write: another query may have recorded other readers meanwhile.
            let kept = try transaction.keptReaders()
            guard kept != readers else { return }
            let db = transaction.db
            let current = SQLTextSet.list(readers, dialect: .sqlite)
            let readable =
                "coalesce(readers IN (SELECT reader_set FROM reader_set_members WHERE principal IN (\(current.sql))), 0)"
            // The flags are kept for `kept` (or for nobody): the objects that may change, those
            // whose reader sets name a principal gained or lost (found by `objects_by_readers`).
            var candidates = ""
            var candidateArguments: [String] = []
            // Named: without statistics SQLite would walk the scope's objects instead.
            var index = ""
            if let kept {
                index = " INDEXED BY objects_by_readers"
                let changed = SQLTextSet.list(kept.symmetricDifference(readers), dialect: .sqlite)
                candidates = " AND readers IN (SELECT reader_set FROM reader_set_members WHERE principal IN (\(changed.sql)))"
                candidateArguments = changed.arguments
            }
            // An object without a reader set (deleted) is unreadable.
            try db.execute(
                sql: """
                    UPDATE objects\(index) SET readable = 1 - readable
                    WHERE scope = ? AND deleted = 0\(candidates) AND readable <> (\(readable))
                    """,
                arguments: StatementArguments([scope] + candidateArguments + current.arguments))
            try db.execute(
                sql: "INSERT INTO readable_for (scope, principals) VALUES (?, ?) ON CONFLICT(scope) DO UPDATE SET principals = excluded.principals",
                arguments: [scope, SQLTextSet.jsonArray(readers.sorted())])
            // What the transaction holds is what the next writes start from (``WriterMemo``).
            transaction.keptReadersRead[scope] = .some(readers)
        }
    }

    /// The condition on `objects o` that an object is readable by one of `readers`: the flag
    /// when the scope's flags are kept for exactly these readers, else `nil` (test
    /// the reader sets). Read inside the query's own read transaction.
    static func readableCondition(scope: String, readers: Set<String>?, _ db: Database) throws -> SQLFragment? {
        guard let readers, try flagReaders(scope: scope, db) == readers else { return nil }
        return SQLFragment(" AND o.readable = 1")
    }
}


extension StoreTransaction {
    /// Whether a principal of the scope's kept readers is among an object's `readers`; `false`
    /// when no readers are kept (the flag is then not read).
    func readableFlag(_ readers: Set<String>) throws -> Bool {
        guard let kept = try keptReaders() else { return false }
        return !readers.isDisjoint(with: kept)
    }
}
