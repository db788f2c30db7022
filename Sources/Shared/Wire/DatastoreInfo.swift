/// What a caller learns about a datastore when listing or opening it (seed 003's
/// `DBDatastoreInfo`).
///
/// Wire form: `{"id": ".Xy3", "kind": "shareable", "title": "Trip plan", "owner": "u1",
/// "role": "editor", "updatedAt": 1763779346123}` (`title`, `owner` and `updatedAt` optional;
/// `owner` is absent for `:app`).
public struct DatastoreInfo: Hashable, Sendable, Codable {
    /// The datastore's ID.
    public var id: DatastoreID
    /// Private, shareable or app.
    public var kind: DatastoreID.Kind
    /// A title for people, when one is set.
    public var title: String?
    /// The owner's user ID (`nil` for `:app`).
    public var owner: String?
    /// The caller's effective role (``DatastoreSharing/effectiveRole(for:)``).
    public var role: SharingRole
    /// When the datastore last changed, when known.
    public var updatedAt: Timestamp?

    /// Creates datastore information; `kind` comes from the ID.
    public init(id: DatastoreID, title: String? = nil, owner: String?, role: SharingRole, updatedAt: Timestamp? = nil) {
        self.id = id
        self.kind = id.kind
        self.title = title
        self.owner = owner
        self.role = role
        self.updatedAt = updatedAt
    }

    /// Whether the caller can write (editor or owner).
    public var isWritable: Bool { role.isWritable }
}
