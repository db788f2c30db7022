import Foundation
import RooftopShared

/// How a ``RooftopModel``'s properties map to field values: as ``ValueConvertible`` maps Swift
/// values everywhere else (the one mapping, the same `Value` for the same Swift value, `UInt` and
/// `UInt64` refused), plus what only a `Codable` struct has:
///
/// | Swift | field value | inside a nested struct (`json`) |
/// |---|---|---|
/// | what ``ValueConvertible`` converts | its `rooftopValue` | its JSON: `Date` and `Timestamp` an ISO 8601 string with milliseconds, `Data` and `BinaryValue` base64, the other kinds their portable form (`{"$geoPoint": ...}`) |
/// | arrays | `list` | JSON array |
/// | nested structs, dictionaries | `json` | JSON object |
/// | `nil` | absent field | absent key |
enum ModelValues {
    /// The field value of a Swift value of one of the special types, or `nil` for any other type
    /// (encoded through its own `Encodable` conformance).
    static func fieldValue(of value: Any) -> Value? {
        guard isSpecial(type(of: value)), let convertible = value as? any ValueConvertible else { return nil }
        return convertible.rooftopValue
    }

    /// Whether `type` is one of the special types: those ``ValueConvertible`` converts that are
    /// neither scalars (containers encode those directly) nor collections (encoded element by
    /// element).
    static func isSpecial(_ type: Any.Type) -> Bool {
        type == Value.self || type == Date.self || type == Data.self || type == URL.self || type == Timestamp.self
            || type == Decimal.self
            || type == BinaryValue.self || type == GeoPoint.self || type == Day.self || type == DecimalNumber.self
            || type == JSONValue.self || type == Pointer.self || type == Relation.self
    }

    /// A special type read from a field value (or, inside a nested struct, from JSON); `nil` when
    /// the value does not hold one.
    /// - Throws: What reading JSON in its portable form as a field value throws (a tagged object
    ///   that is not one: `{"$geoPoint": "north"}`), so that the decoder says why.
    static func special(_ type: Any.Type, from node: DecodingNode) throws -> Any? {
        // The forms only JSON inside a nested struct has.
        switch type {
        case is Date.Type: return try timestamp(from: node)?.date
        case is Timestamp.Type: return try timestamp(from: node)
        case is Data.Type: return try bytes(from: node)?.data
        case is BinaryValue.Type: return try bytes(from: node)
        case is JSONValue.Type:
            if case .json(let json) = node { return json }
        default:
            break
        }
        guard let lossless = type as? any LosslessValueConvertible.Type, let value = try node.fieldValue() else { return nil }
        return lossless.init(rooftopValue: value)
    }

    private static func timestamp(from node: DecodingNode) throws -> Timestamp? {
        switch node {
        case .value(.date(let timestamp)): return timestamp
        case .json(.string(let text)):
            let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
            if let date = try? style.parse(text) { return Timestamp(date) }
            return (try? Date.ISO8601FormatStyle().parse(text)).map(Timestamp.init)
        case .json(.int(let milliseconds)): return Timestamp(millisecondsSinceEpoch: milliseconds)
        default: return try node.fieldValue()?.dateValue
        }
    }

    private static func bytes(from node: DecodingNode) throws -> BinaryValue? {
        switch node {
        case .value(.bytes(let bytes)): return bytes
        case .json(.string(let base64)): return Data(base64Encoded: base64).map { BinaryValue($0) }
        default: return try node.fieldValue()?.bytesValue
        }
    }

    /// The JSON form of a value inside a nested struct (`JSONValue/init(embedding:)`).
    /// - Throws: `EncodingError` for a non-finite double (JSON has none).
    static func json(_ value: Value, codingPath: [any CodingKey]) throws -> JSONValue {
        let json = JSONValue(embedding: value)
        if let double = json.firstNonFiniteNumber {
            throw EncodingError.invalidValue(
                double,
                .init(
                    codingPath: codingPath,
                    debugDescription: "a nested struct cannot hold \(double) (JSON has no such number)"))
        }
        return json
    }
}

/// Where a model decoder reads: a field value, or JSON inside a `json` field.
enum DecodingNode {
    /// An object's fields (the top level of a model), built-in fields included.
    case fields([String: Value])
    /// A field value (or an element of a list field).
    case value(Value)
    /// A part of a JSON field.
    case json(JSONValue)

    /// The node as a field value: JSON in its portable form is read back (a tagged object like
    /// `{"$geoPoint": ...}` becomes that kind); `nil` for an object's fields.
    /// - Throws: What encoding the JSON or reading it back as a field value throws.
    func fieldValue() throws -> Value? {
        switch self {
        case .fields: return nil
        case .value(let value): return value
        case .json(let json): return try JSONDecoder().decode(Value.self, from: JSONEncoder().encode(json))
        }
    }
}
