import RooftopShared

/// The `Encoder` over an ``EncodingNode``.
struct NodeEncoder: Encoder {
    let node: EncodingNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if node.fields == nil { node.fields = [:] }
        return KeyedEncodingContainer(KeyedNodeEncoder<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if node.items == nil { node.items = [] }
        return UnkeyedNodeEncoder(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleNodeEncoder(node: node, codingPath: codingPath)
    }
}

/// Whether a value is one of the scalar types containers encode directly.
private func isScalar(_ value: Any) -> Bool {
    value is Bool || value is String || value is Double || value is Float || value is any BinaryInteger
}

struct SingleNodeEncoder: SingleValueEncodingContainer {
    let node: EncodingNode
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { node.value = .null }

    mutating func encode<T: Encodable>(_ value: T) throws {
        if isScalar(value) {
            node.value = try EncodingNode.scalar(value, codingPath: codingPath)
        } else {
            try node.store(value, codingPath: codingPath)
        }
    }
}

struct KeyedNodeEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: EncodingNode
    let codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws { node.child(key.stringValue).value = .null }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let child = node.child(key.stringValue)
        if isScalar(value) {
            child.value = try EncodingNode.scalar(value, codingPath: codingPath + [key])
        } else {
            try child.store(value, codingPath: codingPath + [key])
        }
    }

    /// A `nil` optional is recorded as absent, so that saving a model unsets the field.
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        guard let value else {
            node.absent.insert(key.stringValue)
            return
        }
        try encode(value, forKey: key)
    }

    // The standard library gives the scalar overloads default implementations that skip `nil`
    // silently; these route them to the generic one above.
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try absentOrEncode(value, key) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try absentOrEncode(value, key) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try absentOrEncode(value, key) }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try absentOrEncode(value, key) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try absentOrEncode(value, key) }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try absentOrEncode(value, key) }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try absentOrEncode(value, key) }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try absentOrEncode(value, key) }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try absentOrEncode(value, key) }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try absentOrEncode(value, key) }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try absentOrEncode(value, key) }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try absentOrEncode(value, key) }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try absentOrEncode(value, key) }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try absentOrEncode(value, key) }

    private mutating func absentOrEncode<T: Encodable>(_ value: T?, _ key: Key) throws {
        try encodeIfPresent(value, forKey: key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        NodeEncoder(node: node.child(key.stringValue), codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        NodeEncoder(node: node.child(key.stringValue), codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        NodeEncoder(node: node.child("super"), codingPath: codingPath)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        NodeEncoder(node: node.child(key.stringValue), codingPath: codingPath + [key])
    }
}

struct UnkeyedNodeEncoder: UnkeyedEncodingContainer {
    let node: EncodingNode
    let codingPath: [any CodingKey]
    var count: Int { node.items?.count ?? 0 }

    mutating func encodeNil() throws { node.appendItem().value = .null }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let item = node.appendItem()
        if isScalar(value) {
            item.value = try EncodingNode.scalar(value, codingPath: codingPath)
        } else {
            try item.store(value, codingPath: codingPath)
        }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
        -> KeyedEncodingContainer<NestedKey>
    {
        NodeEncoder(node: node.appendItem(), codingPath: codingPath).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        NodeEncoder(node: node.appendItem(), codingPath: codingPath).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        NodeEncoder(node: node.appendItem(), codingPath: codingPath)
    }
}
