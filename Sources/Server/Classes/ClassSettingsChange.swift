import RooftopShared

/// A change of a class's settings (``ClassDirectory/change(_:with:)``), as `PUT
/// /v1/classes/{className}` and the dashboard send it: new permissions (with the default ACL policy),
/// merge rules and/or declared indexes. A member left out keeps its current value, so the shared
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
struct ClassSettingsChange: Codable, Sendable {
    var className: String?
    var permissions: ClassPermissions?
    var mergeRules: [String: MergeRule]?
    var indexes: [[String]]?

    init(
        className: String? = nil, permissions: ClassPermissions? = nil, mergeRules: [String: MergeRule]? = nil,
        indexes: [[String]]? = nil
    ) {
        self.className = className
        self.permissions = permissions
        self.mergeRules = mergeRules
        self.indexes = indexes
    }

    init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, allowed: CodingKeys.allCases.map(\.rawValue), in: "class settings body")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        className = try container.decodeIfPresent(String.self, forKey: .className)
        permissions = try container.decodeIfPresent(ClassPermissions.self, forKey: .permissions)
        mergeRules = try container.decodeIfPresent([String: MergeRule].self, forKey: .mergeRules)
        indexes = try container.decodeIfPresent([[String]].self, forKey: .indexes)
    }

    private enum CodingKeys: String, CodingKey, CaseIterable { case className, permissions, mergeRules, indexes }
}
