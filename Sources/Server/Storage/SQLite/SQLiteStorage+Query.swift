import Foundation
import GRDB
import RooftopShared

extension SQLiteStorage {
    private static let compiler = SQLQueryCompiler(dialect: .sqlite)

    /// See ``Storage/find(_:datastoreKey:readers:limit:)``.
    public func find(_ query: Query, datastoreKey: Int64, readers: Set<String>?, limit: Int) async throws -> QueryPage {
        try await pool.read { db in
            try Self.runner(db, datastoreKey: datastoreKey, className: query.className)
                .find(query, datastoreKey: datastoreKey, readers: readers, limit: limit)
        }
    }

    /// See ``Storage/count(_:datastoreKey:readers:)``.
    public func count(_ query: Query, datastoreKey: Int64, readers: Set<String>?) async throws -> Int {
        try await pool.read { db in
            try Self.runner(db, datastoreKey: datastoreKey, className: query.className)
                .count(query, datastoreKey: datastoreKey, readers: readers)
        }
    }

    /// The shared query runner over one read transaction.
    private static func runner(_ db: Database, datastoreKey: Int64, className: String) -> StorageQueryRunner {
        StorageQueryRunner(
            compiler: compiler,
            unindexedFields: {
                Set(
                    try String.fetchAll(
                        db.cachedStatement(
                            sql: """
                                SELECT field FROM unindexed_fields
                                WHERE datastore_key = ? AND class_name = ? AND objects > 0
                                """),
                        arguments: [datastoreKey, className]))
            },
            objects: { select in
                let rows = try Row.fetchCursor(db, sql: select.sql, arguments: arguments(select.arguments))
                var objects: [ObjectSnapshot] = []
                while let row = try rows.next() { objects.append(try snapshot(from: row)) }
                return objects
            },
            count: { count in try Int.fetchOne(db, sql: count.sql, arguments: arguments(count.arguments)) ?? 0 })
    }

    static func arguments(_ arguments: [SQLArgument]) -> StatementArguments {
        StatementArguments(
            arguments.map { argument -> DatabaseValue in
                switch argument {
                case .integer(let value): value.databaseValue
                case .real(let value): value.databaseValue
                case .text(let value): value.databaseValue
                case .blob(let value): Data(value).databaseValue
                }
            })
    }
}
