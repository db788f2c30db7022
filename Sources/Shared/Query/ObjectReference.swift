/// An object named in a ``QueryPredicate/thisIn(_:)`` collection: by object ID alone, or by pointer.
///
/// An object ID matches an object of the queried class with that ID; a pointer also names the
/// class, and matches only when the class is the object's.
///
/// Wire form (the portable ``Value`` form of a string or a pointer): `"abc"` or
/// `{"$pointer": {"className": "User", "objectId": "abc"}}`.
///
/// ```swift
/// let friends: QueryPredicate = .thisIn(["u1", .pointer(Pointer(className: "_User", objectId: "u2"))])
/// ```
public enum ObjectReference: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// An object ID of the queried class.
    case objectId(String)
    /// A pointer: class name and object ID.
    case pointer(Pointer)

    /// An object ID.
    public init(stringLiteral value: String) { self = .objectId(value) }

    /// Reads a reference from a value: a string is an object ID, a pointer a pointer.
    /// - Returns: `nil` for any other kind of value.
    public init?(_ value: Value) {
        switch value {
        case .string(let id): self = .objectId(id)
        case .pointer(let pointer): self = .pointer(pointer)
        default: return nil
        }
    }

    /// The value form: a string or a pointer.
    public var value: Value {
        switch self {
        case .objectId(let id): .string(id)
        case .pointer(let pointer): .pointer(pointer)
        }
    }

    /// Whether this reference names the object with this class and ID.
    public func refers(toClass className: String, objectId: String) -> Bool {
        switch self {
        case .objectId(let id): id.utf8.elementsEqual(objectId.utf8)
        case .pointer(let pointer):
            pointer.className.utf8.elementsEqual(className.utf8) && pointer.objectId.utf8.elementsEqual(objectId.utf8)
        }
    }

    /// The ID, or `ClassName/objectId` for a pointer.
    public var description: String {
        switch self {
        case .objectId(let id): id
        case .pointer(let pointer): pointer.description
        }
    }
}

extension ObjectReference: Codable {
    /// Decodes `"id"` or `{"$pointer": {...}}`.
    /// - Throws: `DecodingError.dataCorrupted` for any other value.
    public init(from decoder: any Decoder) throws {
        let value = try Value(from: decoder)
        guard let reference = ObjectReference(value) else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription:
                        "a 'thisIn' element must be an object ID string or a {\"$pointer\": ...}, not \(value.typeName.withArticle)"
                ))
        }
        self = reference
    }

    /// Encodes the portable value form.
    public func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
}
