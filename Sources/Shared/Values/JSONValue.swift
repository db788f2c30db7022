/// Any JSON document: the `json` value kind (Backbeam's JSON fields).
///
/// JSON has one kind of number, so a JSON value compares numbers by value: `.int(2)` equals
/// `.double(2.0)`. Non-finite doubles are not JSON and are rejected when encoded.
/// Object keys are unordered; ``canonicalText`` sorts them.
public enum JSONValue: Sendable, Hashable, CustomStringConvertible {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// An integral number that fits in 64 bits.
    case int(Int64)
    /// Any other number.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object.
    case object([String: JSONValue])

    /// Compares with JSON semantics: numbers by value, objects regardless of key order.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let l), .bool(let r)): return l == r
        case (.string(let l), .string(let r)): return l.utf8.elementsEqual(r.utf8)
        case (.array(let l), .array(let r)): return l == r
        case (.object(let l), .object(let r)): return l == r
        case (.int(let l), .int(let r)): return l == r
        case (.double(let l), .double(let r)): return l == r || (l.isNaN && r.isNaN)
        case (.int(let i), .double(let d)), (.double(let d), .int(let i)):
            return NumberComparison.compare(int: i, double: d) == 0
        default: return false
        }
    }

    /// Hashes consistently with `==`: integral doubles hash like the equal int.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let value): hasher.combine(value)
        case .string(let value): hasher.combine(value)
        case .array(let value): hasher.combine(value)
        case .object(let value): hasher.combine(value)
        case .int(let value): hasher.combine(Double(value))
        case .double(let value): hasher.combine(value.isNaN ? .nan : value)
        }
    }

    /// The canonical JSON text: no white space, object keys sorted by their UTF-8 bytes, integral
    /// numbers of magnitude below 2^53 written as integers, other doubles in their shortest
    /// round-trip form. Equal JSON values have equal canonical texts.
    public var canonicalText: String {
        var output = ""
        writeCanonical(to: &output)
        return output
    }

    /// The canonical text.
    public var description: String { canonicalText }

    private func writeCanonical(to output: inout String) {
        switch self {
        case .null: output += "null"
        case .bool(let value): output += value ? "true" : "false"
        case .int(let value): output += String(value)
        case .double(let value):
            if value.isNaN || value.isInfinite {
                output += "null"
            } else if value == value.rounded(), abs(value) < 9_007_199_254_740_992 {
                output += String(Int64(value))
            } else {
                output += "\(value)"
            }
        case .string(let value): JSONValue.writeEscaped(value, to: &output)
        case .array(let values):
            output += "["
            for (index, value) in values.enumerated() {
                if index > 0 { output += "," }
                value.writeCanonical(to: &output)
            }
            output += "]"
        case .object(let members):
            output += "{"
            let keys = members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            for (index, key) in keys.enumerated() {
                if index > 0 { output += "," }
                JSONValue.writeEscaped(key, to: &output)
                output += ":"
                members[key]?.writeCanonical(to: &output)
            }
            output += "}"
        }
    }

    /// Appends `string` to `output` as a JSON string literal: quoted, with `"`, `\\` and control
    /// characters escaped (`\n`, `\r`, `\t`, otherwise `\u00XX`), everything else as it is.
    public static func writeEscaped(_ string: String, to output: inout String) {
        output += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where scalar.value < 0x20:
                output += "\\u00" + pad(String(scalar.value, radix: 16), 2)
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }

    /// The deepest nesting of arrays and objects (a scalar has depth 0).
    public var depth: Int {
        switch self {
        case .array(let values): return 1 + (values.map(\.depth).max() ?? 0)
        case .object(let members): return 1 + (members.values.map(\.depth).max() ?? 0)
        default: return 0
        }
    }
}

/// Pads a string with leading zeros.
private func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
}

extension JSONValue: Codable {
    /// Decodes any JSON. Integral numbers that fit in 64 bits decode as ``int(_:)``; other numbers
    /// as ``double(_:)``, the nearest double, as JSON readers do (RFC 8259 §6): an integer beyond
    /// 64 bits keeps about 16 significant digits.
    /// - Throws: `DecodingError` for a number beyond a double's range (`1e400`), which has no
    ///   JSON form to answer with.
    public init(from decoder: any Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {
            var values: [JSONValue] = []
            while !array.isAtEnd { values.append(try array.decode(JSONValue.self)) }
            self = .array(values)
            return
        }
        if let object = try? decoder.container(keyedBy: AnyCodingKey.self) {
            var members: [String: JSONValue] = [:]
            for key in object.allKeys {
                members[key.stringValue] = try object.decode(JSONValue.self, forKey: key)
            }
            self = .object(members)
            return
        }
        let single = try decoder.singleValueContainer()
        switch try JSONScalar(from: single) {
        case .null: self = .null
        case .bool(let value): self = .bool(value)
        case .int(let value): self = .int(value)
        case .double(let value): self = .double(value)
        case .string(let value): self = .string(value)
        }
    }

    /// Encodes as plain JSON.
    /// - Throws: `EncodingError.invalidValue` for a non-finite double.
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
        case .double(let value):
            guard value.isFinite else {
                throw EncodingError.invalidValue(
                    value,
                    .init(codingPath: encoder.codingPath, debugDescription: "JSON has no \(value)"))
            }
            var container = encoder.singleValueContainer()
            // An integral double within 64 bits is written as the exact integer: its shortest
            // decimal form (`-8.172749141926021e+16`) reads back as a different integer
            // (…210 instead of the double's …208), and JSON numbers compare by value.
            if value == value.rounded(), let exact = Int64(exactly: value) {
                try container.encode(exact)
            } else {
                try container.encode(value)
            }
        case .string(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .array(let values):
            var container = encoder.unkeyedContainer()
            for value in values { try container.encode(value) }
        case .object(let members):
            var container = encoder.container(keyedBy: AnyCodingKey.self)
            for (key, value) in members { try container.encode(value, forKey: AnyCodingKey(key)) }
        }
    }
}

/// A coding key for arbitrary strings (object members, field names).
struct AnyCodingKey: CodingKey, Hashable {
    let stringValue: String
    var intValue: Int? { nil }

    init(_ string: String) { self.stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { self.stringValue = String(intValue) }
}

/// A JSON scalar read from a single-value container, tried in an order that keeps integral
/// numbers integral: null, bool, a 64-bit integer, a double, a string.
///
/// A number that fits neither a 64-bit integer nor a finite double (`1e400`) is refused, never
/// read as infinity. An integral number beyond 64 bits reads as ``double(_:)``: callers decide
/// what that means (``Value`` refuses it, ``JSONValue`` keeps JSON's one number kind).
enum JSONScalar {
    case null, bool(Bool), int(Int64), double(Double), string(String)

    /// The scalars tried first, cheapest first: null, a string (the most common value), an int,
    /// a bool; `nil` for anything else (a double, a list, an object). Each failed attempt throws a
    /// `DecodingError` inside, which costs far more than a decode, so the order matters.
    static func common(_ single: any SingleValueDecodingContainer) -> JSONScalar? {
        if single.decodeNil() { return .null }
        if let value = try? single.decode(String.self) { return .string(value) }
        if let value = try? single.decode(Int64.self) { return .int(value) }
        if let value = try? single.decode(Bool.self) { return .bool(value) }
        return nil
    }

    /// The smallest magnitude of an integral double beyond `Int64`: 2^63.
    static let int64Bound = 9_223_372_036_854_775_808.0

    /// Reads the scalar.
    /// - Throws: `DecodingError.dataCorrupted` when the container holds none of them, with a
    ///   message saying so when it holds a number out of a double's range.
    init(from single: any SingleValueDecodingContainer) throws {
        if let common = JSONScalar.common(single) {
            self = common
            return
        }
        let doubleError: any Error
        do {
            self = .double(try single.decode(Double.self))
            return
        } catch {
            doubleError = error
        }
        // Foundation answers a type mismatch for a token that is no number, and an error of its
        // own (not a DecodingError) for a number it cannot represent (beyond a double's range).
        if case DecodingError.typeMismatch = doubleError {
        } else {
            throw DecodingError.dataCorruptedError(
                in: single,
                debugDescription:
                    "the number is out of range: a JSON number must fit in a finite double (write {\"$double\": \"Infinity\"} for infinity)"
            )
        }
        throw DecodingError.dataCorruptedError(in: single, debugDescription: "not a JSON scalar")
    }

    /// Whether `value`, read from a number that did not decode as `Int64`, is integral with a
    /// magnitude of 2^63 or more: an integer literal that did not fit in 64 bits (it rounds to
    /// -2^63 itself from just below `Int64.min`). A number with a fraction, or of smaller
    /// magnitude, is a double.
    static func isIntegerBeyond64Bits(_ value: Double) -> Bool {
        value.isFinite && value == value.rounded() && abs(value) >= int64Bound
    }
}
