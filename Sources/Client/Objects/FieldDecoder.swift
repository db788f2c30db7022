import Foundation
import RooftopShared

/// Decodes a `Codable` struct from an object's fields (see ``ModelValues`` for the mapping).
///
/// The built-in fields `objectId`, `createdAt` and `updatedAt` can be decoded like any other
/// field. Absent fields (and `null`) decode as `nil` optionals; numbers convert between int and
/// double when the value is exact.
enum FieldDecoder {
    /// Decodes a value from an object as it reads now.
    /// - Throws: `DecodingError` when a field is missing or of another kind than the property.
    static func decode<T: Decodable>(_ type: T.Type, from snapshot: ObjectSnapshot) throws -> T {
        var fields = snapshot.fields
        for name in FieldEncoder.builtIn {
            if let value = snapshot[name] { fields[name] = value }
        }
        return try NodeDecoder.value(type, from: .fields(fields), codingPath: [])
    }
}

/// The `Decoder` over a ``DecodingNode``.
struct NodeDecoder: Decoder {
    let node: DecodingNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// Decodes a value at a node: the special types from their field value, scalars directly,
    /// anything else by its own `Decodable` conformance.
    static func value<T: Decodable>(_ type: T.Type, from node: DecodingNode, codingPath: [any CodingKey]) throws -> T {
        if ModelValues.isSpecial(type) {
            let special: Any?
            do {
                special = try ModelValues.special(type, from: node)
            } catch where type == Decimal.self {
                // Foundation's own form of a `Decimal` (below) is JSON that reads as no value.
                special = nil
            } catch {
                throw DecodingError.dataCorrupted(
                    .init(
                        codingPath: codingPath, debugDescription: "the JSON here does not read as a \(type)",
                        underlyingError: error))
            }
            if let value = special as? T { return value }
            // A `Decimal` saved before models stored it as a `decimal`: Foundation's own
            // `Codable` form, read back by it.
            guard type == Decimal.self else { throw mismatch(type, node, codingPath) }
            return try T(from: NodeDecoder(node: node, codingPath: codingPath))
        }
        if let scalar = try scalar(type, from: node, codingPath: codingPath) { return scalar }
        return try T(from: NodeDecoder(node: node, codingPath: codingPath))
    }

    /// A scalar (bool, string, integer, floating point) read from a node; `nil` when `type` is
    /// not a scalar type.
    static func scalar<T>(_ type: T.Type, from node: DecodingNode, codingPath: [any CodingKey]) throws -> T? {
        let value: Value?
        switch node {
        case .fields: value = nil
        case .value(let field): value = field
        case .json(.bool(let bool)): value = .bool(bool)
        case .json(.int(let int)): value = .int(int)
        case .json(.double(let double)): value = .double(double)
        case .json(.string(let string)): value = .string(string)
        case .json: value = nil
        }
        guard type == Bool.self || type == String.self || type == Double.self || type == Float.self
            || type is any FixedWidthInteger.Type
        else { return nil }
        // Read back as ``LosslessValueConvertible`` reads them (the one mapping); `UInt` and
        // `UInt64` have no field value.
        guard let lossless = type as? any LosslessValueConvertible.Type else {
            throw DecodingError.typeMismatch(
                type,
                .init(codingPath: codingPath, debugDescription: "\(type) has no field value (an int is 64-bit signed): use Int64"))
        }
        guard let typed = value.flatMap({ lossless.init(rooftopValue: $0) }) as? T else {
            throw mismatch(type, node, codingPath)
        }
        return typed
    }

    static func mismatch(_ type: Any.Type, _ node: DecodingNode, _ codingPath: [any CodingKey]) -> DecodingError {
        let found: String
        switch node {
        case .fields: found = "an object"
        case .value(let value): found = "a value of type \(value.typeName)"
        case .json(let json): found = "the JSON \(json)"
        }
        return DecodingError.typeMismatch(
            type, .init(codingPath: codingPath, debugDescription: "expected \(type), found \(found)"))
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let entries: [String: DecodingNode]
        switch node {
        case .fields(let fields): entries = fields.mapValues(DecodingNode.value)
        case .value(.json(.object(let object))), .json(.object(let object)):
            entries = object.mapValues(DecodingNode.json)
        default: throw NodeDecoder.mismatch([String: Value].self, node, codingPath)
        }
        return KeyedDecodingContainer(KeyedNodeDecoder<Key>(entries: entries, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let items: [DecodingNode]
        switch node {
        case .value(.list(let list)): items = list.map(DecodingNode.value)
        case .value(.json(.array(let array))), .json(.array(let array)): items = array.map(DecodingNode.json)
        default: throw NodeDecoder.mismatch([Value].self, node, codingPath)
        }
        return UnkeyedNodeDecoder(items: items, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleNodeDecoder(node: node, codingPath: codingPath)
    }
}
