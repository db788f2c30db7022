import RooftopShared

/// Finds, creates, lists, shares and deletes datastores, and tells what role a caller has on one.
final class DatastoreService: Sendable {
    private let storage: any DatastoreStorage

    /// The limits a datastore's usage is told against.
    private let limits: Limits
    /// The most datastores one user may own, private and shareable together.
    private let maxPerUser: Int

    init(storage: any DatastoreStorage, limits: Limits, maxPerUser: Int) {
        self.storage = storage
        self.limits = limits
        self.maxPerUser = maxPerUser
    }

    /// Throws `quota` when `userId` owns ``maxPerUser`` datastores already, before one more is
    /// created for them. (Concurrent creations may pass together: the bound holds to within the
    /// user's concurrent requests.)
    private func requireRoom(for userId: String) async throws {
        let owned = try await storage.datastores(ownedBy: userId, sharedWith: []).count
        guard owned < maxPerUser else {
            throw RooftopError(
                .quota, "you own \(owned) datastores, the most one user may have (\(maxPerUser)); delete one to make another")
        }
    }

    /// A datastore resolved for a caller, with the caller's role on it.
    struct Resolved: Sendable {
        var record: DatastoreRecord
        var role: SharingRole
    }

    /// The datastore a caller names, with the caller's effective role.
    /// - Parameters:
    ///   - create: Create a private datastore (or `:app`) that does not exist yet, as
    ///     "open or create" does; shareable datastores are never created here.
    /// - Throws: `auth` for a private datastore without a signed-in user; `notFound` when it does
    ///   not exist, or exists but the caller has no role on it (existence is not revealed);
    ///   `quota` when creating it would take its owner past their datastores.
    func resolve(_ id: DatastoreID, for context: AccessContext, create: Bool) async throws -> Resolved {
        guard create && id.kind != .shareable else {
            guard let existing = try await resolveExisting(id, for: context) else {
                throw RooftopError(.notFound, "no datastore \(id)")
            }
            return existing
        }
        try requireOwner(for: id, context)
        // Found by a read: a write transaction (waiting for the writer) only to make one.
        if let existing = try await storage.datastore(id: id, ownerId: context.userId) {
            return try resolved(existing, for: context)
        }
        // Private datastores are made on first use: each counts against its owner's datastores.
        if id.kind == .private, let userId = context.userId {
            try await requireRoom(for: userId)
        }
        return try resolved(
            try await storage.openOrCreateDatastore(id: id, ownerId: context.userId, title: nil), for: context)
    }

    /// An existing datastore with the caller's role, or `nil` when it does not exist (never creating it).
    /// - Throws: as ``resolve(_:for:create:)`` for one the caller has no role on.
    func resolveExisting(_ id: DatastoreID, for context: AccessContext) async throws -> Resolved? {
        try requireOwner(for: id, context)
        return try await storage.datastore(id: id, ownerId: context.userId).map { try resolved($0, for: context) }
    }

    private func requireOwner(for id: DatastoreID, _ context: AccessContext) throws {
        if id.kind == .private, context.userId == nil {
            throw RooftopError(.auth, "private datastores belong to a signed-in user")
        }
    }

    private func resolved(_ record: DatastoreRecord, for context: AccessContext) throws -> Resolved {
        let role = record.role(for: context)
        guard role > .none else { throw RooftopError(.notFound, "no datastore \(record.id)") }
        return Resolved(record: record, role: role)
    }

    /// Datastores the caller owns or was given a role on, as a user or through a role. A role
    /// for the public (`*`) gives access by ID only: listing it would show every user every
    /// public datastore.
    func list(for context: AccessContext) async throws -> [DatastoreInfo] {
        guard let userId = context.userId else { return [] }
        let principals = Set(context.principals.filter { $0 != .everyone }.map(\.description))
        return try await storage.datastores(ownedBy: userId, sharedWith: principals).compactMap { record in
            let role = record.role(for: context)
            return role > .none ? info(record, role: role) : nil
        }
    }

    /// Creates a shareable datastore owned by the caller.
    func createShareable(title: String?, for context: AccessContext) async throws -> DatastoreInfo {
        guard let userId = context.userId else {
            throw RooftopError(.auth, "creating a shareable datastore needs a signed-in user")
        }
        try await requireRoom(for: userId)
        let record = try await storage.openOrCreateDatastore(id: .generateShareable(), ownerId: userId, title: title)
        return info(record, role: .owner)
    }

    /// Sets a principal's role (owner and editors may; the owner's own role is fixed).
    func setRole(_ role: SharingRole, for principal: Principal, on id: DatastoreID, by context: AccessContext)
        async throws -> DatastoreInfo
    {
        let resolved = try await resolve(id, for: context, create: false)
        guard var sharing = resolved.record.sharing else {
            throw RooftopError(.badState, "datastore \(id) has an inconsistent sharing state")
        }
        try sharing.setRole(role, for: principal, by: context)
        try await storage.setRole(role, for: principal, datastoreKey: resolved.record.key)
        var record = resolved.record
        record.roles = sharing.roles
        return info(record, role: resolved.role)
    }

    /// Deletes a datastore and everything in it (owner or admin only).
    func delete(_ id: DatastoreID, by context: AccessContext) async throws {
        let resolved = try await resolve(id, for: context, create: false)
        guard resolved.role == .owner, id.kind != .app else {
            throw RooftopError(.disallowed, "only the owner can delete datastore \(id)")
        }
        try await storage.deleteDatastore(key: resolved.record.key)
    }

    /// The wire description of a datastore for a caller.
    func info(_ record: DatastoreRecord, role: SharingRole) -> DatastoreInfo {
        DatastoreInfo(
            id: record.id, title: record.title, owner: record.ownerId, role: role,
            usage: DatastoreUsage(
                records: record.recordCount, maxRecords: limits.maxRecordsPerDatastore, bytes: record.sizeBytes,
                maxBytes: limits.maxDatastoreBytes))
    }
}
