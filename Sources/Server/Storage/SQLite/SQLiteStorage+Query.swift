import Foundation
import GRDB
import RooftopShared

extension SQLiteStorage {
    private static let compiler = SQLQueryCompiler(dialect: .sqlite)

    /// See ``Storage/find(_:datastoreKey:readers:limit:)``.
    public func find(_ query: Query, datastoreKey: Int64, readers: Set<String>?, limit: Int) async throws -> QueryPage {
        let select = Self.compiler.select(query, datastoreKey: datastoreKey, readers: readers, limit: limit)
        let count = Self.compiler.count(query, datastoreKey: datastoreKey, readers: readers)
        return try await pool.read { db in
            let rows = try Row.fetchAll(db, sql: select.sql, arguments: Self.arguments(select.arguments))
            let total = try Int.fetchOne(db, sql: count.sql, arguments: Self.arguments(count.arguments)) ?? 0
            return QueryPage(objects: try rows.map(Self.snapshot(from:)), totalCount: total)
        }
    }

    /// See ``Storage/count(_:datastoreKey:readers:)``.
    public func count(_ query: Query, datastoreKey: Int64, readers: Set<String>?) async throws -> Int {
        let count = Self.compiler.count(query, datastoreKey: datastoreKey, readers: readers)
        return try await pool.read { db in
            try Int.fetchOne(db, sql: count.sql, arguments: Self.arguments(count.arguments)) ?? 0
        }
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
