/// A class's security settings: who may get, find, count, create, update and delete its
/// objects (class-level permissions, as in Parse), and the ACL new objects get by default.
///
/// Class permissions are checked before object ACLs; both must allow an operation (see
/// ``AccessPolicy``). An admin passes every rule. The default is all operations open to
/// everyone, with ``DefaultACL/creatorOnly`` for new objects, so a fresh class is usable and its
/// objects are still private to their creators.
///
/// Wire form (Parse's class-level permissions plus the default ACL policy):
///
/// ```json
/// {
///   "get":    {"*": true},
///   "find":   {"requiresAuthentication": true},
///   "count":  {"requiresAuthentication": true},
///   "create": {"role:Editors": true},
///   "update": {"role:Editors": true},
///   "delete": {},
///   "defaultACL": {"policy": "publicReadCreatorWrite"}
/// }
/// ```
///
/// A missing operation decodes as open to everyone (`{"*": true}`, as in Parse), a missing
/// `defaultACL` as `creatorOnly`. Encoding always writes all seven members.
///
/// ```swift
/// var permissions = ClassPermissions()
/// permissions.delete = .nobody
/// permissions.allows(.delete, for: AccessContext(userId: "u1"))   // false
/// ```
public struct ClassPermissions: Hashable, Sendable {
    /// Who may read one object by ID.
    public var get: PermissionRule
    /// Who may query (and pull, and be notified about) objects.
    public var find: PermissionRule
    /// Who may count objects.
    public var count: PermissionRule
    /// Who may create objects.
    public var create: PermissionRule
    /// Who may change existing objects.
    public var update: PermissionRule
    /// Who may delete objects.
    public var delete: PermissionRule
    /// The ACL new objects get when their creator supplies none.
    public var defaultACL: DefaultACL

    /// Creates permissions; every rule defaults to ``PermissionRule/everyone`` and the default
    /// ACL to ``DefaultACL/creatorOnly``.
    public init(
        get: PermissionRule = .everyone,
        find: PermissionRule = .everyone,
        count: PermissionRule = .everyone,
        create: PermissionRule = .everyone,
        update: PermissionRule = .everyone,
        delete: PermissionRule = .everyone,
        defaultACL: DefaultACL = .creatorOnly
    ) {
        self.get = get
        self.find = find
        self.count = count
        self.create = create
        self.update = update
        self.delete = delete
        self.defaultACL = defaultACL
    }

    /// The default: every operation open, new objects private to their creator.
    public static let `default` = ClassPermissions()

    /// The rule for an operation.
    public subscript(operation: AccessOperation) -> PermissionRule {
        get {
            switch operation {
            case .get: self.get
            case .find: find
            case .count: count
            case .create: create
            case .update: update
            case .delete: delete
            }
        }
        set {
            switch operation {
            case .get: self.get = newValue
            case .find: find = newValue
            case .count: count = newValue
            case .create: create = newValue
            case .update: update = newValue
            case .delete: delete = newValue
            }
        }
    }

    /// Whether the caller may perform the operation on this class.
    public func allows(_ operation: AccessOperation, for context: AccessContext) -> Bool {
        self[operation].allows(context)
    }
}

extension ClassPermissions: Codable {
    private enum CodingKeys: String, CodingKey, CaseIterable {
        case get, find, count, create, update, delete, defaultACL
    }

    /// Decodes the wire form; missing operations are open, a missing `defaultACL` is
    /// `creatorOnly`.
    /// - Throws: `DecodingError` for an invalid rule or policy, or an unknown key.
    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, allowed: CodingKeys.allCases.map(\.rawValue), in: "class permissions")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func rule(_ key: CodingKeys) throws -> PermissionRule {
            try container.decodeIfPresent(PermissionRule.self, forKey: key) ?? .everyone
        }
        self.init(
            get: try rule(.get), find: try rule(.find), count: try rule(.count),
            create: try rule(.create), update: try rule(.update), delete: try rule(.delete),
            defaultACL: try container.decodeIfPresent(DefaultACL.self, forKey: .defaultACL) ?? .creatorOnly)
    }

    /// Encodes all six rules and the default ACL policy.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.get, forKey: .get)
        try container.encode(find, forKey: .find)
        try container.encode(count, forKey: .count)
        try container.encode(create, forKey: .create)
        try container.encode(update, forKey: .update)
        try container.encode(delete, forKey: .delete)
        try container.encode(defaultACL, forKey: .defaultACL)
    }
}
