import RooftopShared

extension Datastore {
    /// Who may use the datastore (the Dropbox Datastore API's sharing roles): its owner and the role of each
    /// principal it was shared with, as the server has them now.
    ///
    /// ```swift
    /// let album = try await client.datastores.create(title: "Holiday")
    /// try await album.share(.editor, with: .user(bobId))
    /// try await album.share(.viewer, with: .role("family"))
    /// let sharing = try await album.sharing()      // sharing.roles[.user(bobId)] == .editor
    /// ```
    /// - Throws: `notFound` when the user has no role on it; network errors.
    public func sharing() async throws -> DatastoreSharing {
        try await core.api.sharing(of: id)
    }

    /// Gives a principal — everyone (`.everyone`), a user, or a role — a role on the datastore;
    /// `.none` takes it away. The owner and editors may share (as in the Dropbox Datastore API: an editor's read-write
    /// includes sharing changes); the owner's role is fixed, and nobody can be made owner. The
    /// datastore's locally known info follows the answer.
    /// - Parameters:
    ///   - role: `editor` (read and write), `viewer` (read), or `none`.
    ///   - principal: Who gets it.
    /// - Returns: The datastore's info as the server has it after the change.
    /// - Throws: `disallowed` for a viewer, for an `owner` role or a change of the owner's role;
    ///   `notFound`; network errors.
    @discardableResult
    public func share(_ role: SharingRole, with principal: Principal) async throws -> DatastoreInfo {
        let info = try await core.api.setRole(role, for: principal, on: id)
        try core.store.write(scope: core.scope) { transaction in try transaction.saveDatastore(info) }
        return info
    }
}
