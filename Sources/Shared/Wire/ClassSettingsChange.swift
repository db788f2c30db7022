/// A change of a class's settings, as `PUT /v1/classes/{className}` (``API/putClassSettings``) and
/// the dashboard send it: new permissions (with the default ACL policy), merge rules and/or declared
/// indexes. A member left out keeps its current value, so the shared
/// ``ClassPermissionsRequest`` (`{"className": ..., "permissions": {...}}`) changes the
/// permissions only. `className`, when present, must match the path.
///
/// ```json
/// {"permissions": {"delete": {}, "defaultACL": {"policy": "publicReadCreatorWrite"}}, "mergeRules": {"score": "max"},
///  "indexes": [["category", "score"]]}
/// ```
///
/// Unknown keys are refused (`request`): a misspelled `"mergeRule"` must not answer success with
/// nothing changed.
public struct ClassSettingsChange: Codable, Sendable {
    /// The class, when named (it must match the path).
    public var className: String?
    /// The new permissions, with the default ACL policy.
    public var permissions: ClassPermissions?
    /// The new merge rules, by field.
    public var mergeRules: [String: MergeRule]?
    /// The new declared indexes, each a list of fields.
    public var indexes: [[String]]?

    /// A change; members left `nil` keep their current values.
    public init(
        className: String? = nil, permissions: ClassPermissions? = nil, mergeRules: [String: MergeRule]? = nil,
        indexes: [[String]]? = nil
    ) {
        self.className = className
        self.permissions = permissions
        self.mergeRules = mergeRules
        self.indexes = indexes
    }

    /// Decodes the wire form, refusing unknown keys.
    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, allowed: CodingKeys.allCases.map(\.rawValue), in: "class settings body")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        className = try container.decodeIfPresent(String.self, forKey: .className)
        permissions = try container.decodeIfPresent(ClassPermissions.self, forKey: .permissions)
        mergeRules = try container.decodeIfPresent([String: MergeRule].self, forKey: .mergeRules)
        indexes = try container.decodeIfPresent([[String]].self, forKey: .indexes)
    }

    private enum CodingKeys: String, CodingKey, CaseIterable { case className, permissions, mergeRules, indexes }
}
