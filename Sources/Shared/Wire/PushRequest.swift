/// A push: the client's queued mutations, in the order they were made.
///
/// The server applies each mutation atomically and on its own: one rejected mutation (say,
/// permission denied) does not stop the ones behind it. Limits on the whole push
/// (``Limits/checkPush(_:)``: the number of mutations and their size) reject the whole request.
///
/// Wire form: `{"mutations": [<Mutation>, ...], "compact": true}` (see ``Mutation``); `compact`
/// is absent when `false`.
///
/// ```swift
/// let request = PushRequest(mutations: outbox.pending)
/// let quiet = PushRequest(mutations: batch, compact: true)  // versions and merges only
/// ```
public struct PushRequest: Hashable, Sendable, Codable {
    /// The mutations, oldest first.
    public var mutations: [Mutation]
    /// Whether the answer leaves out the objects: applied results then carry the version and the
    /// merge decisions only (``MutationResult/compacted``), for a client that reads the objects
    /// from its next pull or does not need them. Default `false`: each applied result carries the
    /// object as the mutation left it.
    public var compact: Bool

    /// Creates a push.
    /// - Parameters:
    ///   - mutations: The mutations, oldest first.
    ///   - compact: Whether to leave the objects out of the answer (default `false`).
    public init(mutations: [Mutation], compact: Bool = false) {
        self.mutations = mutations
        self.compact = compact
    }
}

extension PushRequest {
    private enum CodingKeys: String, CodingKey, CaseIterable { case mutations, compact }

    /// Decodes the wire form, refusing unknown keys.
    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, allowed: CodingKeys.allCases.map(\.rawValue), in: "push request")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            mutations: try container.decode([Mutation].self, forKey: .mutations),
            compact: try container.decodeIfPresent(Bool.self, forKey: .compact) ?? false)
    }

    /// Encodes the wire form (`compact` only when `true`).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(mutations, forKey: .mutations)
        if compact { try container.encode(true, forKey: .compact) }
    }
}
