public import Foundation

/// A field value: every kind of data an object can hold.
///
/// `int`, `double` and `bool` stay distinct through every round trip, and a `double` survives
/// encoding bit-exactly (see ``Value`` `Codable` for the wire form). Values have one total order,
/// shared by client and server (see ``Value/compare(_:_:)``).
///
/// ```swift
/// let score: Value = 1337                       // .int(1337)
/// let ratio: Value = 0.25                       // .double(0.25)
/// let tags: Value = ["a", "b"]                  // .list([.string("a"), .string("b")])
/// let owner = Value.pointer(Pointer(className: "_User", objectId: "u1"))
/// ```
public enum Value: Sendable {
    /// No value (an explicit null; a field that is absent is not the same as a null field).
    case null
    /// A boolean.
    case bool(Bool)
    /// A 64-bit signed integer.
    case int(Int64)
    /// A 64-bit IEEE 754 floating-point number, including -0.0, infinities and NaN.
    case double(Double)
    /// A Unicode string.
    case string(String)
    /// A point in time, in milliseconds since the epoch (UTC).
    case date(Timestamp)
    /// Bytes with an optional MIME type.
    case bytes(BinaryValue)
    /// An arbitrary-precision decimal carried as text.
    case decimal(DecimalNumber)
    /// A latitude/longitude pair.
    case geoPoint(GeoPoint)
    /// A calendar date without a time.
    case day(Day)
    /// Any JSON document.
    case json(JSONValue)
    /// An ordered list of values.
    case list([Value])
    /// A to-one reference to another object.
    case pointer(Pointer)
    /// A to-many reference: a set of objects of one class.
    case relation(Relation)
}

extension Value {
    /// The kind of a value, in the order the kinds sort (see ``Value/compare(_:_:)``).
    public enum Kind: Int, Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible {
        /// ``Value/null``.
        case null = 0
        /// ``Value/bool(_:)``.
        case bool
        /// ``Value/int(_:)`` and ``Value/double(_:)``: one kind for ordering, compared by value.
        case number
        /// ``Value/decimal(_:)``.
        case decimal
        /// ``Value/date(_:)-enum.case``.
        case date
        /// ``Value/day(_:)``.
        case day
        /// ``Value/string(_:)``.
        case string
        /// ``Value/bytes(_:)``.
        case bytes
        /// ``Value/list(_:)``.
        case list
        /// ``Value/geoPoint(_:)``.
        case geoPoint
        /// ``Value/pointer(_:)``.
        case pointer
        /// ``Value/relation(_:)``.
        case relation
        /// ``Value/json(_:)``.
        case json

        /// Orders kinds by their place in the value order.
        public static func < (lhs: Kind, rhs: Kind) -> Bool { lhs.rawValue < rhs.rawValue }

        /// The kind's name, e.g. `number`.
        public var description: String {
            switch self {
            case .null: "null"
            case .bool: "bool"
            case .number: "number"
            case .decimal: "decimal"
            case .date: "date"
            case .day: "day"
            case .string: "string"
            case .bytes: "bytes"
            case .list: "list"
            case .geoPoint: "geoPoint"
            case .pointer: "pointer"
            case .relation: "relation"
            case .json: "json"
            }
        }
    }

    /// This value's kind (`int` and `double` are both ``Kind/number``).
    public var kind: Kind {
        switch self {
        case .null: .null
        case .bool: .bool
        case .int, .double: .number
        case .decimal: .decimal
        case .date: .date
        case .day: .day
        case .string: .string
        case .bytes: .bytes
        case .list: .list
        case .geoPoint: .geoPoint
        case .pointer: .pointer
        case .relation: .relation
        case .json: .json
        }
    }

    /// The name of this value's type as used in messages: `int`, `double`, `string`, ...
    public var typeName: String {
        switch self {
        case .int: "int"
        case .double: "double"
        default: kind.description
        }
    }

    /// Whether this is ``null``.
    public var isNull: Bool { if case .null = self { true } else { false } }

    /// The boolean, if this is a `bool`.
    public var boolValue: Bool? { if case .bool(let value) = self { value } else { nil } }
    /// The integer, if this is an `int`.
    public var intValue: Int64? { if case .int(let value) = self { value } else { nil } }
    /// The number as a `Double`, if this is an `int` or a `double`.
    public var doubleValue: Double? {
        switch self {
        case .int(let value): Double(value)
        case .double(let value): value
        default: nil
        }
    }
    /// The string, if this is a `string`.
    public var stringValue: String? { if case .string(let value) = self { value } else { nil } }
    /// The timestamp, if this is a `date`.
    public var dateValue: Timestamp? { if case .date(let value) = self { value } else { nil } }
    /// The bytes, if this is `bytes`.
    public var bytesValue: BinaryValue? { if case .bytes(let value) = self { value } else { nil } }
    /// The decimal, if this is a `decimal`.
    public var decimalValue: DecimalNumber? { if case .decimal(let value) = self { value } else { nil } }
    /// The point, if this is a `geoPoint`.
    public var geoPointValue: GeoPoint? { if case .geoPoint(let value) = self { value } else { nil } }
    /// The day, if this is a `day`.
    public var dayValue: Day? { if case .day(let value) = self { value } else { nil } }
    /// The JSON, if this is `json`.
    public var jsonValue: JSONValue? { if case .json(let value) = self { value } else { nil } }
    /// The elements, if this is a `list`.
    public var listValue: [Value]? { if case .list(let value) = self { value } else { nil } }
    /// The pointer, if this is a `pointer`.
    public var pointerValue: Pointer? { if case .pointer(let value) = self { value } else { nil } }
    /// The relation, if this is a `relation`.
    public var relationValue: Relation? { if case .relation(let value) = self { value } else { nil } }

    /// A `date` value for a `Date`, rounded down to the millisecond.
    public static func date(_ date: Date) -> Value { .date(Timestamp(date)) }
}

extension Value: Hashable {
    /// Identity, not order: two values are equal when they are the same kind with the same content.
    /// Doubles compare bit for bit (so `-0.0 != 0.0`), except that every NaN equals every NaN;
    /// strings compare by their UTF-8 bytes (no Unicode normalization); decimals by their text;
    /// `int(1) != double(1.0)`. Use ``isEquivalent(to:)`` for equality in the value order.
    public static func == (lhs: Value, rhs: Value) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let l), .bool(let r)): l == r
        case (.int(let l), .int(let r)): l == r
        case (.double(let l), .double(let r)): l.bitPattern == r.bitPattern || (l.isNaN && r.isNaN)
        case (.string(let l), .string(let r)): l.utf8.elementsEqual(r.utf8)
        case (.date(let l), .date(let r)): l == r
        case (.bytes(let l), .bytes(let r)): l == r
        case (.decimal(let l), .decimal(let r)): l == r
        case (.geoPoint(let l), .geoPoint(let r)): l == r
        case (.day(let l), .day(let r)): l == r
        case (.json(let l), .json(let r)): l == r
        case (.list(let l), .list(let r)): l == r
        case (.pointer(let l), .pointer(let r)): l == r
        case (.relation(let l), .relation(let r)): l == r
        default: false
        }
    }

    /// Hashes consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let value): hasher.combine(1); hasher.combine(value)
        case .int(let value): hasher.combine(2); hasher.combine(value)
        case .double(let value): hasher.combine(3); hasher.combine(value.isNaN ? Double.nan.bitPattern : value.bitPattern)
        case .string(let value): hasher.combine(4); hasher.combine(value)
        case .date(let value): hasher.combine(5); hasher.combine(value)
        case .bytes(let value): hasher.combine(6); hasher.combine(value)
        case .decimal(let value): hasher.combine(7); hasher.combine(value)
        case .geoPoint(let value): hasher.combine(8); hasher.combine(value)
        case .day(let value): hasher.combine(9); hasher.combine(value)
        case .json(let value): hasher.combine(10); hasher.combine(value)
        case .list(let value): hasher.combine(11); hasher.combine(value)
        case .pointer(let value): hasher.combine(12); hasher.combine(value)
        case .relation(let value): hasher.combine(13); hasher.combine(value)
        }
    }
}

extension Value: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral
{
    /// `nil` is ``null``.
    public init(nilLiteral: ()) { self = .null }
    /// A `bool`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An `int`.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// A `double`.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// A `string`.
    public init(stringLiteral value: String) { self = .string(value) }
    /// A `list`.
    public init(arrayLiteral elements: Value...) { self = .list(elements) }
}

extension Value: CustomStringConvertible {
    /// A readable rendering, e.g. `42`, `4.5d`, `"text"`, `date(2026-11-22T02:42:26.123Z)`.
    public var description: String {
        switch self {
        case .null: "null"
        case .bool(let value): String(value)
        case .int(let value): String(value)
        case .double(let value): "\(value)d"
        case .string(let value): "\"\(value)\""
        case .date(let value): "date(\(value))"
        case .bytes(let value): "bytes\(value)"
        case .decimal(let value): "decimal(\(value))"
        case .geoPoint(let value): "geo\(value)"
        case .day(let value): "day(\(value))"
        case .json(let value): "json(\(value))"
        case .list(let values): "[" + values.map(\.description).joined(separator: ", ") + "]"
        case .pointer(let value): "pointer(\(value))"
        case .relation(let value): "relation(\(value))"
        }
    }
}
