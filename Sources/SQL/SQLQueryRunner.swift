import RooftopShared

/// How a store answers a query and a count, the same in every store: SQL where it decides the
/// query exactly, the shared evaluator over SQL's candidates where it cannot (see
/// ``SQLQueryCompiler/evaluation(of:unindexed:)``). The store gives it three reads, made in one
/// read transaction, how a row it reads is decoded, and the scope of the objects queried. `Row`
/// is what the store reads for each object of a page: its ``ObjectSnapshot`` (the server), or its
/// stored text still to be decoded (the client, which decodes an object only when it is read);
/// the shared evaluator, where it decides, reads each through ``snapshot``.
///
/// ```swift
/// let runner = SQLQueryRunner(
///     compiler: compiler, scope: SQLFragment("o.datastore_key = ?", [.integer(key)]),
///     unindexedFields: { try unindexed(db) }, objects: { try snapshots(db, $0) }, count: { try count(db, $0) })
/// let page = try runner.find(query, readers: ["*"], limit: 50)
/// ```
package struct SQLQueryRunner<Row> {
    /// The compiler for the store's dialect and layout (with the query's class's
    /// ``SQLQueryCompiler/indexedFields``).
    package var compiler: SQLQueryCompiler
    /// The condition on `objects o` that scopes every statement.
    package let scope: SQLFragment
    /// Fields of the query's class with values the index does not fully store.
    package var unindexedFields: () throws -> Set<String>
    /// The objects a compiled `SELECT` of the layout's ``SQLIndexLayout/columns`` finds, in order.
    package var objects: (SQLFragment) throws -> [Row]
    /// Calls its second argument with each object a compiled `SELECT` finds, in order, reading
    /// them a few at a time, for the shared evaluator's candidates (which may be every object of
    /// the class); `nil` (the default): ``objects`` reads them all at once.
    package var eachObject: ((SQLFragment, (Row) throws -> Void) throws -> Void)?
    /// The object a row holds (for the shared evaluator, where it decides). The rows of one
    /// runner are of one class in one datastore: their object IDs tell them apart.
    package var snapshot: (Row) throws -> ObjectSnapshot
    /// The number a compiled `SELECT count(*)` finds.
    package var count: (SQLFragment) throws -> Int
    /// The compound indexes of the query's class in the scope (none by default).
    package var indexes: [SQLCompoundIndex] = []
    /// When the index entries of ``indexes`` are exactly the scope's live objects that these
    /// keep (readers included): counts read the entries alone, or the counts kept per first key.
    package var entries: SQLIndexEntries?
    /// How a page is read where two plans can read it (``SQLPagePlan``); matches first by default.
    package var pagePlan = SQLPagePlan.matchesFirst
    /// At least how many live objects the scope holds (of every class; the store's running count),
    /// for ``SQLPagePlan/cheapest`` to weigh a walk of the whole class in ID order; `nil` (the
    /// default): no such walk.
    package var scopeSize: (() throws -> Int)?
    /// Reads the objects an order-first `SELECT` finds as ``objects`` does, or gives up (`nil`)
    /// once the store has done about the work of reading `budget` objects (its own measure:
    /// SQLite's instructions). ``SQLPagePlan/cheapest`` walks only with it: the counts estimate
    /// what a walk reads as if the matches were spread evenly in the walked order, and they may
    /// not be (IDs that start with a timestamp put every recent match at the end of ID order;
    /// tombstones lengthen the walk and are not counted), so a walk past the work of reading the
    /// matches first stops there and the matches-first plan reads the page. `nil` (the default):
    /// no walk under `cheapest`.
    package var boundedObjects: ((SQLFragment, _ budget: Int) throws -> [Row]?)?
    /// Whether every live object of the query's class in the scope may be read by the query's
    /// readers, as the store reads it in the query's transaction, for a store whose value
    /// indexes hold rows of live objects only, per partition (``SQLQueryCompiler/valuePartition``):
    /// then a predicate that one index's keys decide is counted from those keys alone
    /// (``SQLQueryCompiler/keyCount(_:)``), without looking up each match's object for its
    /// readers. `nil` (the default): never so.
    package var everyObjectReadable: (() throws -> Bool)?
    /// Starts counting a compiled `SELECT count(*)` in another read of the same snapshot, so that
    /// a page's total is counted while the page is read (two reads at once, on two cores), where
    /// the store can. What it returns ends the count: called with `true` it gives the count
    /// (waiting for it), or `nil` when the other read could not count in this read's snapshot
    /// (a commit came between them) or had not begun (then it never will): the runner counts
    /// in its own read. Called with `false`, it gives up the count without waiting. `nil` (the
    /// default), or `nil` returned (the store counts enough beside pages already): a page's total
    /// is counted after the page, in its read.
    package var countAside: ((SQLFragment) -> ((_ needed: Bool) -> Int?)?)?

    /// A runner over rows that `snapshot` reads.
    package init(
        compiler: SQLQueryCompiler, scope: SQLFragment, unindexedFields: @escaping () throws -> Set<String>,
        objects: @escaping (SQLFragment) throws -> [Row], snapshot: @escaping (Row) throws -> ObjectSnapshot,
        count: @escaping (SQLFragment) throws -> Int
    ) {
        self.compiler = compiler
        self.scope = scope
        self.unindexedFields = unindexedFields
        self.objects = objects
        self.snapshot = snapshot
        self.count = count
    }

    /// A page of `query`'s matches (at most `limit`, no includes) readable by one of `readers`
    /// (all when `nil`), and their total count.
    /// - Throws: What the reads throw.
    package func find(_ query: Query, readers: Set<String>?, limit: Int) throws -> (objects: [Row], totalCount: Int) {
        if let nearest = try nearestFirst(query, readers: readers, limit: limit) { return nearest }
        if let result = try evaluated(query, limit: limit, readers: readers) {
            return (result.objects, result.totalCount)
        }
        // Counting first pays where the count reads index rows alone: a condition read from the
        // objects' documents would be read twice (a count, then the matches), where a page that
        // is not full needs no count at all.
        if pagePlan != .matchesFirst, SQLCompoundPlan(query, indexes: indexes) == nil,
            let walked = compiler.walkedOrder(of: query), pagePlan == .orderFirst || compiler.readsIndexesOnly(query)
        {
            return try countedFirst(query, walked: walked, readers: readers, limit: limit)
        }
        let select = compiler.select(query, scope: scope, readers: readers, limit: limit, indexes: indexes, entries: entries)
        // The total counted beside the page where the store can, unless it is a look-up of the
        // counts kept per key (cheaper than starting another read); a page without a limit
        // holds every match and needs no count.
        var aside: ((Bool) -> Int?)?
        if let countAside, limit > 0, limit < Int.max {
            let counting = try matchesCount(query, readers: readers)
            if !counting.readsKeptCounts { aside = countAside(counting.sql) }
        }
        defer { _ = aside?(false) }
        let objects = try self.objects(select)
        // A page that is not full holds the last matches: the total is known without counting
        // (in the same read transaction), unless an offset skipped past every match.
        let offset = max(query.offset, 0)
        if objects.count < limit, offset == 0 || !objects.isEmpty {
            let (total, overflow) = offset.addingReportingOverflow(objects.count)
            if !overflow { return (objects, total) }
        }
        if let counted = aside?(true) { return (objects, counted) }
        aside = nil
        let total = try matches(query, readers: readers)
        return (objects, total)
    }

    /// The page of a query that an order-first plan can read (``SQLPagePlan``): the matches
    /// counted first (the page's total count), then the page read by the plan that reads fewer
    /// objects, by ``cheapestWalks(_:end:total:)``.
    /// - Throws: What the reads throw.
    private func countedFirst(
        _ query: Query, walked: SQLQueryCompiler.WalkedOrder, readers: Set<String>?, limit: Int
    ) throws -> (objects: [Row], totalCount: Int) {
        let total = try matches(query, readers: readers)
        let offset = max(query.offset, 0)
        // Counted in the page's own read transaction: no match past the offset, no page (where
        // a walk would read the whole index to find none).
        guard total > offset, limit > 0 else { return ([], total) }
        let (end, overflow) = offset.addingReportingOverflow(limit)
        let matchesFirst = { [self] in
            try self.objects(
                compiler.select(query, scope: scope, readers: readers, limit: limit, indexes: indexes, entries: entries))
        }
        switch pagePlan {
        case .matchesFirst:
            return (try matchesFirst(), total)
        case .orderFirst:
            let walk = compiler.orderFirst(query, scope: scope, readers: readers, limit: limit)
            return (try walk.map(objects) ?? matchesFirst(), total)
        case .cheapest:
            guard !overflow, let boundedObjects, try cheapestWalks(walked, end: end, total: total),
                let walk = compiler.orderFirst(query, scope: scope, readers: readers, limit: limit)
            else { return (try matchesFirst(), total) }
            // Bounded by the work of the other plan, which reads the `total` matches: at worst
            // a page costs twice that, never a walk of the whole index.
            return (try boundedObjects(walk, total) ?? matchesFirst(), total)
        }
    }

    /// Whether walking `walked` in order to a page's `end` reads fewer objects than reading its
    /// `total` matches and sorting them:
    /// - in ID order, the walk reads about `end × size / total` objects of a scope of `size`
    ///   (``scopeSize``, an upper bound: a class smaller than its scope walks less);
    /// - in a field's range, about `end × rows / total`, where `rows` (the field's rows in the
    ///   range, of every scope) is not counted; finding the matches first reads all of those rows
    ///   too, but in the index alone, where the walk looks an object up for each of its share:
    ///   the walk is taken only when the matches are at least ``fieldWalkFactor`` times the
    ///   page's end, so that it reads at most that fraction of the rows.
    /// - Throws: What ``scopeSize`` throws.
    private func cheapestWalks(_ walked: SQLQueryCompiler.WalkedOrder, end: Int, total: Int) throws -> Bool {
        switch walked {
        case .objectId:
            guard let scopeSize else { return false }
            let (walkedRows, overflow) = end.multipliedReportingOverflow(by: try scopeSize())
            guard !overflow else { return false }
            let (squared, large) = total.multipliedReportingOverflow(by: total)
            return large || walkedRows < squared
        case .field:
            let (threshold, overflow) = end.multipliedReportingOverflow(by: Self.fieldWalkFactor)
            return !overflow && total >= threshold
        }
    }

    /// How many times a page's end the matches of a query must be for a walk of its order field's
    /// range to be read instead (see ``cheapestWalks(_:end:total:)``). Below it, finding the matches
    /// first reads fewer than 16 objects per object of the page.
    package static var fieldWalkFactor: Int { 16 }

    /// How many objects readable by one of `readers` (all when `nil`) match `query`'s predicate,
    /// where SQL decides it exactly: from one index's keys alone when the readers may read every
    /// object of the class (``everyObjectReadable``), else by testing each match.
    /// - Throws: What the reads throw.
    private func matches(_ query: Query, readers: Set<String>?) throws -> Int {
        try count(matchesCount(query, readers: readers).sql)
    }

    /// The `SELECT count(*)` that ``matches(_:readers:)`` reads (deciding which may read the
    /// store, in the query's read), and whether it reads the counts kept per key alone
    /// (``SQLQueryCompiler/readsKeptCounts(_:indexes:entries:)``: a look-up, not a walk).
    /// - Throws: What ``everyObjectReadable`` throws.
    private func matchesCount(_ query: Query, readers: Set<String>?) throws -> (sql: SQLFragment, readsKeptCounts: Bool) {
        if let everyObjectReadable, let keys = compiler.keyCount(query), try readers == nil || everyObjectReadable() {
            return (keys, false)
        }
        return (
            compiler.count(query, scope: scope, readers: readers, indexes: indexes, entries: entries),
            compiler.readsKeptCounts(query, indexes: indexes, entries: entries)
        )
    }

    /// How many objects readable by one of `readers` (all when `nil`) match `query`'s predicate.
    /// - Throws: What the reads throw.
    package func count(_ query: Query, readers: Set<String>?) throws -> Int {
        if let result = try evaluated(query, limit: 0, readers: readers, ordered: false) {
            return result.totalCount
        }
        return try matches(query, readers: readers)
    }

    /// The query's page (at most `limit` objects, no includes) and total count, evaluated by the
    /// shared evaluator over the candidates SQL selects; `nil` when SQL alone can answer it.
    private func evaluated(
        _ query: Query, limit: Int, readers: Set<String>?, ordered: Bool = true
    ) throws -> (objects: [Row], totalCount: Int)? {
        guard let candidates = compiler.evaluation(of: query, unindexed: try unindexedFields(), ordered: ordered) else {
            return nil
        }
        var paged = query
        paged.limit = limit
        paged.includes = []
        // Each candidate decoded and tested in turn, only the matches kept (none for a count): a
        // condition SQL cannot read may leave every object of the class a candidate, and a
        // decoded object weighs several times its stored text.
        var rowsById: [String: Row] = [:]
        var matches: [ObjectSnapshot] = []
        var count = 0
        // Of the matches only the first `offset + limit` in the query's order can be on the page:
        // past twice that many, the others are dropped (the evaluator's order is total, ties by
        // ID, so dropping never changes the page).
        let (kept, overflow) = max(query.offset, 0).addingReportingOverflow(limit)
        var first = paged
        (first.offset, first.limit) = (0, kept)
        let (twice, large) = kept.multipliedReportingOverflow(by: 2)
        let most = overflow || large ? Int.max : max(twice, 1_024)
        func test(_ row: Row) throws {
            let snapshot = try self.snapshot(row)
            guard query.predicate.map({ QueryEvaluator.matches(snapshot, $0) }) ?? true else { return }
            count += 1
            guard limit > 0 else { return }
            rowsById[snapshot.objectId] = row
            matches.append(snapshot)
            guard matches.count >= most else { return }
            matches = QueryEvaluator.run(first, over: matches, lookup: { _ in nil }, canRead: { _ in true }).objects
            let ids = Set(matches.map(\.objectId))
            rowsById = rowsById.filter { ids.contains($0.key) }
        }
        let select = compiler.candidates(candidates, scope: scope, readers: readers)
        if let eachObject {
            try eachObject(select, test)
        } else {
            for row in try self.objects(select) { try test(row) }
        }
        guard limit > 0 else { return ([], count) }
        let result = QueryEvaluator.run(paged, over: matches, lookup: { _ in nil }, canRead: { _ in true })
        return (result.objects.compactMap { rowsById[$0.objectId] }, count)
    }
}

extension SQLQueryRunner {
    /// The radii, in meters, ``nearestFirst(_:readers:limit:)`` tries in turn: from 1 km, eight
    /// times wider each time. Past the last, the query runs unnarrowed.
    static var nearestRadii: [Double] { [1e3, 8e3, 64e3, 512e3] }

    /// The page of a query ordered by distance from a point without a maximum distance (`near`
    /// without `within`, no explicit order, a limit): the same query within a radius, widened
    /// until its page is full. Every point within the radius is a match of the narrower query,
    /// and every point beyond it is farther than all of them, so a full page is the query's own
    /// page; the narrower query reads the band of the index around the point instead of
    /// ordering every object of the class by distance. The total count is the query's own, read
    /// first (a count reads no distances): when it cannot fill the page, nothing is narrowed.
    /// At most ``nearestRadii``'s count narrower queries run, each reading less than the
    /// query itself. `nil` when the query is not such a query or no radius fills its page.
    /// - Throws: What the reads throw.
    func nearestFirst(_ query: Query, readers: Set<String>?, limit: Int) throws -> (objects: [Row], totalCount: Int)? {
        guard query.order.isEmpty, let queryLimit = query.limit, queryLimit > 0, limit > 0, limit <= queryLimit,
            let predicate = query.predicate, let anchor = QueryEvaluator.distanceAnchorCondition(predicate),
            anchor.maximum == nil,
            // A field SQL cannot read has no band to narrow to: each radius would read the class.
            !compiler.isUnreadable(anchor.field)
        else { return nil }
        let (end, overflow) = max(query.offset, 0).addingReportingOverflow(limit)
        guard !overflow else { return nil }
        let total = try count(query, readers: readers)
        guard total >= end else { return nil }
        for radius in Self.nearestRadii {
            // The anchor itself within the radius (a point within it has a point): the same order,
            // and no condition left that reads every point of the class.
            var narrowed = query
            narrowed.predicate = Self.bounding(predicate, within: radius)
            let objects =
                try evaluated(narrowed, limit: limit, readers: readers)?.objects
                ?? self.objects(
                    compiler.select(narrowed, scope: scope, readers: readers, limit: limit, indexes: indexes, entries: entries))
            if objects.count == limit { return (objects, total) }
        }
        return nil
    }

    /// `predicate` with its distance anchor (``QueryEvaluator/distanceAnchorCondition(_:)``, the
    /// same walk) limited to `radius` meters.
    private static func bounding(_ predicate: QueryPredicate, within radius: Double) -> QueryPredicate {
        var bounded = false
        func visit(_ predicate: QueryPredicate) -> QueryPredicate {
            guard !bounded else { return predicate }
            switch predicate {
            case .near(let field, let point, _):
                bounded = true
                return .near(field: field, point: point, maxDistanceMeters: radius)
            case .and(let operands):
                return .and(operands.map(visit))
            default:
                return predicate
            }
        }
        return visit(predicate)
    }
}

extension SQLQueryRunner where Row == ObjectSnapshot {
    /// A runner over rows read as objects.
    package init(
        compiler: SQLQueryCompiler, scope: SQLFragment, unindexedFields: @escaping () throws -> Set<String>,
        objects: @escaping (SQLFragment) throws -> [ObjectSnapshot], count: @escaping (SQLFragment) throws -> Int,
        scopeSize: (() throws -> Int)? = nil
    ) {
        self.init(
            compiler: compiler, scope: scope, unindexedFields: unindexedFields, objects: objects, snapshot: { $0 },
            count: count)
        self.scopeSize = scopeSize
    }
}
