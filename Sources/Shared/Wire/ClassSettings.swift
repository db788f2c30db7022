/// A class's settings: permissions (with the default ACL for new objects), merge rules and
/// declared indexes, as `GET /v1/classes/{className}` answers them.
///
/// Wire form: `{"className": "GameScore", "permissions": {<ClassPermissions>}, "mergeRules": {"score": "sum"},
/// "indexes": [["category", "score"]]}`.
public struct ClassSettings: Sendable, Hashable, Codable {
    /// The class.
    public var className: String
    /// Who may do what.
    public var permissions: ClassPermissions
    /// How concurrent changes to each field are merged.
    public var mergeRules: [String: MergeRule]
    /// Compound indexes declared for the class, each the fields it orders by (at most
    /// ``maxIndexes``, each of 1 to ``maxIndexFields`` distinct fields). Clients learn them when
    /// they pull objects of the class and keep them in their local datastore: a local query whose
    /// equality conditions name an index's leading fields and whose order is its next field reads
    /// the index in order instead of sorting every match (`category = ? order by score desc`
    /// with `["category", "score"]`). The fields they name are the only ones the local datastore
    /// keeps in its value indexes: a condition on another field looks up each object's own value
    /// (every field is value-indexed in a class that declares none). The server's SQLite storage
    /// likewise keeps index rows only of the fields they name. Default: none.
    public var indexes: [[String]]

    /// The most indexes a class may declare.
    public static let maxIndexes = 8
    /// The most fields of one declared index.
    public static let maxIndexFields = 4

    /// Creates settings.
    public init(
        className: String, permissions: ClassPermissions = .default, mergeRules: [String: MergeRule] = [:],
        indexes: [[String]] = []
    ) {
        self.className = className
        self.permissions = permissions
        self.mergeRules = mergeRules
        self.indexes = indexes
    }

    /// Decodes settings; those saved before indexes could be declared have none.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        className = try container.decode(String.self, forKey: .className)
        permissions = try container.decode(ClassPermissions.self, forKey: .permissions)
        mergeRules = try container.decode([String: MergeRule].self, forKey: .mergeRules)
        indexes = try container.decodeIfPresent([[String]].self, forKey: .indexes) ?? []
    }

    private enum CodingKeys: String, CodingKey { case className, permissions, mergeRules, indexes }

    /// Checks declared indexes: at most ``maxIndexes``, none twice, each of 1 to
    /// ``maxIndexFields`` distinct valid field names.
    /// - Throws: `illegalArgument` (field `indexes`) naming what is wrong.
    public static func validateIndexes(_ indexes: [[String]]) throws(RooftopError) {
        guard indexes.count <= maxIndexes else {
            throw RooftopError(.illegalArgument, "a class declares at most \(maxIndexes) indexes", field: "indexes")
        }
        var seen = Set<[String]>()
        for fields in indexes {
            guard (1...maxIndexFields).contains(fields.count) else {
                throw RooftopError(
                    .illegalArgument, "an index has 1 to \(maxIndexFields) fields, not \(fields.count)", field: "indexes")
            }
            guard Set(fields).count == fields.count else {
                throw RooftopError(.illegalArgument, "an index names a field twice", field: "indexes")
            }
            for field in fields { try Identifier.validate(field, as: .field) }
            guard seen.insert(fields).inserted else {
                throw RooftopError(.illegalArgument, "an index is declared twice", field: "indexes")
            }
        }
    }
}
