/// The rules for table (class), record (object) and field IDs, from the Dropbox Datastore API.
///
/// An ID is 1-64 characters of `A-Z a-z 0-9 . - _ + / =`, case-sensitive. IDs with a leading `:`
/// (followed by allowed characters) are valid but reserved for Rooftop's own use, so apps cannot
/// create them.
///
/// ```swift
/// try Identifier.validate("GameScore", as: .className)   // ok
/// try Identifier.validate("a b", as: .field)              // throws illegalArgument
/// ```
public enum Identifier {
    /// What an ID names, for messages.
    public enum Kind: String, Sendable {
        /// A class (table) name.
        case className = "class name"
        /// An object (record) ID.
        case objectId = "object ID"
        /// A field name.
        case field = "field name"
    }

    /// The longest ID, in characters.
    public static let maxLength = 64

    /// Field names that every object has and that apps cannot set through field operations.
    public static let builtInFields: Set<String> = ["objectId", "createdAt", "updatedAt", "ACL"]

    /// Whether `id` follows the ID rules (reserved IDs count as valid).
    public static func isValid(_ id: String) -> Bool {
        let body = id.utf8.first == UInt8(ascii: ":") ? id.utf8.dropFirst() : id.utf8[...]
        return !body.isEmpty && id.utf8.count <= maxLength && body.allSatisfy(isAllowed)
    }

    /// Whether `id` is reserved for Rooftop's own use (it starts with `:`).
    public static func isReserved(_ id: String) -> Bool { id.utf8.first == UInt8(ascii: ":") }

    /// Checks an ID that an app supplies.
    /// - Parameters:
    ///   - id: The ID.
    ///   - kind: What it names, for the message.
    ///   - allowReserved: Whether `:`-prefixed IDs are accepted (default `false`).
    /// - Throws: ``RooftopError/Code/illegalArgument`` naming the rule that is broken.
    public static func validate(_ id: String, as kind: Kind, allowReserved: Bool = false) throws(RooftopError) {
        guard isValid(id) else {
            let shown = id.count > 80 ? String(id.prefix(80)) + "…" : id
            throw RooftopError(
                .illegalArgument,
                "invalid \(kind.rawValue) '\(shown)': use 1-\(maxLength) characters of A-Z a-z 0-9 . - _ + / =",
                field: kind == .field ? shown : nil)
        }
        if !allowReserved && isReserved(id) {
            throw RooftopError(.illegalArgument, "\(kind.rawValue) '\(id)' is reserved: IDs starting with ':' are for Rooftop's own use")
        }
    }

    static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "+"), UInt8(ascii: "/"),
            UInt8(ascii: "="):
            true
        default:
            false
        }
    }
}
