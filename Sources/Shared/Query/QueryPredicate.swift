/// A condition on objects: the `where` part of a ``Query``.
///
/// This is the reference semantics: ``QueryEvaluator`` implements it on the client, and the
/// server's SQL compilation must give identical answers.
///
/// ## Field values
/// A condition reads `object[field]` (see ``ObjectSnapshot/subscript(_:)``), which includes the
/// built-in fields `objectId` (a string), `createdAt` and `updatedAt` (dates). A field is
/// *missing* when that is `nil`; an explicit ``Value/null`` is present.
///
/// ## Two-valued logic
/// Every predicate is true or false for every object (there is no SQL-style "unknown"). A missing
/// field matches no positive condition: only `!=`, `notIn`, `notExists` and negations with `not`
/// match it. `not(p)` is the exact complement of `p`. An `and` holds when all operands hold, an
/// `or` when one does; both need at least two operands (see ``Query/validate(maxDepth:)``).
///
/// ## Conditions
/// - ``comparison(field:op:value:)``: the field is present and `Value.compare(fieldValue, value)`
///   satisfies the operator (see ``Value/compare(_:_:)``). So `1 = 1.0`, and across kinds the kind
///   order applies: `score > 5` also matches a string score, because strings sort after numbers.
///   `= null` matches an explicit null only. `!=` is the complement of `=`: it also matches a
///   missing field.
/// - ``in(field:values:)``: present and equivalent to some element (none when the list is empty).
///   ``notIn(field:values:)`` is its complement: missing, or equivalent to no element.
/// - ``exists(field:)``: present (an explicit null exists). ``notExists(field:)``: missing.
/// - ``startsWith(field:prefix:)``: a string whose UTF-8 bytes start with the prefix's (no case
///   folding or normalization; the empty prefix matches every string).
/// - ``listContains(field:value:)``: a list with an element equivalent to the value, or a
///   relation holding the value when it is a pointer of the relation's class.
/// - ``containsAll(field:values:)``: a list or relation that contains every value as
///   `listContains` does (with no values, every list or relation field matches).
/// - ``near(field:point:maxDistanceMeters:)``: a geo point, within `maxDistanceMeters` of `point`
///   (haversine, ``GeoPoint/distanceMeters(to:)``, inclusive) when a maximum is given.
/// - ``withinBox(field:southwest:northeast:)``: a geo point with
///   `southwest.latitude <= latitude <= northeast.latitude` and longitude in
///   `southwest.longitude...northeast.longitude`; when `southwest.longitude >
///   northeast.longitude` the box crosses the antimeridian and the longitude must be
///   `>= southwest.longitude` or `<= northeast.longitude`.
/// - ``thisIn(_:)``: the object itself is one of the references: an object ID equal to its
///   `objectId`, or a pointer with its class name and object ID (pointers to other classes never
///   match).
///
/// ## Distance order
/// When a query has no explicit order, the first `near` condition reached from the top of the
/// predicate through `and` operands only (depth first, in operand order) sorts the results by
/// distance from its point, nearest first (ties by `objectId`).
///
/// ```swift
/// let p: QueryPredicate = Field("score") > 100 && (Field("name") == "Sean" || Field("tag").in(["a", "b"]))
/// ```
public indirect enum QueryPredicate: Hashable, Sendable {
    /// Every operand holds (at least two operands).
    case and([QueryPredicate])
    /// At least one operand holds (at least two operands).
    case or([QueryPredicate])
    /// The operand does not hold: the exact complement.
    case not(QueryPredicate)
    /// The field compares to `value` as `op` says, in the value order.
    case comparison(field: String, op: ComparisonOperator, value: Value)
    /// The field is present and equivalent to one of `values`.
    case `in`(field: String, values: [Value])
    /// The field is missing or equivalent to none of `values`.
    case notIn(field: String, values: [Value])
    /// The field is present (possibly null).
    case exists(field: String)
    /// The field is missing.
    case notExists(field: String)
    /// The field is a string starting with `prefix` (bytewise).
    case startsWith(field: String, prefix: String)
    /// The field is a list with an element equivalent to `value`, or a relation holding the
    /// pointer `value`.
    case listContains(field: String, value: Value)
    /// The field is a list or relation containing every one of `values`.
    case containsAll(field: String, values: [Value])
    /// The field is a geo point, within `maxDistanceMeters` of `point` when given.
    case near(field: String, point: GeoPoint, maxDistanceMeters: Double?)
    /// The field is a geo point inside the box (which may cross the antimeridian).
    case withinBox(field: String, southwest: GeoPoint, northeast: GeoPoint)
    /// The object itself is one of these references (Backbeam's `this in ?`).
    case thisIn([ObjectReference])

    /// A comparison operator of ``QueryPredicate/comparison(field:op:value:)``; the raw value is the
    /// symbol used in the text and JSON forms.
    public enum ComparisonOperator: String, Hashable, Sendable, CaseIterable, Codable {
        /// Equivalent in the value order.
        case equal = "="
        /// Not equivalent, or the field is missing.
        case notEqual = "!="
        /// Sorts before.
        case less = "<"
        /// Sorts before or is equivalent.
        case lessOrEqual = "<="
        /// Sorts after.
        case greater = ">"
        /// Sorts after or is equivalent.
        case greaterOrEqual = ">="

        /// Whether a result of ``Value/compare(_:_:)`` satisfies this operator.
        public func accepts(comparison result: Int) -> Bool {
            switch self {
            case .equal: result == 0
            case .notEqual: result != 0
            case .less: result < 0
            case .lessOrEqual: result <= 0
            case .greater: result > 0
            case .greaterOrEqual: result >= 0
            }
        }
    }

    /// The field a condition reads, or `nil` for `and`, `or`, `not` and `thisIn`.
    public var field: String? {
        switch self {
        case .and, .or, .not, .thisIn: nil
        case .comparison(let field, _, _), .in(let field, _), .notIn(let field, _), .exists(let field),
            .notExists(let field), .startsWith(let field, _), .listContains(let field, _),
            .containsAll(let field, _), .near(let field, _, _), .withinBox(let field, _, _):
            field
        }
    }

    /// The nesting depth: 1 for a condition, one more than the deepest operand for `and`, `or`
    /// and `not` (an `and` or `or` without operands counts 1).
    public var depth: Int {
        switch self {
        case .and(let operands), .or(let operands): 1 + (operands.map(\.depth).max() ?? 0)
        case .not(let operand): 1 + operand.depth
        default: 1
        }
    }
}
