import RooftopShared

/// Bounds on how wide a query may be, so that every accepted query compiles to SQL a backend
/// runs (SQLite allows at most 32,766 bound variables and 64 tables in a join) and no request
/// can make the server build an arbitrarily large statement. Depth is bounded separately
/// (``Query/validate(maxDepth:)``).
///
/// ```swift
/// try QueryComplexity.check(query)   // invalidQuery naming the bound that is broken
/// ```
enum QueryComplexity {
    /// The most conditions (comparisons, `in`, `exists`, …; not `and`/`or`/`not`) in a predicate,
    /// with each step of each include path counted as one.
    static let maxConditions = 1000
    /// The most values in the `in`, `not in`, `contains all` and `this in` lists of a predicate,
    /// all together.
    static let maxListValues = 10_000
    /// The most sort keys.
    static let maxOrderKeys = 16

    /// Checks a validated query against the bounds.
    /// - Throws: ``RooftopError/Code/invalidQuery`` naming the bound that is broken.
    static func check(_ query: Query) throws(RooftopError) {
        if query.order.count > maxOrderKeys {
            throw RooftopError(
                .invalidQuery, "the query orders by \(query.order.count) keys; at most \(maxOrderKeys) are allowed")
        }
        // Each step of an include path costs a lookup, as a condition costs a comparison.
        var conditions = query.includes.reduce(0) { $0 + $1.count }
        var values = 0
        if let predicate = query.predicate { count(predicate, conditions: &conditions, values: &values) }
        if conditions > maxConditions {
            throw RooftopError(
                .invalidQuery,
                "the predicate's conditions and the include paths' steps number \(conditions); at most \(maxConditions) are allowed"
            )
        }
        if values > maxListValues {
            throw RooftopError(
                .invalidQuery, "the predicate lists \(values) values; at most \(maxListValues) are allowed in all")
        }
    }

    private static func count(_ predicate: QueryPredicate, conditions: inout Int, values: inout Int) {
        switch predicate {
        case .and(let operands), .or(let operands):
            for operand in operands { count(operand, conditions: &conditions, values: &values) }
        case .not(let operand):
            count(operand, conditions: &conditions, values: &values)
        case .in(_, let list), .notIn(_, let list), .containsAll(_, let list):
            conditions += 1
            values += list.count
        case .thisIn(let references):
            conditions += 1
            values += references.count
        default:
            conditions += 1
        }
    }
}
