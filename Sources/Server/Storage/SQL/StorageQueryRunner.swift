import RooftopShared

/// How a backend answers ``Storage/find(_:datastoreKey:readers:limit:)`` and
/// ``Storage/count(_:datastoreKey:readers:)``, the same on every backend: SQL where it decides
/// the query exactly, the shared evaluator over SQL's candidates where it cannot (see
/// ``SQLQueryCompiler/evaluation(of:unindexed:)``). The backend gives it three reads, made in one
/// read transaction.
struct StorageQueryRunner {
    let compiler: SQLQueryCompiler
    /// Fields of the query's class with values the index does not fully store.
    var unindexedFields: () throws -> Set<String>
    /// The objects a compiled `SELECT` of ``objectRowColumns`` finds.
    var objects: (SQLFragment) throws -> [ObjectSnapshot]
    /// The number a compiled `SELECT count(*)` finds.
    var count: (SQLFragment) throws -> Int

    /// A page of `query`'s matches (at most `limit`) and their total count.
    /// - Throws: What the reads throw.
    func find(_ query: Query, datastoreKey: Int64, readers: Set<String>?, limit: Int) throws -> QueryPage {
        if let result = try evaluated(query, limit: limit, datastoreKey: datastoreKey, readers: readers) {
            return QueryPage(objects: result.objects, totalCount: result.totalCount)
        }
        let objects = try self.objects(compiler.select(query, datastoreKey: datastoreKey, readers: readers, limit: limit))
        // A page that is not full holds the last matches: the total is known without counting
        // (in the same read transaction), unless an offset skipped past every match.
        let offset = max(query.offset, 0)
        if objects.count < limit, offset == 0 || !objects.isEmpty {
            let (total, overflow) = offset.addingReportingOverflow(objects.count)
            if !overflow { return QueryPage(objects: objects, totalCount: total) }
        }
        let total = try count(compiler.count(query, datastoreKey: datastoreKey, readers: readers))
        return QueryPage(objects: objects, totalCount: total)
    }

    /// How many objects match `query`'s predicate.
    /// - Throws: What the reads throw.
    func count(_ query: Query, datastoreKey: Int64, readers: Set<String>?) throws -> Int {
        if let result = try evaluated(query, limit: 0, datastoreKey: datastoreKey, readers: readers) {
            return result.totalCount
        }
        return try count(compiler.count(query, datastoreKey: datastoreKey, readers: readers))
    }

    /// The query's page (at most `limit` objects, no includes) and total count, evaluated by the
    /// shared evaluator over the candidates SQL selects; `nil` when SQL alone can answer it.
    private func evaluated(_ query: Query, limit: Int, datastoreKey: Int64, readers: Set<String>?) throws
        -> QueryResult?
    {
        guard let candidates = compiler.evaluation(of: query, unindexed: try unindexedFields()) else { return nil }
        var paged = query
        paged.limit = limit
        paged.includes = []
        let objects = try self.objects(compiler.candidates(candidates, datastoreKey: datastoreKey, readers: readers))
        return QueryEvaluator.run(paged, over: objects, lookup: { _ in nil }, canRead: { _ in true })
    }
}
