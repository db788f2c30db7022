import Foundation
@testable import RooftopServer
import RooftopShared

extension OpenAPISamples {
    /// Every sample, with the schema it must validate against.
    static var all: [Sample] {
        get throws {
            var samples: [Sample] = []
            func add(_ label: String, _ value: any Encodable, _ schema: String) {
                samples.append(Sample(label: label, value: value, schema: schema))
            }
            for (name, value) in try everyValueKind.sorted(by: { $0.key < $1.key }) { add("value \(name)", value, "Value") }
            for operation in everyOperation { add("operation \(operation.name)", operation, "FieldOperation") }
            try addObjectSamples(add)
            try addSyncSamples(add)
            try addQuerySamples(add)
            try addAccountSamples(add)
            return samples
        }
    }

    private static func addObjectSamples(_ add: (String, any Encodable, String) -> Void) throws {
        add("full snapshot", try snapshot, "ObjectSnapshot")
        add("minimal snapshot", minimalSnapshot, "ObjectSnapshot")
        for (index, merge) in merges.enumerated() { add("merge \(index)", merge, "MergeDecision") }
        add("write response", WriteResponse(objectId: "o1", version: 4, object: try snapshot, merges: merges), "WriteResponse")
        add("write response after delete", WriteResponse(objectId: "o1", version: 5, object: nil, merges: []), "WriteResponse")
        add("object with includes", ObjectWithIncludes(object: try snapshot, included: [minimalSnapshot]), "ObjectWithIncludes")
        let records = [
            OperationRecord(
                version: 2, change: .update([FieldUpdate("score", .increment(.int(1)))]),
                priorValues: ["score": .int(1), "name": nil, "note": .null]),
            OperationRecord(version: 3, change: .delete, priorValues: [:]),
        ]
        add("operation list", OperationList(operations: records), "OperationList")
        var acl = ACL()
        acl.setWriteAccess(true, for: .role("Team"))
        add(
            "write body",
            ObjectWriteBody(
                objectId: "o1", fields: try everyValueKind, update: [FieldUpdate("n", .unset)], acl: acl, baseVersion: 2),
            "ObjectWriteBody")
        add("empty write body", ObjectWriteBody(), "ObjectWriteBody")
    }

    private static func addSyncSamples(_ add: (String, any Encodable, String) -> Void) throws {
        for mutation in try mutations { add("mutation \(mutation.mutationId)", mutation, "Mutation") }
        add("push", PushRequest(mutations: try mutations), "PushRequest")
        let results: [MutationResult] = [
            .applied(mutationId: try MutationID("m1"), version: 4, object: try snapshot, merges: merges),
            .applied(mutationId: try MutationID("m2"), version: 9, object: nil),
            .rejected(
                mutationId: try MutationID("m3"),
                error: RooftopError(.invalidQuery, "bad", field: "score", position: 7)),
            .rejected(mutationId: try MutationID("m4"), error: RooftopError(.disallowed, "object ACL")),
        ]
        add("push response", PushResponse(results: results), "PushResponse")
        add("pull", PullRequest(datastore: .app, since: Checkpoint("c:1042"), limit: 500, classes: ["GameScore"]), "PullRequest")
        add("first pull", PullRequest(datastore: try DatastoreID(".Xy3")), "PullRequest")
        let changes: [PullChange] = [
            .upsert(try snapshot), .upsert(minimalSnapshot),
            .tombstone(className: "GameScore", objectId: "abc", version: 7),
            .removal(className: "GameScore", objectId: "def"),
        ]
        add("pull page", PullResponse(changes: changes, checkpoint: Checkpoint("c:7"), hasMore: true, remaining: 12), "PullResponse")
        add("last pull page", PullResponse(changes: [], checkpoint: Checkpoint("c:8")), "PullResponse")
        let stores = [DatastoreID.app, try DatastoreID(".Xy3")]
        add("subscribe", LiveClientMessage.subscribe(datastores: stores, sessionToken: "r:9f8e"), "LiveClientMessage")
        add("anonymous subscribe", LiveClientMessage.subscribe(datastores: [], sessionToken: nil), "LiveClientMessage")
        add("unsubscribe", LiveClientMessage.unsubscribe(datastores: stores), "LiveClientMessage")
        add("subscribed", LiveServerMessage.subscribed(datastores: stores), "LiveServerMessage")
        add("changed", LiveServerMessage.changed(datastore: .app, sequence: 1043), "LiveServerMessage")
        add("live error", LiveServerMessage.error(RooftopError(.auth, "bad session"), datastore: nil), "LiveServerMessage")
        add(
            "live datastore error", LiveServerMessage.error(RooftopError(.notFound, "no"), datastore: .default),
            "LiveServerMessage")
    }

    private static func addQuerySamples(_ add: (String, any Encodable, String) -> Void) throws {
        add("query tree", QueryRequest.query(try query), "QueryRequest")
        add("bare query", QueryRequest.query(Query(className: "Note")), "QueryRequest")
        add(
            "query text",
            QueryRequest.text(className: "GameScore", text: "where score > ?", parameters: [.int(100), .double(0.5)]),
            "QueryRequest")
        add("query response", QueryResponse(objects: [try snapshot], totalCount: 42, included: [minimalSnapshot]), "QueryResponse")
        add("count", CountResponse(count: 3), "CountResponse")
        add("remove", RemoveRequest(query: .query(try query), limit: 10), "RemoveRequest")
        add("remove all", RemoveRequest(query: .text(className: "Note", text: "", parameters: []), limit: nil), "RemoveRequest")
        add("removed", RemoveResponse(removed: 2), "RemoveResponse")
    }

    private static func addAccountSamples(_ add: (String, any Encodable, String) -> Void) throws {
        let user = UserInfo(objectId: "u1", username: "ada", email: "ada@example.com", roles: ["B", "A"], createdAt: time)
        add("user", user, "UserInfo")
        add("bare user", UserInfo(objectId: "u2", username: "bob"), "UserInfo")
        add("session", Session(user: user, sessionToken: "r:9f8e", expiresAt: time), "Session")
        add("sign-up", SignUpRequest(username: "ada", password: "correct horse", email: "ada@example.com"), "SignUpRequest")
        add("log-in", LogInRequest(username: "ada", password: "correct horse"), "LogInRequest")
        var acl = ACL()
        acl.setReadAccess(true, for: .role("Admins"))
        add("role", RoleInfo(name: "Moderators", users: ["u2", "u1"], roles: ["Admins"], acl: acl), "RoleInfo")
        add("create role", CreateRoleRequest(name: "Team", users: ["u1"], roles: [], acl: acl), "CreateRoleRequest")
        add("update role", UpdateRoleRequest(addUsers: ["u3"], removeUsers: ["u1"], addRoles: ["A"]), "UpdateRoleRequest")
        let shareable = try DatastoreID(".Xy3")
        let info = DatastoreInfo(id: shareable, title: "Trip", owner: "u1", role: .editor, updatedAt: time)
        add("datastore", info, "DatastoreInfo")
        add("app datastore", DatastoreInfo(id: .app, owner: nil, role: .editor), "DatastoreInfo")
        add("datastore list", DatastoreList(datastores: [info]), "DatastoreList")
        add("create datastore", CreateDatastoreRequest(title: "Trip"), "CreateDatastoreRequest")
        add("untitled datastore", CreateDatastoreRequest(), "CreateDatastoreRequest")
        add("set role", SetRoleRequest(principal: .role("Team"), role: .none), "SetRoleRequest")
        add(
            "sharing",
            try DatastoreSharing(datastore: shareable, owner: "u1", roles: [.everyone: .viewer, .role("Team"): .editor]),
            "DatastoreSharing")
        add("app sharing", try DatastoreSharing(datastore: .app, owner: nil), "DatastoreSharing")
        let permissions = ClassPermissions(
            get: .everyone, find: PermissionRule(principals: [], requiresAuthentication: true),
            count: PermissionRule(principals: [.role("Staff"), .user("u1")]), create: .everyone,
            update: .everyone, delete: PermissionRule(), defaultACL: .explicit(acl))
        let rules = Dictionary(uniqueKeysWithValues: MergeRule.allCases.map { ("f\($0.rawValue)", $0) })
        add(
            "class settings",
            ClassSettings(
                className: "GameScore", permissions: permissions, mergeRules: rules,
                indexes: [["team", "score"], ["a", "b", "c", "d"]]),
            "ClassSettings")
        add("default class settings", ClassSettings(className: "Note"), "ClassSettings")
        add("server info", ServerInfo(version: "0.1.0", limits: Limits()), "ServerInfo")
        add("health", HealthStatus(status: "ok", version: "0.1.0"), "HealthStatus")
        add("error", RooftopError(.notFound, "no GameScore object abc"), "Error")
        add("parse error", RooftopError(.invalidQuery, "unexpected 'x'", field: "text", position: 12), "Error")
    }
}
