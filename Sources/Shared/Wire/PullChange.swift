/// One entry of a pull page.
///
/// Wire form (`kind` says which):
/// - `{"kind": "upsert", "object": {<ObjectSnapshot>}}`: the object as it is now; store it.
/// - `{"kind": "tombstone", "className": "GameScore", "objectId": "abc", "version": 7}`: the
///   object was deleted at that version; delete it locally.
/// - `{"kind": "removal", "className": "GameScore", "objectId": "abc"}`: the object still exists
///   but the caller can no longer read it (its ACL, a role or the datastore role changed); purge
///   it from the local datastore.
public enum PullChange: Hashable, Sendable {
    /// An object created or changed (and readable by the caller).
    case upsert(ObjectSnapshot)
    /// An object deleted at a version.
    case tombstone(className: String, objectId: String, version: Int64)
    /// An object the caller can no longer read.
    case removal(className: String, objectId: String)

    /// The class of the object concerned.
    public var className: String {
        switch self {
        case .upsert(let object): object.className
        case .tombstone(let className, _, _), .removal(let className, _): className
        }
    }

    /// The ID of the object concerned.
    public var objectId: String {
        switch self {
        case .upsert(let object): object.objectId
        case .tombstone(_, let objectId, _), .removal(_, let objectId): objectId
        }
    }
}

extension PullChange: Codable {
    private enum CodingKeys: String, CodingKey { case kind, object, className, objectId, version }

    /// Decodes the wire form.
    /// - Throws: `DecodingError` for an unknown kind or a missing member.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let kind = try container.decode(String.self, forKey: .kind)
        switch kind {
        case "upsert":
            self = .upsert(try container.decode(ObjectSnapshot.self, forKey: .object))
        case "tombstone":
            self = .tombstone(
                className: try container.decode(String.self, forKey: .className),
                objectId: try container.decode(String.self, forKey: .objectId),
                version: try container.decode(Int64.self, forKey: .version))
        case "removal":
            self = .removal(
                className: try container.decode(String.self, forKey: .className),
                objectId: try container.decode(String.self, forKey: .objectId))
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .kind, in: container,
                debugDescription: "unknown change kind '\(kind)': use upsert, tombstone or removal")
        }
    }

    /// Encodes the wire form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .upsert(let object):
            try container.encode("upsert", forKey: .kind)
            try container.encode(object, forKey: .object)
        case .tombstone(let className, let objectId, let version):
            try container.encode("tombstone", forKey: .kind)
            try container.encode(className, forKey: .className)
            try container.encode(objectId, forKey: .objectId)
            try container.encode(version, forKey: .version)
        case .removal(let className, let objectId):
            try container.encode("removal", forKey: .kind)
            try container.encode(className, forKey: .className)
            try container.encode(objectId, forKey: .objectId)
        }
    }
}
