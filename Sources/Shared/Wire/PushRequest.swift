/// A push: the client's queued mutations, in the order they were made.
///
/// The server applies each mutation atomically and on its own: one rejected mutation (say,
/// permission denied) does not stop the ones behind it. Limits on the whole push
/// (``Limits/checkPush(_:)``: the number of mutations and their size) reject the whole request.
///
/// Wire form: `{"mutations": [<Mutation>, ...]}` (see ``Mutation``).
///
/// ```swift
/// let request = PushRequest(mutations: outbox.pending)
/// ```
public struct PushRequest: Hashable, Sendable, Codable {
    /// The mutations, oldest first.
    public var mutations: [Mutation]

    /// Creates a push.
    public init(mutations: [Mutation]) {
        self.mutations = mutations
    }
}

extension PushRequest {
    private enum CodingKeys: String, CodingKey, CaseIterable { case mutations }

    /// Decodes the wire form, refusing unknown keys.
    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, allowed: CodingKeys.allCases.map(\.rawValue), in: "push request")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(mutations: try container.decode([Mutation].self, forKey: .mutations))
    }
}
