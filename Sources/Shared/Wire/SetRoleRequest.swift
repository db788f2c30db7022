/// A request to give a principal a role on a shareable datastore; `none` removes its role
/// (see ``DatastoreSharing/setRole(_:for:by:)`` for the rules).
///
/// Wire form: `{"principal": "role:Team", "role": "editor"}`.
public struct SetRoleRequest: Hashable, Sendable, Codable {
    /// Who gets the role: `*`, a user ID or `role:Name`.
    public var principal: Principal
    /// The role: `none`, `viewer` or `editor`.
    public var role: SharingRole

    /// Creates a request.
    public init(principal: Principal, role: SharingRole) {
        self.principal = principal
        self.role = role
    }
}
