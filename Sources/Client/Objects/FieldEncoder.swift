import Foundation
import RooftopShared

/// Encodes a `Codable` struct into an object's fields (see ``ModelValues`` for the mapping).
///
/// The top level must be a keyed container (a struct or class). Its keys are the fields; the
/// built-in fields (`objectId`, `createdAt`, `updatedAt`) are left out — the server sets them.
/// Optional properties that are `nil` are reported in `absent`, so that saving a model unsets
/// them.
enum FieldEncoder {
    /// The fields of an encoded value, and the keys encoded as absent (`nil` optionals).
    struct Fields {
        var values: [String: Value]
        var absent: Set<String>
    }

    /// The built-in fields, which models may declare but never write.
    static let builtIn: Set<String> = ["objectId", "createdAt", "updatedAt"]

    /// Encodes a value's fields.
    /// - Throws: `EncodingError` when the value is not a keyed container, or holds a value a
    ///   field cannot (an unsigned integer above `Int64.max`, a non-finite double inside a nested
    ///   struct).
    static func encode(_ value: some Encodable) throws -> Fields {
        let root = EncodingNode()
        try root.store(value, codingPath: [])
        guard let children = root.fields else {
            throw EncodingError.invalidValue(
                value, .init(codingPath: [], debugDescription: "a model must encode as a keyed container (a struct)"))
        }
        var values: [String: Value] = [:]
        for (key, child) in children where !builtIn.contains(key) {
            values[key] = try child.fieldValue(codingPath: [])
        }
        return Fields(values: values, absent: root.absent.subtracting(builtIn).subtracting(values.keys))
    }
}

/// A node of the tree an encoding builds: containers are handed out before they are filled, so
/// the tree is made of references and read once encoding is over.
final class EncodingNode {
    /// A single value (scalars and the special types).
    var value: Value?
    /// The elements of an unkeyed container.
    var items: [EncodingNode]?
    /// The entries of a keyed container.
    var fields: [String: EncodingNode]?
    /// Keys of a keyed container encoded as `nil` optionals.
    var absent: Set<String> = []

    /// Encodes a value into this node: special types become their field value, anything else
    /// encodes itself.
    func store<T: Encodable>(_ value: T, codingPath: [any CodingKey]) throws {
        if let special = ModelValues.fieldValue(of: value) {
            self.value = special
        } else {
            try value.encode(to: NodeEncoder(node: self, codingPath: codingPath))
        }
    }

    /// The field value: a list for an unkeyed container, JSON for a keyed one.
    func fieldValue(codingPath: [any CodingKey]) throws -> Value {
        if let fields {
            var object: [String: JSONValue] = [:]
            for (key, child) in fields { object[key] = try child.json(codingPath: codingPath) }
            return .json(.object(object))
        }
        if let items { return .list(try items.map { try $0.fieldValue(codingPath: codingPath) }) }
        return value ?? .null
    }

    /// The JSON form, inside a nested struct.
    func json(codingPath: [any CodingKey]) throws -> JSONValue {
        if let fields {
            var object: [String: JSONValue] = [:]
            for (key, child) in fields { object[key] = try child.json(codingPath: codingPath) }
            return .object(object)
        }
        if let items { return .array(try items.map { try $0.json(codingPath: codingPath) }) }
        return try ModelValues.json(value ?? .null, codingPath: codingPath)
    }

    /// A child node for a key, made on first use.
    func child(_ key: String) -> EncodingNode {
        if fields == nil { fields = [:] }
        if let existing = fields?[key] { return existing }
        let node = EncodingNode()
        fields?[key] = node
        return node
    }

    /// A new element node.
    func appendItem() -> EncodingNode {
        if items == nil { items = [] }
        let node = EncodingNode()
        items?.append(node)
        return node
    }

    /// Turns a scalar into its field value, as ``ValueConvertible`` maps it (the one mapping of
    /// Swift values to field values).
    /// - Throws: `EncodingError` for `UInt` and `UInt64`, which have no field value (an `int` is
    ///   64-bit signed: their upper half has none).
    static func scalar<T: Encodable>(_ value: T, codingPath: [any CodingKey]) throws -> Value {
        guard let convertible = value as? any ValueConvertible else {
            throw EncodingError.invalidValue(
                value,
                .init(
                    codingPath: codingPath,
                    debugDescription: "\(T.self) has no field value (an int is 64-bit signed): use Int64"))
        }
        return convertible.rooftopValue
    }
}
