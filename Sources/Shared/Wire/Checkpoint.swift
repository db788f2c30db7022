/// A position in a datastore's change feed, chosen by the server and opaque to clients.
///
/// A client stores the checkpoint of its last pull and sends it back as
/// ``PullRequest/since`` to get only what changed afterwards. Clients must not parse, compare or
/// build checkpoints; only the server knows what they mean (a commit sequence number today).
///
/// Wire form: a JSON string, e.g. `"c:1042"`.
public struct Checkpoint: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The server's text.
    public let rawValue: String

    /// Wraps a server's checkpoint text.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    /// The text.
    public var description: String { rawValue }

    /// Decodes a JSON string.
    public init(from decoder: any Decoder) throws {
        self.rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    /// Encodes a JSON string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
