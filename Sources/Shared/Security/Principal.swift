/// Who an ACL entry or a sharing role is about: everyone, one user, or the members of a role.
///
/// The wire form is Parse's: `"*"` for everyone, `"role:Name"` for a role, and a user's ID for a
/// user.
public enum Principal: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// Everyone, signed in or not (`*`).
    case everyone
    /// One user, by user ID.
    case user(String)
    /// Every user who is a member of the role, directly or through child roles (`role:Name`).
    case role(String)

    /// Parses the wire form.
    /// - Throws: ``RooftopError/Code/illegalArgument`` for an empty user ID or role name.
    public init(_ text: String) throws(RooftopError) {
        if text == "*" {
            self = .everyone
        } else if text.hasPrefix("role:") {
            let name = String(text.dropFirst(5))
            guard Identifier.isValid(name), !Identifier.isReserved(name) else {
                throw RooftopError(.illegalArgument, "invalid role name in principal '\(text)'")
            }
            self = .role(name)
        } else {
            // User IDs are server-generated and never reserved.
            guard Identifier.isValid(text), !Identifier.isReserved(text) else {
                throw RooftopError(.illegalArgument, "invalid principal '\(text)': use '*', 'role:Name' or a user ID")
            }
            self = .user(text)
        }
    }

    /// The wire form: `*`, `role:Name` or the user ID.
    public var description: String {
        switch self {
        case .everyone: "*"
        case .user(let id): id
        case .role(let name): "role:\(name)"
        }
    }

    /// Orders principals by their wire form's UTF-8 bytes.
    public static func < (lhs: Principal, rhs: Principal) -> Bool {
        lhs.description.utf8.lexicographicallyPrecedes(rhs.description.utf8)
    }
}

extension Principal: Codable {
    /// Decodes the wire form.
    public init(from decoder: any Decoder) throws {
        try self.init(try decoder.singleValueContainer().decode(String.self))
    }

    /// Encodes the wire form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
