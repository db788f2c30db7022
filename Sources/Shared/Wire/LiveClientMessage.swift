/// A message a client sends on the live WebSocket.
///
/// Wire form (`type` says which):
/// - `{"type": "subscribe", "datastores": [":app", ".Xy3"], "sessionToken": "r:..."}`: start
///   receiving ``LiveServerMessage/changed(datastore:sequence:)`` for these datastores, as the
///   session's user (`sessionToken` absent for an anonymous caller). The server checks the
///   caller's read access to each datastore and answers ``LiveServerMessage/subscribed(datastores:)``
///   or an error.
/// - `{"type": "unsubscribe", "datastores": [".Xy3"]}`: stop.
public enum LiveClientMessage: Hashable, Sendable {
    /// Subscribes to datastores, authenticated by a session token.
    case subscribe(datastores: [DatastoreID], sessionToken: String?)
    /// Unsubscribes from datastores.
    case unsubscribe(datastores: [DatastoreID])
}

extension LiveClientMessage: Codable {
    private enum CodingKeys: String, CodingKey { case type, datastores, sessionToken }

    /// Decodes the wire form.
    /// - Throws: `DecodingError` for an unknown type or a missing member.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let type = try container.decode(String.self, forKey: .type)
        let datastores = try container.decode([DatastoreID].self, forKey: .datastores)
        switch type {
        case "subscribe":
            self = .subscribe(
                datastores: datastores, sessionToken: try container.decodeIfPresent(String.self, forKey: .sessionToken))
        case "unsubscribe":
            self = .unsubscribe(datastores: datastores)
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .type, in: container,
                debugDescription: "unknown message type '\(type)': use subscribe or unsubscribe")
        }
    }

    /// Encodes the wire form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .subscribe(let datastores, let sessionToken):
            try container.encode("subscribe", forKey: .type)
            try container.encode(datastores, forKey: .datastores)
            try container.encodeIfPresent(sessionToken, forKey: .sessionToken)
        case .unsubscribe(let datastores):
            try container.encode("unsubscribe", forKey: .type)
            try container.encode(datastores, forKey: .datastores)
        }
    }
}
