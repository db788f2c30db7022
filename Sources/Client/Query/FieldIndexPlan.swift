import Foundation
import GRDB
import RooftopShared

/// The conditions of a local query that the local field index answers: the top-level `and`
/// operands (or the whole predicate) that compare a stored field with `=`, `<`, `<=`, `>`, `>=`
/// or `in`. By `QueryPredicate`'s semantics such a condition holds exactly when the field is
/// present and its value's order-preserving key compares accordingly, so the index finds every
/// object that can match; the shared evaluator still decides on what it finds. Other conditions
/// (`!=`, `not`, `or`, strings' prefixes, lists, geo, built-in fields) are left to the evaluator.
struct FieldIndexPlan: Sendable {
    /// One indexed condition: a field and the SQL test of its key.
    struct Condition: Sendable {
        var field: String
        var test: String
        var keys: [Data]
    }

    /// The conditions, all of which an object must meet.
    var conditions: [Condition]

    /// Fields a snapshot reads from its metadata, not from its stored fields.
    static let builtInFields: Set<String> = ["objectId", "createdAt", "updatedAt"]

    /// `in` conditions with more values than this are left to the evaluator.
    static let maxInValues = 200

    /// The plan for a predicate; `nil` when no condition can use the index.
    init?(_ predicate: QueryPredicate?) {
        guard let predicate else { return nil }
        let operands: [QueryPredicate] = if case .and(let operands) = predicate { operands } else { [predicate] }
        conditions = operands.compactMap(FieldIndexPlan.condition)
        if conditions.isEmpty { return nil }
    }

    private static func condition(_ predicate: QueryPredicate) -> Condition? {
        switch predicate {
        case .comparison(let field, let op, let value) where !builtInFields.contains(field):
            let test: String
            switch op {
            case .equal: test = "sort_key = ?"
            case .less: test = "sort_key < ?"
            case .lessOrEqual: test = "sort_key <= ?"
            case .greater: test = "sort_key > ?"
            case .greaterOrEqual: test = "sort_key >= ?"
            case .notEqual: return nil
            }
            return Condition(field: field, test: test, keys: [Data(value.sortKey)])
        case .in(let field, let values)
        where !builtInFields.contains(field) && !values.isEmpty && values.count <= maxInValues:
            let marks = Array(repeating: "?", count: values.count).joined(separator: ", ")
            return Condition(field: field, test: "sort_key IN (\(marks))", keys: values.map { Data($0.sortKey) })
        default:
            return nil
        }
    }

    /// The SQL that narrows `objects` rows (alias-free, to `AND` onto a query of one scope,
    /// datastore and class) and its arguments: every condition met, or the object one of
    /// `alwaysIncluded` (live objects whose unsaved changes the index does not know).
    func filter(scope: String, datastore: DatastoreID, className: String, alwaysIncluded: [String])
        -> (sql: String, arguments: [any DatabaseValueConvertible])
    {
        var parts: [String] = []
        var arguments: [any DatabaseValueConvertible] = []
        for condition in conditions {
            // Keys too long to index are stored as NULL: those objects are always evaluated.
            parts.append("""
                object_id IN (SELECT object_id FROM local_fields WHERE scope = ? AND datastore = ? \
                AND class_name = ? AND field = ? AND (\(condition.test) OR sort_key IS NULL))
                """)
            arguments += [scope, datastore.rawValue, className, condition.field] as [any DatabaseValueConvertible]
            arguments += condition.keys as [any DatabaseValueConvertible]
        }
        var sql = "(" + parts.joined(separator: " AND ") + ")"
        if !alwaysIncluded.isEmpty {
            sql = "(\(sql) OR object_id IN (\(Array(repeating: "?", count: alwaysIncluded.count).joined(separator: ", "))))"
            arguments += alwaysIncluded as [any DatabaseValueConvertible]
        }
        return (sql, arguments)
    }
}
