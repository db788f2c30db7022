/// Who may perform one operation on a class: a set of principals, and/or every signed-in user.
///
/// A caller passes when it is an admin, when it holds one of ``principals`` (`*` lets everyone
/// through), or when ``requiresAuthentication`` is set and the caller is signed in. This is
/// Parse's meaning: `requiresAuthentication` grants every signed-in user, it does not narrow the
/// other entries. To let only signed-in users through, set it and leave out `*`.
///
/// Wire form (Parse's): `{"*": true}`, `{"role:Admins": true, "u1": true}`,
/// `{"requiresAuthentication": true}`; `{}` lets nobody but an admin through. Entries whose value
/// is `false` are ignored. Because `requiresAuthentication` is a key of this object, a user whose
/// ID is exactly `requiresAuthentication` cannot be named in a rule (generated user IDs never are).
///
/// ```swift
/// let rule = PermissionRule(principals: [.role("Admins")], requiresAuthentication: true)
/// rule.allows(AccessContext(userId: "u1"))   // true: signed in
/// rule.allows(.anonymous)                    // false
/// ```
public struct PermissionRule: Hashable, Sendable {
    /// The principals allowed; `*` allows everyone.
    public var principals: Set<Principal>
    /// Whether every signed-in user is allowed too.
    public var requiresAuthentication: Bool

    /// Creates a rule.
    /// - Parameters:
    ///   - principals: The principals allowed (default none).
    ///   - requiresAuthentication: Whether every signed-in user is allowed (default `false`).
    public init(principals: Set<Principal> = [], requiresAuthentication: Bool = false) {
        self.principals = principals
        self.requiresAuthentication = requiresAuthentication
    }

    /// Everyone, signed in or not: `{"*": true}`. The default for every operation.
    public static let everyone = PermissionRule(principals: [.everyone])
    /// Every signed-in user: `{"requiresAuthentication": true}`.
    public static let authenticated = PermissionRule(requiresAuthentication: true)
    /// Nobody but an admin: `{}`.
    public static let nobody = PermissionRule()

    /// Whether the caller passes this rule.
    public func allows(_ context: AccessContext) -> Bool {
        if context.isAdmin { return true }
        if requiresAuthentication && context.isAuthenticated { return true }
        return principals.contains { context.holds($0) }
    }
}

extension PermissionRule: Codable {
    private static let authenticationKey = "requiresAuthentication"

    /// Decodes Parse's form, validating every principal.
    /// - Throws: `DecodingError` for a non-boolean entry; ``RooftopError`` for an invalid principal.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyCodingKey.self)
        var principals: Set<Principal> = []
        var requiresAuthentication = false
        for key in container.allKeys {
            guard try container.decode(Bool.self, forKey: key) else { continue }
            if key.stringValue == PermissionRule.authenticationKey {
                requiresAuthentication = true
            } else {
                principals.insert(try Principal(key.stringValue))
            }
        }
        self.init(principals: principals, requiresAuthentication: requiresAuthentication)
    }

    /// Encodes Parse's form; only `true` entries are written.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AnyCodingKey.self)
        for principal in principals.sorted() {
            try container.encode(true, forKey: AnyCodingKey(principal.description))
        }
        if requiresAuthentication {
            try container.encode(true, forKey: AnyCodingKey(PermissionRule.authenticationKey))
        }
    }
}
