import Foundation
import RooftopShared

/// Compiles the shared query AST into SQL over the storage's index tables, so that the server
/// answers every query exactly as ``QueryEvaluator`` would.
///
/// Every comparison is made on `object_fields.sort_key`, the value's order-preserving key
/// (``Value/sortKey``), so SQL's bytewise blob order is the shared value order. Field names,
/// values and IDs are always bound as arguments; nothing from the query is spliced into the SQL
/// text. Only validated queries should be compiled.
///
/// Every statement is scoped by a condition the store gives (`scope`: the server's
/// `o.datastore_key = ?`, the client's account and datastore), then the query's class, live
/// objects and, unless `readers` is `nil`, objects one of the readers may read.
///
/// ```swift
/// let compiler = SQLQueryCompiler(dialect: .sqlite, layout: layout)
/// let page = compiler.select(query, scope: SQLFragment("o.datastore_key = ?", [.integer(7)]), readers: ["*"], limit: 50)
/// ```
package struct SQLQueryCompiler: Sendable {
    /// How the backend spells what differs.
    package let dialect: SQLDialect
    /// The store's tables.
    package let layout: SQLIndexLayout
    /// The joins left to the planner in the query being compiled (``SQLDialect/plannedJoins``).
    var joins: JoinBudget?
    /// The fields of the query's class whose rows the store keeps in its value indexes (the rows
    /// whose ``SQLIndexLayout/valueFlag`` is 1); `nil` (the default) when it keeps every field's.
    /// Conditions on another field test each object's own rows, or its document when the store
    /// keeps no rows of it (``SQLIndexLayout/document``). In a layout with neither a flag nor a
    /// document, a field it does not name has no rows at all: queries on it are left to the
    /// shared evaluator (``isUnreadable(_:)``).
    package var indexedFields: Set<String>?
    /// The fields of the query's class whose `object_fields` rows the store keeps out of the
    /// value index, because each leads a compound index (``SQLCompoundIndex``) whose entries find
    /// its values (their `k1`): by field, the partition of such an index in the query's scope,
    /// `nil` when the scope has none (no object of the class there). Key conditions on these
    /// fields read the entries, and a list element's test the index's element entries
    /// (``SQLCompoundIndex/elementEntries``, whose `object_elements` rows are kept out of the
    /// value index too); other tests (presence, points) each object's own row.
    /// Empty (the default) for a store without entries.
    package var entryKeyed: [String: Int64?] = [:]
    /// The reader sets (`objects.readers`, ``SQLIndexRows/readerSet(of:)``) that have one of the
    /// query's readers as a member, when the store keeps each object's set and the caller's are
    /// few enough to name (at most ``maxReaderSets``): an object is readable when its set is one
    /// of these, a test of its own row (and of the index on `(scope, class, readers)` for a
    /// count) instead of a look-up of its readers. `nil` (the default): the layout's test.
    package var readerSets: [Int64]?
    /// The partition of the query's scope and class in a store whose value indexes are kept per
    /// partition (the SQLite server's: `object_fields` and `object_elements` rows carry their
    /// object's `partition`, one per datastore and class, and the value indexes lead with it), so
    /// that a condition's rows are those of the query's own datastore and class, not of every
    /// datastore holding the field. `nil` (the default): the value indexes are read by field.
    /// It only narrows what the indexes read: every statement still tests each object's scope
    /// and class.
    package var valuePartition: Int64?

    /// The most reader sets a query names (``readerSets``); a caller who is a member of more
    /// (a role that reads every user's private objects) is tested object by object.
    package static let maxReaderSets = 256

    /// How many `reader_set_members` rows a store reads for a caller with `readers` (at most
    /// ``maxReaderSets`` + 1 per principal, so that a principal in millions of sets costs what one
    /// in 257 does); `nil` when the caller is not tested by reader sets: no limit (`nil`), or not
    /// counted among everyone (`*`, which every caller's principals hold; a set holding `*`
    /// stands for all of its readers only for those).
    package static func readerSetReadLimit(for readers: Set<String>?) -> Int? {
        guard let readers, readers.contains("*") else { return nil }
        let (bound, overflow) = (maxReaderSets + 1).multipliedReportingOverflow(by: readers.count)
        return overflow ? Int.max : bound
    }

    /// ``readerSets`` from the memberships a store read for a caller's principals (each set once
    /// per principal of it, read up to ``readerSetReadLimit(for:)``): `nil` when they name more
    /// than ``maxReaderSets`` sets.
    package static func readerSets(_ memberships: [Int64]) -> [Int64]? {
        let sets = Set(memberships)
        return sets.count > maxReaderSets ? nil : sets.sorted()
    }

    /// A compiler for `dialect` over `layout`.
    package init(dialect: SQLDialect, layout: SQLIndexLayout) {
        self.dialect = dialect
        self.layout = layout
    }

    /// What is left of ``SQLDialect/plannedJoins`` while one query's conditions are compiled.
    final class JoinBudget: @unchecked Sendable {
        // Used by one compilation, on one thread, and dropped with it.
        var remaining: Int
        init(_ remaining: Int) { self.remaining = remaining }
    }

    /// The `SELECT` of a page: matching live objects of the query's class in the datastore,
    /// readable by one of `readers` (all when `nil`), in the query's order, with offset and limit.
    /// Selects the layout's ``SQLIndexLayout/columns``.
    package func select(_ query: Query, scope: SQLFragment, readers: Set<String>?, limit: Int) -> SQLFragment {
        var joins = SQLFragment()
        var orderBy: [SQLFragment] = []
        if query.order.isEmpty, let anchor = QueryEvaluator.distanceAnchor(query.predicate), let distanceSQL = dialect.distance {
            if isRowless(anchor.field) {
                let distance = documentDistance(anchor.field)
                let arguments = distance.arguments + [.real(anchor.point.latitude), .real(anchor.point.longitude)]
                orderBy.append(SQLFragment("CASE WHEN \(distance.sql) IS NULL THEN 1 ELSE 0 END", arguments))
                orderBy.append(SQLFragment(distance.sql, arguments))
            } else {
                joins = SQLFragment(" LEFT JOIN object_fields a ON a.object_key = o.key AND a.field = ?", [.text(anchor.field)])
                let point = (latitude: SQLFragment("a.latitude"), longitude: SQLFragment("a.longitude"))
                orderBy.append(SQLFragment("CASE WHEN ") + point.latitude + SQLFragment(" IS NULL THEN 1 ELSE 0 END"))
                orderBy.append(distance(distanceSQL, point, to: anchor.point))
            }
            return finish(query, scope: scope, readers: readers, limit: limit, joins: joins, orderBy: orderBy)
        }
        for (index, key) in query.order.enumerated() {
            let (join, keys) = orderKey(key, alias: "s\(index)")
            joins = joins + join
            orderBy.append(keys)
        }
        return finish(query, scope: scope, readers: readers, limit: limit, joins: joins, orderBy: orderBy)
    }

    /// What ordering by `key` takes: the join of the field's row (as `alias`), when it has rows,
    /// and the `ORDER BY` terms.
    func orderKey(_ key: QueryOrder, alias: String) -> (join: SQLFragment, order: SQLFragment) {
        let sortKey: SQLFragment
        var join = SQLFragment()
        if let column = builtInColumn(key.field) {
            // The column itself, in its keys' order (``builtInColumn(_:)``'s note).
            sortKey = SQLFragment(ordered(column))
        } else if isRowless(key.field) {
            sortKey = documentColumn(key.field, "key")
        } else {
            join = SQLFragment(
                " LEFT JOIN object_fields \(alias) ON \(alias).object_key = o.key AND \(alias).field = ?", [.text(key.field)])
            sortKey = SQLFragment("\(alias).sort_key")
        }
        // A missing key (NULL) sorts first ascending and last descending, as in the evaluator.
        let order =
            key.descending
            ? SQLFragment("CASE WHEN ") + sortKey + SQLFragment(" IS NULL THEN 1 ELSE 0 END, ") + sortKey
                + SQLFragment(" DESC")
            : SQLFragment("CASE WHEN ") + sortKey + SQLFragment(" IS NULL THEN 0 ELSE 1 END, ") + sortKey
                + SQLFragment(" ASC")
        return (join, order)
    }

    private func finish(
        _ query: Query, scope: SQLFragment, readers: Set<String>?, limit: Int, joins: SQLFragment, orderBy: [SQLFragment]
    ) -> SQLFragment {
        let filter = self.filter(query, scope: scope, readers: readers)
        let order = (orderBy + [SQLFragment(dialect.bytewiseText("o.object_id") + " ASC")])
        let statement =
            SQLFragment("SELECT \(layout.columns) FROM \(layout.source)")
            + joins + SQLFragment(" WHERE ") + filter + SQLFragment(" ORDER BY ")
            + order.dropFirst().reduce(order[0]) { $0 + SQLFragment(", ") + $1 }
            + SQLFragment(" LIMIT ? OFFSET ?", [.integer(Int64(limit)), .integer(Int64(max(query.offset, 0)))])
        return numbered(statement)
    }

    /// The `SELECT` of every live object of the query's class in the datastore, readable by one of
    /// `readers`, that meets the query's predicate, in no particular order: the candidates the
    /// shared evaluator decides on when SQL cannot (see ``evaluation(of:unindexed:)``).
    package func candidates(_ query: Query, scope: SQLFragment, readers: Set<String>?) -> SQLFragment {
        numbered(
            SQLFragment("SELECT \(layout.columns) FROM \(layout.source) WHERE ")
                + filter(query, scope: scope, readers: readers))
    }

    /// What SQL can decide of a query when some objects of its class hold values of `unindexed`
    /// fields that the index does not store (keys longer than ``Value/indexedKeyLimit``): `nil`
    /// when it can decide all of it; otherwise the query reduced to the top-level conditions SQL
    /// decides exactly (no order, no paging), whose matches the shared evaluator then filters,
    /// orders and pages with the whole query.
    ///
    /// Conditions that compare keys (comparisons, `in`, `startsWith`, list membership) and orders
    /// on such a field need the evaluator; `exists`, geo conditions and `thisIn` never do (every
    /// field has a row with its kind and coordinates, whatever its length). Every condition on
    /// and order by a field SQL cannot read at all (``isUnreadable(_:)``) needs it too.
    ///
    /// A dialect without ``SQLDialect/distance`` sends queries with distance conditions or a
    /// distance order the same way; a top-level `near` within a distance stays in the reduced
    /// query there, where SQL reads only the band of latitudes and the longitudes in reach (a
    /// superset of its matches, see ``fieldTest(of:)``), so that the evaluator decides over the
    /// points near enough instead of the whole class. `ordered` (default `true`): whether the
    /// query's order matters (`false` for a count).
    package func evaluation(of query: Query, unindexed: Set<String>, ordered: Bool = true) -> Query? {
        let distanceOrder = ordered && dialect.distance == nil && query.order.isEmpty
            && QueryEvaluator.distanceAnchor(query.predicate) != nil
        let exactPredicate = query.predicate.map { isExact($0, unindexed: unindexed) } ?? true
        let exactOrder =
            !ordered
            || query.order.allSatisfy { !unindexed.contains($0.field) && !isUnreadable($0.field) } && !distanceOrder
        guard !exactOrder || !exactPredicate else { return nil }
        var reduced = query
        reduced.order = []
        reduced.offset = 0
        reduced.limit = nil
        let operands: [QueryPredicate] =
            switch query.predicate {
            case .and(let operands)?: operands
            case let predicate?: [predicate]
            case nil: []
            }
        let exact = operands.filter { operand in
            if case .near(let field, _, _?) = operand { return !isUnreadable(field) }
            return isExact(operand, unindexed: unindexed)
        }
        reduced.predicate = exact.isEmpty ? nil : .and(exact)
        return reduced
    }

    /// The fields whose index keys `query` compares or orders by: the only fields whose
    /// unindexed values make ``evaluation(of:unindexed:)`` hand the query to the evaluator (a
    /// store may look up just these).
    package static func keyedFields(of query: Query) -> Set<String> {
        var fields = Set(query.order.map(\.field))
        func visit(_ predicate: QueryPredicate) {
            switch predicate {
            case .and(let operands), .or(let operands): operands.forEach(visit)
            case .not(let operand): visit(operand)
            case .comparison(let field, _, _), .in(let field, _), .notIn(let field, _), .startsWith(let field, _),
                .listContains(let field, _), .containsAll(let field, _):
                fields.insert(field)
            case .exists, .notExists, .withinBox, .thisIn, .near: break
            }
        }
        query.predicate.map(visit)
        return fields
    }

    /// Whether SQL decides `predicate` exactly on an index that lacks some keys of `unindexed`
    /// and all of the fields it cannot read (``isUnreadable(_:)``).
    private func isExact(_ predicate: QueryPredicate, unindexed: Set<String>) -> Bool {
        switch predicate {
        case .and(let operands), .or(let operands): operands.allSatisfy { isExact($0, unindexed: unindexed) }
        case .not(let operand): isExact(operand, unindexed: unindexed)
        case .thisIn: true
        case .exists(let field), .notExists(let field), .withinBox(let field, _, _): !isUnreadable(field)
        case .near(let field, _, let maximum): !isUnreadable(field) && (maximum == nil || dialect.distance != nil)
        case .comparison(let field, _, _), .in(let field, _), .notIn(let field, _), .startsWith(let field, _),
            .listContains(let field, _), .containsAll(let field, _):
            !unindexed.contains(field) && !isUnreadable(field)
        }
    }

    /// The `SELECT count(*)` of the query's matches.
    package func count(_ query: Query, scope: SQLFragment, readers: Set<String>?) -> SQLFragment {
        numbered(SQLFragment("SELECT count(*) FROM objects o WHERE ") + filter(query, scope: scope, readers: readers))
    }

    /// The conditions every query has: scope, class, live, readable; then the predicate.
    package func filter(_ query: Query, scope: SQLFragment, readers: Set<String>?) -> SQLFragment {
        var scoped = self
        scoped.joins = JoinBudget(dialect.plannedJoins)
        return scoped.budgetedFilter(query, scope: scope, readers: readers)
    }

    /// The filter, with the joins left in ``joins``; `readersTested`: the readers' test written as
    /// a test of the object at hand (`(…) IS TRUE`), never an index the planner starts from.
    func budgetedFilter(
        _ query: Query, scope: SQLFragment, readers: Set<String>?, readersTested: Bool = false
    ) -> SQLFragment {
        var filter =
            scope + SQLFragment(" AND o.class_name = ? AND \(dialect.live)", [.text(query.className)])
        if let readers {
            let test = readable(by: readers)
            filter = filter + SQLFragment(" AND ") + (readersTested ? parenthesized(test) + SQLFragment(" IS TRUE") : test)
        }
        if let predicate = query.predicate {
            filter = filter + SQLFragment(" AND ") + condition(predicate)
        }
        return filter
    }

    private func readable(by readers: Set<String>) -> SQLFragment {
        guard !readers.isEmpty else { return SQLFragment("0 = 1") }
        if let readerSets {
            guard !readerSets.isEmpty else { return SQLFragment("0 = 1") }
            return SQLFragment("o.readers IN (\(placeholderList(readerSets.count)))", readerSets.map { .integer($0) })
        }
        let set = SQLTextSet.list(readers, dialect: dialect)
        switch layout.readers {
        case .perObject(let current):
            return SQLFragment(
                "EXISTS (SELECT 1 FROM object_readers r WHERE r.object_key = o.key\(current.map { " AND " + $0 } ?? "")"
                    + " AND r.principal IN (\(set.sql)))",
                set.arguments.map { .text($0) })
        case .sets:
            return SQLFragment(
                "o.readers IN (SELECT r.reader_set FROM reader_set_members r WHERE r.principal IN (\(set.sql)))",
                set.arguments.map { .text($0) })
        case .setsAndRows(let current):
            let sets = SQLFragment(
                "o.readers IN (SELECT r.reader_set FROM reader_set_members r WHERE r.principal IN (\(set.sql)))",
                set.arguments.map { .text($0) })
            // A caller holding `*` reads every object whose set is `*` alone: the rows add nothing.
            guard !readers.contains("*") else { return sets }
            return SQLFragment("(") + sets
                + SQLFragment(
                    " OR EXISTS (SELECT 1 FROM object_readers r WHERE r.object_key = o.key AND \(current)"
                        + " AND r.principal IN (\(set.sql))))", set.arguments.map { .text($0) })
        }
    }

    func thisIn(_ references: [ObjectReference]) -> SQLFragment {
        var ids = Set<String>()
        var pointers: [Pointer] = []
        for reference in references {
            switch reference {
            case .objectId(let id): ids.insert(id)
            case .pointer(let pointer): pointers.append(pointer)
            }
        }
        var alternatives: [SQLFragment] = []
        if !ids.isEmpty {
            alternatives.append(
                SQLFragment("o.object_id IN (\(placeholderList(ids.count)))", ids.sorted().map { .text($0) }))
        }
        for pointer in pointers {
            alternatives.append(
                SQLFragment("(o.class_name = ? AND o.object_id = ?)", [.text(pointer.className), .text(pointer.objectId)]))
        }
        return alternatives.isEmpty ? SQLFragment("0 = 1") : joined(alternatives, with: " OR ")
    }

    /// `o.key IN (keys)`.
    func member(_ keys: SQLFragment) -> SQLFragment {
        budgeted(SQLFragment("o.key IN (") + keys + SQLFragment(")"))
    }

    /// `membership` as it is, while the planner may still join it; past the dialect's
    /// ``SQLDialect/plannedJoins``, as `(…) IS TRUE`, which means the same (the sub-query yields
    /// no `NULL` keys, so `IN` is never unknown) but which the planner keeps as a sub-plan.
    func budgeted(_ membership: SQLFragment) -> SQLFragment {
        guard let joins else { return membership }
        guard joins.remaining <= 0 else {
            joins.remaining -= 1
            return membership
        }
        return SQLFragment("(") + membership + SQLFragment(") IS TRUE")
    }

    /// `(a SEP b SEP c …)`, grouped as a balanced tree: SQL parsers nest `a OR b OR c …` as deep
    /// as the list is long (SQLite refuses beyond 1000 levels), halves keep it logarithmic.
    func joined(_ fragments: [SQLFragment], with separator: String) -> SQLFragment {
        guard fragments.count > 2 else {
            return SQLFragment("(") + (fragments.first ?? SQLFragment())
                + (fragments.count == 2 ? SQLFragment(separator) + fragments[1] : SQLFragment()) + SQLFragment(")")
        }
        let middle = fragments.count / 2
        return SQLFragment("(") + joined(Array(fragments[..<middle]), with: separator) + SQLFragment(separator)
            + joined(Array(fragments[middle...]), with: separator) + SQLFragment(")")
    }

    func parenthesized(_ fragment: SQLFragment) -> SQLFragment {
        SQLFragment("(") + fragment + SQLFragment(")")
    }

    /// Renumbers `?` placeholders in the dialect's spelling (a no-op for SQLite).
    func numbered(_ fragment: SQLFragment) -> SQLFragment {
        guard dialect.numbersPlaceholders else { return fragment }
        var index = 0
        var sql = ""
        for character in fragment.sql {
            if character == "?" {
                index += 1
                sql += dialect.placeholder(index)
            } else {
                sql.append(character)
            }
        }
        return SQLFragment(sql, fragment.arguments)
    }

    /// A comparison of a key with another: the operator and the key compared with.
    package typealias KeyBound = (op: QueryPredicate.ComparisonOperator, key: [UInt8])

    /// Range comparisons of one key (`>`, `>=`, `<`, `<=`) reduced to the tightest lower and the
    /// tightest upper bound, which hold for exactly the keys all of them hold for: of the lower
    /// bounds the highest key (on the same key, `>` over `>=`), of the upper bounds the lowest
    /// (`<` over `<=`). Keys compare as bytes, as SQL compares blobs. Lower bound first; any
    /// other operator is kept as it is, after them.
    package static func tightestBounds(_ bounds: [KeyBound]) -> [KeyBound] {
        var lower: KeyBound?
        var upper: KeyBound?
        var others: [KeyBound] = []
        for bound in bounds {
            switch bound.op {
            case .greater, .greaterOrEqual:
                if tightens(bound, lower, strict: .greater, beyond: { $1.lexicographicallyPrecedes($0) }) { lower = bound }
            case .less, .lessOrEqual:
                if tightens(bound, upper, strict: .less, beyond: { $0.lexicographicallyPrecedes($1) }) { upper = bound }
            default:
                others.append(bound)
            }
        }
        return [lower, upper].compactMap { $0 } + others
    }

    /// Whether `bound` bounds tighter than `kept` (any bound does, when none is kept): its key
    /// lies `beyond` `kept`'s, or is the same with the `strict` operator where `kept` has the
    /// other.
    private static func tightens(
        _ bound: KeyBound, _ kept: KeyBound?, strict: QueryPredicate.ComparisonOperator,
        beyond: ([UInt8], [UInt8]) -> Bool
    ) -> Bool {
        guard let kept else { return true }
        if bound.key == kept.key { return bound.op == strict && kept.op != strict }
        return beyond(bound.key, kept.key)
    }

    /// The smallest byte string greater than every string that starts with `bytes`, or `nil` when
    /// there is none (all bytes are 0xFF).
    package static func successor(of bytes: [UInt8]) -> [UInt8]? {
        var result = bytes
        while let last = result.last {
            if last < 0xFF {
                result[result.count - 1] = last + 1
                return result
            }
            result.removeLast()
        }
        return nil
    }
}
