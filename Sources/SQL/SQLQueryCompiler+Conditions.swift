import RooftopShared

/// The conditions of a query, each a test of one field: of its rows in the index tables, or, for
/// a field the store keeps no rows of (``SQLIndexLayout/document``), of its value read from the
/// object's stored document by the functions the storage registers (`rooftop_field`,
/// `rooftop_field_contains`). Both give the same keys (``Value/sortKey``), so a condition means
/// the same either way.
extension SQLQueryCompiler {
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
            return SQLFragment("NOT ") + holds(FieldTest(field: field, tests: [.compare(.equal, value.sortKey)]))
        case .notIn(let field, let values):
            return SQLFragment("NOT ") + condition(.in(field: field, values: values))
        case .notExists(let field):
            return SQLFragment("NOT ") + holds(FieldTest(field: field))
        case .containsAll(let field, let values):
            let collection = holds(FieldTest(field: field, tests: [.collection]))
            return joined([collection] + values.map { holds(elementTest($0, field)) }, with: " AND ")
        case .thisIn(let references):
            return SQLFragment("(") + thisIn(references) + SQLFragment(")")
        case .comparison, .in, .exists, .startsWith, .listContains, .near, .withinBox:
            // Tests of one field, which `fieldTest(of:)` gives for each of these except the ones
            // that can match nothing (an `in` without values, a prefix past every key).
            return fieldTest(of: predicate).map(holds) ?? SQLFragment("0 = 1")
        }
    }

    /// The `SELECT count(*)` of the objects `query`'s predicate holds for, read from one value
    /// index's keys alone, when one index decides it: a condition ``keys(of:)`` reads (an `or` of
    /// them included), or comparisons of one field. Counts right only where the store keeps rows
    /// of live objects alone, per partition (``valuePartition``, which must be set), and the
    /// query's readers may read every object of its class (``SQLQueryRunner/everyObjectReadable``):
    /// `category = ?` counted 5,037 objects of 103,600 in 0.2 ms, where looking each up for its
    /// readers took 7. `nil` for any other query, and in a store with compound index entries.
    package func keyCount(_ query: Query) -> SQLFragment? {
        guard valuePartition != nil, entryKeyed.isEmpty, let predicate = query.predicate else { return nil }
        var keys: SQLFragment?
        if case .and(let operands) = predicate {
            // Comparisons of one field: one test of its value, as ``conjunction(_:)`` merges them.
            var field: String?
            var tests: [KeyTest] = []
            for operand in operands {
                guard case .comparison(let compared, let op, let value) = operand, op != .notEqual,
                    field == nil || field == compared
                else { return nil }
                field = compared
                tests.append(.compare(op, value.sortKey))
            }
            guard let field, builtInColumn(field) == nil, isValueIndexed(field) else { return nil }
            keys = keySet(FieldTest(field: field, tests: KeyTest.tightened(tests)))
        } else {
            keys = self.keys(of: predicate)
        }
        return keys.map { numbered(SQLFragment("SELECT count(*) FROM (") + $0 + SQLFragment(") m")) }
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
        guard let test = fieldTest(of: predicate) else { return nil }
        if let partition = entryKeyed[test.field] {
            if test.elements { return elementEntrySet(test, partition: partition) }
            return entrySet(test, partition: partition) ?? narrowedEntrySet(test, partition: partition)
        }
        guard builtInColumn(test.field) == nil, isValueIndexed(test.field) else { return nil }
        return keySet(test)
    }

    /// The `SELECT` of the keys of the objects whose value of `test`'s field meets `test`, from
    /// the entries of the compound index it leads (partition `partition`; none: no object):
    /// their `k1` is the value's key, empty (`X''`) when the object lacks the field or its value
    /// has no key (the same objects the field's value-index rows would not find). `nil` when
    /// `test` tests more than keys: then each object's own row is tested (``holds(_:)``).
    private func entrySet(_ test: FieldTest, partition: Int64?) -> SQLFragment? {
        guard !test.tests.isEmpty, test.tests.allSatisfy(\.isKeyTest) else { return nil }
        guard let partition else { return SQLFragment("SELECT 0 WHERE 0 = 1") }
        return SQLFragment("SELECT c.object_key FROM index_entries c WHERE c.partition = ? AND ", [.integer(partition)])
            + presentKey(test.tests) + render(test.tests, .entries)
    }

    /// `c.k1 > X'' AND ` (the entry's object has the field) when none of `tests` bounds the key
    /// from below; empty when one does, as every key a lower bound admits is above the empty
    /// one. SQLite reads an index range from the first lower bound its terms give, whatever the
    /// others: with `c.k1 > X''` beside `c.k1 >= ?` it read every entry of the partition below
    /// the range too (about half of them for a range picked at random).
    private func presentKey(_ tests: [KeyTest]) -> SQLFragment {
        let bounded = tests.contains { test in
            switch test {
            case .compare(let op, _): [.equal, .greater, .greaterOrEqual].contains(op)
            case .oneOf, .below, .between: true
            case .exists, .point, .near, .box, .collection, .element: false
            }
        }
        return SQLFragment(bounded ? "" : "c.k1 > X'' AND ")
    }

    /// The `SELECT` of the keys of the objects whose list (or relation) in `test`'s field holds
    /// the element `test` names, from the element entries of the compound index the field leads
    /// (``SQLCompoundIndex/elementEntries``: partition `-partition`; none: no object), which hold
    /// each object once per distinct element. `nil` when `test` is not one element's test.
    private func elementEntrySet(_ test: FieldTest, partition: Int64?) -> SQLFragment? {
        guard test.elements, test.tests.count == 1, case .element(let key) = test.tests[0] else { return nil }
        guard let partition else { return SQLFragment("SELECT 0 WHERE 0 = 1") }
        return SQLFragment(
            "SELECT c.object_key FROM index_entries c WHERE c.partition = ? AND c.k1 = ?",
            [.integer(SQLCompoundIndex.elementPartition(of: partition)), .blob(key)])
    }

    /// The `SELECT` of the keys of the objects whose value of `test`'s field meets `test`, when
    /// `test` tests more than keys but its keys narrow it (a point within a distance of another,
    /// or in a box): the entries of the compound index the field leads (partition `partition`;
    /// none: no object) in the range of keys the test allows — for points, the band of latitudes
    /// and, in the keys themselves, the longitudes in reach — each then tested on the object's own
    /// row. `nil` when nothing narrows: each object's own row is tested (``holds(_:)``).
    ///
    /// Reading the band of the index instead of testing every object of the class is what makes a
    /// `near` within a distance cost about what raw SQLite's bounding box costs.
    private func narrowedEntrySet(_ test: FieldTest, partition: Int64?) -> SQLFragment? {
        var narrowing = test.tests.filter(\.isKeyTest)
        // The longitudes a matching point can have, once the keys read are all points' keys.
        var longitudes: [ClosedRange<Double>] = []
        for keyTest in test.tests {
            switch keyTest {
            case .near(let point, let maximum) where !narrowing.isEmpty:
                // The band of latitudes (``fieldTest(of:)``) is the only key test of a `near`.
                longitudes = SQLQueryCompiler.longitudeRanges(around: point, within: maximum) ?? []
            case .box(let southwest, let northeast):
                // A box whose south is north of its north holds no point (as its own test says).
                guard let band = SQLQueryCompiler.pointKeys(south: southwest.latitude, north: northeast.latitude) else {
                    return SQLFragment("SELECT 0 WHERE 0 = 1")
                }
                narrowing.append(.between(band.low, band.high))
                longitudes = SQLQueryCompiler.longitudes(west: southwest, east: northeast)
            default:
                break
            }
        }
        guard !narrowing.isEmpty else { return nil }
        guard let partition else { return SQLFragment("SELECT 0 WHERE 0 = 1") }
        var fragment =
            SQLFragment(
                "SELECT c.object_key FROM index_entries c CROSS JOIN object_fields f WHERE c.partition = ? AND ",
                [.integer(partition)]) + presentKey(narrowing) + render(narrowing, .entries)
        // Every key in a band of points' keys is a point's, and ends with its longitude's bytes
        // (``SQLQueryCompiler/longitudeKeys(_:)``): the longitudes out of reach are left out
        // before any object's row is read.
        if let longitudes = longitudeTest(longitudes, key: SQLFragment("c.k1")) {
            fragment = fragment + SQLFragment(" AND ") + longitudes
        }
        return fragment + SQLFragment(" AND f.object_key = c.object_key AND f.field = ? AND ", [.text(test.field)])
            + render(test.tests, .rows)
    }

    /// A test of one field: of its value (`elements`: of its list elements or relation members),
    /// all of `tests` holding; none: the field exists.
    struct FieldTest {
        var elements = false
        var field: String
        var tests: [KeyTest] = []
    }

    /// One test of a field's value, or of one of its elements.
    enum KeyTest {
        /// The field is present.
        case exists
        /// Its key compares with a key so.
        case compare(QueryPredicate.ComparisonOperator, [UInt8])
        /// Its key is one of these (sorted, distinct).
        case oneOf([[UInt8]])
        /// Its key is at least the first and below the second.
        case below([UInt8], [UInt8])
        /// It is a point.
        case point
        /// Its key is between the two, both included.
        case between([UInt8], [UInt8])
        /// It is a point within the distance (meters) of the point.
        case near(GeoPoint, Double)
        /// It is a point in the box.
        case box(southwest: GeoPoint, northeast: GeoPoint)
        /// It is a list or a relation.
        case collection
        /// An element or member has this key.
        case element([UInt8])

        /// Whether the test compares the value's key alone (what a compound index's entries hold).
        var isKeyTest: Bool {
            switch self {
            case .compare, .oneOf, .below, .between: true
            case .exists, .point, .near, .box, .collection, .element: false
            }
        }

        /// `tests` without the comparisons another of them makes redundant
        /// (``SQLQueryCompiler/tightestBounds(_:)``); the other tests come first, in their order.
        /// SQLite reads an index range from the first lower bound among its terms, not the
        /// tightest: for `score >= 5 and score >= 900` it read every key from 5.
        static func tightened(_ tests: [KeyTest]) -> [KeyTest] {
            var bounds: [SQLQueryCompiler.KeyBound] = []
            var others: [KeyTest] = []
            for test in tests {
                if case .compare(let op, let key) = test, op != .equal, op != .notEqual {
                    bounds.append((op, key))
                } else {
                    others.append(test)
                }
            }
            return others + SQLQueryCompiler.tightestBounds(bounds).map { .compare($0.op, $0.key) }
        }
    }

    /// The test of one field that `predicate` is; `nil` for any other predicate, and for one that
    /// matches nothing (an `in` without values, a prefix past every key).
    private func fieldTest(of predicate: QueryPredicate) -> FieldTest? {
        switch predicate {
        case .comparison(let field, let op, let value):
            guard op != .notEqual else { return nil }
            return FieldTest(field: field, tests: [.compare(op, value.sortKey)])
        case .in(let field, let values):
            guard !values.isEmpty else { return nil }
            let keys = Set(values.map(\.sortKey)).sorted { $0.lexicographicallyPrecedes($1) }
            return FieldTest(field: field, tests: [.oneOf(keys)])
        case .exists(let field):
            return FieldTest(field: field)
        case .startsWith(let field, let prefix):
            // String keys are the kind byte and the escaped UTF-8: a string starts with the prefix
            // exactly when its key starts with the prefix's key without its terminator.
            var lower = Value.string(prefix).sortKey
            lower.removeLast(2)
            guard let upper = SQLQueryCompiler.successor(of: lower) else { return nil }
            return FieldTest(field: field, tests: [.below(lower, upper)])
        case .listContains(let field, let value):
            return elementTest(value, field)
        case .near(let field, let point, let maximum):
            var tests: [KeyTest] = [.point]
            if let maximum, let band = SQLQueryCompiler.latitudeBand(around: point, within: maximum) {
                // Only points in the band can be that close: read that range of the index.
                tests.append(.between(band.low, band.high))
            } else if let every = SQLQueryCompiler.pointKeys(south: -90, north: 90) {
                // Every point: the range of points' keys, which the value index answers alone
                // (testing the coordinates would read each row).
                tests.append(.between(every.low, every.high))
            }
            // Without SQL distance this is "a point in the band, at a longitude in reach" (a
            // superset): ``evaluation(of:unindexed:ordered:)`` sends every query with a maximum
            // distance to the evaluator, which decides it.
            if let maximum { tests.append(.near(point, maximum)) }
            return FieldTest(field: field, tests: tests)
        case .withinBox(let field, let southwest, let northeast):
            return FieldTest(field: field, tests: [.box(southwest: southwest, northeast: northeast)])
        case .or, .and, .not, .notIn, .notExists, .containsAll, .thisIn:
            return nil
        }
    }

    /// The test of a list or relation field holding the value.
    private func elementTest(_ value: Value, _ field: String) -> FieldTest {
        FieldTest(elements: true, field: field, tests: [.element(value.sortKey)])
    }

    /// The conditions of an `and`, with the comparisons of one field merged into one test of its
    /// value (`score >= 10 and score < 20` reads the index rows in the range once, instead of
    /// intersecting everything above 10 with everything below 20). An object has one value per
    /// field, so "a row meets each test" and "a row meets all tests" are the same.
    private func conjunction(_ operands: [QueryPredicate]) -> [SQLFragment] {
        var fragments: [SQLFragment] = []
        var tests: [String: [KeyTest]] = [:]
        var fields: [String] = []
        for operand in operands {
            guard case .comparison(let field, let op, let value) = operand, op != .notEqual else {
                fragments.append(condition(operand))
                continue
            }
            if tests[field] == nil { fields.append(field) }
            tests[field, default: []].append(.compare(op, value.sortKey))
        }
        for field in fields {
            let compared = tests[field] ?? []
            // Built-in columns are compared as their own values, not as keys: kept as written.
            let kept = builtInColumn(field) == nil ? KeyTest.tightened(compared) : compared
            fragments.append(holds(FieldTest(field: field, tests: kept)))
        }
        return fragments
    }

    /// Whether the object meets `test`:
    /// - for a value-indexed field, an uncorrelated `IN` over its rows, which lets the index on
    ///   (field, key) find the matching rows once instead of a lookup per object of the class;
    /// - for a field whose rows are kept out of the value index (``entryKeyed``), the same over
    ///   the entries of the compound index it leads when `test` compares keys only, or over the
    ///   range of them its keys narrow it to when it tests more (``narrowedEntrySet(_:partition:)``),
    ///   or over the index's element entries when it names an element (``elementEntrySet(_:partition:)``);
    /// - for another field with rows, the `EXISTS` that looks up the object's own row;
    /// - for a field without rows, the test of its value read from the object's document.
    private func holds(_ test: FieldTest) -> SQLFragment {
        if let partition = entryKeyed[test.field] {
            let entries =
                test.elements
                ? elementEntrySet(test, partition: partition)
                : entrySet(test, partition: partition) ?? narrowedEntrySet(test, partition: partition)
            return entries.map(member) ?? ownRow(test)
        }
        if let column = builtInColumn(test.field) { return holds(test, column) }
        let rowless: Columns?
        if isValueIndexed(test.field) {
            return member(keySet(test))
        } else {
            rowless = layout.document.map { documentColumns(test.field, document: $0) }
        }
        if let columns = rowless {
            var tests = test.elements ? test.tests : [.exists] + test.tests
            // A distance is known only for a point: one read of the document answers all three.
            if tests.contains(where: { if case .near = $0 { true } else { false } }) {
                tests.removeAll { if case .exists = $0 { true } else if case .point = $0 { true } else { false } }
            }
            // `IS TRUE`: a missing field's tests are unknown (NULL), and false under `NOT` too.
            return SQLFragment("(") + render(tests, columns) + SQLFragment(") IS TRUE")
        }
        return ownRow(test)
    }

    /// The `EXISTS` that looks up the object's own row of `test`'s field (or its elements' rows)
    /// and tests it.
    private func ownRow(_ test: FieldTest) -> SQLFragment {
        let rows =
            test.elements
            ? "EXISTS (SELECT 1 FROM object_elements e WHERE e.object_key = o.key AND e.field = ?"
            : "EXISTS (SELECT 1 FROM object_fields f WHERE f.object_key = o.key AND f.field = ?"
        var fragment = SQLFragment(rows, [.text(test.field)])
        if !test.tests.isEmpty { fragment = fragment + SQLFragment(" AND ") + render(test.tests, .rows) }
        return fragment + SQLFragment(")")
    }

    /// The `SELECT` of the keys of the objects with a row meeting `test`, by the value index.
    private func keySet(_ test: FieldTest) -> SQLFragment {
        let alias = test.elements ? "e" : "f"
        let flag = layout.valueFlag.map { " AND \(alias).\($0) = 1" } ?? ""
        var fragment =
            test.elements
            ? SQLFragment("SELECT e.object_key FROM object_elements e WHERE e.field = ?\(flag)", [.text(test.field)])
            : SQLFragment("SELECT f.object_key FROM object_fields f WHERE f.field = ?\(flag)", [.text(test.field)])
        fragment = fragment + partitioned(alias)
        if !test.tests.isEmpty { fragment = fragment + SQLFragment(" AND ") + render(test.tests, .rows) }
        return fragment
    }

    /// The condition that rows (`alias`) are of the query's partition (``valuePartition``), with
    /// a leading ` AND `; empty when the value indexes are read by field.
    func partitioned(_ alias: String) -> SQLFragment {
        valuePartition.map { SQLFragment(" AND \(alias).partition = ?", [.integer($0)]) } ?? SQLFragment()
    }

    /// Whether the store keeps `field`'s rows in its value indexes for the query's class: when
    /// ``indexedFields`` names it (or is `nil`).
    func isValueIndexed(_ field: String) -> Bool {
        indexedFields?.contains(field) ?? true
    }

    /// Whether SQL cannot read `field` of the query's class at all: the store keeps no rows of it
    /// (``indexedFields`` does not name it), has no document to read it from and no column of it
    /// (``SQLIndexLayout/builtInColumns``). A query that tests or orders by such a field is left
    /// to the shared evaluator (``evaluation(of:unindexed:ordered:)``): PostgreSQL's storage,
    /// for a field its class's declared indexes do not name.
    func isUnreadable(_ field: String) -> Bool {
        layout.valueFlag == nil && layout.document == nil && !isValueIndexed(field) && builtInColumn(field) == nil
    }

    /// Whether the store keeps no rows of `field` for the query's class: its conditions and
    /// order read the object's document (``SQLIndexLayout/document``).
    func isRowless(_ field: String) -> Bool {
        layout.document != nil && !isValueIndexed(field)
    }
}
