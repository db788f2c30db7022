import RooftopShared

/// Conditions on, and orders by, the built-in fields a store reads from its objects' own columns
/// (``SQLIndexLayout/builtInColumns``): `o.object_id`, `o.created_at`, `o.updated_at`.
///
/// A key test of such a field compares the column itself with the value a key bound stands for,
/// so that the objects' own indexes answer it (`objectId = ?` finds its object by the unique
/// `(datastore_key, class_name, object_id)`, not by reading the class): a string column's keys
/// are its UTF-8 bytes between the kind byte and `00 00`, in the column's own bytewise order
/// (object IDs hold no `00` byte); a date column's keys are its milliseconds with the sign bit
/// flipped, big-endian, in the integer order. A bound of another kind is below or above every
/// key of the column. What no column comparison says exactly is tested on the key
/// (``SQLDialect/builtInKey``), reading each candidate.
extension SQLQueryCompiler {
    /// The column a built-in field is read from: always for one the store keeps no rows of, else
    /// when the class's rows leave it out (``indexedFields``); `nil` for other fields.
    func builtInColumn(_ field: String) -> SQLIndexLayout.BuiltInColumn? {
        guard let column = layout.builtInColumns[field], column.always || !isValueIndexed(field) else { return nil }
        return column
    }

    /// Whether the object meets `test` on a built-in column. Comparisons of a column that always
    /// has a value stand alone, where an index can answer them; other tests (and any on a column
    /// that may be `NULL`) are wrapped in `IS TRUE`, as a missing value's tests are unknown and
    /// false under `NOT` too.
    func holds(_ test: FieldTest, _ column: SQLIndexLayout.BuiltInColumn) -> SQLFragment {
        let columns = Columns(
            kind: column.nullable
                ? SQLFragment("(CASE WHEN \(column.column) IS NULL THEN NULL ELSE \(column.kind.rawValue) END)")
                : SQLFragment("\(column.kind.rawValue)"),
            key: SQLFragment(dialect.builtInKey(column.kind, column.column)), latitude: SQLFragment("NULL"),
            longitude: SQLFragment("NULL"), element: SQLFragment("(0 = 1 AND ? IS NULL)"), distance: nil, narrows: false,
            builtIn: column)
        var tests = test.elements ? test.tests : [.exists] + test.tests
        if tests.contains(where: { if case .near = $0 { true } else { false } }) {
            tests.removeAll { if case .exists = $0 { true } else if case .point = $0 { true } else { false } }
        }
        let alone =
            !column.nullable
            && tests.allSatisfy { test in if case .exists = test { true } else { test.isKeyTest && builtInTest(test, column) != nil } }
        let rendered = render(tests, columns)
        return alone ? SQLFragment("(") + rendered + SQLFragment(")") : SQLFragment("(") + rendered + SQLFragment(") IS TRUE")
    }

    /// `test` as comparisons of the column (see the type's note); `nil` when they would not say
    /// it exactly (a date bound that is not a whole date's key), or it is not a key test.
    func builtInTest(_ test: KeyTest, _ column: SQLIndexLayout.BuiltInColumn) -> SQLFragment? {
        switch test {
        case .compare(let op, let key):
            return comparison(op, key, column)
        case .oneOf(let keys):
            var values: [SQLArgument] = []
            for key in keys {
                guard let bound = ColumnBound(key, kind: column.kind) else { return nil }
                if case .value(let value, 0) = bound {
                    guard let argument = argument(value, column) else { return nil }
                    values.append(argument)
                }
            }
            guard !values.isEmpty else { return SQLFragment("0 = 1") }
            let placeholders = repeatElement(placeholder(column), count: values.count).joined(separator: ", ")
            return SQLFragment("\(column.column) IN (\(placeholders))", values)
        case .below(let lower, let upper):
            guard let from = comparison(.greaterOrEqual, lower, column), let to = comparison(.less, upper, column) else {
                return nil
            }
            return from + SQLFragment(" AND ") + to
        case .exists, .between, .point, .near, .box, .collection, .element:
            return nil
        }
    }

    /// The comparison of the column's values whose keys compare with `key` as `op` says.
    private func comparison(
        _ op: QueryPredicate.ComparisonOperator, _ key: [UInt8], _ column: SQLIndexLayout.BuiltInColumn
    ) -> SQLFragment? {
        guard let bound = ColumnBound(key, kind: column.kind), let test = bound.test(op) else { return nil }
        switch test {
        case .every: return SQLFragment("\(column.column) IS NOT NULL")
        case .nothing: return SQLFragment("0 = 1")
        case .compare(let sqlOperator, let value):
            guard let value = argument(value, column) else { return nil }
            // Equality as the column's own index compares; order bytewise, as keys compare.
            let compared = sqlOperator == "=" ? column.column : ordered(column)
            return SQLFragment("\(compared) \(sqlOperator) \(placeholder(column))", [value])
        }
    }

    /// The argument a column is compared with for `value` (``ColumnBound``'s): a string column's
    /// bound as the dialect binds it (``SQLDialect/textBound``); `nil` when the dialect cannot.
    private func argument(_ value: SQLArgument, _ column: SQLIndexLayout.BuiltInColumn) -> SQLArgument? {
        guard column.kind == .string, case .blob(let bytes) = value else { return value }
        return dialect.textBound(bytes)
    }

    /// The column's SQL in its keys' order: a text column compared bytewise
    /// (``SQLDialect/bytewiseText``).
    func ordered(_ column: SQLIndexLayout.BuiltInColumn) -> String {
        column.kind == .string ? dialect.bytewiseText(column.column) : column.column
    }

    /// The placeholder of a value compared with the column: text for a string column (bound as
    /// the dialect binds it, ``SQLDialect/textBound``), an integer for a date column.
    private func placeholder(_ column: SQLIndexLayout.BuiltInColumn) -> String {
        column.kind == .string ? "CAST(? AS TEXT)" : "?"
    }
}

/// A bound on the keys of a built-in column's values, as a bound on the values themselves.
package enum ColumnBound: Equatable {
    /// Every value's key is above the bound (a bound of a kind ordered before the column's).
    case everyAbove
    /// Every value's key is below it.
    case everyBelow
    /// The column's value `value`; the key of a value equal to it is below (-1), at (0) or above
    /// (1) the bound, and the keys of other values compare with the bound as they compare with it.
    case value(SQLArgument, equal: Int)

    /// What a value of the column must be for its key to compare with the bound as `op` says.
    package enum Test: Equatable {
        /// Any value (not `NULL`).
        case every
        /// None (named apart from `Optional.none`, which a `Test?` would mean).
        case nothing
        /// The value compared, as SQL's operator says, with the argument.
        case compare(String, SQLArgument)
    }

    /// The test of the column's values whose keys compare with the bound as `op` says; `nil` for
    /// `!=`, which no key test is.
    package func test(_ op: QueryPredicate.ComparisonOperator) -> Test? {
        switch self {
        case .everyAbove:
            return op == .greater || op == .greaterOrEqual ? .every : .nothing
        case .everyBelow:
            return op == .less || op == .lessOrEqual ? .every : .nothing
        case .value(let value, let equal):
            switch op {
            case .less: return .compare(equal < 0 ? "<=" : "<", value)
            case .lessOrEqual: return .compare(equal <= 0 ? "<=" : "<", value)
            case .greater: return .compare(equal > 0 ? ">=" : ">", value)
            case .greaterOrEqual: return .compare(equal >= 0 ? ">=" : ">", value)
            case .equal: return equal == 0 ? .compare("=", value) : .nothing
            case .notEqual: return nil
            }
        }
    }

    /// The bound `key` is on the keys of a column of `kind` (``Value/Kind/string`` or
    /// ``Value/Kind/date``); `nil` when no value bound says it (a date key of another length).
    package init?(_ key: [UInt8], kind: Value.Kind) {
        let kindByte = UInt8(kind.rawValue + 1)
        guard let first = key.first, first == kindByte else {
            // The empty key is below every key; a kind byte orders the kinds.
            self = (key.first ?? 0) < kindByte ? .everyAbove : .everyBelow
            return
        }
        let body = key.dropFirst()
        switch kind {
        case .string:
            // A value's key is its bytes (none 0) and `00 00`: up to the bound's first 0 byte the
            // two compare as the value and the bound's bytes before it do; a value equal to those
            // compares as `00 00` with the rest of the bound.
            guard let zero = body.firstIndex(of: 0) else {
                self = .value(.blob(Array(body)), equal: 1)
                return
            }
            let rest = Array(body[zero...])
            let equal = [UInt8](repeating: 0, count: 2).lexicographicallyPrecedes(rest) ? -1 : (rest == [0, 0] ? 0 : 1)
            self = .value(.blob(Array(body[..<zero])), equal: equal)
        case .date:
            guard body.count == 8 else { return nil }
            let bits = body.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            self = .value(.integer(Int64(bitPattern: bits ^ (1 << 63))), equal: 0)
        default:
            return nil
        }
    }
}
