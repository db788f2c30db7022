/// One queued change to one object, as sent in a push.
///
/// `baseVersion` is the object's ``ObjectSnapshot/version`` the client last saw: the server merges
/// concurrent changes made since then with the class's merge rules. `nil` means the client has
/// no version: the object is being created, or this is a blind write that applies over whatever
/// is stored.
///
/// Wire form:
///
/// ```json
/// {
///   "mutationId": "01jd0s8m6c7q9x2v4b5n3k1h0z",
///   "datastore": ":app",
///   "className": "GameScore",
///   "objectId": "01jd0s8m6bz8r1w0q2a3c4d5e6",
///   "baseVersion": 3,
///   "change": {"update": [{"field": "score", "do": {"op": "increment", "amount": 1}}]}
/// }
/// ```
///
/// `baseVersion` is absent when `nil`; `change` is an ``ObjectChange`` (`{"delete": true}` for a
/// delete, with an optional `"acl"` beside `"update"`). Decoding checks the mutation ID and the
/// datastore ID; the class name, object ID and values are checked by ``WriteValidator``.
///
/// ```swift
/// let mutation = Mutation(
///     datastore: .app, className: "GameScore", objectId: score.objectId, baseVersion: score.version,
///     change: .update([FieldUpdate("score", .increment(1))]))
/// ```
public struct Mutation: Hashable, Sendable, Codable {
    /// The client's ID for this change, unique per user (idempotency key).
    public var mutationId: MutationID
    /// The datastore that holds the object.
    public var datastore: DatastoreID
    /// The object's class.
    public var className: String
    /// The object's ID.
    public var objectId: String
    /// The object version the change was made on; `nil` to create or to write blindly.
    public var baseVersion: Int64?
    /// What to do to the object.
    public var change: ObjectChange

    /// Creates a mutation.
    /// - Parameters:
    ///   - mutationId: The idempotency key (default: a new one).
    ///   - datastore: The object's datastore.
    ///   - className: The object's class.
    ///   - objectId: The object's ID.
    ///   - baseVersion: The version the change was made on (default `nil`).
    ///   - change: The change.
    public init(
        mutationId: MutationID = .generate(),
        datastore: DatastoreID,
        className: String,
        objectId: String,
        baseVersion: Int64? = nil,
        change: ObjectChange
    ) {
        self.mutationId = mutationId
        self.datastore = datastore
        self.className = className
        self.objectId = objectId
        self.baseVersion = baseVersion
        self.change = change
    }
}

extension Mutation {
    private enum CodingKeys: String, CodingKey, CaseIterable {
        case mutationId, datastore, className, objectId, baseVersion, change
    }

    /// Decodes the wire form, refusing unknown keys.
    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, allowed: CodingKeys.allCases.map(\.rawValue), in: "mutation")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            mutationId: try container.decode(MutationID.self, forKey: .mutationId),
            datastore: try container.decode(DatastoreID.self, forKey: .datastore),
            className: try container.decode(String.self, forKey: .className),
            objectId: try container.decode(String.self, forKey: .objectId),
            baseVersion: try container.decodeIfPresent(Int64.self, forKey: .baseVersion),
            change: try container.decode(ObjectChange.self, forKey: .change))
    }
}
