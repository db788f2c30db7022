import RooftopShared

struct SingleNodeDecoder: SingleValueDecodingContainer {
    let node: DecodingNode
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool {
        switch node {
        case .value(.null), .json(.null): true
        default: false
        }
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try NodeDecoder.value(type, from: node, codingPath: codingPath)
    }
}

struct KeyedNodeDecoder<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let entries: [String: DecodingNode]
    let codingPath: [any CodingKey]

    var allKeys: [Key] { entries.keys.compactMap(Key.init(stringValue:)) }

    func contains(_ key: Key) -> Bool { entries[key.stringValue] != nil }

    /// An absent field reads as `nil`, like a `null` one.
    func decodeNil(forKey key: Key) throws -> Bool {
        switch entries[key.stringValue] {
        case nil, .value(.null)?, .json(.null)?: true
        default: false
        }
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try NodeDecoder.value(type, from: try entry(key), codingPath: codingPath + [key])
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try NodeDecoder(node: try entry(key), codingPath: codingPath + [key]).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try NodeDecoder(node: try entry(key), codingPath: codingPath + [key]).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        NodeDecoder(node: entries["super"] ?? .value(.null), codingPath: codingPath)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        NodeDecoder(node: entries[key.stringValue] ?? .value(.null), codingPath: codingPath + [key])
    }

    private func entry(_ key: Key) throws -> DecodingNode {
        guard let entry = entries[key.stringValue] else {
            throw DecodingError.keyNotFound(
                key, .init(codingPath: codingPath, debugDescription: "the object has no field '\(key.stringValue)'"))
        }
        return entry
    }
}

struct UnkeyedNodeDecoder: UnkeyedDecodingContainer {
    let items: [DecodingNode]
    let codingPath: [any CodingKey]
    private(set) var currentIndex = 0

    init(items: [DecodingNode], codingPath: [any CodingKey]) {
        self.items = items
        self.codingPath = codingPath
    }

    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else { throw endError(Never.self) }
        switch items[currentIndex] {
        case .value(.null), .json(.null):
            currentIndex += 1
            return true
        default:
            return false
        }
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let value = try NodeDecoder.value(type, from: try next(type), codingPath: codingPath)
        currentIndex += 1
        return value
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        let container = try NodeDecoder(node: try next(type), codingPath: codingPath).container(keyedBy: type)
        currentIndex += 1
        return container
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let container = try NodeDecoder(node: try next([Value].self), codingPath: codingPath).unkeyedContainer()
        currentIndex += 1
        return container
    }

    mutating func superDecoder() throws -> any Decoder {
        let decoder = NodeDecoder(node: try next(Value.self), codingPath: codingPath)
        currentIndex += 1
        return decoder
    }

    private func next(_ type: Any.Type) throws -> DecodingNode {
        guard !isAtEnd else { throw endError(type) }
        return items[currentIndex]
    }

    private func endError(_ type: Any.Type) -> DecodingError {
        DecodingError.valueNotFound(
            type, .init(codingPath: codingPath, debugDescription: "the list has only \(items.count) elements"))
    }
}
