import RooftopShared

/// The user's datastores (`client.datastores`, the Dropbox Datastore API's datastore manager): list, create,
/// open, delete, uncache.
///
/// Private datastores (IDs like `default`, `settings`) open offline and without an account:
/// their objects are kept locally and their changes queued; at sign-in they move to the user,
/// are pushed to the user's private datastores of the same IDs (created on the server as needed)
/// and merge there with what other devices stored.
///
/// ```swift
/// let settings = try await client.datastores.open(.default)
/// let shared = try await client.datastores.create(title: "Trip plan")
/// for info in try await client.datastores.list() { print(info.id, info.role) }
/// ```
public struct DatastoreManager: Sendable {
    let core: ClientCore

    /// The user's datastores: the server's list when it can be reached (and kept locally), plus
    /// private datastores opened here and not yet on the server; the local list when offline or
    /// without an account.
    /// - Throws: Server errors other than connectivity ones (`auth`...), `cache`.
    public func list() async throws -> [DatastoreInfo] {
        let owner = core.scope
        let local = try core.store.datastores(scope: owner)
        guard !owner.isEmpty else { return local }
        let remote: [DatastoreInfo]
        do {
            remote = try await core.api.datastores()
        } catch {
            // Exhaustive, not `catch where`: with a guard, a typed error rethrown from an untyped
            // function crashes Swift 6.3.1's SIL verifier (see docs/client.md, "Errors").
            guard error.isConnectivity else { throw error }
            return local
        }
        try core.store.write(scope: owner) { transaction in
            for info in remote { try transaction.saveDatastore(info) }
        }
        let known = Set(remote.map(\.id))
        return (remote + local.filter { !known.contains($0.id) && $0.kind == .private }).sorted { $0.id < $1.id }
    }

    /// Creates a shareable datastore (a server-generated ID starting with `.`), owned by the user.
    /// - Parameter title: A title for people (default none).
    /// - Throws: `auth` without an account, network errors.
    public func create(title: String? = nil) async throws -> Datastore {
        let info = try await core.api.createDatastore(title: title)
        try core.store.write(scope: core.scope) { transaction in try transaction.saveDatastore(info) }
        return Datastore(id: info.id, core: core)
    }

    /// Opens a datastore. Private IDs and `:app` open at once, offline and without an account
    /// (the server creates a private datastore with the first change pushed to it); a shareable
    /// datastore not known locally is looked up on the server.
    /// - Throws: For a shareable datastore: `notFound` (no such datastore, or no role on it),
    ///   network errors when it is not known locally.
    public func open(_ id: DatastoreID) async throws -> Datastore {
        let owner = core.scope
        if try core.store.datastores(scope: owner).contains(where: { $0.id == id }) {
            return Datastore(id: id, core: core)
        }
        let info: DatastoreInfo
        switch id.kind {
        case .shareable:
            info = try await core.api.openDatastore(id)
        case .app:
            info = DatastoreInfo(id: id, owner: nil, role: .editor)
        case .private:
            info = DatastoreInfo(id: id, owner: owner.isEmpty ? nil : owner, role: .owner)
        }
        try core.store.write(scope: owner) { transaction in try transaction.saveDatastore(info) }
        return Datastore(id: id, core: core)
    }

    /// Deletes a datastore on the server (its owner only), then its local copy and queued changes.
    /// - Throws: `disallowed` for a non-owner, network errors.
    public func delete(_ id: DatastoreID) async throws {
        do {
            try await core.api.deleteDatastore(id)
        } catch {
            // Not found: never pushed (a private datastore used only here), or already gone.
            guard error.code == .notFound else { throw error }
        }
        try uncache(id)
    }

    /// Drops the local copy of a datastore: its objects, pins, checkpoint, scope and queued
    /// changes (not yet uploaded changes are discarded). The next sync downloads it whole again.
    /// - Throws: `cache`.
    public func uncache(_ id: DatastoreID) throws {
        try core.store.write(scope: core.scope) { transaction in
            try transaction.removeDatastore(id, discardQueued: true)
            try transaction.setSyncFilter(nil, datastore: id)
        }
        core.services.activity.update(id) { entry in
            entry.needsReset = false
            entry.incoming = false
            entry.lastError = nil
        }
    }
}
