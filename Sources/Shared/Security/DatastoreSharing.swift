/// Who may use a datastore, and how (the Dropbox Datastore API's sharing).
///
/// - A **private** datastore belongs to one user, its ``owner``; nobody else has any role, and it
///   cannot be shared.
/// - A **shareable** datastore has an owner (its creator) and roles for principals: the public
///   (`*`), a user, or a role (`role:Name`; a team is a role). A caller's role is the highest
///   role among the principals it holds (``owner`` for the owner). Editors and the owner may
///   change roles; the owner's role can neither be assigned nor removed.
/// - The **app** datastore (`:app`) has no owner: everyone, signed in or not, is an ``SharingRole/editor``,
///   and object ACLs and class permissions decide what each caller may do.
///
/// An admin caller has the ``SharingRole/owner`` role everywhere.
///
/// Wire form: `{"datastore": ".Xy3", "owner": "u1", "roles": {"*": "viewer", "role:Team": "editor"}}`
/// (`owner` is absent for `:app`; `roles` holds no `none` entries).
///
/// ```swift
/// var sharing = try DatastoreSharing(datastore: id, owner: "u1")
/// try sharing.setRole(.editor, for: .user("u2"), by: AccessContext(userId: "u1"))
/// sharing.effectiveRole(for: AccessContext(userId: "u2"))   // .editor
/// ```
public struct DatastoreSharing: Hashable, Sendable {
    /// The datastore.
    public let datastore: DatastoreID
    /// The owner's user ID; `nil` only for the app datastore.
    public let owner: String?
    /// The roles assigned to principals (never `none`, never the owner's own entry).
    public internal(set) var roles: [Principal: SharingRole]

    /// Creates the sharing state of a datastore.
    /// - Parameters:
    ///   - datastore: The datastore.
    ///   - owner: Its owner's user ID; required for private and shareable datastores, and must be
    ///     `nil` for `:app`.
    ///   - roles: Roles for principals (default none); only a shareable datastore may have any.
    ///     `none` entries are dropped.
    /// - Throws: ``RooftopError/Code/illegalArgument`` for a missing or unexpected owner, an
    ///   `owner` role in `roles`, a role for the owner, or roles on a datastore that cannot be
    ///   shared.
    public init(datastore: DatastoreID, owner: String?, roles: [Principal: SharingRole] = [:]) throws(RooftopError) {
        let kept = roles.filter { $0.value != .none }
        switch (datastore.kind, owner) {
        case (.app, .some):
            throw RooftopError(.illegalArgument, "the app datastore has no owner")
        case (.private, .none), (.shareable, .none):
            throw RooftopError(.illegalArgument, "datastore \(datastore) needs an owner")
        default:
            break
        }
        if datastore.kind != .shareable && !kept.isEmpty {
            throw RooftopError(
                .illegalArgument,
                "datastore \(datastore) cannot be shared: only shareable datastores ('.' IDs) have roles")
        }
        if kept.values.contains(.owner) {
            throw RooftopError(.illegalArgument, "the owner role cannot be assigned")
        }
        if let owner, kept[.user(owner)] != nil {
            throw RooftopError(.illegalArgument, "the owner's role cannot be changed")
        }
        self.datastore = datastore
        self.owner = owner
        self.roles = kept
    }

    /// The sharing state of the app datastore: everyone is an editor.
    public static let app = DatastoreSharing(unchecked: .app, owner: nil, roles: [:])

    private init(unchecked datastore: DatastoreID, owner: String?, roles: [Principal: SharingRole]) {
        self.datastore = datastore
        self.owner = owner
        self.roles = roles
    }

    /// The role assigned to one principal (not considering the caller's other principals):
    /// `owner` for the owner, `editor` for anyone on `:app`, otherwise its entry or `none`.
    public func role(for principal: Principal) -> SharingRole {
        if datastore.kind == .app { return .editor }
        if let owner, principal == .user(owner) { return .owner }
        return roles[principal] ?? .none
    }

    /// The caller's role: `owner` for an admin and for the owner, `editor` for anyone on `:app`,
    /// otherwise the highest role among the principals the caller holds (`*`, the user, the
    /// user's roles), or `none`.
    public func effectiveRole(for context: AccessContext) -> SharingRole {
        if context.isAdmin { return .owner }
        switch datastore.kind {
        case .app:
            return .editor
        case .private:
            return context.userId != nil && context.userId == owner ? .owner : .none
        case .shareable:
            if context.userId != nil && context.userId == owner { return .owner }
            return context.principals.map { roles[$0] ?? .none }.max() ?? .none
        }
    }

    /// Whether the caller may change this datastore's roles: the datastore is shareable and the
    /// caller is its owner, an editor, or an admin.
    public func canChangeRoles(_ context: AccessContext) -> Bool {
        datastore.kind == .shareable && effectiveRole(for: context) >= .editor
    }
}
