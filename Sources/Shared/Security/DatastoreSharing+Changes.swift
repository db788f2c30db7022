extension DatastoreSharing {
    /// Assigns a role to a principal on behalf of a caller; `none` removes the principal's entry.
    ///
    /// ```swift
    /// try sharing.setRole(.viewer, for: .everyone, by: ownerContext)   // public, read-only
    /// try sharing.setRole(.none, for: .everyone, by: ownerContext)     // private again
    /// ```
    /// - Parameters:
    ///   - role: The new role: `none`, `viewer` or `editor`.
    ///   - principal: Who gets it: `*`, a user or a role.
    ///   - context: Who asks.
    /// - Throws: ``RooftopError/Code/invalidOperation`` when the datastore is not shareable, when
    ///   `role` is `owner`, or when `principal` is the owner; ``RooftopError/Code/disallowed`` when
    ///   the caller may not change roles (see ``canChangeRoles(_:)``).
    public mutating func setRole(
        _ role: SharingRole, for principal: Principal, by context: AccessContext
    ) throws(RooftopError) {
        guard datastore.kind == .shareable else {
            throw RooftopError(
                .invalidOperation,
                "datastore \(datastore) cannot be shared: only shareable datastores ('.' IDs) have roles")
        }
        guard canChangeRoles(context) else {
            throw RooftopError(
                .disallowed,
                "changing the roles of datastore \(datastore) needs the editor or owner role; the caller is \(effectiveRole(for: context))"
            )
        }
        guard role != .owner else {
            throw RooftopError(
                .invalidOperation, "the owner role cannot be assigned: the creator of a datastore is its owner")
        }
        if let owner, principal == .user(owner) {
            throw RooftopError(
                .invalidOperation, "the owner of datastore \(datastore) cannot be given another role or removed")
        }
        roles[principal] = role == .none ? nil : role
    }

    /// Removes a principal's role on behalf of a caller (the same as setting `none`).
    /// - Throws: As ``setRole(_:for:by:)``.
    public mutating func removeRole(for principal: Principal, by context: AccessContext) throws(RooftopError) {
        try setRole(.none, for: principal, by: context)
    }
}

extension DatastoreSharing: Codable {
    private enum CodingKeys: String, CodingKey { case datastore, owner, roles }

    /// Decodes `{"datastore", "owner"?, "roles"}` and validates it as ``init(datastore:owner:roles:)`` does.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let datastore = try container.decode(DatastoreID.self, forKey: .datastore)
        let owner = try container.decodeIfPresent(String.self, forKey: .owner)
        var roles: [Principal: SharingRole] = [:]
        if container.contains(.roles) {
            let nested = try container.nestedContainer(keyedBy: AnyCodingKey.self, forKey: .roles)
            for key in nested.allKeys {
                roles[try Principal(key.stringValue)] = try nested.decode(SharingRole.self, forKey: key)
            }
        }
        try self.init(datastore: datastore, owner: owner, roles: roles)
    }

    /// Encodes `{"datastore", "owner"?, "roles"}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(datastore, forKey: .datastore)
        try container.encodeIfPresent(owner, forKey: .owner)
        var nested = container.nestedContainer(keyedBy: AnyCodingKey.self, forKey: .roles)
        for (principal, role) in roles.sorted(by: { $0.key < $1.key }) {
            try nested.encode(role, forKey: AnyCodingKey(principal.description))
        }
    }
}
