import RooftopShared

/// A JSON document written in Swift, for building the OpenAPI description: objects keep their
/// members in the order they were written, so the served document reads top-down (`openapi`,
/// `info`, `paths`, `components`) rather than in sorted-key order.
///
/// Literals build it directly:
///
/// ```swift
/// let schema: OpenAPIJSON = ["type": "object", "required": ["code"], "additionalProperties": false]
/// let bytes = schema.serialized()
/// ```
indirect enum OpenAPIJSON: Sendable, Equatable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// An integer.
    case int(Int)
    /// A number with a fraction (used for bounds such as latitudes).
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([OpenAPIJSON])
    /// An object, members in writing order. Keys are unique by construction of the builders.
    case object([Member])

    /// One member of an object.
    struct Member: Sendable, Equatable {
        /// The key.
        var key: String
        /// The value.
        var value: OpenAPIJSON
    }

    /// An object from pairs computed at run time, keeping their order.
    static func members(_ pairs: [(String, OpenAPIJSON)]) -> OpenAPIJSON {
        .object(pairs.map { Member(key: $0.0, value: $0.1) })
    }

    /// This object with `member` set to `value` (replacing an existing member in place, appending
    /// otherwise); other kinds are returned unchanged.
    func setting(_ key: String, _ value: OpenAPIJSON) -> OpenAPIJSON {
        guard case .object(var members) = self else { return self }
        if let index = members.firstIndex(where: { $0.key == key }) {
            members[index].value = value
        } else {
            members.append(Member(key: key, value: value))
        }
        return .object(members)
    }

    /// The value of an object's member, if this is an object that has it.
    subscript(key: String) -> OpenAPIJSON? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }
}

extension OpenAPIJSON: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByFloatLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    /// A string.
    init(stringLiteral value: String) { self = .string(value) }
    /// An integer.
    init(integerLiteral value: Int) { self = .int(value) }
    /// A boolean.
    init(booleanLiteral value: Bool) { self = .bool(value) }
    /// A number with a fraction.
    init(floatLiteral value: Double) { self = .double(value) }
    /// An array.
    init(arrayLiteral elements: OpenAPIJSON...) { self = .array(elements) }
    /// An object, members in writing order.
    init(dictionaryLiteral elements: (String, OpenAPIJSON)...) {
        self = .object(elements.map { Member(key: $0.0, value: $0.1) })
    }
    /// `null`.
    init(nilLiteral: ()) { self = .null }
}

extension OpenAPIJSON {
    /// The document as UTF-8 JSON text, indented by two spaces per level.
    func serialized() -> [UInt8] {
        var output = ""
        write(to: &output, indent: 0)
        output += "\n"
        return Array(output.utf8)
    }

    private func write(to output: inout String, indent: Int) {
        switch self {
        case .null: output += "null"
        case .bool(let value): output += value ? "true" : "false"
        case .int(let value): output += String(value)
        // Only finite bounds are ever written; JSON has no other numbers.
        case .double(let value): output += value.isFinite ? "\(value)" : "null"
        case .string(let value): JSONValue.writeEscaped(value, to: &output)
        case .array(let values):
            guard !values.isEmpty else {
                output += "[]"
                return
            }
            output += "[\n"
            for (index, value) in values.enumerated() {
                output += String(repeating: " ", count: indent + 2)
                value.write(to: &output, indent: indent + 2)
                output += index == values.count - 1 ? "\n" : ",\n"
            }
            output += String(repeating: " ", count: indent) + "]"
        case .object(let members):
            guard !members.isEmpty else {
                output += "{}"
                return
            }
            output += "{\n"
            for (index, member) in members.enumerated() {
                output += String(repeating: " ", count: indent + 2)
                JSONValue.writeEscaped(member.key, to: &output)
                output += ": "
                member.value.write(to: &output, indent: indent + 2)
                output += index == members.count - 1 ? "\n" : ",\n"
            }
            output += String(repeating: " ", count: indent) + "}"
        }
    }

}
