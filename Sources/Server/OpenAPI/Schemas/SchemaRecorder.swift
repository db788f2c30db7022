import Foundation
import RooftopShared

/// Records how a type decodes a JSON object: the members it reads, in order, whether each is
/// required, and the Swift type it reads each as.
///
/// It is a `Decoder` over one example object. The type's own `init(from:)` runs on it unchanged
/// (its validation included), so what is recorded is what the type does: a member read with
/// `decode` is required, one read with `decodeIfPresent` or after `contains` is optional. Each
/// member's value is decoded from the example by `JSONDecoder`, so nested types validate as they
/// would on the wire.
///
/// ```swift
/// let members = try SchemaRecorder.members(of: PushRequest.self, example: #"{"mutations": []}"#)
/// // [("mutations", [Mutation].self, required), ("compact", Bool.self, optional)]
/// ```
enum SchemaRecorder {
    /// A member the type read.
    struct Member {
        var name: String
        var type: any Decodable.Type
        var required: Bool
    }

    /// The type of a member read as a nested container: no Swift type states its schema.
    struct Nested: Decodable {}

    /// What went wrong recording a type: the example is not JSON, not an object, or not a value
    /// of the type, or the type reads its JSON in a way no schema can be derived from.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The members `type` reads from `example` (a JSON object), in the order it first reads them.
    /// - Throws: ``Failure``, or the type's own decoding error when `example` is not a value of it.
    static func members(of type: any Decodable.Type, example: String) throws -> [Member] {
        try record(type, example: example).members
    }

    /// The members `type` reads from `example` (a JSON object), in the order it first reads them,
    /// and the value it decoded.
    /// - Throws: ``Failure``, or the type's own decoding error when `example` is not a value of it.
    static func record(_ type: any Decodable.Type, example: String) throws -> (members: [Member], value: any Decodable) {
        let parsed = try JSONSerialization.jsonObject(with: Data(example.utf8), options: [.fragmentsAllowed])
        guard let object = parsed as? [String: Any] else {
            throw Failure(description: "an example of \(type) is not a JSON object")
        }
        let log = Log()
        let value = try type.init(from: Recorder(object: object, log: log))
        return (log.members, value)
    }

    /// The members read so far, and which were asked about with `contains` first.
    fileprivate final class Log {
        var members: [Member] = []
        var probed: Set<String> = []

        func record(_ name: String, _ type: any Decodable.Type, required: Bool) {
            let required = required && !probed.contains(name)
            if let index = members.firstIndex(where: { $0.name == name }) {
                members[index].required = members[index].required && required
            } else {
                members.append(Member(name: name, type: type, required: required))
            }
        }
    }

    fileprivate struct Recorder: Decoder {
        let object: [String: Any]
        let log: Log
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            KeyedDecodingContainer(Container<Key>(object: object, log: log))
        }

        func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
            throw Failure(description: "the type reads a JSON array, not an object")
        }

        func singleValueContainer() throws -> any SingleValueDecodingContainer {
            throw Failure(description: "the type reads a single value, not an object")
        }
    }

    fileprivate struct Container<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let object: [String: Any]
        let log: Log
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { object.keys.compactMap { Key(stringValue: $0) } }

        func contains(_ key: Key) -> Bool {
            log.probed.insert(key.stringValue)
            return object[key.stringValue] != nil
        }

        func decodeNil(forKey key: Key) throws -> Bool {
            log.probed.insert(key.stringValue)
            return object[key.stringValue] is NSNull
        }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try read(type, key) }
        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try read(type, key) }
        func decode(_ type: String.Type, forKey key: Key) throws -> String { try read(type, key) }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try read(type, key) }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try read(type, key) }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try read(type, key) }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try read(type, key) }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try read(type, key) }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try read(type, key) }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try read(type, key) }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try read(type, key) }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try read(type, key) }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try read(type, key) }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try read(type, key) }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try read(type, key) }

        /// A required member: recorded, then decoded from the example.
        private func read<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T {
            log.record(key.stringValue, type, required: true)
            guard let value = object[key.stringValue] else {
                throw DecodingError.keyNotFound(
                    key, .init(codingPath: [], debugDescription: "the example lacks the required '\(key.stringValue)'"))
            }
            return try Self.decode(type, from: value)
        }

        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? { try readIfPresent(type, key) }
        func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try readIfPresent(type, key) }
        func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try readIfPresent(type, key) }
        func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try readIfPresent(type, key) }
        func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try readIfPresent(type, key) }
        func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try readIfPresent(type, key) }
        func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try readIfPresent(type, key) }
        func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try readIfPresent(type, key) }
        func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try readIfPresent(type, key) }
        func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try readIfPresent(type, key) }
        func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try readIfPresent(type, key) }
        func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try readIfPresent(type, key) }
        func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try readIfPresent(type, key) }
        func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try readIfPresent(type, key) }
        func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try readIfPresent(type, key) }

        /// An optional member: recorded, then decoded from the example when it is there and not null.
        private func readIfPresent<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T? {
            log.record(key.stringValue, type, required: false)
            guard let value = object[key.stringValue], !(value is NSNull) else { return nil }
            return try Self.decode(type, from: value)
        }

        /// A member read as an object of its own: recorded as ``Nested`` (its schema must be given
        /// in the notes), its members read without recording.
        func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type, forKey key: Key
        ) throws -> KeyedDecodingContainer<NestedKey> {
            log.record(key.stringValue, Nested.self, required: true)
            guard let nested = object[key.stringValue] as? [String: Any] else {
                throw DecodingError.keyNotFound(
                    key, .init(codingPath: [], debugDescription: "the example has no object '\(key.stringValue)'"))
            }
            return KeyedDecodingContainer(Container<NestedKey>(object: nested, log: Log()))
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            throw Failure(description: "'\(key.stringValue)' is read as a nested array: give its schema in the notes")
        }

        func superDecoder() throws -> any Decoder {
            throw Failure(description: "the type reads a super decoder")
        }

        func superDecoder(forKey key: Key) throws -> any Decoder {
            throw Failure(description: "'\(key.stringValue)' is read with a super decoder")
        }

        /// `value` decoded as `T` the way the wire decodes it.
        private static func decode<T: Decodable>(_ type: T.Type, from value: Any) throws -> T {
            let data = try JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed])
            return try JSONDecoder().decode(type, from: data)
        }
    }
}

extension SchemaRecorder {
    /// The members a type writes even when it holds nothing optional. Those are required too:
    /// whoever reads the type's JSON can count on them (an answer's list written even when empty,
    /// say). They are the members the type writes for the value it decodes from the first of
    /// `examples` cut down to its `required` members; when that is not a value of the type (one
    /// member requires another), the members it writes for every one of `examples`.
    /// - Throws: ``Failure`` when an example does not decode or encode as an object.
    static func alwaysWritten(_ type: any Codable.Type, examples: [String], required: [String]) throws -> Set<String> {
        func written(_ json: Data) throws -> Set<String> {
            guard let keys = Self.written(by: try JSONDecoder().decode(type, from: json)) else {
                throw Failure(description: "it does not encode as an object")
            }
            return Set(keys)
        }
        guard let first = examples.first,
            let object = try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any]
        else {
            throw Failure(description: "no example of \(type) is a JSON object")
        }
        if let minimal = try? written(JSONSerialization.data(withJSONObject: object.filter { required.contains($0.key) })) {
            return minimal
        }
        return try examples.dropFirst().reduce(written(Data(first.utf8))) { $0.intersection(try written(Data($1.utf8))) }
    }

    /// The members `value` writes at the top of its JSON object, in order; `nil` when it writes
    /// something else (an array, a single value).
    static func written(by value: any Encodable) -> [String]? {
        let log = KeyLog()
        do {
            try value.encode(to: KeyWriter(log: log))
        } catch {
            return nil
        }
        return log.isObject ? log.keys : nil
    }

    fileprivate final class KeyLog {
        var keys: [String] = []
        var isObject = true

        func write(_ key: String) {
            if !keys.contains(key) { keys.append(key) }
        }
    }

    /// An `Encoder` that notes the keys written at the top level and nothing else.
    fileprivate struct KeyWriter: Encoder {
        let log: KeyLog
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            KeyedEncodingContainer(KeyContainer<Key>(log: log))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            log.isObject = false
            return Ignored()
        }

        func singleValueContainer() -> any SingleValueEncodingContainer {
            log.isObject = false
            return Ignored()
        }
    }

    fileprivate struct KeyContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let log: KeyLog
        var codingPath: [any CodingKey] { [] }

        mutating func encodeNil(forKey key: Key) throws { log.write(key.stringValue) }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { log.write(key.stringValue) }

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type, forKey key: Key
        ) -> KeyedEncodingContainer<NestedKey> {
            log.write(key.stringValue)
            return KeyedEncodingContainer(KeyContainer<NestedKey>(log: KeyLog()))
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            log.write(key.stringValue)
            return Ignored()
        }

        mutating func superEncoder() -> any Encoder { KeyWriter(log: KeyLog()) }

        mutating func superEncoder(forKey key: Key) -> any Encoder {
            log.write(key.stringValue)
            return KeyWriter(log: KeyLog())
        }
    }

    /// Takes whatever is written into an array or a single value, and keeps none of it.
    fileprivate struct Ignored: UnkeyedEncodingContainer, SingleValueEncodingContainer {
        var codingPath: [any CodingKey] { [] }
        var count = 0

        mutating func encodeNil() throws {}
        mutating func encode<T: Encodable>(_ value: T) throws {}

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(KeyContainer<NestedKey>(log: KeyLog()))
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { Ignored() }
        mutating func superEncoder() -> any Encoder { KeyWriter(log: KeyLog()) }
    }
}
