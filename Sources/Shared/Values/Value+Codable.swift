import Foundation

/// The portable JSON form of values.
///
/// JSON's own types carry the kinds JSON can tell apart; every other kind is an object with one
/// `$`-prefixed key naming it:
///
/// | kind | JSON |
/// |---|---|
/// | null | `null` |
/// | bool | `true` / `false` |
/// | int | `42` (an integer literal) |
/// | double | `{"$double": "1.5"}`, `{"$double": "-0.0"}`, `{"$double": "5e-324"}`, `{"$double": "Infinity"}`, `{"$double": "-Infinity"}`, `{"$double": "NaN"}` |
/// | string | `"text"` |
/// | list | `[...]` |
/// | date | `{"$date": 1763779346123}` (milliseconds since the epoch, UTC) |
/// | bytes | `{"$bytes": "base64...", "mimeType": "image/png"}` (`mimeType` optional) |
/// | decimal | `{"$decimal": "1.50"}` |
/// | geoPoint | `{"$geoPoint": {"latitude": 40.4, "longitude": -3.7}}` |
/// | day | `{"$day": "2026-11-22"}` |
/// | json | `{"$json": <any JSON>}` |
/// | pointer | `{"$pointer": {"className": "Post", "objectId": "abc"}}` |
/// | relation | `{"$relation": {"className": "User", "objectIds": ["a", "b"]}}` |
///
/// A double is written as its shortest round-trip decimal text, so it decodes bit-exactly (seed
/// 001 stores non-finite numbers as tokens for the same reason). For hand-written JSON, a bare
/// number with a fraction or exponent that is not integral (`1.5`) is read as a double; a bare
/// integral number (`2`, also `2.0`) is read as an int.
///
/// Numbers are never reinterpreted: a bare integral number beyond 64 bits
/// (`123456789012345678901234567890`, `1e19`) and a bare number beyond a double's range (`1e400`)
/// are refused, and so is a `$double` text that overflows (`"1e400"`); the tokens `Infinity`,
/// `-Infinity` and `NaN` are the way to write those doubles. Inside `$json`, JSON's one number kind
/// applies (see ``JSONValue``).
extension Value: Codable {
    private enum Tag: String, CodingKey, CaseIterable {
        case double = "$double", date = "$date", bytes = "$bytes", decimal = "$decimal"
        case geoPoint = "$geoPoint", day = "$day", json = "$json", pointer = "$pointer"
        case relation = "$relation", mimeType
    }

    /// Decodes the portable JSON form.
    /// - Throws: `DecodingError` for an unknown tag, a malformed payload, an invalid value, or a
    ///   number that does not fit its kind (an integer beyond 64 bits, a double beyond range).
    public init(from decoder: any Decoder) throws {
        // The common kinds first (``JSONScalar/common(_:)``): a string decodes at the first try,
        // an int at the second, a list at the fourth.
        let single = try decoder.singleValueContainer()
        if let scalar = JSONScalar.common(single) {
            switch scalar {
            case .null: self = .null
            case .string(let text): self = .string(text)
            case .int(let value): self = .int(value)
            case .bool(let value): self = .bool(value)
            case .double(let value): self = .double(value)
            }
            return
        }
        if var array = try? decoder.unkeyedContainer() {
            var values: [Value] = []
            if let count = array.count { values.reserveCapacity(count) }
            while !array.isAtEnd { values.append(try array.decode(Value.self)) }
            self = .list(values)
            return
        }
        if let object = try? decoder.container(keyedBy: AnyCodingKey.self) {
            self = try Value.decodeTagged(object, decoder: decoder)
            return
        }
        switch try JSONScalar(from: single) {
        case .null: self = .null
        case .bool(let value): self = .bool(value)
        case .int(let value): self = .int(value)
        case .double(let value):
            guard !JSONScalar.isIntegerBeyond64Bits(value) else {
                throw DecodingError.dataCorrupted(
                    .init(
                        codingPath: decoder.codingPath,
                        debugDescription:
                            "the integer (about \(value)) does not fit in 64 bits; write a double as {\"$double\": \"...\"} or an exact number as {\"$decimal\": \"...\"}"
                    ))
            }
            self = .double(value)
        case .string(let value): self = .string(value)
        }
    }

    private static func decodeTagged(
        _ object: KeyedDecodingContainer<AnyCodingKey>, decoder: any Decoder
    ) throws -> Value {
        let keys = object.allKeys.map(\.stringValue)
        let tags = keys.filter { $0.hasPrefix("$") }
        guard tags.count == 1, let tagName = tags.first, let tag = Tag(rawValue: tagName) else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription:
                        "an object value needs exactly one known $-tag ($double, $date, $bytes, $decimal, $geoPoint, $day, $json, $pointer, $relation); found keys \(keys.sorted())"
                ))
        }
        let allowed: Set<String> = tag == .bytes ? [tagName, "mimeType"] : [tagName]
        if let extra = keys.first(where: { !allowed.contains($0) }) {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "unexpected key '\(extra)' in \(tagName)"))
        }
        let key = AnyCodingKey(tagName)
        func invalid(_ message: String) -> DecodingError {
            .dataCorrupted(.init(codingPath: decoder.codingPath + [key], debugDescription: message))
        }
        do {
            switch tag {
            case .double:
                let text = try object.decode(String.self, forKey: key)
                guard let value = Value.parseDouble(text) else {
                    if Value.overflowsDouble(text) {
                        throw invalid("'\(text.prefix(80))' is beyond the range of a double; write Infinity or -Infinity for infinity")
                    }
                    throw invalid("'\(text.prefix(80))' is not a double")
                }
                return .double(value)
            case .date:
                return .date(Timestamp(millisecondsSinceEpoch: try object.decode(Int64.self, forKey: key)))
            case .bytes:
                let text = try object.decode(String.self, forKey: key)
                guard let data = Data(base64Encoded: text) else { throw invalid("invalid base64") }
                let mimeType = try object.decodeIfPresent(String.self, forKey: AnyCodingKey("mimeType"))
                return .bytes(BinaryValue(data, mimeType: mimeType))
            case .decimal:
                return .decimal(try DecimalNumber(try object.decode(String.self, forKey: key)))
            case .geoPoint:
                return .geoPoint(try object.decode(GeoPoint.self, forKey: key))
            case .day:
                return .day(try Day(try object.decode(String.self, forKey: key)))
            case .json:
                return .json(try object.decode(JSONValue.self, forKey: key))
            case .pointer:
                return .pointer(try object.decode(Pointer.self, forKey: key))
            case .relation:
                return .relation(try object.decode(Relation.self, forKey: key))
            case .mimeType:
                throw invalid("mimeType is not a value tag")
            }
        } catch let error as RooftopError {
            throw invalid(error.message)
        }
    }

    /// Encodes the portable JSON form.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .bool(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .int(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .string(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .list(let values):
            var container = encoder.unkeyedContainer()
            for value in values { try container.encode(value) }
        case .double(let value):
            var container = encoder.container(keyedBy: Tag.self)
            try container.encode(Value.formatDouble(value), forKey: .double)
        case .date(let value):
            var container = encoder.container(keyedBy: Tag.self)
            try container.encode(value.millisecondsSinceEpoch, forKey: .date)
        case .bytes(let value):
            var container = encoder.container(keyedBy: Tag.self)
            try container.encode(value.data.base64EncodedString(), forKey: .bytes)
            try container.encodeIfPresent(value.mimeType, forKey: .mimeType)
        case .decimal(let value):
            var container = encoder.container(keyedBy: Tag.self)
            try container.encode(value.text, forKey: .decimal)
        case .geoPoint(let value):
            var container = encoder.container(keyedBy: Tag.self)
            try container.encode(value, forKey: .geoPoint)
        case .day(let value):
            var container = encoder.container(keyedBy: Tag.self)
            try container.encode(value.description, forKey: .day)
        case .json(let value):
            var container = encoder.container(keyedBy: Tag.self)
            try container.encode(value, forKey: .json)
        case .pointer(let value):
            var container = encoder.container(keyedBy: Tag.self)
            try container.encode(value, forKey: .pointer)
        case .relation(let value):
            var container = encoder.container(keyedBy: Tag.self)
            try container.encode(value, forKey: .relation)
        }
    }

    /// The text of a double in the portable form: the shortest decimal that reads back to the same
    /// bits, or `Infinity`, `-Infinity`, `NaN`.
    public static func formatDouble(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Infinity" : "Infinity" }
        return "\(value)"
    }

    /// Reads the text of a double in the portable form (see ``formatDouble(_:)``).
    ///
    /// Only the tokens `Infinity` and `-Infinity` read as infinities: a decimal that overflows
    /// (`"1e400"`) is not a double, not a way to write infinity.
    /// - Returns: `nil` when the text is not a number or is beyond a double's range.
    public static func parseDouble(_ text: String) -> Double? {
        switch text {
        case "NaN": return .nan
        case "Infinity": return .infinity
        case "-Infinity": return -.infinity
        default:
            guard let value = parseDecimalDouble(text), value.isFinite else { return nil }
            return value
        }
    }

    /// Whether `text` is a plain decimal number beyond a double's range (`"1e400"`, `"-1e400"`).
    static func overflowsDouble(_ text: String) -> Bool {
        parseDecimalDouble(text)?.isInfinite == true
    }

    /// A plain decimal text as a double, infinite when it overflows; `nil` for anything else.
    private static func parseDecimalDouble(_ text: String) -> Double? {
        // Double(String) also accepts "inf", "nan" and hex forms: require a plain decimal.
        guard let first = text.utf8.first,
            first == UInt8(ascii: "-") || (first >= UInt8(ascii: "0") && first <= UInt8(ascii: "9")),
            text.utf8.allSatisfy({ byte in
                (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                    || [UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")]
                        .contains(byte)
            })
        else { return nil }
        return Double(text)
    }
}
