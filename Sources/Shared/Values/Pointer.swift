/// A to-one reference to an object: the `pointer` value kind.
public struct Pointer: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The class (table) of the object pointed to.
    public var className: String
    /// The object's ID.
    public var objectId: String

    /// Creates a pointer. IDs are validated when the value is written, not here.
    public init(className: String, objectId: String) {
        self.className = className
        self.objectId = objectId
    }

    /// `ClassName/objectId`.
    public var description: String { "\(className)/\(objectId)" }

    private enum CodingKeys: String, CodingKey, CaseIterable { case className, objectId }

    /// Decodes `{"className", "objectId"}`.
    /// - Throws: `DecodingError` for a missing or mistyped member, an unknown key, or a name that
    ///   is not an ID (1-64 of `A-Z a-z 0-9 . - _ + / =`, reserved `:` IDs allowed: whether one
    ///   may be written is checked when the value is written).
    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, allowed: CodingKeys.allCases.map(\.rawValue), in: "pointer")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            className: try container.decode(String.self, forKey: .className),
            objectId: try container.decode(String.self, forKey: .objectId))
        try checkIDs([className, objectId], decoder: decoder, in: "pointer")
    }
}

/// A to-many reference: a set of objects of one class, the `relation` value kind.
///
/// The IDs are kept sorted and unique, so two relations with the same members are identical.
public struct Relation: Hashable, Sendable, CustomStringConvertible {
    /// The class (table) of the member objects.
    public let className: String
    /// The members' object IDs, sorted by their UTF-8 bytes, without duplicates.
    public let objectIds: [String]

    /// Creates a relation; the IDs are sorted and de-duplicated.
    public init<S: Sequence<String>>(className: String, objectIds: S) {
        self.className = className
        self.objectIds = Relation.normalized(objectIds)
    }

    /// The members as pointers.
    public var pointers: [Pointer] { objectIds.map { Pointer(className: className, objectId: $0) } }

    /// Whether the relation holds the object with this ID.
    public func contains(_ objectId: String) -> Bool { objectIds.contains(objectId) }

    /// A copy with these IDs added.
    public func adding<S: Sequence<String>>(_ ids: S) -> Relation {
        Relation(className: className, objectIds: objectIds + Array(ids))
    }

    /// A copy with these IDs removed.
    public func removing<S: Sequence<String>>(_ ids: S) -> Relation {
        let removed = Set(ids)
        return Relation(className: className, objectIds: objectIds.filter { !removed.contains($0) })
    }

    /// `ClassName{id, id}`.
    public var description: String { "\(className){\(objectIds.joined(separator: ", "))}" }

    private static func normalized<S: Sequence<String>>(_ ids: S) -> [String] {
        var seen = Set<String>()
        return ids.filter { seen.insert($0).inserted }
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }
}

extension Relation: Codable {
    private enum CodingKeys: String, CodingKey, CaseIterable { case className, objectIds }

    /// Decodes `{"className": ..., "objectIds": [...]}`.
    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, allowed: CodingKeys.allCases.map(\.rawValue), in: "relation")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            className: try container.decode(String.self, forKey: .className),
            objectIds: try container.decode([String].self, forKey: .objectIds))
        try checkIDs([className] + objectIds, decoder: decoder, in: "relation")
    }

    /// Encodes `{"className": ..., "objectIds": [...]}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(className, forKey: .className)
        try container.encode(objectIds, forKey: .objectIds)
    }
}

/// Refuses names that are not IDs in a decoded pointer or relation (reserved `:` IDs pass:
/// whether one may be written is the write's rule, not the wire form's).
private func checkIDs(_ ids: [String], decoder: any Decoder, in what: String) throws {
    if let bad = ids.first(where: { !Identifier.isValid($0) }) {
        throw DecodingError.dataCorrupted(
            .init(
                codingPath: decoder.codingPath,
                debugDescription:
                    "invalid ID '\(bad.prefix(80))' in a \(what): use 1-\(Identifier.maxLength) characters of A-Z a-z 0-9 . - _ + / ="
            ))
    }
}
