/// A message the server sends on the live WebSocket.
///
/// Notifications carry no data, only "something you may read changed": the client then pulls,
/// which applies read-access filtering in one place.
///
/// Wire form (`type` says which):
/// - `{"type": "subscribed", "datastores": [":app"]}`: the subscription is active; changes
///   committed from now on will be notified.
/// - `{"type": "changed", "datastore": ":app", "sequence": 1043}`: a change the subscriber may
///   read was committed in the datastore as its change number `sequence` (numbers grow with an
///   object's changes but may skip, and notifications come in commit order, which on PostgreSQL
///   need not be number order: pull on each, do not compare them).
/// - `{"type": "error", "error": {"code": "auth", "message": "..."}, "datastore": ".Xy3"}`: a
///   request failed (`datastore` present when the error concerns one datastore, e.g. a
///   subscription refused or ended because access was lost).
public enum LiveServerMessage: Equatable, Sendable {
    /// Subscriptions that are now active.
    case subscribed(datastores: [DatastoreID])
    /// A datastore changed.
    case changed(datastore: DatastoreID, sequence: Int64)
    /// Something failed.
    case error(RooftopError, datastore: DatastoreID?)
}

extension LiveServerMessage: Codable {
    private enum CodingKeys: String, CodingKey { case type, datastores, datastore, sequence, error }

    /// Decodes the wire form.
    /// - Throws: `DecodingError` for an unknown type or a missing member.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let type = try container.decode(String.self, forKey: .type)
        switch type {
        case "subscribed":
            self = .subscribed(datastores: try container.decode([DatastoreID].self, forKey: .datastores))
        case "changed":
            self = .changed(
                datastore: try container.decode(DatastoreID.self, forKey: .datastore),
                sequence: try container.decode(Int64.self, forKey: .sequence))
        case "error":
            self = .error(
                try container.decode(RooftopError.self, forKey: .error),
                datastore: try container.decodeIfPresent(DatastoreID.self, forKey: .datastore))
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .type, in: container,
                debugDescription: "unknown message type '\(type)': use subscribed, changed or error")
        }
    }

    /// Encodes the wire form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .subscribed(let datastores):
            try container.encode("subscribed", forKey: .type)
            try container.encode(datastores, forKey: .datastores)
        case .changed(let datastore, let sequence):
            try container.encode("changed", forKey: .type)
            try container.encode(datastore, forKey: .datastore)
            try container.encode(sequence, forKey: .sequence)
        case .error(let error, let datastore):
            try container.encode("error", forKey: .type)
            try container.encode(error, forKey: .error)
            try container.encodeIfPresent(datastore, forKey: .datastore)
        }
    }
}
