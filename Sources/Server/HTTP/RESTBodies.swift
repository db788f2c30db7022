import RooftopShared

/// The body of a REST create or update: either plain `fields` to set (Parse style) or explicit
/// field `update`s, plus an optional ACL, object ID (creates) and base version (updates).
///
/// ```json
/// {"objectId": "o1", "fields": {"score": 10}, "acl": {"*": {"read": true}}}
/// {"update": [{"field": "score", "do": {"op": "increment", "amount": 1}}], "baseVersion": 3}
/// ```
///
/// Unknown keys are refused: a misspelled `"feilds"` must not create an empty object or bump a
/// version without changing anything.
struct ObjectWriteBody: Codable, Sendable {
    var objectId: String?
    var fields: [String: Value]?
    var update: [FieldUpdate]?
    var acl: ACL?
    var baseVersion: Int64?

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case objectId, fields, update, acl, baseVersion
    }

    /// A key of any name, to list what a body holds.
    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(
        objectId: String? = nil, fields: [String: Value]? = nil, update: [FieldUpdate]? = nil, acl: ACL? = nil,
        baseVersion: Int64? = nil
    ) {
        self.objectId = objectId
        self.fields = fields
        self.update = update
        self.acl = acl
        self.baseVersion = baseVersion
    }

    init(from decoder: any Decoder) throws {
        let allowed = Set(CodingKeys.allCases.map(\.rawValue))
        if let extra = try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue)
            .filter({ !allowed.contains($0) }).sorted().first
        {
            let expected = allowed.sorted().joined(separator: ", ")
            throw RooftopError(
                .request, "unexpected key '\(extra.prefix(80))' in an object write; expected \(expected)")
        }
        let container = try decoder.container(keyedBy: CodingKeys.self)
        objectId = try container.decodeIfPresent(String.self, forKey: .objectId)
        fields = try container.decodeIfPresent([String: Value].self, forKey: .fields)
        update = try container.decodeIfPresent([FieldUpdate].self, forKey: .update)
        acl = try container.decodeIfPresent(ACL.self, forKey: .acl)
        baseVersion = try container.decodeIfPresent(Int64.self, forKey: .baseVersion)
    }

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
