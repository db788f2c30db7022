import RooftopShared

/// The body of `PUT /v1/classes/{className}`: new permissions (with the default ACL policy) and/or
/// merge rules. A member left out keeps its current value, so the shared
/// ``ClassPermissionsRequest`` (`{"className": ..., "permissions": {...}}`) changes the
/// permissions only. `className`, when present, must match the path.
///
/// ```json
/// {"permissions": {"delete": {}, "defaultACL": {"policy": "publicReadCreatorWrite"}}, "mergeRules": {"score": "max"}}
/// ```
struct ClassSettingsBody: Codable, Sendable {
    var className: String?
    var permissions: ClassPermissions?
    var mergeRules: [String: MergeRule]?
}
