/// One page of a pull.
///
/// Wire form:
///
/// ```json
/// {
///   "changes": [
///     {"kind": "upsert", "object": {<ObjectSnapshot>}},
///     {"kind": "tombstone", "className": "GameScore", "objectId": "abc", "version": 7},
///     {"kind": "removal", "className": "GameScore", "objectId": "def"}
///   ],
///   "checkpoint": "c:1042",
///   "hasMore": true,
///   "remaining": 12000
/// }
/// ```
///
/// `remaining` is absent when the server gives no estimate. `roles` (the caller's effective role
/// names, sorted) comes with a pull from scratch and with the first page after the caller's
/// roles changed, so that a client checking ACLs offline learns them without asking.
///
/// ```swift
/// var response = try await pull(PullRequest(datastore: id, since: checkpoint))
/// while true {
///     apply(response.changes)
///     checkpoint = response.checkpoint
///     guard response.hasMore else { break }
///     response = try await pull(PullRequest(datastore: id, since: checkpoint))
/// }
/// ```
public struct PullResponse: Hashable, Sendable, Codable {
    /// The changes, in commit order.
    public var changes: [PullChange]
    /// Where the next pull starts; store it once ``changes`` are applied.
    public var checkpoint: Checkpoint
    /// Whether more changes are waiting (ask again with ``checkpoint``).
    public var hasMore: Bool
    /// An estimate of the changes still waiting after this page, for progress reporting; `nil`
    /// when unknown. An estimate only: it may be off while others write.
    public var remaining: Int?
    /// The caller's effective role names, sorted, when the server tells them: on a pull from
    /// scratch and when they changed since the checkpoint; `nil` otherwise (and for the admin and
    /// anonymous callers). At most ``RoleInfo/maxRolesPerUser``.
    public var roles: [String]?

    /// Creates a page.
    /// - Parameters:
    ///   - changes: The changes, in commit order.
    ///   - checkpoint: Where the next pull starts.
    ///   - hasMore: Whether more changes are waiting (default `false`).
    ///   - remaining: The estimate of changes still waiting (default `nil`).
    ///   - roles: The caller's effective roles, when told (default `nil`).
    public init(
        changes: [PullChange], checkpoint: Checkpoint, hasMore: Bool = false, remaining: Int? = nil,
        roles: [String]? = nil
    ) {
        self.changes = changes
        self.checkpoint = checkpoint
        self.hasMore = hasMore
        self.remaining = remaining
        self.roles = roles
    }

    private enum CodingKeys: String, CodingKey { case changes, checkpoint, hasMore, remaining, roles }

    /// Decodes the wire form.
    /// - Throws: `DecodingError` when a member is missing or malformed, `remaining` is outside
    ///   `0...WireBounds.maxCount`, or `roles` holds more than ``RoleInfo/maxRolesPerUser`` names.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let remaining = try container.decodeIfPresent(Int.self, forKey: .remaining)
        if let remaining, !(0...WireBounds.maxCount).contains(remaining) {
            throw DecodingError.dataCorruptedError(
                forKey: .remaining, in: container, debugDescription: "remaining \(remaining) is out of range")
        }
        let roles = try container.decodeIfPresent([String].self, forKey: .roles)
        if let roles, roles.count > RoleInfo.maxRolesPerUser {
            throw DecodingError.dataCorruptedError(
                forKey: .roles, in: container, debugDescription: "more than \(RoleInfo.maxRolesPerUser) roles")
        }
        self.init(
            changes: try container.decode([PullChange].self, forKey: .changes),
            checkpoint: try container.decode(Checkpoint.self, forKey: .checkpoint),
            hasMore: try container.decode(Bool.self, forKey: .hasMore), remaining: remaining, roles: roles)
    }
}
