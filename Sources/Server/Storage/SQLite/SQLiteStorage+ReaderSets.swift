import GRDB
import RooftopSQL
import RooftopSQLite

/// Reader sets (migration v10): each distinct set of principals that may read objects is stored
/// once (`reader_sets`, its members in `reader_set_members`), and each live object's row names
/// its set (`objects.readers`). A query tests an object's set against the few sets its caller is
/// a member of, on the object's own row, instead of looking up the object's readers; a count reads
/// the index on `(datastore_key, class_name, readers)` alone. The readers' history
/// (`object_readers`) stays what the change feed reads.
extension SQLiteStorage {
    /// The ID of the reader set of `readers` (``SQLIndexRows/readerSet(of:)``), made with its
    /// members when it is new. Sets are never deleted: they are as many as the distinct ACLs
    /// ever written.
    /// - Throws: What the database throws.
    static func readerSetID(_ readers: Set<String>, _ db: Database) throws -> Int64 {
        let text = SQLIndexRows.readerSetText(readers)
        if let id = try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT id FROM reader_sets WHERE principals = ?"), arguments: [text])
        {
            return id
        }
        try db.cachedStatement(sql: "INSERT INTO reader_sets (principals) VALUES (?)").execute(arguments: [text])
        let id = db.lastInsertedRowID
        let member = try db.cachedStatement(sql: "INSERT INTO reader_set_members (principal, reader_set) VALUES (?, ?)")
        for principal in readers { try member.execute(arguments: [principal, id]) }
        return id
    }

    /// The reader sets that have one of `readers` as a member, for ``SQLQueryCompiler/readerSets``:
    /// `nil` when the caller is not tested by sets (``SQLQueryCompiler/readerSetReadLimit(for:)``)
    /// or is a member of more than ``SQLQueryCompiler/maxReaderSets`` (the query then looks up
    /// each object's readers).
    /// - Throws: What the database throws.
    static func readerSets(of readers: Set<String>?, _ db: Database) throws -> [Int64]? {
        guard let readers, let limit = SQLQueryCompiler.readerSetReadLimit(for: readers) else { return nil }
        let set = SQLTextSet.list(readers, dialect: .sqlite)
        let rows = try Int64.fetchAll(
            db.cachedStatement(sql: "SELECT reader_set FROM reader_set_members WHERE principal IN (\(set.sql)) LIMIT ?"),
            arguments: StatementArguments(set.arguments) + [limit])
        return SQLQueryCompiler.readerSets(rows)
    }
}
