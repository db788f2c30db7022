/// The client-generated ID of one queued change, which makes a push idempotent: a server that
/// sees a mutation ID it has already applied answers with the first result instead of applying
/// the change again, so a client killed mid-send can simply retry.
///
/// An ID is 1-64 characters of `A-Z a-z 0-9 . - _ + / =` (the ``Identifier`` alphabet), not
/// starting with `:`. It must be unique per user; ``generate()`` makes one from
/// ``ObjectID/generate()`` (time-ordered, 80 random bits).
///
/// Wire form: a JSON string.
///
/// ```swift
/// let id = MutationID.generate()
/// let parsed = try MutationID("01jd0s8m6c7q9x2v4b5n3k1h0z")
/// ```
public struct MutationID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The ID's text.
    public let rawValue: String

    /// Parses and validates a mutation ID.
    /// - Throws: ``RooftopError/Code/illegalArgument`` when the text breaks the rules.
    public init(_ rawValue: String) throws(RooftopError) {
        guard Identifier.isValid(rawValue), !Identifier.isReserved(rawValue) else {
            throw RooftopError(
                .illegalArgument,
                "invalid mutation ID '\(rawValue.prefix(80))': use 1-64 characters of A-Z a-z 0-9 . - _ + / =, not starting with ':'",
                field: "mutationId")
        }
        self.rawValue = rawValue
    }

    /// A new, unique mutation ID.
    public static func generate() -> MutationID {
        // ObjectID output is 26 characters of lowercase base 32: always valid here.
        MutationID(unchecked: ObjectID.generate())
    }

    /// A new mutation ID for the given time and random source (inject both in tests).
    public static func generate<R: RandomNumberGenerator>(at time: Timestamp, using generator: inout R) -> MutationID {
        MutationID(unchecked: ObjectID.generate(at: time, using: &generator))
    }

    private init(unchecked rawValue: String) { self.rawValue = rawValue }

    /// The ID's text.
    public var description: String { rawValue }

    /// Orders IDs by their UTF-8 bytes.
    public static func < (lhs: MutationID, rhs: MutationID) -> Bool {
        lhs.rawValue.utf8.lexicographicallyPrecedes(rhs.rawValue.utf8)
    }
}

extension MutationID: Codable {
    /// Decodes and validates a JSON string.
    public init(from decoder: any Decoder) throws {
        try self.init(try decoder.singleValueContainer().decode(String.self))
    }

    /// Encodes a JSON string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
