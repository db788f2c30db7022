import Foundation
import RooftopShared

/// How Swift values map to field values for ``RooftopModel``s, in both directions.
///
/// | Swift | field value | inside a nested struct (`json`) |
/// |---|---|---|
/// | `String`, `Bool` | `string`, `bool` | JSON string, bool |
/// | `Int`, `Int64`, ... `UInt64` | `int` | JSON integer |
/// | `Double`, `Float` | `double` | JSON number |
/// | `Date`, `Timestamp` | `date` | ISO 8601 string with milliseconds |
/// | `Data`, `BinaryValue` | `bytes` | base64 string |
/// | `URL` | `string` | JSON string |
/// | `GeoPoint`, `Day`, `DecimalNumber`, `Pointer`, `Relation`, `JSONValue`, `Value` | that kind | the portable form (`{"$geoPoint": ...}`) |
/// | arrays | `list` | JSON array |
/// | nested structs, dictionaries | `json` | JSON object |
/// | `nil` | absent field | absent key |
enum ModelValues {
    /// The field value of a Swift value of one of the special types, or `nil` for any other type
    /// (encoded through its own `Encodable` conformance).
    static func fieldValue(of value: Any) -> Value? {
        switch value {
        case let value as Value: value
        case let date as Date: .date(Timestamp(date))
        case let data as Data: .bytes(BinaryValue(data))
        case let url as URL: .string(url.absoluteString)
        case let timestamp as Timestamp: .date(timestamp)
        case let bytes as BinaryValue: .bytes(bytes)
        case let point as GeoPoint: .geoPoint(point)
        case let day as Day: .day(day)
        case let decimal as DecimalNumber: .decimal(decimal)
        case let json as JSONValue: .json(json)
        case let pointer as Pointer: .pointer(pointer)
        case let relation as Relation: .relation(relation)
        default: nil
        }
    }

    /// Whether `type` is one of the special types.
    static func isSpecial(_ type: Any.Type) -> Bool {
        type == Value.self || type == Date.self || type == Data.self || type == URL.self || type == Timestamp.self
            || type == BinaryValue.self || type == GeoPoint.self || type == Day.self || type == DecimalNumber.self
            || type == JSONValue.self || type == Pointer.self || type == Relation.self
    }

    /// A special type read from a field value (or, inside a nested struct, from JSON); `nil` when
    /// the value does not hold one.
    static func special(_ type: Any.Type, from node: DecodingNode) -> Any? {
        let value = node.fieldValue
        switch type {
        case is Value.Type: return value
        case is Date.Type: return timestamp(from: node)?.date
        case is Timestamp.Type: return timestamp(from: node)
        case is Data.Type: return bytes(from: node)?.data
        case is BinaryValue.Type: return bytes(from: node)
        case is URL.Type: return value?.stringValue.flatMap { URL(string: $0) }
        case is GeoPoint.Type: return value?.geoPointValue
        case is Day.Type: return value?.dayValue
        case is DecimalNumber.Type: return value?.decimalValue
        case is JSONValue.Type:
            if case .json(let json) = node { return json }
            return value?.jsonValue
        case is Pointer.Type: return value?.pointerValue
        case is Relation.Type: return value?.relationValue
        default: return nil
        }
    }

    private static func timestamp(from node: DecodingNode) -> Timestamp? {
        switch node {
        case .value(.date(let timestamp)): return timestamp
        case .json(.string(let text)):
            let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
            if let date = try? style.parse(text) { return Timestamp(date) }
            return (try? Date.ISO8601FormatStyle().parse(text)).map(Timestamp.init)
        case .json(.int(let milliseconds)): return Timestamp(millisecondsSinceEpoch: milliseconds)
        default: return node.fieldValue?.dateValue
        }
    }

    private static func bytes(from node: DecodingNode) -> BinaryValue? {
        switch node {
        case .value(.bytes(let bytes)): return bytes
        case .json(.string(let base64)): return Data(base64Encoded: base64).map { BinaryValue($0) }
        default: return node.fieldValue?.bytesValue
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
    /// `{"$geoPoint": ...}` becomes that kind).
    var fieldValue: Value? {
        switch self {
        case .fields: return nil
        case .value(let value): return value
        case .json(let json):
            guard let data = try? JSONEncoder().encode(json) else { return nil }
            return try? JSONDecoder().decode(Value.self, from: data)
        }
    }
}
