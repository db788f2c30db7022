/// The ACL a class gives a new object whose creator did not supply one.
///
/// Secure by default: ``creatorOnly`` (the creator reads and writes, nobody else does). A class
/// can choose a more open policy in its ``ClassPermissions/defaultACL``.
///
/// **Anonymous creators.** The creator's entries need a user ID. When the creator is anonymous
/// they are left out, so ``publicReadCreatorWrite`` gives a public-read, admin-write object. When
/// nothing would be left (``creatorOnly``, or an ``explicit(_:)`` empty ACL), nobody but an admin
/// could ever read or write the object again, so ``acl(forCreator:className:)`` refuses with
/// ``RooftopError/Code/disallowed``: the caller must sign in or supply an ACL. An admin without a
/// user is allowed to create such admin-only objects.
///
/// Wire form: `{"policy": "creatorOnly"}`, `{"policy": "publicReadCreatorWrite"}`,
/// `{"policy": "publicReadWrite"}` or `{"policy": "explicit", "acl": {"role:Staff": {"read": true}}}`.
///
/// ```swift
/// let acl = try DefaultACL.creatorOnly.acl(forCreator: AccessContext(userId: "u1"), className: "Note")
/// // {"u1": {"read": true, "write": true}}
/// ```
public enum DefaultACL: Hashable, Sendable {
    /// Only the creator reads and writes (the default).
    case creatorOnly
    /// Everyone reads; only the creator writes (its own entry grants read and write).
    case publicReadCreatorWrite
    /// Everyone reads and writes.
    case publicReadWrite
    /// This exact ACL, whoever the creator is.
    case explicit(ACL)

    /// The policy's wire name.
    public var name: String {
        switch self {
        case .creatorOnly: "creatorOnly"
        case .publicReadCreatorWrite: "publicReadCreatorWrite"
        case .publicReadWrite: "publicReadWrite"
        case .explicit: "explicit"
        }
    }

    /// The ACL for a new object created by `context` with no ACL of its own.
    /// - Parameters:
    ///   - context: The creator.
    ///   - className: The object's class, for the error message.
    /// - Returns: The ACL to store with the object.
    /// - Throws: ``RooftopError/Code/disallowed`` when the creator is anonymous (and not an admin)
    ///   and the policy would leave the object with no entries at all.
    public func acl(forCreator context: AccessContext, className: String) throws(RooftopError) -> ACL {
        let result: ACL
        switch self {
        case .creatorOnly:
            result = context.userId.map(ACL.only) ?? ACL()
        case .publicReadCreatorWrite:
            var acl = ACL([.everyone: ACL.Access(read: true)])
            if let userId = context.userId {
                // The creator's entry reads too, so that withdrawing the public read later does not
                // lock the creator out of its own object.
                acl.setReadAccess(true, for: .user(userId))
                acl.setWriteAccess(true, for: .user(userId))
            }
            result = acl
        case .publicReadWrite:
            result = .publicReadWrite
        case .explicit(let acl):
            result = acl
        }
        if result.entries.isEmpty && !context.isAdmin {
            throw RooftopError(
                .disallowed,
                "new \(className) objects are private to their creator: sign in, or give the object an ACL")
        }
        return result
    }
}

extension DefaultACL: Codable {
    private enum CodingKeys: String, CodingKey, CaseIterable { case policy, acl }

    /// Decodes `{"policy": ..., "acl"?: ...}`.
    /// - Throws: `DecodingError` for an unknown policy, an `explicit` policy without an ACL, or an
    ///   unknown key.
    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, allowed: CodingKeys.allCases.map(\.rawValue), in: "default ACL")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let policy = try container.decode(String.self, forKey: .policy)
        switch policy {
        case "creatorOnly": self = .creatorOnly
        case "publicReadCreatorWrite": self = .publicReadCreatorWrite
        case "publicReadWrite": self = .publicReadWrite
        case "explicit": self = .explicit(try container.decode(ACL.self, forKey: .acl))
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .policy, in: container,
                debugDescription:
                    "unknown default ACL policy '\(policy)': use creatorOnly, publicReadCreatorWrite, publicReadWrite or explicit"
            )
        }
    }

    /// Encodes `{"policy": ..., "acl"?: ...}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .policy)
        if case .explicit(let acl) = self { try container.encode(acl, forKey: .acl) }
    }
}
