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
/// let (members, _) = try SchemaRecorder.record(PushRequest.self, example: #"{"mutations": []}"#)
/// // [("mutations", [Mutation].self, required), ("compact", Bool.self, optional)]
/// ```
enum SchemaRecorder {
    /// A member the type read.
    struct Member {
        /// Its name on the wire.
        var name: String
        /// The Swift type it was read as.
        var type: any Decodable.Type
        /// Whether every read of it was a plain `decode` with no `contains` before it.
        var required: Bool
        /// Whether every read of it was a `decodeIfPresent`, which reads `null` as absent.
        var readIfPresent: Bool
        /// Whether it was asked about with `decodeNil`: `null` is one of its values.
        var nilChecked: Bool

        /// Whether the type takes `null` for it: it asks with `decodeNil`, or it reads `null` as
        /// absent and does without it.
        var acceptsNull: Bool { nilChecked || (readIfPresent && !required) }

        /// Another read of the same member: required only if both are, read if present only if
        /// both are, checked for `null` if either is.
        mutating func merge(_ other: Member) {
            required = required && other.required
            readIfPresent = readIfPresent && other.readIfPresent
            nilChecked = nilChecked || other.nilChecked
        }
    }

    /// The type of a member read as a nested container: no Swift type states its schema.
    struct Nested: Decodable {}

    /// What went wrong recording a type: the example is not JSON, not an object, or not a value
    /// of the type, or the type reads its JSON in a way no schema can be derived from.
    struct Failure: Error, CustomStringConvertible {
        /// What went wrong, naming the type and member where known.
        var description: String
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
        /// The members, in the order they were first read.
        var members: [Member] = []
        /// The members asked about with `contains`: optional when read later.
        var probed: Set<String> = []
        /// The members asked about with `decodeNil`: `null` is one of their values.
        var nilChecked: Set<String> = []

        /// Notes a read of `name` as `type`; a member read twice is required only if both reads
        /// are, and takes `null` only if both do.
        /// - Parameters:
        ///   - required: Whether the read is a plain `decode` (else `decodeIfPresent`).
        /// - Throws: ``Failure`` when `name` was read before as another type.
        func record(_ name: String, _ type: any Decodable.Type, required: Bool) throws {
            let member = Member(
                name: name, type: type, required: required && !probed.contains(name), readIfPresent: !required,
                nilChecked: nilChecked.contains(name))
            if let index = members.firstIndex(where: { $0.name == name }) {
                guard members[index].type == type else {
                    throw Failure(description: "'\(name)' is read as \(members[index].type) and as \(type)")
                }
                members[index].merge(member)
            } else {
                members.append(member)
            }
        }
    }

    /// The decoder a type reads its example from: keyed containers only.
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

        /// As `JSONDecoder`'s over an object: it is not null, and no single value decodes from it
        /// (a type that tries the scalars first, as `Value` does, then reads the object).
        func singleValueContainer() throws -> any SingleValueDecodingContainer { ObjectAsSingleValue() }
    }

    /// An object read as a single value: every read is a type mismatch.
    fileprivate struct ObjectAsSingleValue: SingleValueDecodingContainer {
        var codingPath: [any CodingKey] { [] }

        func decodeNil() -> Bool { false }

        func decode<T: Decodable>(_ type: T.Type) throws -> T { throw Self.mismatch(type) }
        func decode(_ type: Bool.Type) throws -> Bool { throw Self.mismatch(type) }
        func decode(_ type: String.Type) throws -> String { throw Self.mismatch(type) }
        func decode(_ type: Double.Type) throws -> Double { throw Self.mismatch(type) }
        func decode(_ type: Float.Type) throws -> Float { throw Self.mismatch(type) }
        func decode(_ type: Int.Type) throws -> Int { throw Self.mismatch(type) }
        func decode(_ type: Int8.Type) throws -> Int8 { throw Self.mismatch(type) }
        func decode(_ type: Int16.Type) throws -> Int16 { throw Self.mismatch(type) }
        func decode(_ type: Int32.Type) throws -> Int32 { throw Self.mismatch(type) }
        func decode(_ type: Int64.Type) throws -> Int64 { throw Self.mismatch(type) }
        func decode(_ type: UInt.Type) throws -> UInt { throw Self.mismatch(type) }
        func decode(_ type: UInt8.Type) throws -> UInt8 { throw Self.mismatch(type) }
        func decode(_ type: UInt16.Type) throws -> UInt16 { throw Self.mismatch(type) }
        func decode(_ type: UInt32.Type) throws -> UInt32 { throw Self.mismatch(type) }
        func decode(_ type: UInt64.Type) throws -> UInt64 { throw Self.mismatch(type) }

        /// What `JSONDecoder` throws for a single value of `type` read from an object.
        private static func mismatch(_ type: Any.Type) -> DecodingError {
            .typeMismatch(type, .init(codingPath: [], debugDescription: "the example is an object"))
        }
    }

    /// The example's members, read and recorded.
    fileprivate struct Container<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let object: [String: Any]
        let log: Log
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { object.keys.compactMap { Key(stringValue: $0) } }

        func contains(_ key: Key) -> Bool {
            log.probed.insert(key.stringValue)
            return object[key.stringValue] != nil
        }

        /// As `JSONDecoder`'s: a missing member is an error, so a member read after it stays
        /// required (`decodeNil` then `decode` is a member that must be there and may be null).
        func decodeNil(forKey key: Key) throws -> Bool {
            log.nilChecked.insert(key.stringValue)
            guard let value = object[key.stringValue] else {
                throw DecodingError.keyNotFound(
                    key, .init(codingPath: [], debugDescription: "the example lacks '\(key.stringValue)'"))
            }
            return value is NSNull
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
            try log.record(key.stringValue, type, required: true)
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
            try log.record(key.stringValue, type, required: false)
            guard let value = object[key.stringValue], !(value is NSNull) else { return nil }
            return try Self.decode(type, from: value)
        }

        /// A member read as an object of its own: recorded as ``Nested`` (its schema must be given
        /// in the notes), its members read without recording.
        func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type, forKey key: Key
        ) throws -> KeyedDecodingContainer<NestedKey> {
            try log.record(key.stringValue, Nested.self, required: true)
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

