/// What a caller learns about a datastore when listing or opening it (the Dropbox Datastore API's
/// `DBDatastoreInfo`).
///
/// Wire form: `{"id": ".Xy3", "kind": "shareable", "title": "Trip plan", "owner": "u1",
/// "role": "editor", "updatedAt": 1763779346123, "usage": {"records": 12, "maxRecords": 100000,
/// "bytes": 5120, "maxBytes": 10485760}}` (`title`, `owner`, `updatedAt` and `usage` optional;
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
    /// Its size against the server's limits, when the server tells it.
    public var usage: DatastoreUsage?

    /// Creates datastore information; `kind` comes from the ID.
    public init(
        id: DatastoreID, title: String? = nil, owner: String?, role: SharingRole, updatedAt: Timestamp? = nil,
        usage: DatastoreUsage? = nil
    ) {
        self.id = id
        self.kind = id.kind
        self.title = title
        self.owner = owner
        self.role = role
        self.updatedAt = updatedAt
        self.usage = usage
    }

    /// Whether the caller can write (editor or owner).
    public var isWritable: Bool { role.isWritable }
}

/// A datastore's size against the server's limits: its live records and their bytes, as the
/// limits count them (``SizeAccounting``). A write that would pass a limit is refused
/// (`sizeLimit`), so `records <= maxRecords` and `bytes <= maxBytes` hold. The server tells it;
/// a list read from the local cache offline has none.
///
/// ```swift
/// for info in try await client.datastores.list() {
///     if let usage = info.usage, usage.bytes * 10 > usage.maxBytes * 9 { print("\(info.id) is 90% full") }
/// }
/// ```
public struct DatastoreUsage: Hashable, Sendable, Codable {
    /// Live (not deleted) records.
    public var records: Int
    /// The most records a datastore may hold.
    public var maxRecords: Int
    /// The datastore's size in bytes, as the limit counts it.
    public var bytes: Int
    /// The largest size a datastore may have.
    public var maxBytes: Int

    /// Creates a usage.
    public init(records: Int, maxRecords: Int, bytes: Int, maxBytes: Int) {
        self.records = records
        self.maxRecords = maxRecords
        self.bytes = bytes
        self.maxBytes = maxBytes
    }
}
