import Foundation
import GRDB
import RooftopSQL
import RooftopShared

@testable import RooftopServer

/// Objects written straight into the SQLite storage's tables, many at once, for tests of the
/// query planner's choices at a scale a test can afford to write: bodies of 1 KB (the benchmark's
/// size; the fields and a `filler` string without index rows), live, all read by reader set 1, with index rows of the fields given.
enum RawObjects {
    /// Inserts `count` objects of `className` into datastore `datastoreKey`, keys from `firstKey`
    /// on; object `i` (from 1), with ID `objectId(i)` (default `"className-i"`), holds `fields(i)`, each
    /// with its row in `object_fields`.
    static func insert(
        _ storage: SQLiteStorage, datastoreKey: Int64, className: String, firstKey: Int64 = 1_000_001, count: Int,
        objectId: (@Sendable (Int) -> String)? = nil, fields: @escaping @Sendable (Int) -> [String: Value]
    ) async throws {
        try await storage.pool.write { db in
            let filler = String(repeating: "x", count: 900)
            let partition = try SQLiteStorage.partition(datastoreKey: datastoreKey, className: className, db)
            for index in 1...count {
                let key = firstKey + Int64(index - 1)
                let values = fields(index)
                // About 1 KB, a readable body: the fields, and `filler` (without index rows).
                let body = try StoredObjectBody(fields: values.merging(["filler": .string(filler)]) { kept, _ in kept })
                    .encodedDocument()
                try db.execute(
                    sql: """
                        INSERT INTO objects (key, datastore_key, class_name, object_id, body, version, sequence,
                        size_bytes, readers) VALUES (?, ?, ?, ?, ?, 1, 1, 1000, 1)
                        """,
                    arguments: [key, datastoreKey, className, objectId?(index) ?? "\(className)-\(index)", body])
                for (field, value) in values {
                    try db.execute(
                        sql: "INSERT INTO object_fields (object_key, field, kind, sort_key, partition) VALUES (?, ?, ?, ?, ?)",
                        arguments: [key, field, value.kind.rawValue, Data(value.sortKey), partition])
                }
            }
        }
        try await storage.analyze()
    }

    /// The compiler the storage uses for a query of `className` in `datastoreKey`, for a caller
    /// whose reader sets are {1}: its rows read in their partition (``SQLQueryCompiler/valuePartition``).
    static func compiler(_ storage: SQLiteStorage, datastoreKey: Int64, className: String) async throws -> SQLQueryCompiler {
        var compiler = SQLQueryCompiler(dialect: .sqlite, layout: .serverSQLite)
        compiler.readerSets = [1]
        compiler.valuePartition = try await storage.pool.read { db in
            try SQLiteStorage.existingPartition(datastoreKey: datastoreKey, className: className, db)
        }
        return compiler
    }

    /// The plan SQLite makes for `statement` (the details of `EXPLAIN QUERY PLAN`, `; ` between them).
    static func plan(_ storage: SQLiteStorage, _ statement: SQLFragment) async throws -> String {
        try await storage.pool.read { db in
            try Row.fetchAll(
                db, sql: "EXPLAIN QUERY PLAN " + statement.sql, arguments: SQLiteStorage.arguments(statement.arguments)
            ).map { $0["detail"] as String }.joined(separator: "; ")
        }
    }
}
