import RooftopShared

/// The body of a REST create or update: either plain `fields` to set (Parse style) or explicit
/// field `update`s, plus an optional ACL, object ID (creates) and base version (updates).
///
/// ```json
/// {"objectId": "o1", "fields": {"score": 10}, "acl": {"*": {"read": true}}}
/// {"update": [{"field": "score", "do": {"op": "increment", "amount": 1}}], "baseVersion": 3}
/// ```
struct ObjectWriteBody: Codable, Sendable {
    var objectId: String?
    var fields: [String: Value]?
    var update: [FieldUpdate]?
    var acl: ACL?
    var baseVersion: Int64?

    /// The field updates: `fields` as sets (in name order), then `update`.
    func updates() -> [FieldUpdate] {
        let sets = (fields ?? [:]).sorted { $0.key < $1.key }.map { FieldUpdate($0.key, .set($0.value)) }
        return sets + (update ?? [])
    }
}

/// The answer to a REST write.
struct WriteResponse: Codable, Sendable {
    var version: Int64
    var object: ObjectSnapshot?
    var merges: [MergeDecision]
}

/// The answer to a REST get: the object and what `include` brought along.
struct ObjectWithIncludes: Codable, Sendable {
    var object: ObjectSnapshot
    var included: [ObjectSnapshot]
}

/// The answer to `GET .../operations`.
struct OperationList: Codable, Sendable {
    var operations: [OperationRecord]
}

/// The answer to `POST .../count`.
struct CountResponse: Codable, Sendable {
    var count: Int
}

/// The body of `POST .../remove`: a query request and an optional limit (all when absent).
struct RemoveRequest: Codable, Sendable {
    var query: QueryRequest
    var limit: Int?
}

/// The answer to `POST .../remove`.
struct RemoveResponse: Codable, Sendable {
    var removed: Int
}

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
