import Foundation
import GRDB
import RooftopShared

extension SQLiteStorage {
    private static let compiler = SQLQueryCompiler(dialect: .sqlite)

    /// See ``Storage/find(_:datastoreKey:readers:limit:)``.
    public func find(_ query: Query, datastoreKey: Int64, readers: Set<String>?, limit: Int) async throws -> QueryPage {
        try await pool.read { db in
            if let result = try Self.evaluated(query, limit: limit, datastoreKey: datastoreKey, readers: readers, db) {
                return QueryPage(objects: result.objects, totalCount: result.totalCount)
            }
            let select = Self.compiler.select(query, datastoreKey: datastoreKey, readers: readers, limit: limit)
            let rows = try Row.fetchAll(db, sql: select.sql, arguments: Self.arguments(select.arguments))
            let objects = try rows.map(Self.snapshot(from:))
            // A page that is not full holds the last matches: the total is known without counting
            // (in the same read transaction), unless an offset skipped past every match.
            let offset = max(query.offset, 0)
            if objects.count < limit, offset == 0 || !objects.isEmpty {
                let (total, overflow) = offset.addingReportingOverflow(objects.count)
                if !overflow { return QueryPage(objects: objects, totalCount: total) }
            }
            let count = Self.compiler.count(query, datastoreKey: datastoreKey, readers: readers)
            let total = try Int.fetchOne(db, sql: count.sql, arguments: Self.arguments(count.arguments)) ?? 0
            return QueryPage(objects: objects, totalCount: total)
        }
    }

    /// See ``Storage/count(_:datastoreKey:readers:)``.
    public func count(_ query: Query, datastoreKey: Int64, readers: Set<String>?) async throws -> Int {
        try await pool.read { db in
            if let result = try Self.evaluated(query, limit: 0, datastoreKey: datastoreKey, readers: readers, db) {
                return result.totalCount
            }
            let count = Self.compiler.count(query, datastoreKey: datastoreKey, readers: readers)
            return try Int.fetchOne(db, sql: count.sql, arguments: Self.arguments(count.arguments)) ?? 0
        }
    }

    /// Fields of a class with values the index does not store in some live object.
    private static func unindexedFields(_ db: Database, datastoreKey: Int64, className: String) throws -> Set<String> {
        Set(
            try String.fetchAll(
                db.cachedStatement(
                    sql: "SELECT field FROM unindexed_fields WHERE datastore_key = ? AND class_name = ? AND objects > 0"),
                arguments: [datastoreKey, className]))
    }

    /// The query's page (at most `limit` objects, no includes) and total count, evaluated by the
    /// shared evaluator over the candidates SQL selects; `nil` when SQL alone can answer it (see
    /// ``SQLQueryCompiler/evaluation(of:unindexed:)``).
    private static func evaluated(
        _ query: Query, limit: Int, datastoreKey: Int64, readers: Set<String>?, _ db: Database
    ) throws -> QueryResult? {
        let unindexed = try unindexedFields(db, datastoreKey: datastoreKey, className: query.className)
        guard let candidates = compiler.evaluation(of: query, unindexed: unindexed) else { return nil }
        var paged = query
        paged.limit = limit
        paged.includes = []
        let select = compiler.candidates(candidates, datastoreKey: datastoreKey, readers: readers)
        let rows = try Row.fetchCursor(db, sql: select.sql, arguments: arguments(select.arguments))
        var objects: [ObjectSnapshot] = []
        while let row = try rows.next() { objects.append(try snapshot(from: row)) }
        return QueryEvaluator.run(paged, over: objects, lookup: { _ in nil }, canRead: { _ in true })
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
