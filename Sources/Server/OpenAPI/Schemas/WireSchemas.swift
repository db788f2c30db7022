import RooftopShared

/// The wire types of the OpenAPI document's components.
///
/// Object types are ``DocumentedSchema``s and unions (values, operations, predicates, results,
/// changes, live messages) ``UnionSchema``s: their schemas are derived from the types, in this
/// order (their notes are in the `WireSchemas+*.swift` files beside this one, by subject). The
/// other components — strings of a given form (identifiers, checkpoints, principals) and maps
/// with keys of a given form (ACLs) — are written in `openapi-components.yaml`, and the types
/// below name them so that members of those types refer to them.
enum WireSchemas {
    /// Every type whose schema is derived, in the document's order.
    static let documented: [any DocumentedSchema.Type] = [
        UserList.self, SessionInfo.self, SessionList.self, RevokedSessions.self, SetPasswordRequest.self,
        GeoPoint.self, Pointer.self, Relation.self, ObjectSnapshot.self, FieldUpdate.self, MergeDecision.self,
        ObjectWriteBody.self, WriteResponse.self, ObjectWithIncludes.self, OperationRecord.self, OperationList.self,
        Query.self, QueryOrder.self, QueryResult.self, CountResponse.self, RemoveRequest.self, RemoveResponse.self,
        Mutation.self, PushRequest.self, PushResponse.self, PullRequest.self, PullResponse.self,
        ClassPermissions.self, ClassSettings.self, ClassSettingsChange.self,
        DatastoreSharing.self, DatastoreInfo.self, DatastoreUsage.self, DatastoreList.self,
        CreateDatastoreRequest.self, SetRoleRequest.self,
        SignUpRequest.self, LogInRequest.self, Session.self, UserInfo.self, RoleInfo.self, CreateRoleRequest.self,
        UpdateRoleRequest.self, ServerInfo.self, Limits.self, HealthStatus.self, RooftopError.self,
    ]

    /// Every union whose schema (and its variants') is derived, in the document's order.
    static let unions: [any UnionSchema.Type] = [
        Value.self, FieldOperation.self, ObjectChange.self, QueryRequest.self, QueryPredicate.self,
        MutationResult.self, PullChange.self, LiveClientMessage.self, LiveServerMessage.self,
    ]
}

extension RooftopError: NamedSchema {
    static var schemaName: String { "Error" }
}

extension Timestamp: NamedSchema {}
extension DatastoreID: NamedSchema {}
extension MutationID: NamedSchema {}
extension Checkpoint: NamedSchema {}
extension Principal: NamedSchema {}
extension ACL: NamedSchema {}
extension PermissionRule: NamedSchema {}
extension DefaultACL: NamedSchema {}
extension MergeRule: NamedSchema {}
extension SharingRole: NamedSchema {}

extension DatastoreID.Kind: NamedSchema {
    static var schemaName: String { "DatastoreKind" }
}

extension MergeDecision.Resolution: EnumeratedSchema {}
