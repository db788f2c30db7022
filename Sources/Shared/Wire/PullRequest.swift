/// A pull: "what changed in this datastore since my checkpoint?".
///
/// The server answers one page (``PullResponse``) of changes in commit order, filtered by the
/// caller's read access. A client repeats with the returned checkpoint while
/// ``PullResponse/hasMore`` is true; after an interruption it resumes from the last checkpoint it
/// stored.
///
/// Wire form: `{"datastore": ":app", "since": "c:1042", "limit": 500, "classes": ["GameScore"]}`;
/// `since` absent means from the beginning (a full initial pull), `limit` absent means the
/// server's ``Limits/defaultPullPageSize``, `classes` absent means every class.
///
/// ```swift
/// var request = PullRequest(datastore: .app, since: stored.checkpoint)
/// ```
public struct PullRequest: Hashable, Sendable, Codable {
    /// The datastore to pull from.
    public var datastore: DatastoreID
    /// The checkpoint of the previous pull; `nil` to start from the beginning.
    public var since: Checkpoint?
    /// The most changes to return in this page; `nil` for the server's default.
    public var limit: Int?
    /// Only changes to objects of these classes; `nil` for all classes.
    public var classes: [String]?

    /// Creates a pull request.
    /// - Parameters:
    ///   - datastore: The datastore.
    ///   - since: The previous checkpoint (default `nil`: from the beginning).
    ///   - limit: The page size (default `nil`: the server's default).
    ///   - classes: The classes to pull (default `nil`: all).
    public init(datastore: DatastoreID, since: Checkpoint? = nil, limit: Int? = nil, classes: [String]? = nil) {
        self.datastore = datastore
        self.since = since
        self.limit = limit
        self.classes = classes
    }
}

extension PullRequest {
    private enum CodingKeys: String, CodingKey, CaseIterable { case datastore, since, limit, classes }

    /// Decodes the wire form, refusing unknown keys.
    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, allowed: CodingKeys.allCases.map(\.rawValue), in: "pull request")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            datastore: try container.decode(DatastoreID.self, forKey: .datastore),
            since: try container.decodeIfPresent(Checkpoint.self, forKey: .since),
            limit: try container.decodeIfPresent(Int.self, forKey: .limit),
            classes: try container.decodeIfPresent([String].self, forKey: .classes))
    }
}
