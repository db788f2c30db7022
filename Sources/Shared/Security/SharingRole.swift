/// What a principal may do with a whole datastore (the Dropbox Datastore API's roles), ordered
/// `none < viewer < editor < owner`.
///
/// - ``none``: no access.
/// - ``viewer``: read (get, find, count, pull).
/// - ``editor``: read and write, and change the datastore's sharing roles.
/// - ``owner``: like editor, and cannot be removed; held only by the user who created the
///   datastore and never assigned.
///
/// Wire form: `"none"`, `"viewer"`, `"editor"`, `"owner"`.
public enum SharingRole: Int, Hashable, Sendable, Comparable, CaseIterable, CustomStringConvertible {
    /// No access.
    case none = 0
    /// Read-only access.
    case viewer = 1
    /// Read-write access, including role changes.
    case editor = 2
    /// The datastore's creator: read-write, role changes, never removed.
    case owner = 3

    /// Orders roles by the access they give.
    public static func < (lhs: SharingRole, rhs: SharingRole) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The wire name, e.g. `viewer`.
    public var name: String {
        switch self {
        case .none: "none"
        case .viewer: "viewer"
        case .editor: "editor"
        case .owner: "owner"
        }
    }

    /// The wire name.
    public var description: String { name }

    /// Parses a wire name; `nil` for an unknown one.
    public init?(name: String) {
        guard let role = SharingRole.allCases.first(where: { $0.name == name }) else { return nil }
        self = role
    }

    /// Whether the role allows the operation: viewers may get, find and count; editors and owners
    /// may do everything; `none` nothing.
    public func allows(_ operation: AccessOperation) -> Bool {
        switch self {
        case .none: false
        case .viewer: operation.isRead
        case .editor, .owner: true
        }
    }

    /// Whether the role can write (editor or owner).
    public var isWritable: Bool { self >= .editor }
}

extension SharingRole: Codable {
    /// Decodes a wire name.
    /// - Throws: `DecodingError` for an unknown name.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let role = SharingRole(name: text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "unknown sharing role '\(text)': use none, viewer, editor or owner")
        }
        self = role
    }

    /// Encodes the wire name.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }
}
