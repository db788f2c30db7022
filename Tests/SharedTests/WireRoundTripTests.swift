import Foundation
import RooftopShared
import Testing

/// Encodes with sorted keys and decodes back.
func roundTrip<T: Codable>(_ value: T) throws -> (T, String) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    let data = try encoder.encode(value)
    return (try JSONDecoder().decode(T.self, from: data), String(decoding: data, as: UTF8.self))
}

@Suite("Wire types: Codable round trips")
struct WireRoundTripTests {
    static let snapshot = ObjectSnapshot(
        className: "GameScore", objectId: "obj1", datastore: .app,
        fields: ["score": 7, "ratio": 0.5, "tags": ["a", "b"], "when": .date(Timestamp(millisecondsSinceEpoch: 5))],
        acl: ACL([.everyone: .init(read: true), .user("u1"): .init(read: true, write: true)]),
        createdAt: Timestamp(millisecondsSinceEpoch: 1000), updatedAt: Timestamp(millisecondsSinceEpoch: 2000),
        version: 4, fieldVersions: ["score": 4, "tags": 2])
    static let mutation = Mutation(
        datastore: .app, className: "GameScore", objectId: "obj1", baseVersion: 3,
        change: .update(
            [FieldUpdate("score", .increment(1)), FieldUpdate("tags", .listMove(from: 0, to: 1))], acl: .only("u1")))

    @Test func pushTypes() throws {
        let blind = Mutation(datastore: .default, className: "Note", objectId: "n1", change: .delete)
        let request = PushRequest(mutations: [Self.mutation, blind])
        let (decoded, text) = try roundTrip(request)
        #expect(decoded == request)
        #expect(decoded.mutations[1].baseVersion == nil)
        #expect(!text.contains("null"))  // nil members are left out, not null
        let response = PushResponse(results: [
            .applied(mutationId: Self.mutation.mutationId, version: 4, object: Self.snapshot),
            .applied(mutationId: blind.mutationId, version: 9, object: nil),
            .rejected(
                mutationId: try MutationID("m3"), error: RooftopError(.disallowed, "object ACL: no", field: "score")),
        ])
        #expect(try roundTrip(response).0 == response)
        #expect(response.result(for: blind.mutationId)?.isApplied == true)
        #expect(response.result(for: try MutationID("m3"))?.error?.code == .disallowed)
    }

    @Test func pullTypes() throws {
        let request = PullRequest(datastore: .app, since: Checkpoint("c:9"), limit: 50, classes: ["GameScore"])
        #expect(try roundTrip(request).0 == request)
        let initial = PullRequest(datastore: try DatastoreID(".Shared_1"))
        let (decoded, text) = try roundTrip(initial)
        #expect(decoded == initial)
        #expect(text == #"{"datastore":".Shared_1"}"#)
        let response = PullResponse(
            changes: [
                .upsert(Self.snapshot), .tombstone(className: "T", objectId: "o", version: 3),
                .removal(className: "T", objectId: "p"),
            ],
            checkpoint: Checkpoint("c:10"), hasMore: false, remaining: nil)
        #expect(try roundTrip(response).0 == response)
        #expect(response.changes.map(\.objectId) == ["obj1", "o", "p"])
    }

    @Test func authTypes() throws {
        let signUp = SignUpRequest(username: "ada", password: "correct horse", email: "ada@example.com")
        #expect(try roundTrip(signUp).0 == signUp)
        let logIn = LogInRequest(username: "ada", password: "correct horse")
        #expect(try roundTrip(logIn).0 == logIn)
        let user = UserInfo(
            objectId: "u1", username: "ada", email: nil, roles: ["Staff", "Admins", "Staff"],
            createdAt: Timestamp(millisecondsSinceEpoch: 7))
        #expect(user.roles == ["Admins", "Staff"])
        #expect(try roundTrip(user).0 == user)
        let session = Session(
            user: user, sessionToken: "r:secret-token", expiresAt: Timestamp(millisecondsSinceEpoch: 1_000))
        #expect(try roundTrip(session).0 == session)
        #expect(!session.description.contains("secret-token"))
        #expect(session.isExpired(at: Timestamp(millisecondsSinceEpoch: 1_000)))
        #expect(!session.isExpired(at: Timestamp(millisecondsSinceEpoch: 999)))
        #expect(user.accessContext.holds(.role("Staff")))
    }

    @Test func roleTypes() throws {
        let create = CreateRoleRequest(name: "Moderators", users: ["u1"], roles: ["Admins"], acl: .only("u1"))
        #expect(try roundTrip(create).0 == create)
        let minimal = try JSONDecoder().decode(CreateRoleRequest.self, from: Data(#"{"name":"Team"}"#.utf8))
        #expect(minimal == CreateRoleRequest(name: "Team"))
        let update = UpdateRoleRequest(addUsers: ["u2"], removeUsers: ["u1"], addRoles: ["X"], removeRoles: ["Admins"])
        #expect(try roundTrip(update).0 == update)
        #expect(try JSONDecoder().decode(UpdateRoleRequest.self, from: Data("{}".utf8)) == UpdateRoleRequest())
        let role = RoleInfo(name: "Moderators", users: ["u1", "u3"], roles: ["Admins"])
        #expect(try roundTrip(role).0 == role)
        #expect(update.applied(to: role) == RoleInfo(name: "Moderators", users: ["u2", "u3"], roles: ["X"]))
    }

    @Test func datastoreAndPermissionTypes() throws {
        let info = DatastoreInfo(
            id: try DatastoreID(".trip"), title: "Trip", owner: "u1", role: .editor,
            updatedAt: Timestamp(millisecondsSinceEpoch: 3))
        #expect(try roundTrip(info).0 == info)
        #expect(info.kind == .shareable && info.isWritable)
        let app = DatastoreInfo(id: .app, owner: nil, role: .editor)
        #expect(try roundTrip(app).1 == #"{"id":":app","kind":"app","role":"editor"}"#)
        let create = CreateDatastoreRequest(title: "Trip")
        #expect(try roundTrip(create).0 == create)
        let setRole = SetRoleRequest(principal: .role("Team"), role: .viewer)
        let (decodedRole, text) = try roundTrip(setRole)
        #expect(decodedRole == setRole)
        #expect(text == #"{"principal":"role:Team","role":"viewer"}"#)
        let permissions = ClassPermissionsRequest(
            className: "GameScore",
            permissions: ClassPermissions(find: .authenticated, delete: .nobody, defaultACL: .publicReadCreatorWrite))
        #expect(try roundTrip(permissions).0 == permissions)
    }

    @Test func liveAndServerTypes() throws {
        let messages: [LiveClientMessage] = [
            .subscribe(datastores: [.app, .default], sessionToken: "r:t"),
            .subscribe(datastores: [.app], sessionToken: nil),
            .unsubscribe(datastores: [.default]),
        ]
        for message in messages { #expect(try roundTrip(message).0 == message) }
        let serverMessages: [LiveServerMessage] = [
            .subscribed(datastores: [.app]),
            .changed(datastore: .app, sequence: 1),
            .error(RooftopError(.auth, "session expired"), datastore: nil),
            .error(RooftopError(.disallowed, "no access"), datastore: .default),
        ]
        for message in serverMessages { #expect(try roundTrip(message).0 == message) }
        #expect(
            try roundTrip(LiveServerMessage.changed(datastore: .app, sequence: 1)).1
                == #"{"datastore":":app","sequence":1,"type":"changed"}"#)
        let info = ServerInfo(version: "0.1.0")
        #expect(try roundTrip(info).0 == info)
        #expect(info.protocolVersion == 1)
        // The body of every error response is the error itself.
        let error = RooftopError(.sizeLimit, "too big", field: "score")
        #expect(try roundTrip(error).0 == error)
        #expect(try roundTrip(error).1 == #"{"code":"sizeLimit","field":"score","message":"too big"}"#)
    }
}
