import GRDB
import RooftopSQL
import RooftopSQLite
import RooftopShared
import Synchronization

/// Reader sets (migration v10): each distinct set of principals that may read objects is stored
/// once (`reader_sets`, its members in `reader_set_members`), and each live object's row names
/// its set (`objects.readers`). A query tests an object's set against the few sets its caller is
/// a member of, on the object's own row, instead of looking up the object's readers; a count reads
/// the index on `(datastore_key, class_name, readers)` alone. Since v15 the set is also who
/// may read a live object now, everywhere: the readers' history (`object_readers`) keeps only
/// what a set does not tell (ended access, tombstones' readers, the readers of an object
/// everyone may read besides `*`; ``SQLiteObjectWriter``'s `storeReaderHistory`).
extension SQLiteStorage {
    /// The ID of the reader set of `readers` (``SQLIndexRows/readerSet(of:)``), made with its
    /// members when it is new. Sets no object names are deleted by ``sweepReaderSets()``.
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

    /// Deletes the reader sets no object names (invented ACLs, ACLs changed since), so that they
    /// are as many as the distinct ACLs objects have now, not as were ever written. Part of the
    /// history sweep (``sweepHistory(cutoff:now:)``).
    ///
    /// The sets no live object names are read in one scan, in a read transaction that does not
    /// hold up the writer; a write that names one of them meanwhile is noted
    /// (``ReaderSetWatch``), and those are kept. The watch starts inside the writer, so no write
    /// that looked a set up before it can commit unseen after the scan. Then the sets go in
    /// batches, each a write transaction: their members by key (read from their texts), then
    /// the sets.
    /// - Returns: How many sets were deleted.
    /// - Throws: What the database throws.
    func sweepReaderSets() async throws -> Int {
        defer { readerSetWatch.end() }
        return try await deleteReaderSets(try await startReaderSetSweep())
    }

    /// The first step of ``sweepReaderSets()``: starts noting the sets writes name, then reads
    /// the sets no live object names.
    /// - Throws: What the database throws.
    func startReaderSetSweep() async throws -> [Int64] {
        try await pool.write { _ in self.readerSetWatch.begin() }
        return try await pool.read { db in
            try Int64.fetchAll(
                db,
                sql: """
                    SELECT id FROM reader_sets WHERE id NOT IN (
                        SELECT readers FROM objects WHERE deleted = 0 AND readers IS NOT NULL)
                    ORDER BY id
                    """)
        }
    }

    /// The second step of ``sweepReaderSets()``: deletes the sets of `unnamed` that no write
    /// named since the first, in batches.
    /// - Returns: How many sets were deleted.
    /// - Throws: What the database throws.
    func deleteReaderSets(_ unnamed: [Int64]) async throws -> Int {
        var deleted = 0
        for start in stride(from: 0, to: unnamed.count, by: Self.sweepBatch) {
            let batch = unnamed[start..<min(start + Self.sweepBatch, unnamed.count)]
            deleted += try await pool.write { db in
                let named = self.readerSetWatch.named
                let ids = batch.filter { !named.contains($0) }
                guard !ids.isEmpty else { return 0 }
                let list = ids.map(String.init).joined(separator: ",")
                let sets = try Row.fetchAll(db, sql: "SELECT id, principals FROM reader_sets WHERE id IN (\(list))")
                let member = try db.cachedStatement(
                    sql: "DELETE FROM reader_set_members WHERE principal = ? AND reader_set = ?")
                for row in sets {
                    let id: Int64 = row["id"]
                    for principal in try DocumentCoding.decode([String].self, from: row["principals"] as String) {
                        try member.execute(arguments: [principal, id])
                    }
                }
                try db.execute(sql: "DELETE FROM reader_sets WHERE id IN (\(list))")
                return db.changesCount
            }
        }
        return deleted
    }
}

/// The reader sets writes named while a sweep reads which sets no object names
/// (``SQLiteStorage/sweepReaderSets()``): those are not deleted. Filled by the one writer.
final class ReaderSetWatch: Sendable {
    private let state = Mutex<Set<Int64>?>(nil)

    /// Starts noting the sets writes name.
    func begin() { state.withLock { $0 = [] } }

    /// Stops noting them.
    func end() { state.withLock { $0 = nil } }

    /// Notes a set a write named, while a sweep runs.
    func note(_ id: Int64) {
        state.withLock { named in _ = named?.insert(id) }
    }

    /// The sets written since the sweep began.
    var named: Set<Int64> { state.withLock { $0 ?? [] } }
}
