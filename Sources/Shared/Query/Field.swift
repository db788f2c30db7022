/// A field named in a predicate, for building conditions that read like Swift.
///
/// Comparison operators (`==`, `!=`, `<`, `<=`, `>`, `>=`) between a field and a ``Value`` make
/// a ``QueryPredicate``; `&&`, `||` and `!` combine predicates. Values are literals, ``Value``s or
/// Swift values of any ``ValueConvertible`` type (`Int`, `Date`, `[String]`, …).
///
/// ```swift
/// let p = Field("score") > 100 && (Field("name") == "Sean" || Field("tag").in(["a", "b"]))
/// let recent = Field("when") >= Date().addingTimeInterval(-3600) && Field("level") == level
/// let nearby = Field("location").near(madrid, maxDistanceMeters: 5_000)
/// ```
public struct Field: Sendable {
    /// The field name (validated with the query, see ``Query/validate(maxDepth:)``).
    public let name: String

    /// Names a field.
    public init(_ name: String) { self.name = name }

    /// The field is equivalent to `value` (`=`).
    public static func == (field: Field, value: Value) -> QueryPredicate {
        .comparison(field: field.name, op: .equal, value: value)
    }

    /// The field is not equivalent to `value`, or is missing (`!=`).
    public static func != (field: Field, value: Value) -> QueryPredicate {
        .comparison(field: field.name, op: .notEqual, value: value)
    }

    /// The field sorts before `value` (`<`).
    public static func < (field: Field, value: Value) -> QueryPredicate {
        .comparison(field: field.name, op: .less, value: value)
    }

    /// The field sorts before or is equivalent to `value` (`<=`).
    public static func <= (field: Field, value: Value) -> QueryPredicate {
        .comparison(field: field.name, op: .lessOrEqual, value: value)
    }

    /// The field sorts after `value` (`>`).
    public static func > (field: Field, value: Value) -> QueryPredicate {
        .comparison(field: field.name, op: .greater, value: value)
    }

    /// The field sorts after or is equivalent to `value` (`>=`).
    public static func >= (field: Field, value: Value) -> QueryPredicate {
        .comparison(field: field.name, op: .greaterOrEqual, value: value)
    }

    /// The field is present and equivalent to one of `values`.
    public func `in`(_ values: [Value]) -> QueryPredicate { .in(field: name, values: values) }

    /// The field is missing or equivalent to none of `values`.
    public func notIn(_ values: [Value]) -> QueryPredicate { .notIn(field: name, values: values) }

    /// The field is present (possibly null).
    public var exists: QueryPredicate { .exists(field: name) }

    /// The field is missing.
    public var notExists: QueryPredicate { .notExists(field: name) }

    /// The field is a string starting with `prefix` (compared bytewise).
    public func startsWith(_ prefix: String) -> QueryPredicate { .startsWith(field: name, prefix: prefix) }

    /// The field is a list holding an element equivalent to `value`, or a relation holding the
    /// pointer `value`.
    public func contains(_ value: Value) -> QueryPredicate { .listContains(field: name, value: value) }

    /// The field is a list or relation holding every one of `values`.
    public func containsAll(_ values: [Value]) -> QueryPredicate { .containsAll(field: name, values: values) }

    /// The field is a geo point, within `maxDistanceMeters` of `point` when given (default `nil`:
    /// any distance). Without an explicit order, results sort nearest first.
    public func near(_ point: GeoPoint, maxDistanceMeters: Double? = nil) -> QueryPredicate {
        .near(field: name, point: point, maxDistanceMeters: maxDistanceMeters)
    }

    /// The field is a geo point inside the box; when `southwest.longitude >
    /// northeast.longitude` the box crosses the antimeridian.
    public func within(southwest: GeoPoint, northeast: GeoPoint) -> QueryPredicate {
        .withinBox(field: name, southwest: southwest, northeast: northeast)
    }

    // MARK: Swift values

    /// The field is equivalent to `value` (`=`), for a Swift value (see ``ValueConvertible``).
    public static func == <T: ValueConvertible>(field: Field, value: T) -> QueryPredicate {
        .comparison(field: field.name, op: .equal, value: value.rooftopValue)
    }

    /// The field is not equivalent to `value`, or is missing (`!=`), for a Swift value (see ``ValueConvertible``).
    public static func != <T: ValueConvertible>(field: Field, value: T) -> QueryPredicate {
        .comparison(field: field.name, op: .notEqual, value: value.rooftopValue)
    }

    /// The field sorts before `value` (`<`), for a Swift value (see ``ValueConvertible``).
    public static func < <T: ValueConvertible>(field: Field, value: T) -> QueryPredicate {
        .comparison(field: field.name, op: .less, value: value.rooftopValue)
    }

    /// The field sorts before or is equivalent to `value` (`<=`), for a Swift value (see ``ValueConvertible``).
    public static func <= <T: ValueConvertible>(field: Field, value: T) -> QueryPredicate {
        .comparison(field: field.name, op: .lessOrEqual, value: value.rooftopValue)
    }

    /// The field sorts after `value` (`>`), for a Swift value (see ``ValueConvertible``).
    public static func > <T: ValueConvertible>(field: Field, value: T) -> QueryPredicate {
        .comparison(field: field.name, op: .greater, value: value.rooftopValue)
    }

    /// The field sorts after or is equivalent to `value` (`>=`), for a Swift value (see ``ValueConvertible``).
    public static func >= <T: ValueConvertible>(field: Field, value: T) -> QueryPredicate {
        .comparison(field: field.name, op: .greaterOrEqual, value: value.rooftopValue)
    }

    /// The field is present and equivalent to one of `values`, Swift values.
    public func `in`<T: ValueConvertible>(_ values: [T]) -> QueryPredicate { self.in(values.map(\.rooftopValue)) }

    /// The field is missing or equivalent to none of `values`, Swift values.
    public func notIn<T: ValueConvertible>(_ values: [T]) -> QueryPredicate { notIn(values.map(\.rooftopValue)) }

    /// The field is a list holding an element equivalent to `value`, or a relation holding it, for
    /// a Swift value (a ``Pointer``, a model).
    public func contains<T: ValueConvertible>(_ value: T) -> QueryPredicate { contains(value.rooftopValue) }

    /// The field is a list or relation holding every one of `values`, Swift values.
    public func containsAll<T: ValueConvertible>(_ values: [T]) -> QueryPredicate {
        containsAll(values.map(\.rooftopValue))
    }
}

extension QueryPredicate {
    /// Both hold. Operands that are themselves `and`s are flattened, so `a && b && c` is one
    /// `and` of three.
    public static func && (lhs: QueryPredicate, rhs: QueryPredicate) -> QueryPredicate {
        .and(lhs.andOperands + rhs.andOperands)
    }

    /// Either holds. Operands that are themselves `or`s are flattened.
    public static func || (lhs: QueryPredicate, rhs: QueryPredicate) -> QueryPredicate {
        .or(lhs.orOperands + rhs.orOperands)
    }

    /// The complement.
    public static prefix func ! (operand: QueryPredicate) -> QueryPredicate { .not(operand) }

    private var andOperands: [QueryPredicate] { if case .and(let operands) = self { operands } else { [self] } }
    private var orOperands: [QueryPredicate] { if case .or(let operands) = self { operands } else { [self] } }
}
