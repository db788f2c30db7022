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
    private var joins: JoinBudget?
    /// The fields of the query's class whose rows the store keeps in its value indexes (the rows
    /// whose ``SQLIndexLayout/valueFlag`` is 1); `nil` (the default) when it keeps every field's.
    /// Conditions on another field test each object's own rows. Ignored by a layout without a
    /// flag, whose value indexes hold every row.
    package var indexedFields: Set<String>?

    /// A compiler for `dialect` over `layout`.
    package init(dialect: SQLDialect, layout: SQLIndexLayout) {
        self.dialect = dialect
        self.layout = layout
    }

    /// What is left of ``SQLDialect/plannedJoins`` while one query's conditions are compiled.
    private final class JoinBudget: @unchecked Sendable {
        // Used by one compilation, on one thread, and dropped with it.
        var remaining: Int
        init(_ remaining: Int) { self.remaining = remaining }
    }

    /// The `SELECT` of a page: matching live objects of the query's class in the datastore,
    /// readable by one of `readers` (all when `nil`), in the query's order, with offset and limit.
    /// Selects the layout's ``SQLIndexLayout/columns``.
    package func select(_ query: Query, scope: SQLFragment, readers: Set<String>?, limit: Int) -> SQLFragment {
        var joins = SQLFragment()
        var orderBy: [String] = []
        if query.order.isEmpty, let anchor = QueryEvaluator.distanceAnchor(query.predicate), let distanceSQL = dialect.distance {
            joins = joins + SQLFragment(
                " LEFT JOIN object_fields a ON a.object_key = o.key AND a.field = ?", [.text(anchor.field)])
            let distance = distanceSQL("a.latitude", "a.longitude", "?", "?")
            orderBy.append("CASE WHEN a.latitude IS NULL THEN 1 ELSE 0 END")
            orderBy.append(distance)
            joins.arguments += []
            return finish(
                query, scope: scope, readers: readers, limit: limit, joins: joins, orderBy: orderBy,
                orderArguments: [.real(anchor.point.latitude), .real(anchor.point.longitude)])
        }
        for (index, key) in query.order.enumerated() {
            joins = joins + SQLFragment(
                " LEFT JOIN object_fields s\(index) ON s\(index).object_key = o.key AND s\(index).field = ?",
                [.text(key.field)])
            // A missing key (NULL) sorts first ascending and last descending, as in the evaluator.
            orderBy.append(
                key.descending
                    ? "CASE WHEN s\(index).sort_key IS NULL THEN 1 ELSE 0 END, s\(index).sort_key DESC"
                    : "CASE WHEN s\(index).sort_key IS NULL THEN 0 ELSE 1 END, s\(index).sort_key ASC")
        }
        return finish(
            query, scope: scope, readers: readers, limit: limit, joins: joins, orderBy: orderBy, orderArguments: [])
    }

    private func finish(
        _ query: Query, scope: SQLFragment, readers: Set<String>?, limit: Int, joins: SQLFragment,
        orderBy: [String], orderArguments: [SQLArgument]
    ) -> SQLFragment {
        let filter = self.filter(query, scope: scope, readers: readers)
        let order = (orderBy + [dialect.bytewiseText("o.object_id") + " ASC"]).joined(separator: ", ")
        let statement =
            SQLFragment("SELECT \(layout.columns) FROM \(layout.source)")
            + joins + SQLFragment(" WHERE ") + filter + SQLFragment(" ORDER BY \(order)", orderArguments)
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
    /// field has a row with its kind and coordinates, whatever its length).
    ///
    /// A dialect without ``SQLDialect/distance`` sends queries with distance conditions or a
    /// distance order the same way.
    package func evaluation(of query: Query, unindexed: Set<String>) -> Query? {
        let distanceOrder = dialect.distance == nil && query.order.isEmpty
            && QueryEvaluator.distanceAnchor(query.predicate) != nil
        let exactPredicate = query.predicate.map { isExact($0, unindexed: unindexed) } ?? true
        guard !unindexed.isEmpty || distanceOrder || !exactPredicate else { return nil }
        let exactOrder = query.order.allSatisfy { !unindexed.contains($0.field) } && !distanceOrder
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
        let exact = operands.filter { isExact($0, unindexed: unindexed) }
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

    /// Whether SQL decides `predicate` exactly on an index that lacks some keys of `unindexed`.
    private func isExact(_ predicate: QueryPredicate, unindexed: Set<String>) -> Bool {
        switch predicate {
        case .and(let operands), .or(let operands): operands.allSatisfy { isExact($0, unindexed: unindexed) }
        case .not(let operand): isExact(operand, unindexed: unindexed)
        case .exists, .notExists, .withinBox, .thisIn: true
        case .near(_, _, let maximum): maximum == nil || dialect.distance != nil
        case .comparison(let field, _, _), .in(let field, _), .notIn(let field, _), .startsWith(let field, _),
            .listContains(let field, _), .containsAll(let field, _):
            !unindexed.contains(field)
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

    private func budgetedFilter(_ query: Query, scope: SQLFragment, readers: Set<String>?) -> SQLFragment {
        var filter =
            scope + SQLFragment(" AND o.class_name = ? AND \(dialect.live)", [.text(query.className)])
        if let readers {
            filter = filter + SQLFragment(" AND ") + readable(by: readers)
        }
        if let predicate = query.predicate {
            filter = filter + SQLFragment(" AND ") + condition(predicate)
        }
        return filter
    }

    private func readable(by readers: Set<String>) -> SQLFragment {
        guard !readers.isEmpty else { return SQLFragment("0 = 1") }
        let set = SQLTextSet.list(readers, dialect: dialect)
        let current = layout.currentReader.map { " AND " + $0 } ?? ""
        return SQLFragment(
            "EXISTS (SELECT 1 FROM object_readers r WHERE r.object_key = o.key\(current)"
                + " AND r.principal IN (\(set.sql)))",
            set.arguments.map { .text($0) })
    }

    /// The SQL of one predicate, true exactly when ``QueryEvaluator/matches(_:_:)`` is.
    package func condition(_ predicate: QueryPredicate) -> SQLFragment {
        switch predicate {
        case .and(let operands):
            guard !operands.isEmpty else { return SQLFragment("1 = 1") }
            return joined(conjunction(operands), with: " AND ")
        case .or(let operands):
            guard !operands.isEmpty else { return SQLFragment("0 = 1") }
            if let union = keys(of: predicate) { return member(union) }
            return joined(operands.map(condition), with: " OR ")
        case .not(let operand):
            return SQLFragment("NOT ") + parenthesized(condition(operand))
        case .comparison(let field, .notEqual, let value):
            return SQLFragment("NOT ") + fieldExists(field, SQLFragment("f.sort_key = ?", [.blob(value.sortKey)]))
        case .notIn(let field, let values):
            return SQLFragment("NOT ") + condition(.in(field: field, values: values))
        case .notExists(let field):
            return SQLFragment("NOT ") + fieldExists(field, nil)
        case .containsAll(let field, let values):
            let collection = fieldExists(
                field,
                SQLFragment(
                    "f.kind IN (?, ?)",
                    [.integer(Int64(Value.Kind.list.rawValue)), .integer(Int64(Value.Kind.relation.rawValue))]))
            return joined([collection] + values.map { holds(elementTest($0, field)) }, with: " AND ")
        case .thisIn(let references):
            return SQLFragment("(") + thisIn(references) + SQLFragment(")")
        case .comparison, .in, .exists, .startsWith, .listContains, .near, .withinBox:
            // Tests of one field's rows, which `rowTest(of:)` gives for each of these except the
            // ones that can match nothing (an `in` without values, a prefix past every key).
            return rowTest(of: predicate).map(holds) ?? SQLFragment("0 = 1")
        }
    }

    /// The most operands of an `or` read as one union of key sets (SQLite allows 500 terms in a
    /// compound `SELECT`); a wider `or` is tested operand by operand.
    static let maxUnionTerms = 64

    /// The `SELECT` of the keys of the objects a predicate holds for, when it is a test of one
    /// value-indexed field's rows (or an `or` of such tests: their union, which lets the index find
    /// the matches of each instead of testing every object of the class); `nil` for any other
    /// predicate, and for one that matches nothing.
    private func keys(of predicate: QueryPredicate) -> SQLFragment? {
        if case .or(let operands) = predicate {
            guard operands.count >= 2, operands.count <= SQLQueryCompiler.maxUnionTerms else { return nil }
            var union: [SQLFragment] = []
            for operand in operands {
                // A nested `or` would be a union inside the union: left to the general form.
                if case .or = operand { return nil }
                guard let rows = keys(of: operand) else { return nil }
                union.append(rows)
            }
            return union.dropFirst().reduce(union[0]) { $0 + SQLFragment(" UNION ") + $1 }
        }
        guard let test = rowTest(of: predicate), isValueIndexed(test.field) else { return nil }
        return keySet(test)
    }

    /// A test of one field's rows: which rows (the field's own, or its elements') and the
    /// condition on them.
    private struct RowTest {
        /// `object_fields f` or `object_elements e`.
        var elements = false
        var field: String
        var test: SQLFragment?
    }

    /// The test of one field's rows that `predicate` is; `nil` for any other predicate, and for
    /// one that matches nothing (an `in` without values, a prefix past every key).
    private func rowTest(of predicate: QueryPredicate) -> RowTest? {
        switch predicate {
        case .comparison(let field, let op, let value):
            guard op != .notEqual else { return nil }
            return RowTest(field: field, test: SQLFragment("f.sort_key \(op.rawValue) ?", [.blob(value.sortKey)]))
        case .in(let field, let values):
            guard !values.isEmpty else { return nil }
            let keys = Set(values.map(\.sortKey)).sorted { $0.lexicographicallyPrecedes($1) }
            return RowTest(
                field: field, test: SQLFragment("f.sort_key IN (\(placeholderList(keys.count)))", keys.map { .blob($0) }))
        case .exists(let field):
            return RowTest(field: field, test: nil)
        case .startsWith(let field, let prefix):
            // String keys are the kind byte and the escaped UTF-8: a string starts with the prefix
            // exactly when its key starts with the prefix's key without its terminator.
            var lower = Value.string(prefix).sortKey
            lower.removeLast(2)
            guard let upper = SQLQueryCompiler.successor(of: lower) else { return nil }
            return RowTest(field: field, test: SQLFragment("f.sort_key >= ? AND f.sort_key < ?", [.blob(lower), .blob(upper)]))
        case .listContains(let field, let value):
            return elementTest(value, field)
        case .near(let field, let point, let maximum):
            var test = SQLFragment("f.latitude IS NOT NULL")
            if let maximum, let band = SQLQueryCompiler.latitudeBand(around: point, within: maximum) {
                // Only points in the band can be that close: read that range of the index.
                test = test + SQLFragment(" AND f.sort_key >= ? AND f.sort_key <= ?", [.blob(band.low), .blob(band.high)])
            }
            // Without SQL distance this is only "has a point": ``evaluation(of:unindexed:)`` sends
            // every query with a maximum distance to the evaluator, which decides it.
            if let maximum, let distance = dialect.distance {
                test = test + SQLFragment(
                    " AND " + distance("f.latitude", "f.longitude", "?", "?") + " <= ?",
                    [.real(point.latitude), .real(point.longitude), .real(maximum)])
            }
            return RowTest(field: field, test: test)
        case .withinBox(let field, let southwest, let northeast):
            var test = SQLFragment(
                "f.latitude IS NOT NULL AND f.latitude >= ? AND f.latitude <= ?",
                [.real(southwest.latitude), .real(northeast.latitude)])
            if southwest.longitude <= northeast.longitude {
                test = test + SQLFragment(
                    " AND f.longitude >= ? AND f.longitude <= ?", [.real(southwest.longitude), .real(northeast.longitude)])
            } else {
                test = test + SQLFragment(
                    " AND (f.longitude >= ? OR f.longitude <= ?)", [.real(southwest.longitude), .real(northeast.longitude)])
            }
            return RowTest(field: field, test: test)
        case .or, .and, .not, .notIn, .notExists, .containsAll, .thisIn:
            return nil
        }
    }

    /// The conditions of an `and`, with the comparisons of one field merged into one lookup of
    /// its index row (`score >= 10 and score < 20` reads the rows in the range once, instead of
    /// intersecting everything above 10 with everything below 20). An object has one row per
    /// field, so "a row meets each test" and "a row meets all tests" are the same.
    private func conjunction(_ operands: [QueryPredicate]) -> [SQLFragment] {
        var fragments: [SQLFragment] = []
        var tests: [String: [SQLFragment]] = [:]
        var fields: [String] = []
        for operand in operands {
            guard case .comparison(let field, let op, let value) = operand, op != .notEqual else {
                fragments.append(condition(operand))
                continue
            }
            if tests[field] == nil { fields.append(field) }
            tests[field, default: []].append(SQLFragment("f.sort_key \(op.rawValue) ?", [.blob(value.sortKey)]))
        }
        for field in fields {
            let fieldTests = tests[field] ?? []
            let test = fieldTests.dropFirst().reduce(fieldTests[0]) { $0 + SQLFragment(" AND ") + $1 }
            fragments.append(fieldExists(field, test))
        }
        return fragments
    }

    private func thisIn(_ references: [ObjectReference]) -> SQLFragment {
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

    /// Whether the object has the field (meeting `test`).
    private func fieldExists(_ field: String, _ test: SQLFragment?) -> SQLFragment {
        holds(RowTest(field: field, test: test))
    }

    /// Whether the object has a row meeting `test`. For a value-indexed field, written as an
    /// uncorrelated `IN` rather than a correlated `EXISTS`, which means the same, so that the
    /// index on (field, key) finds the matching rows once instead of a lookup per object of the
    /// class; for another field, as the `EXISTS` that looks up the object's own row.
    private func holds(_ test: RowTest) -> SQLFragment {
        guard !isValueIndexed(test.field) else { return member(keySet(test)) }
        let rows =
            test.elements
            ? "EXISTS (SELECT 1 FROM object_elements e WHERE e.object_key = o.key AND e.field = ?"
            : "EXISTS (SELECT 1 FROM object_fields f WHERE f.object_key = o.key AND f.field = ?"
        var fragment = SQLFragment(rows, [.text(test.field)])
        if let condition = test.test { fragment = fragment + SQLFragment(" AND ") + condition }
        return fragment + SQLFragment(")")
    }

    /// The `SELECT` of the keys of the objects with a row meeting `test`, by the value index.
    private func keySet(_ test: RowTest) -> SQLFragment {
        let flag = layout.valueFlag.map { " AND \(test.elements ? "e" : "f").\($0) = 1" } ?? ""
        var fragment =
            test.elements
            ? SQLFragment("SELECT e.object_key FROM object_elements e WHERE e.field = ?\(flag)", [.text(test.field)])
            : SQLFragment("SELECT f.object_key FROM object_fields f WHERE f.field = ?\(flag)", [.text(test.field)])
        if let condition = test.test { fragment = fragment + SQLFragment(" AND ") + condition }
        return fragment
    }

    /// The test of a list or relation field holding the value.
    private func elementTest(_ value: Value, _ field: String) -> RowTest {
        RowTest(elements: true, field: field, test: SQLFragment("e.element_key = ?", [.blob(value.sortKey)]))
    }

    /// Whether the store keeps `field`'s rows in its value indexes for the query's class.
    private func isValueIndexed(_ field: String) -> Bool {
        layout.valueFlag == nil || indexedFields?.contains(field) ?? true
    }

    /// `o.key IN (keys)`.
    private func member(_ keys: SQLFragment) -> SQLFragment {
        budgeted(SQLFragment("o.key IN (") + keys + SQLFragment(")"))
    }

    /// `membership` as it is, while the planner may still join it; past the dialect's
    /// ``SQLDialect/plannedJoins``, as `(…) IS TRUE`, which means the same (the sub-query yields
    /// no `NULL` keys, so `IN` is never unknown) but which the planner keeps as a sub-plan.
    private func budgeted(_ membership: SQLFragment) -> SQLFragment {
        guard let joins else { return membership }
        guard joins.remaining <= 0 else {
            joins.remaining -= 1
            return membership
        }
        return SQLFragment("(") + membership + SQLFragment(") IS TRUE")
    }

    /// `(a SEP b SEP c …)`, grouped as a balanced tree: SQL parsers nest `a OR b OR c …` as deep
    /// as the list is long (SQLite refuses beyond 1000 levels), halves keep it logarithmic.
    private func joined(_ fragments: [SQLFragment], with separator: String) -> SQLFragment {
        guard fragments.count > 2 else {
            return SQLFragment("(") + (fragments.first ?? SQLFragment())
                + (fragments.count == 2 ? SQLFragment(separator) + fragments[1] : SQLFragment()) + SQLFragment(")")
        }
        let middle = fragments.count / 2
        return SQLFragment("(") + joined(Array(fragments[..<middle]), with: separator) + SQLFragment(separator)
            + joined(Array(fragments[middle...]), with: separator) + SQLFragment(")")
    }

    private func parenthesized(_ fragment: SQLFragment) -> SQLFragment {
        SQLFragment("(") + fragment + SQLFragment(")")
    }

    /// Renumbers `?` placeholders in the dialect's spelling (a no-op for SQLite).
    func numbered(_ fragment: SQLFragment) -> SQLFragment {
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

    /// The keys (``Value/sortKey``) between which lie the keys of every point within `meters` of
    /// `point`: a point's key starts with its latitude, and a great-circle distance is at least
    /// the earth's radius times the difference of latitudes (in radians), so points farther in
    /// latitude than `meters / radius` (widened by a rounding margin) are farther than `meters`.
    /// `nil` when the band would span every latitude, or `meters` is not a finite distance.
    package static func latitudeBand(around point: GeoPoint, within meters: Double) -> (low: [UInt8], high: [UInt8])? {
        guard meters.isFinite, meters >= 0 else { return nil }
        let degrees = (meters / GeoPoint.earthRadiusMeters) * (180 / Double.pi) * (1 + 1e-9) + 1e-9
        let low = point.latitude - degrees
        let high = point.latitude + degrees
        guard low > -90 || high < 90 else { return nil }
        do {
            let south = try GeoPoint(latitude: max(low, -90), longitude: -180)
            let north = try GeoPoint(latitude: min(high, 90), longitude: 180)
            return (Value.geoPoint(south).sortKey, Value.geoPoint(north).sortKey)
        } catch {
            return nil
        }
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
