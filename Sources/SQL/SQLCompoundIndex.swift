import RooftopShared

/// A compound index a store keeps for one class's objects in one scope (a class's declared index,
/// ``ClassSettings/indexes``): the table `index_entries c(partition, k1, k2, k3, k4, object_key)`,
/// keyed in that order, holds for each live object of the scope one entry whose `k1`…`k4` are the
/// order-preserving keys (``Value/sortKey``) of the index's fields, an empty key (`X''`, below
/// every value's key) for a field the object lacks or the index does not have.
///
/// A query whose equality conditions (`=`, `in`, or an `or` of `=`) name the index's leading
/// fields and whose order is by the fields after them reads the entries of each equal key in
/// order and stops at its page, instead of sorting every match (`category = ? order by score
/// desc limit 50` with `["category", "score"]`: 50 entries read, not 100,000 sorted). Range
/// conditions on the first ordered field narrow the range read.
///
/// An index whose first field holds a list (or a relation) in some objects also has entries of
/// each of the list's elements (``elementEntries``): `tags contains ?` reads the entries of that
/// element, as IndexedDB's `multiEntry` and Firestore's `array-contains` indexes do, and counts
/// them without looking any object up.
///
/// ```swift
/// let index = SQLCompoundIndex(partition: 3, fields: ["category", "score"])
/// let page = compiler.select(query, scope: scope, readers: nil, limit: 50, indexes: [index])
/// ```
package struct SQLCompoundIndex: Sendable, Hashable {
    /// The entries' `partition`: this index, for one class in one scope.
    package var partition: Int64
    /// The fields, in order (1 to ``ClassSettings/maxIndexFields``).
    package var fields: [String]
    /// Whether the entries are those of the elements of the first field's lists (see
    /// ``elementEntries``) rather than of its whole values.
    package var elements = false

    /// An index.
    package init(partition: Int64, fields: [String]) {
        self.partition = partition
        self.fields = fields
    }

    /// The entries of the same index that key each element of the first field's value instead
    /// of the whole value: for an object whose first field is a list or a relation, one entry per
    /// distinct element (or member) short enough to index (``SQLIndexRows/IndexedValue``), `k1`
    /// the element's key and `k2`… the other fields' keys as in the index's own entries; none for
    /// an object whose first field holds anything else. Their partition is the index's, negated
    /// (partitions are positive row IDs), so that every rule that keeps entries by object — a
    /// deletion, a readable flag's flip — keeps these too.
    ///
    /// An object has one such entry per element it holds, so a plan reads them only for a single
    /// `contains` of the first field (``SQLCompoundPlan``): arms of several elements would meet
    /// one object twice.
    package var elementEntries: SQLCompoundIndex {
        var twin = SQLCompoundIndex(partition: Self.elementPartition(of: partition), fields: fields)
        twin.elements = true
        return twin
    }

    /// The partition of the element entries (``elementEntries``) of the index whose entries'
    /// partition is `partition`.
    package static func elementPartition(of partition: Int64) -> Int64 { -partition }

    /// Whether a store that keeps counts per leading key (``SQLIndexEntries/keyCounts``) keeps
    /// them for this index: for two fields or more, whose first field is what a query's
    /// equality names and whose next fields order its page; never for ``elementEntries``. (The
    /// client's writer adds entries to the counts by this; its SQL that builds entries, and its
    /// triggers that take them away, say the same: `d.field2 != ''`, of a positive partition.)
    package var keepsKeyCounts: Bool { fields.count > 1 && !elements }
}

/// What a store's entries of compound indexes hold, when a count may read them alone: they are
/// the scope's live objects, flagged readable by the kept readers (see ``SQLQueryRunner/entries``).
package struct SQLIndexEntries: Sendable {
    /// Only entries flagged readable (`c.readable = 1`) count.
    package var readableOnly: Bool
    /// A `SELECT` of the keys of the objects a count leaves out (few: those with unsaved
    /// changes), or `nil`.
    package var excluded: SQLFragment?
    /// The store keeps, for the indexes that ``SQLCompoundIndex/keepsKeyCounts``, the number of
    /// entries of each first key and of the readable ones:
    /// `index_key_counts k(partition, k1, live, readable)`.
    package var keyCounts: Bool
    /// Every entry is flagged readable (the store's counts say every live object is readable by
    /// the kept readers): a count need not test the flag. Pages still test it, so that what a
    /// page shows never rests on counters alone.
    package var allReadable: Bool

    /// Entries.
    package init(readableOnly: Bool, excluded: SQLFragment? = nil, keyCounts: Bool = false, allReadable: Bool = false) {
        self.readableOnly = readableOnly
        self.excluded = excluded
        self.keyCounts = keyCounts
        self.allReadable = allReadable
    }
}

/// How a query reads a compound index: the equal keys of the leading fields (one arm per
/// combination), range conditions and the order on the fields after them, and the conditions
/// left for the objects.
struct SQLCompoundPlan {
    var index: SQLCompoundIndex
    /// Per arm, the keys `k1`… are equal to.
    var arms: [[[UInt8]]]
    /// Conditions on the entries of every arm (ranges of the first ordered field).
    var range: SQLFragment
    /// The entry columns (`c.k1`…) the page is ordered by, in order.
    var order: [String]
    /// The direction of the order (`ASC` or `DESC`): one for every column.
    var direction = "ASC"
    /// The query with the conditions the entries decide taken out.
    var rest: Query

    /// The most arms (combinations of equal keys) a plan reads.
    static let maxArms = 16

    /// The best plan for `query` over `indexes`: the index whose leading fields the most
    /// equality conditions name and whose next fields are the query's order; `nil` when none
    /// fits (no order, an order no index has, too many combinations). A plan for a count
    /// (`ordered` false) ignores the order and needs an equality or a range.
    init?(_ query: Query, indexes: [SQLCompoundIndex], ordered: Bool = true) {
        guard !ordered || !query.order.isEmpty else { return nil }
        let operands: [QueryPredicate] =
            switch query.predicate {
            case .and(let operands)?: operands
            case let predicate?: [predicate]
            case nil: []
            }
        var best: SQLCompoundPlan?
        var bestScore = -1
        for index in indexes {
            guard let plan = SQLCompoundPlan(query, operands: operands, index: index, ordered: ordered) else { continue }
            // Between plans as good, a count prefers an index whose counts per first key a store
            // may keep (``SQLCompoundIndex/keepsKeyCounts``).
            let counted = !ordered && index.keepsKeyCounts ? 1 : 0
            let score = 4 * (plan.arms.first?.count ?? 0) + (plan.range.sql.isEmpty ? 0 : 2) + counted
            guard ordered || score > 1 else { continue }
            if score > bestScore {
                best = plan
                bestScore = score
            }
        }
        guard let best else { return nil }
        self = best
    }

    private init?(_ query: Query, operands: [QueryPredicate], index: SQLCompoundIndex, ordered: Bool) {
        guard index.fields.count <= ClassSettings.maxIndexFields else { return nil }
        var consumed = Set<Int>()
        var arms: [[[UInt8]]] = [[]]
        var position = 0
        while position < index.fields.count {
            let field = index.fields[position]
            // The first field of element entries is equal to one element: a `contains`.
            let elements = index.elements && position == 0
            guard
                let (at, keys) = operands.enumerated().lazy.compactMap({ offset, operand in
                    (elements ? SQLCompoundPlan.elementKey(operand, field: field) : SQLCompoundPlan.equalKeys(operand, field: field))
                        .map { (offset, $0) }
                }).first(where: { !consumed.contains($0.0) })
            else {
                if elements { return nil }
                break
            }
            guard arms.count * keys.count <= SQLCompoundPlan.maxArms else { return nil }
            consumed.insert(at)
            arms = arms.flatMap { arm in keys.map { arm + [$0] } }
            position += 1
        }
        // The order: the next fields, one direction (an entry range is read one way).
        let next = Array(index.fields[position...])
        var order: [String] = []
        var direction = "ASC"
        if ordered {
            guard query.order.count <= next.count else { return nil }
            let descending = query.order[0].descending
            for (offset, key) in query.order.enumerated() {
                guard key.field == next[offset], key.descending == descending else { return nil }
            }
            direction = descending ? "DESC" : "ASC"
            order = (0..<query.order.count).map { "c.k\(position + $0 + 1)" }
        }
        // Ranges of the next field (any comparison means the field is there: above the empty
        // key of an absent one).
        var range = SQLFragment()
        if let field = next.first {
            let column = "c.k\(position + 1)"
            var bounded = false
            var bounds: [SQLQueryCompiler.KeyBound] = []
            for (offset, operand) in operands.enumerated() where !consumed.contains(offset) {
                guard case .comparison(field, let op, let value) = operand,
                    [.less, .lessOrEqual, .greater, .greaterOrEqual].contains(op)
                else { continue }
                consumed.insert(offset)
                bounds.append((op, value.sortKey))
            }
            // One bound each way (SQLite starts the range at the first lower bound written).
            for (op, key) in SQLQueryCompiler.tightestBounds(bounds) {
                range = range + SQLFragment(" AND \(column) \(op.rawValue) ?", [.blob(key)])
                if op == .greater || op == .greaterOrEqual { bounded = true }
            }
            if !range.sql.isEmpty, !bounded { range = range + SQLFragment(" AND \(column) > X''") }
        }
        self.index = index
        self.arms = arms
        self.range = range
        self.order = order
        self.direction = direction
        var rest = query
        let left = operands.enumerated().filter { !consumed.contains($0.offset) }.map(\.element)
        rest.predicate = left.isEmpty ? nil : (left.count == 1 ? left[0] : .and(left))
        rest.order = []
        self.rest = rest
    }

    /// The keys a field is equal to under `operand`: `field = v`, `field in [...]` (not empty)
    /// or an `or` of `field = v`; `nil` for any other condition.
    private static func equalKeys(_ operand: QueryPredicate, field: String) -> [[UInt8]]? {
        let values: [Value]
        switch operand {
        case .comparison(field, .equal, let value):
            values = [value]
        case .in(field, let list) where !list.isEmpty:
            values = list
        case .or(let operands) where !operands.isEmpty:
            var list: [Value] = []
            for operand in operands {
                guard case .comparison(field, .equal, let value) = operand else { return nil }
                list.append(value)
            }
            values = list
        default:
            return nil
        }
        return Set(values.map(\.sortKey)).sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// The key of the one element `operand` says a list field holds (`field contains v`), as
    /// the entries of ``SQLCompoundIndex/elementEntries`` key it; `nil` for any other condition.
    private static func elementKey(_ operand: QueryPredicate, field: String) -> [[UInt8]]? {
        guard case .listContains(field, let value) = operand else { return nil }
        return [value.sortKey]
    }

    /// The conditions on `c` of one arm: its partition, its equal keys and the range.
    func entries(_ arm: [[UInt8]]) -> SQLFragment {
        var fragment = SQLFragment("c.partition = ?", [.integer(index.partition)])
        for (offset, key) in arm.enumerated() {
            fragment = fragment + SQLFragment(" AND c.k\(offset + 1) = ?", [.blob(key)])
        }
        return fragment + range
    }
}

extension SQLQueryCompiler {
    /// The `SELECT` of a page, as ``select(_:scope:readers:limit:)``, read from one of `indexes`
    /// (the compound indexes of the query's class in the scope) when one fits the query (see
    /// ``SQLCompoundIndex``): each arm (combination of equal keys) reads its entries in order up
    /// to the page's end, and the arms' rows are merged in order (a single arm's page is
    /// selected directly).
    ///
    /// When `entries` says the entries are exactly the scope's live objects (and the readable
    /// ones flagged) and the index decides every condition, arms read the entries alone: each
    /// its first `offset + limit` entries in order (ties at the last one included), and only
    /// the union's first `offset + limit` (ties included) are looked up in `objects`, to be
    /// ordered with the object ID breaking ties (see ``entryArms(_:plan:end:entries:)``).
    package func select(
        _ query: Query, scope: SQLFragment, readers: Set<String>?, limit: Int, indexes: [SQLCompoundIndex],
        entries: SQLIndexEntries? = nil
    ) -> SQLFragment {
        let (end, overflow) = max(query.offset, 0).addingReportingOverflow(limit)
        guard !overflow, let plan = SQLCompoundPlan(query, indexes: indexes) else {
            return select(query, scope: scope, readers: readers, limit: limit)
        }
        if plan.arms.count > 1, let entries, let statement = entryArms(query, plan: plan, end: end, entries: entries) {
            return statement
        }
        let filter = self.filter(plan.rest, scope: scope, readers: readers)
        let tieBreak = dialect.bytewiseText("o.object_id")
        if plan.arms.count == 1 {
            // One arm is read in order already: its page is selected directly, without sorting
            // the arm's rows again and looking each object up a second time.
            let order = plan.order.map { "\($0) \(plan.direction)" } + ["\(tieBreak) ASC"]
            return numbered(
                SQLFragment("SELECT \(layout.columns) FROM index_entries c CROSS JOIN \(layout.source) WHERE ")
                    + plan.entries(plan.arms[0]) + SQLFragment(" AND o.key = c.object_key AND ") + filter
                    + SQLFragment(
                        " ORDER BY \(order.joined(separator: ", ")) LIMIT ? OFFSET ?",
                        [.integer(Int64(limit)), .integer(Int64(max(query.offset, 0)))]))
        }
        let columns = plan.order.enumerated().map { offset, column in "\(column) AS s\(offset)" }
        let inner = plan.order.map { "\($0) \(plan.direction)" }
        let arms = plan.arms.map { arm in
            SQLFragment(
                "SELECT * FROM (SELECT c.object_key AS entry, \(columns.joined(separator: ", ")), o.object_id AS id"
                    + " FROM index_entries c CROSS JOIN objects o WHERE ")
                + plan.entries(arm) + SQLFragment(" AND o.key = c.object_key AND ") + filter
                + SQLFragment(
                    " ORDER BY \(inner.joined(separator: ", ")), \(tieBreak) ASC LIMIT ?)",
                    [.integer(Int64(end))])
        }
        let union = arms.dropFirst().reduce(arms[0]) { $0 + SQLFragment(" UNION ALL ") + $1 }
        let order = plan.order.indices.map { "u.s\($0) \(plan.direction)" }
        let statement =
            SQLFragment("SELECT \(layout.columns) FROM (") + union
            + SQLFragment(
                ") u CROSS JOIN \(layout.source) WHERE o.key = u.entry ORDER BY \(order.joined(separator: ", ")), "
                    + "\(dialect.bytewiseText("u.id")) ASC LIMIT ? OFFSET ?",
                [.integer(Int64(limit)), .integer(Int64(max(query.offset, 0)))])
        return numbered(statement)
    }

    /// The page of a plan of several arms read from the entries alone (see
    /// ``select(_:scope:readers:limit:indexes:entries:)``); `nil` when the plan leaves conditions
    /// to the objects, orders by more than one field, or the page is empty.
    ///
    /// An arm keeps its entries up to the key of its `end`-th (all of them when it has fewer), a
    /// range of the index: every entry of its first `end` in the query's order is kept, the
    /// order's ties included, whatever their object IDs. The union is cut the same way, so the
    /// objects looked up are the page's candidates and the ties at its edge, not every arm's
    /// `end`.
    private func entryArms(_ query: Query, plan: SQLCompoundPlan, end: Int, entries: SQLIndexEntries) -> SQLFragment? {
        guard plan.rest.predicate == nil, plan.order.count == 1, let column = plan.order.first, end > 0 else { return nil }
        let descending = plan.direction == "DESC"
        let within = descending ? ">=" : "<="
        let edge = SQLFragment(" LIMIT 1 OFFSET ?", [.integer(Int64(end - 1))])
        let flag = SQLFragment(entries.readableOnly ? " AND c.readable = 1" : "")
        let left = entries.excluded.map { SQLFragment(" AND c.object_key NOT IN (") + $0 + SQLFragment(")") }
        let arms = plan.arms.map { arm in
            let conditions = plan.entries(arm) + flag + (left ?? SQLFragment())
            // The key of the arm's `end`-th entry, or of its last when it has fewer (the inner
            // `c` is the subquery's own): a bound the index reads up to, where a test of `NULL`
            // would make it read the whole arm.
            let keyAt = { (direction: String, offset: SQLFragment) in
                SQLFragment("(SELECT \(column) FROM index_entries c WHERE ") + conditions
                    + SQLFragment(" ORDER BY \(column) \(direction)") + offset + SQLFragment(")")
            }
            let bound = SQLFragment("coalesce(") + keyAt(plan.direction, edge) + SQLFragment(", ")
                + keyAt(descending ? "ASC" : "DESC", SQLFragment(" LIMIT 1")) + SQLFragment(")")
            return SQLFragment("SELECT c.object_key AS entry, \(column) AS s0 FROM index_entries c WHERE ") + conditions
                + SQLFragment(" AND \(column) \(within) ") + bound
        }
        let union = arms.dropFirst().reduce(arms[0]) { $0 + SQLFragment(" UNION ALL ") + $1 }
        // The union's `end`-th key, worked out once (`NULL` when it has fewer entries).
        let cut = SQLFragment("SELECT (SELECT s0 FROM u ORDER BY s0 \(plan.direction)") + edge + SQLFragment(") AS k")
        return numbered(
            SQLFragment("WITH u AS (") + union + SQLFragment("), b AS (") + cut
                + SQLFragment(
                    ") SELECT \(layout.columns) FROM u CROSS JOIN b CROSS JOIN \(layout.source)"
                        + " WHERE o.key = u.entry AND (b.k IS NULL OR u.s0 \(within) b.k)"
                        + " ORDER BY u.s0 \(plan.direction), \(dialect.bytewiseText("o.object_id")) ASC LIMIT ? OFFSET ?",
                    [.integer(Int64(end - max(query.offset, 0))), .integer(Int64(max(query.offset, 0)))]))
    }

    /// Whether ``count(_:scope:readers:indexes:entries:)`` reads the counts kept per first key
    /// alone (one look-up per key, less the few objects left out), not a walk of entries or
    /// objects.
    package func readsKeptCounts(_ query: Query, indexes: [SQLCompoundIndex], entries: SQLIndexEntries?) -> Bool {
        guard let entries, let plan = SQLCompoundPlan(query, indexes: indexes, ordered: false),
            plan.rest.predicate == nil
        else { return false }
        return plan.arms.allSatisfy { Self.readsKeptCount(plan, $0, entries) }
    }

    /// Whether an arm of a count's plan reads the count kept for its key.
    private static func readsKeptCount(_ plan: SQLCompoundPlan, _ arm: [[UInt8]], _ entries: SQLIndexEntries) -> Bool {
        entries.keyCounts && plan.index.keepsKeyCounts && arm.count == 1 && plan.range.sql.isEmpty
    }

    /// The `SELECT count(*)` of a query's matches, as ``count(_:scope:readers:)``, read from one
    /// of `indexes` when one fits. When `entries` is given, the partitions' entries are exactly
    /// the scope's live objects that `entries` keeps, and when the query's conditions are all
    /// decided by the index, the entries alone are counted; where the store keeps counts per
    /// first key and the query names only that key (`category = ?`, `category in [...]` or an
    /// `or` of `=`), those counts are read instead (less the objects left out that match).
    package func count(
        _ query: Query, scope: SQLFragment, readers: Set<String>?, indexes: [SQLCompoundIndex], entries: SQLIndexEntries?
    ) -> SQLFragment {
        // A count reads in no order: an index fits by its leading equal fields and the range of
        // the next.
        guard let plan = SQLCompoundPlan(query, indexes: indexes, ordered: false) else {
            return count(query, scope: scope, readers: readers)
        }
        let counts: [SQLFragment] = plan.arms.map { arm in
            if let entries, plan.rest.predicate == nil {
                let flag = SQLFragment(entries.readableOnly && !entries.allReadable ? " AND c.readable = 1" : "")
                if Self.readsKeptCount(plan, arm, entries) {
                    var kept = SQLFragment(
                        "(coalesce((SELECT k.\(entries.readableOnly ? "readable" : "live") FROM index_key_counts k"
                            + " WHERE k.partition = ? AND k.k1 = ?), 0)",
                        [.integer(plan.index.partition), .blob(arm[0])])
                    if let excluded = entries.excluded {
                        kept = kept + SQLFragment(" - (SELECT count(*) FROM index_entries c WHERE ") + plan.entries(arm)
                            + flag + SQLFragment(" AND c.object_key IN (") + excluded + SQLFragment("))")
                    }
                    return kept + SQLFragment(")")
                }
                let left = entries.excluded.map { SQLFragment(" AND c.object_key NOT IN (") + $0 + SQLFragment(")") }
                return SQLFragment("(SELECT count(*) FROM index_entries c WHERE ") + plan.entries(arm)
                    + flag + (left ?? SQLFragment()) + SQLFragment(")")
            }
            return SQLFragment("(SELECT count(*) FROM index_entries c CROSS JOIN objects o WHERE ")
                + plan.entries(arm) + SQLFragment(" AND o.key = c.object_key AND ")
                + filter(plan.rest, scope: scope, readers: readers) + SQLFragment(")")
        }
        return numbered(SQLFragment("SELECT ") + counts.dropFirst().reduce(counts[0]) { $0 + SQLFragment(" + ") + $1 })
    }
}
