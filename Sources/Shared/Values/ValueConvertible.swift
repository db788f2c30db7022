public import Foundation

/// A Swift type whose values can be stored in a field: wherever the API takes a ``Value``, it
/// also takes any `ValueConvertible` (a field's setter, query conditions, field operations).
///
/// | Swift | field value |
/// |---|---|
/// | `Bool`, `String` | `bool`, `string` |
/// | `Int`, `Int8` … `Int64`, `UInt8` … `UInt32` | `int` |
/// | `Double`, `Float` | `double` |
/// | `Date`, ``Timestamp`` | `date` (whole milliseconds, rounded down) |
/// | `Data`, ``BinaryValue`` | `bytes` |
/// | `Decimal`, ``DecimalNumber`` | `decimal` |
/// | `URL` | `string` (its absolute string) |
/// | ``GeoPoint``, ``Day``, ``JSONValue``, ``Pointer``, ``Relation``, ``Value`` | that kind |
/// | arrays of these | `list` |
/// | `[String: …]` of these | `json` (see ``JSONValue/init(embedding:)``) |
/// | `nil` of an optional | `null` |
///
/// `UInt` and `UInt64` are not convertible: an `int` is 64-bit signed, so their upper half has no
/// field value. Convert them with `Int64(exactly:)` and decide what an overflow means.
///
/// ```swift
/// for i in 1...3 {
///     let score = client.object("GameScore")
///     score["score"] = i * 100                      // an Int from a variable
///     score["when"] = Date()
///     score["tags"] = ["a", "b"]
///     try await score.saveEventually()
/// }
/// let recent = client.query("GameScore").where(Field("when") > Date().addingTimeInterval(-3600))
/// ```
public protocol ValueConvertible {
    /// The value as a field value.
    var rooftopValue: Value { get }
}

/// A ``ValueConvertible`` type that can also be read back from a field value: the typed
/// accessors and the typed subscript read these.
///
/// ```swift
/// let n: Int? = object["score"]
/// let when = object.value("when", as: Date.self)
/// ```
public protocol LosslessValueConvertible: ValueConvertible {
    /// The Swift value a field value holds, or `nil` when it holds another kind or the value does
    /// not fit (an `int` of 300 is no `Int8`; a `double` of 2.5 is no `Int`).
    init?(rooftopValue: Value)
}

extension Value: LosslessValueConvertible {
    /// The value itself.
    public var rooftopValue: Value { self }
    /// The value itself (never `nil`).
    public init?(rooftopValue: Value) { self = rooftopValue }
}

extension Bool: LosslessValueConvertible {
    /// A `bool`.
    public var rooftopValue: Value { .bool(self) }
    /// A `bool`'s value.
    public init?(rooftopValue: Value) {
        guard case .bool(let value) = rooftopValue else { return nil }
        self = value
    }
}

extension String: LosslessValueConvertible {
    /// A `string`.
    public var rooftopValue: Value { .string(self) }
    /// A `string`'s value.
    public init?(rooftopValue: Value) {
        guard case .string(let value) = rooftopValue else { return nil }
        self = value
    }
}

/// The integers whose every value is an `int`: read back from an `int` that fits, or from a
/// `double` that is integral and fits (JSON and other systems blur the two).
public protocol ExactInt64Convertible: FixedWidthInteger, LosslessValueConvertible {}

extension ExactInt64Convertible {
    /// An `int`.
    public var rooftopValue: Value { .int(Int64(self)) }
    /// An `int` (or an integral `double`) that fits the type.
    public init?(rooftopValue: Value) {
        switch rooftopValue {
        case .int(let value):
            guard let exact = Self(exactly: value) else { return nil }
            self = exact
        case .double(let value):
            guard let exact = Self(exactly: value) else { return nil }
            self = exact
        default:
            return nil
        }
    }
}

extension Int: ExactInt64Convertible {}
extension Int8: ExactInt64Convertible {}
extension Int16: ExactInt64Convertible {}
extension Int32: ExactInt64Convertible {}
extension Int64: ExactInt64Convertible {}
extension UInt8: ExactInt64Convertible {}
extension UInt16: ExactInt64Convertible {}
extension UInt32: ExactInt64Convertible {}

extension Double: LosslessValueConvertible {
    /// A `double`.
    public var rooftopValue: Value { .double(self) }
    /// A `double`, or an `int` exactly representable as a `Double`.
    public init?(rooftopValue: Value) {
        switch rooftopValue {
        case .double(let value): self = value
        case .int(let value):
            guard let exact = Double(exactly: value) else { return nil }
            self = exact
        default: return nil
        }
    }
}

extension Float: LosslessValueConvertible {
    /// A `double` (every `Float` is exactly a `Double`).
    public var rooftopValue: Value { .double(Double(self)) }
    /// A number rounded to the nearest `Float`; `nil` when it is finite but out of `Float`'s range.
    public init?(rooftopValue: Value) {
        guard let double = Double(rooftopValue: rooftopValue) else { return nil }
        let value = Float(double)
        guard value.isFinite || !double.isFinite else { return nil }
        self = value
    }
}

extension Date: LosslessValueConvertible {
    /// A `date`, rounded down to the millisecond.
    public var rooftopValue: Value { .date(Timestamp(self)) }
    /// A `date`'s value.
    public init?(rooftopValue: Value) {
        guard case .date(let value) = rooftopValue else { return nil }
        self = value.date
    }
}

extension Data: LosslessValueConvertible {
    /// `bytes` without a MIME type.
    public var rooftopValue: Value { .bytes(BinaryValue(self)) }
    /// The bytes of a `bytes` value (its MIME type dropped).
    public init?(rooftopValue: Value) {
        guard case .bytes(let value) = rooftopValue else { return nil }
        self = value.data
    }
}

extension Decimal: LosslessValueConvertible {
    /// A `decimal` with the number's text (`NaN`, which has no decimal text, is a `double` NaN).
    public var rooftopValue: Value {
        guard !isNaN, let number = try? DecimalNumber(description) else { return .double(.nan) }
        return .decimal(number)
    }
    /// A `decimal` that `Decimal` can hold (38 significant digits, exponents within ±127), or an
    /// `int`.
    public init?(rooftopValue: Value) {
        switch rooftopValue {
        case .decimal(let number):
            guard let value = Decimal(string: number.text, locale: Locale(identifier: "en_US_POSIX")) else {
                return nil
            }
            self = value
        case .int(let value):
            self = Decimal(value)
        default:
            return nil
        }
    }
}

extension URL: LosslessValueConvertible {
    /// A `string`: the URL's absolute string.
    public var rooftopValue: Value { .string(absoluteString) }
    /// A `string` that parses as a URL.
    public init?(rooftopValue: Value) {
        guard case .string(let text) = rooftopValue, let url = URL(string: text) else { return nil }
        self = url
    }
}

extension Timestamp: LosslessValueConvertible {
    /// A `date`.
    public var rooftopValue: Value { .date(self) }
    /// A `date`'s value.
    public init?(rooftopValue: Value) {
        guard let value = rooftopValue.dateValue else { return nil }
        self = value
    }
}

extension BinaryValue: LosslessValueConvertible {
    /// `bytes`.
    public var rooftopValue: Value { .bytes(self) }
    /// A `bytes` value.
    public init?(rooftopValue: Value) {
        guard let value = rooftopValue.bytesValue else { return nil }
        self = value
    }
}

extension DecimalNumber: LosslessValueConvertible {
    /// A `decimal`.
    public var rooftopValue: Value { .decimal(self) }
    /// A `decimal` value.
    public init?(rooftopValue: Value) {
        guard let value = rooftopValue.decimalValue else { return nil }
        self = value
    }
}

extension GeoPoint: LosslessValueConvertible {
    /// A `geoPoint`.
    public var rooftopValue: Value { .geoPoint(self) }
    /// A `geoPoint` value.
    public init?(rooftopValue: Value) {
        guard let value = rooftopValue.geoPointValue else { return nil }
        self = value
    }
}

extension Day: LosslessValueConvertible {
    /// A `day`.
    public var rooftopValue: Value { .day(self) }
    /// A `day` value.
    public init?(rooftopValue: Value) {
        guard let value = rooftopValue.dayValue else { return nil }
        self = value
    }
}

extension JSONValue: LosslessValueConvertible {
    /// A `json` value.
    public var rooftopValue: Value { .json(self) }
    /// A `json` value.
    public init?(rooftopValue: Value) {
        guard let value = rooftopValue.jsonValue else { return nil }
        self = value
    }
}

extension Pointer: LosslessValueConvertible {
    /// A `pointer`.
    public var rooftopValue: Value { .pointer(self) }
    /// A `pointer` value.
    public init?(rooftopValue: Value) {
        guard let value = rooftopValue.pointerValue else { return nil }
        self = value
    }
}

extension Relation: LosslessValueConvertible {
    /// A `relation`.
    public var rooftopValue: Value { .relation(self) }
    /// A `relation` value.
    public init?(rooftopValue: Value) {
        guard let value = rooftopValue.relationValue else { return nil }
        self = value
    }
}

extension Optional: ValueConvertible where Wrapped: ValueConvertible {
    /// The wrapped value's, or `null` for `nil`.
    public var rooftopValue: Value { self?.rooftopValue ?? .null }
}

extension Optional: LosslessValueConvertible where Wrapped: LosslessValueConvertible {
    /// `nil` for `null`, else the wrapped type's reading (`nil` as a failure when it fails).
    public init?(rooftopValue: Value) {
        if case .null = rooftopValue {
            self = .none
        } else if let value = Wrapped(rooftopValue: rooftopValue) {
            self = .some(value)
        } else {
            return nil
        }
    }
}

extension Array: ValueConvertible where Element: ValueConvertible {
    /// A `list` of the elements' values.
    public var rooftopValue: Value { .list(map(\.rooftopValue)) }
}

extension Array: LosslessValueConvertible where Element: LosslessValueConvertible {
    /// A `list` whose every element reads as `Element`.
    public init?(rooftopValue: Value) {
        guard case .list(let values) = rooftopValue else { return nil }
        var elements: [Element] = []
        elements.reserveCapacity(values.count)
        for value in values {
            guard let element = Element(rooftopValue: value) else { return nil }
            elements.append(element)
        }
        self = elements
    }
}

extension Dictionary: ValueConvertible where Key == String, Value: ValueConvertible {
    /// A `json` object of the values' JSON forms (see ``JSONValue/init(embedding:)``).
    public var rooftopValue: RooftopShared.Value {
        .json(.object(mapValues { JSONValue(embedding: $0.rooftopValue) }))
    }
}

extension Dictionary: LosslessValueConvertible where Key == String, Value: LosslessValueConvertible {
    /// A `json` object whose every member reads as `Value` (JSON numbers, strings, booleans, nulls,
    /// arrays as lists and objects as `json`).
    public init?(rooftopValue: RooftopShared.Value) {
        guard case .json(.object(let members)) = rooftopValue else { return nil }
        var dictionary: [String: Value] = [:]
        dictionary.reserveCapacity(members.count)
        for (key, member) in members {
            guard let value = Value(rooftopValue: member.fieldValue) else { return nil }
            dictionary[key] = value
        }
        self = dictionary
    }
}

extension JSONValue {
    /// The JSON form of a field value inside a `json` value: null, booleans, numbers, strings and
    /// lists as themselves; a date as its ISO 8601 text with milliseconds; bytes as base64 text;
    /// decimals, geo points, days, pointers and relations in their portable tagged form
    /// (`{"$geoPoint": …}`). A non-finite double stays a (non-JSON) number, refused when saved.
    ///
    /// ```swift
    /// JSONValue(embedding: .date(Timestamp(millisecondsSinceEpoch: 0)))   // "1970-01-01T00:00:00.000Z"
    /// ```
    public init(embedding value: Value) {
        switch value {
        case .null: self = .null
        case .bool(let bool): self = .bool(bool)
        case .int(let int): self = .int(int)
        case .double(let double): self = .double(double)
        case .string(let string): self = .string(string)
        case .date(let timestamp): self = .string(timestamp.description)
        case .bytes(let bytes): self = .string(bytes.data.base64EncodedString())
        case .json(let json): self = json
        case .list(let items): self = .array(items.map(JSONValue.init(embedding:)))
        case .decimal(let decimal): self = .object(["$decimal": .string(decimal.text)])
        case .geoPoint(let point):
            self = .object([
                "$geoPoint": .object(["latitude": .double(point.latitude), "longitude": .double(point.longitude)])
            ])
        case .day(let day): self = .object(["$day": .string(day.description)])
        case .pointer(let pointer):
            self = .object([
                "$pointer": .object(["className": .string(pointer.className), "objectId": .string(pointer.objectId)])
            ])
        case .relation(let relation):
            self = .object([
                "$relation": .object([
                    "className": .string(relation.className), "objectIds": .array(relation.objectIds.map(JSONValue.string)),
                ])
            ])
        }
    }

    /// The field value of a JSON member read back: JSON's own kinds as themselves (arrays as
    /// lists, objects as `json`).
    var fieldValue: Value {
        switch self {
        case .null: .null
        case .bool(let bool): .bool(bool)
        case .int(let int): .int(int)
        case .double(let double): .double(double)
        case .string(let string): .string(string)
        case .array(let items): .list(items.map(\.fieldValue))
        case .object: .json(self)
        }
    }
}

extension JSONValue {
    /// The first number that is not finite (NaN or an infinity), which JSON cannot carry; `nil`
    /// when every number is finite.
    public var firstNonFiniteNumber: Double? {
        switch self {
        case .double(let value): value.isFinite ? nil : value
        case .array(let items): items.lazy.compactMap(\.firstNonFiniteNumber).first
        case .object(let members): members.values.lazy.compactMap(\.firstNonFiniteNumber).first
        case .null, .bool, .int, .string: nil
        }
    }
}
