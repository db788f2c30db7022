import Foundation
@testable import RooftopServer
import RooftopShared

/// The Swift type behind each component schema that carries examples: decoding an example with
/// it shows the example is something the server accepts, re-encoding gives what it would send.
enum OpenAPIWireTypes {
    /// Decodes JSON as the schema's Swift type and encodes it again, as the server would.
    typealias RoundTrip = (Data) throws -> Data

    static var roundTrips: [String: RoundTrip] {
        [
        "Identifier": roundTrip(String.self),
        "AnyIdentifier": roundTrip(String.self),
        "DatastoreID": roundTrip(DatastoreID.self),
        "MutationID": roundTrip(MutationID.self),
        "Checkpoint": roundTrip(Checkpoint.self),
        "Timestamp": roundTrip(Timestamp.self),
        "Principal": roundTrip(Principal.self),
        "Value": roundTrip(Value.self),
        "ObjectSnapshot": roundTrip(ObjectSnapshot.self),
        "FieldOperation": roundTrip(FieldOperation.self),
        "FieldUpdate": roundTrip(FieldUpdate.self),
        "ObjectChange": roundTrip(ObjectChange.self),
        "MergeDecision": roundTrip(MergeDecision.self),
        "ObjectWriteBody": roundTrip(ObjectWriteBody.self),
        "Mutation": roundTrip(Mutation.self),
        "PullRequest": roundTrip(PullRequest.self),
        "QueryRequest": roundTrip(QueryRequest.self),
        "Query": roundTrip(Query.self),
        "QueryPredicate": roundTrip(QueryPredicate.self),
        "QueryTextRequest": roundTrip(QueryRequest.self),
        "SignUpRequest": roundTrip(SignUpRequest.self),
        "LogInRequest": roundTrip(LogInRequest.self),
        "UserInfo": roundTrip(UserInfo.self),
        "RoleInfo": roundTrip(RoleInfo.self),
        "CreateRoleRequest": roundTrip(CreateRoleRequest.self),
        "UpdateRoleRequest": roundTrip(UpdateRoleRequest.self),
        "ACL": roundTrip(ACL.self),
        "PermissionRule": roundTrip(PermissionRule.self),
        "DefaultACL": roundTrip(DefaultACL.self),
        "ClassSettings": roundTrip(ClassSettings.self),
        "ClassSettingsChange": roundTrip(ClassSettingsChange.self),
        "DatastoreSharing": roundTrip(DatastoreSharing.self),
        "DatastoreInfo": roundTrip(DatastoreInfo.self),
        "CreateDatastoreRequest": roundTrip(CreateDatastoreRequest.self),
        "SetRoleRequest": roundTrip(SetRoleRequest.self),
        "LiveSubscribe": roundTrip(LiveClientMessage.self),
        "LiveChanged": roundTrip(LiveServerMessage.self),
        "Error": roundTrip(RooftopError.self),
        ]
    }

    private static func roundTrip<T: Codable>(_ type: T.Type) -> RoundTrip {
        { data in try OpenAPITestSupport.serverEncoder.encode(try JSONDecoder().decode(T.self, from: data)) }
    }
}
