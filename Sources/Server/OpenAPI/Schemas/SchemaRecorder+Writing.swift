import Foundation
import RooftopShared

extension SchemaRecorder {
    /// The members a type writes even when it holds nothing optional. Those are required too in
    /// an answer: whoever reads it can count on them (a list written even when empty, say).
    ///
    /// They are the members the type writes for the value it decodes from the first of
    /// `examples` cut down to its `required` members. Where that cut-down object is not a value of
    /// the type (its decoder requires a member only in some cases: a shareable datastore's owner),
    /// they are the members it writes for every one of `examples`, which must then include a
    /// value without each optional member.
    /// - Parameters:
    ///   - variant: For a union's variant, its name: a cut-down object that decodes as another
    ///     variant does not stand for this one either.
    /// - Throws: ``Failure`` when an example does not decode or encode as an object.
    static func alwaysWritten(
        _ type: any Codable.Type, examples: [String], required: [String], variant: String? = nil
    ) throws -> Set<String> {
        guard let first = examples.first,
            let object = try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any]
        else {
            throw Failure(description: "no example of \(type) is a JSON object")
        }
        let minimal = try JSONSerialization.data(withJSONObject: object.filter { required.contains($0.key) })
        let cutDown: any Codable
        do {
            cutDown = try JSONDecoder().decode(type, from: minimal)
            if let variant, try SchemaBuilder.Recording.variant(of: cutDown) != variant {
                throw Failure(description: "the cut-down example is another variant")
            }
        } catch {
            // The decoder requires more than its plain reads show (or, for a variant, the cut-down
            // object is another variant); every example stands instead.
            return try examples.reduce(nil as Set<String>?) { kept, example in
                let keys = try writtenKeys(of: JSONDecoder().decode(type, from: Data(example.utf8)))
                return kept.map { $0.intersection(keys) } ?? Set(keys)
            } ?? []
        }
        return Set(try writtenKeys(of: cutDown))
    }

    /// The members `value` writes at the top of its JSON object.
    /// - Throws: ``Failure`` when it writes something else; what its encoder throws.
    static func writtenKeys(of value: any Encodable) throws -> [String] {
        let log = KeyLog()
        try value.encode(to: KeyWriter(log: log))
        guard log.isObject else { throw Failure(description: "\(type(of: value)) does not encode as an object") }
        return log.keys
    }

    /// The keys written so far.
    fileprivate final class KeyLog {
        /// The keys, in the order they were first written.
        var keys: [String] = []
        /// Whether only keyed containers were asked for at the top level.
        var isObject = true

        /// Notes a key.
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

    /// Notes each key written, and nothing of the values.
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
