import RooftopShared

/// Which of two plans reads a page of a query, where both can (``SQLQueryRunner/pagePlan``).
///
/// A page is the first `offset + limit` matches in the query's order. The compiled `SELECT`
/// (``SQLQueryCompiler/select(_:scope:readers:limit:)``) finds the matches first, through the
/// value index of each condition, and sorts all of them: it reads every match. The order-first
/// `SELECT` (``SQLQueryCompiler/orderFirst(_:scope:readers:limit:)``) reads the objects in the
/// query's order from an index and tests each, stopping at the page's end: it reads about
/// `end × candidates / matches` objects, where `candidates` is what the index walks. Which reads
/// fewer depends on how many objects match, which no planner statistics tell (the value index
/// holds every field of every class): a store that counts the matches first lets the counts
/// decide (`cheapest`). `category = ? limit 100` over 100,000 objects, 5,000 of them matching,
/// reads 2,000 objects in ID order instead of sorting 5,000; with 20 matches it reads those 20,
/// where a walk would read the whole class.
package enum SQLPagePlan: Sendable, Equatable {
    /// Matches first, without counting first (the default: a store whose planner decides).
    case matchesFirst
    /// The plan that reads fewer objects, by the count of the matches (read first: the page's
    /// total count) and the size of the scope (see ``SQLQueryRunner/scopeSize``).
    case cheapest
    /// Order first wherever the query's shape allows it (for tests: both plans answer alike).
    case orderFirst
}

extension SQLQueryCompiler {
    /// The index an order-first page walks (``orderFirst(_:scope:readers:limit:)``).
    package enum WalkedOrder: Hashable, Sendable {
        /// The objects' own index on `(scope, class, object ID)`: the query has no order (its
        /// page is in object ID order) and no distance to order by.
        case objectId
        /// The value index of the query's first order field, read in the range its top-level
        /// comparisons allow (every match has a row of the field there: no missing values to
        /// order first or last).
        case field(String)
    }

    /// The index an order-first page of `query` would walk; `nil` when its shape has none.
    package func walkedOrder(of query: Query) -> WalkedOrder? {
        guard let first = query.order.first else {
            return QueryEvaluator.distanceAnchor(query.predicate) == nil ? .objectId : nil
        }
        let field = first.field
        guard builtInColumn(field) == nil, isValueIndexed(field), !isRowless(field), entryKeyed[field] == nil,
            !Self.walkedComparisons(of: query, on: field).tests.isEmpty
        else { return nil }
        return .field(field)
    }

    /// Whether every condition of `query` reads the value index or a column every object has
    /// (``SQLIndexLayout/BuiltInColumn/always``), none an object's document (``isRowless(_:)``)
    /// or a column stored after it: counting its matches reads no document.
    package func readsIndexesOnly(_ query: Query) -> Bool {
        func indexed(_ predicate: QueryPredicate) -> Bool {
            switch predicate {
            case .and(let operands), .or(let operands): operands.allSatisfy(indexed)
            case .not(let operand): indexed(operand)
            default: predicate.field.map { field in builtInColumn(field).map(\.always) ?? !isRowless(field) } ?? true
            }
        }
        return query.predicate.map(indexed) ?? true
    }

    /// The top-level comparisons of `field` in `query`'s predicate (`=`, `<`, `<=`, `>`, `>=`), as
    /// tests of its key, and the predicate without them.
    private static func walkedComparisons(of query: Query, on field: String) -> (tests: [KeyTest], rest: QueryPredicate?) {
        let operands: [QueryPredicate] =
            switch query.predicate {
            case .and(let operands)?: operands
            case let predicate?: [predicate]
            case nil: []
            }
        var tests: [KeyTest] = []
        var rest: [QueryPredicate] = []
        for operand in operands {
            if case .comparison(field, let op, let value) = operand, op != .notEqual {
                tests.append(.compare(op, value.sortKey))
            } else {
                rest.append(operand)
            }
        }
        return (tests, rest.isEmpty ? nil : (rest.count == 1 ? rest[0] : .and(rest)))
    }

    /// The order-first `SELECT` of a page (see ``SQLPagePlan``): the same rows as
    /// ``select(_:scope:readers:limit:)``, read by walking ``walkedOrder(of:)``'s index in the
    /// query's order, every other condition a test of the object at hand (`(…) IS TRUE`, which
    /// keeps the planner from driving the walk from another index), so that the walk stops at
    /// the page's end. `nil` when the query's shape has no such index.
    ///
    /// ```swift
    /// // where category = ? limit 100: the objects in ID order, each tested, up to the 100th match
    /// let page = compiler.orderFirst(query, scope: scope, readers: ["*"], limit: 100)
    /// ```
    package func orderFirst(_ query: Query, scope: SQLFragment, readers: Set<String>?, limit: Int) -> SQLFragment? {
        guard let walked = walkedOrder(of: query) else { return nil }
        let paging = SQLFragment(" LIMIT ? OFFSET ?", [.integer(Int64(limit)), .integer(Int64(max(query.offset, 0)))])
        let tieBreak = SQLFragment(dialect.bytewiseText("o.object_id") + " ASC")
        switch walked {
        case .objectId:
            return numbered(
                SQLFragment("SELECT \(layout.columns) FROM \(layout.source) WHERE ")
                    + tested(query, scope: scope, readers: readers) + SQLFragment(" ORDER BY ") + tieBreak + paging)
        case .field(let field):
            let (tests, rest) = Self.walkedComparisons(of: query, on: field)
            var remaining = query
            remaining.predicate = rest
            // The walked rows: the field's, in the range, in the index's order; then the object.
            let row = Columns(
                kind: SQLFragment("w.kind"), key: SQLFragment("w.sort_key"), latitude: SQLFragment("w.latitude"),
                longitude: SQLFragment("w.longitude"), element: SQLFragment("0 = 1"))
            let flag = layout.valueFlag.map { " AND w.\($0) = 1" } ?? ""
            let walk =
                SQLFragment("w.field = ?\(flag)", [.text(field)]) + partitioned("w") + SQLFragment(" AND ")
                + render(tests, row)
                + SQLFragment(" AND o.key = w.object_key AND ")
            // The other order keys, as ``select(_:scope:readers:limit:)`` orders by them.
            var joins = SQLFragment()
            var orderBy = [SQLFragment("w.sort_key \(query.order[0].descending ? "DESC" : "ASC")")]
            for (index, key) in query.order.enumerated().dropFirst() {
                let (join, keys) = orderKey(key, alias: "s\(index)")
                joins = joins + join
                orderBy.append(keys)
            }
            orderBy.append(tieBreak)
            // `CROSS JOIN`: SQLite keeps the walked rows the outer loop.
            return numbered(
                SQLFragment("SELECT \(layout.columns) FROM object_fields w CROSS JOIN \(layout.source)") + joins
                    + SQLFragment(" WHERE ") + walk + tested(remaining, scope: scope, readers: readers)
                    + SQLFragment(" ORDER BY ") + orderBy.dropFirst().reduce(orderBy[0]) { $0 + SQLFragment(", ") + $1 }
                    + paging)
        }
    }

    /// ``filter(_:scope:readers:)`` with every membership, and the readers' test, written as a test
    /// of the object at hand (see ``budgeted(_:)``).
    private func tested(_ query: Query, scope: SQLFragment, readers: Set<String>?) -> SQLFragment {
        var tested = self
        tested.joins = JoinBudget(0)
        return tested.budgetedFilter(query, scope: scope, readers: readers, readersTested: true)
    }
}
