import Foundation
import GRDB
import RooftopSQL
import RooftopShared

/// Who may read each stored object, decided once per write instead of once per query.
///
/// A local query of a signed-in user keeps only the objects their principals (`*`, their user
/// ID, their roles) may read. Tested per candidate against `object_readers`, that costs two index
/// probes per object: a count of a million objects spent seconds on it. So each object row has a
/// `readable` flag, and the table `readable_for` records, per scope, the principals the flags
/// of that scope were computed for:
/// - a write of an object sets its flag for the recorded principals (``StoreTransaction/put(_:server:local:deleted:fresh:)``);
/// - a query whose principals are the recorded ones tests the flag (`o.readable = 1`, in the
///   same index as the class); a query with other principals (the user's roles changed) first
///   computes again the flags of the objects naming a principal gained or lost
///   (``keepReadableFlags(scope:for:)``), and records the principals;
/// - a query reads the recorded principals in its own read transaction, so it never tests flags
///   computed for others; without a record (a store migrated from an earlier version, or moved
///   objects) it tests `object_readers` as before until the flags are computed.
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
            let readable = "EXISTS (SELECT 1 FROM object_readers r WHERE r.object_key = objects.key AND r.principal IN (\(current.sql)))"
            // The flags are kept for `kept` (or for nobody): the objects that may change.
            var candidates = ""
            var candidateArguments: [String] = []
            if let kept {
                let changed = SQLTextSet.list(kept.symmetricDifference(readers), dialect: .sqlite)
                candidates = " AND key IN (SELECT object_key FROM object_readers WHERE principal IN (\(changed.sql)))"
                candidateArguments = changed.arguments
            }
            try db.execute(
                sql: "UPDATE objects SET readable = 1 - readable WHERE scope = ?\(candidates) AND readable <> \(readable)",
                arguments: StatementArguments([scope] + candidateArguments + current.arguments))
            try db.execute(
                sql: "INSERT INTO readable_for (scope, principals) VALUES (?, ?) ON CONFLICT(scope) DO UPDATE SET principals = excluded.principals",
                arguments: [scope, SQLTextSet.jsonArray(readers.sorted())])
        }
    }

    /// The condition on `objects o` that an object is readable by one of `readers`: the flag
    /// when the scope's flags are kept for exactly these readers, else `nil` (test
    /// `object_readers`). Read inside the query's own read transaction.
    static func readableCondition(scope: String, readers: Set<String>?, _ db: Database) throws -> SQLFragment? {
        guard let readers, try flagReaders(scope: scope, db) == readers else { return nil }
        return SQLFragment(" AND o.readable = 1")
    }
}

extension StoreTransaction {
    /// Whether a principal of the scope's kept readers may read an object with `acl`; `false`
    /// when no readers are kept (the flag is then not read).
    func readableFlag(_ acl: ACL?) throws -> Bool {
        guard let readers = try keptReaders() else { return false }
        return !SQLIndexRows.readers(of: acl).isDisjoint(with: readers)
    }
}
