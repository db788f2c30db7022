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

    /// Decodes the wire form.
    /// - Throws: `DecodingError` for a missing or invalid member or an unknown key.
    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, allowed: CodingKeys.allCases.map(\.rawValue), in: "role assignment")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.principal = try container.decode(Principal.self, forKey: .principal)
        self.role = try container.decode(SharingRole.self, forKey: .role)
    }

    private enum CodingKeys: String, CodingKey, CaseIterable { case principal, role }
}
