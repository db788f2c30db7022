import Foundation
import Hummingbird
import HummingbirdTesting
@testable import RooftopServer
import RooftopShared
import Testing

/// Real requests through the router: every answer, success or error, must be documented for its
/// operation and status, and its body must validate against the documented schema.
@Suite("OpenAPI exchanges")
struct OpenAPIExchangeTests {
    @Test("answers to requests on every operation match the document")
    func answersMatchTheDocument() async throws {
        // A small body limit, so that a too-large body is cheap to send.
        let records = try await OpenAPITestServer.with(configure: { $0.limits.maxRequestBodyBytes = 256 * 1024 }) { server in
            try await Application(router: server.router()).test(.router) { client in
                var session = OpenAPIExchangeSession(client: client)
                let token = try await accounts(&session)
                let shareable = try await datastores(&session, token: token)
                try await objects(&session, token: token)
                try await sync(&session, token: token, shareable: shareable)
                try await session.send(
                    .delete, "/v1/datastores/\(shareable)", template: "/v1/datastores/{datastore}",
                    headers: OpenAPIExchangeSession.headers(token: token), expect: .noContent)
                try await session.send(
                    .post, "/v1/logout", template: "/v1/logout", headers: OpenAPIExchangeSession.headers(token: token),
                    expect: .noContent)
                try await session.send(
                    .get, "/v1/users/me", template: "/v1/users/me", headers: OpenAPIExchangeSession.headers(token: token),
                    expect: .unauthorized)
                // Not upgraded (no upgrade headers): the router answers, after authentication.
                try await session.send(
                    .get, "/v1/live", template: "/v1/live", headers: OpenAPIExchangeSession.headers(appId: nil),
                    expect: .unauthorized)
                try await session.send(.get, "/v1/live", template: "/v1/live", expect: .badRequest)
                return session.records
            }
        }
        let covered = Set(records.compactMap { record -> String? in
            if case .response(let method, let path, _, _, _) = record.check { return "\(method.uppercased()) \(path)" }
            return nil
        })
        let documented = try OpenAPITestSupport.documentedOperations()
        #expect(covered == documented.routes.union(documented.webSockets).subtracting(["GET /metrics"]))
        var checker = OpenAPISchemaChecker()
        for record in records { checker.add(record.label, record.check) }
        let failures = try await checker.failures()
        #expect(failures.isEmpty, "\(failures.count) answers differ from the document:\n\(failures.joined(separator: "\n"))")
    }

    @Test("the metrics endpoint answers with the documented media type")
    func metrics() async throws {
        try await OpenAPITestServer.with { server in
            try await Application(router: server.router()).test(.router) { client in
                try await client.execute(uri: "/metrics", method: .get) { response in
                    #expect(response.status == .ok)
                    let documented = OpenAPITestSupport.member(
                        try OpenAPITestSupport.document(), "paths", "/metrics", "get", "responses", "200", "content")
                    guard case .object(let content)? = documented, let type = content.keys.first else {
                        Issue.record("no documented media type for /metrics")
                        return
                    }
                    #expect(response.headers[.contentType] == type)
                }
            }
        }
    }

    /// Operations, sign-up, log-in (and its failures), roles and classes; returns a session token.
    private func accounts(_ session: inout OpenAPIExchangeSession) async throws -> String {
        let admin = OpenAPIExchangeSession.headers(admin: true)
        try await session.send(.get, "/health", template: "/health", headers: [:], expect: .ok)
        try await session.send(.get, "/openapi.json", template: "/openapi.json", headers: [:], expect: .ok)
        try await session.send(
            .get, "/openapi.yaml", template: "/openapi.yaml", headers: [:], expect: .ok, mediaType: "application/yaml")
        try await session.send(.get, "/v1/info", template: "/v1/info", headers: [:], expect: .unauthorized)
        try await session.send(.get, "/v1/info", template: "/v1/info", expect: .ok)
        let signUp = SignUpRequest(username: "ada", password: "correct horse", email: "ada@example.com")
        let created = try await session.send(Session.self, .post, "/v1/users", template: "/v1/users", body: signUp, expect: .created)
        try await session.send(.post, "/v1/users", template: "/v1/users", body: signUp, expect: .conflict)
        try await session.send(
            .post, "/v1/users", template: "/v1/users", body: SignUpRequest(username: "bob", password: "short"),
            expect: .badRequest)
        try await session.send(.post, "/v1/users", template: "/v1/users", body: #"{"username": 1}"#, expect: .badRequest)
        let other = SignUpRequest(username: "eve", password: "correct horse")
        _ = try await session.send(Session.self, .post, "/v1/users", template: "/v1/users", body: other, expect: .created)
        let login = try await session.send(
            Session.self, .post, "/v1/login", template: "/v1/login",
            body: LogInRequest(username: "eve", password: "correct horse"), expect: .ok)
        let user = OpenAPIExchangeSession.headers(token: created.sessionToken)
        try await session.send(.get, "/v1/users/me", template: "/v1/users/me", headers: user, expect: .ok)
        try await session.send(.get, "/v1/users/me", template: "/v1/users/me", expect: .unauthorized)

        // The creator may read and change the role; eve (the other user) may only read it.
        let roleACL = ACL([
            .user(created.user.objectId): ACL.Access(read: true, write: true),
            .user(login.user.objectId): ACL.Access(read: true),
        ])
        let role = CreateRoleRequest(name: "Team", users: [created.user.objectId, login.user.objectId], acl: roleACL)
        // Only the admin key creates roles until it opens the create permission of class `:Role`.
        try await session.send(.post, "/v1/roles", template: "/v1/roles", headers: user, body: role, expect: .forbidden)
        try await session.send(.get, "/v1/classes/:Role", template: "/v1/classes/{className}", expect: .ok)
        let roleMakers = ClassPermissionsRequest(className: ":Role", permissions: ClassPermissions(create: .authenticated))
        try await session.send(
            .put, "/v1/classes/:Role", template: "/v1/classes/{className}", headers: admin, body: roleMakers, expect: .ok)
        try await session.send(.post, "/v1/roles", template: "/v1/roles", headers: user, body: role, expect: .created)
        try await session.send(.post, "/v1/roles", template: "/v1/roles", headers: user, body: role, expect: .conflict)
        try await session.send(.post, "/v1/roles", template: "/v1/roles", body: CreateRoleRequest(name: "X"), expect: .unauthorized)
        try await session.send(.get, "/v1/roles/Team", template: "/v1/roles/{name}", headers: user, expect: .ok)
        try await session.send(.get, "/v1/roles/Team", template: "/v1/roles/{name}", expect: .notFound)
        try await session.send(.get, "/v1/roles/Nobody", template: "/v1/roles/{name}", expect: .notFound)
        let change = UpdateRoleRequest(removeUsers: [login.user.objectId])
        try await session.send(.patch, "/v1/roles/Team", template: "/v1/roles/{name}", headers: user, body: change, expect: .ok)
        try await expectRequestError(
            session.send(
                .patch, "/v1/roles/Team", template: "/v1/roles/{name}", headers: user,
                body: #"{"addUser": ["nobody"]}"#, expect: .badRequest))
        let eve = OpenAPIExchangeSession.headers(token: login.sessionToken)
        try await session.send(.patch, "/v1/roles/Team", template: "/v1/roles/{name}", headers: eve, body: change, expect: .forbidden)
        try await session.send(.post, "/v1/roles", template: "/v1/roles", headers: admin, body: CreateRoleRequest(name: "Gone"), expect: .created)
        try await session.send(.delete, "/v1/roles/Gone", template: "/v1/roles/{name}", headers: admin, expect: .noContent)

        let settings = ClassSettings(
            className: "GameScore", permissions: ClassPermissions(delete: PermissionRule(principals: [.role("Team")])),
            mergeRules: ["score": .sum], indexes: [["team", "score"], ["score"]])
        try await session.send(.get, "/v1/classes/GameScore", template: "/v1/classes/{className}", expect: .ok)
        try await session.send(.get, "/v1/classes/:bad", template: "/v1/classes/{className}", expect: .badRequest)
        try await session.send(.put, "/v1/classes/GameScore", template: "/v1/classes/{className}", headers: admin, body: settings, expect: .ok)
        try await expectRequestError(
            session.send(
                .put, "/v1/classes/GameScore", template: "/v1/classes/{className}", headers: admin,
                body: #"{"mergeRule": {"score": "max"}}"#, expect: .badRequest))
        // Indexes of too many fields, a field twice, an invalid field name, one declared twice.
        for indexes in [#"[["a", "b", "c", "d", "e"]]"#, #"[["a", "a"]]"#, #"[["a b"]]"#, #"[["a"], ["a"]]"#, #"[[]]"#] {
            let refused = try await session.send(
                .put, "/v1/classes/GameScore", template: "/v1/classes/{className}", headers: admin,
                body: #"{"indexes": \#(indexes)}"#, expect: .badRequest)
            let error = try JSONDecoder().decode(RooftopError.self, from: refused)
            #expect(error.code == .illegalArgument && error.field == "indexes" || error.field == "a b", "\(indexes): \(error)")
        }
        try await session.send(.put, "/v1/classes/GameScore", template: "/v1/classes/{className}", headers: user, body: settings, expect: .forbidden)

        // Users, administered with the admin key (eve's sessions end; ada's token is returned).
        let users = "/v1/users"
        let page = try await session.send(UserList.self, .get, users + "?limit=1", template: users, headers: admin, expect: .ok)
        #expect(page.users.map(\.username) == ["ada"] && page.next == "ada")
        try await session.send(.get, users + "?after=ada", template: users, headers: admin, expect: .ok)
        try await session.send(.get, users + "?limit=0", template: users, headers: admin, expect: .badRequest)
        try await session.send(.get, users, template: users, headers: user, expect: .forbidden)
        let eveId = login.user.objectId
        try await session.send(.get, "\(users)/\(eveId)", template: "/v1/users/{userId}", headers: admin, expect: .ok)
        try await session.send(.get, "\(users)/nobody", template: "/v1/users/{userId}", headers: admin, expect: .notFound)
        try await session.send(.get, "\(users)/\(eveId)", template: "/v1/users/{userId}", headers: user, expect: .forbidden)
        let sessions = "/v1/users/{userId}/sessions"
        let listed = try await session.send(
            SessionList.self, .get, "\(users)/\(eveId)/sessions", template: sessions, headers: admin, expect: .ok)
        #expect(listed.sessions.count == 2, "eve signed up and logged in")
        try await session.send(.get, "\(users)/nobody/sessions", template: sessions, headers: admin, expect: .notFound)
        let revoked = try await session.send(
            RevokedSessions.self, .delete, "\(users)/\(eveId)/sessions", template: sessions, headers: admin, expect: .ok)
        #expect(revoked.revoked == 2)
        try await session.send(.get, "/v1/users/me", template: "/v1/users/me", headers: eve, expect: .unauthorized)
        let password = "/v1/users/{userId}/password"
        try await session.send(
            .put, "\(users)/\(eveId)/password", template: password, headers: admin,
            body: SetPasswordRequest(password: "new correct horse"), expect: .noContent)
        try await session.send(
            .put, "\(users)/\(eveId)/password", template: password, headers: admin,
            body: SetPasswordRequest(password: "short"), expect: .badRequest)
        try await session.send(
            .put, "\(users)/nobody/password", template: password, headers: admin,
            body: SetPasswordRequest(password: "new correct horse"), expect: .notFound)
        try await session.send(
            .post, "/v1/login", template: "/v1/login", body: LogInRequest(username: "eve", password: "new correct horse"),
            expect: .ok)
        // Last of the log-ins: the failures throttle this client's (in-process: unknown) address.
        let wrong = LogInRequest(username: "ada", password: "wrong password")
        for _ in 0..<5 {
            try await session.send(.post, "/v1/login", template: "/v1/login", body: wrong, expect: .unauthorized)
        }
        try await session.send(.post, "/v1/login", template: "/v1/login", body: wrong, expect: .tooManyRequests)
        return created.sessionToken
    }

    /// Datastores: create, list, open, share; returns the shareable datastore's ID.
    private func datastores(_ session: inout OpenAPIExchangeSession, token: String) async throws -> String {
        let user = OpenAPIExchangeSession.headers(token: token)
        let single = "/v1/datastores/{datastore}"
        let info = try await session.send(
            DatastoreInfo.self, .post, "/v1/datastores", template: "/v1/datastores", headers: user,
            body: CreateDatastoreRequest(title: "Trip"), expect: .created)
        try await session.send(
            .post, "/v1/datastores", template: "/v1/datastores", headers: user,
            body: CreateDatastoreRequest(title: String(repeating: "x", count: 1001)), expect: .badRequest)
        try await session.send(.post, "/v1/datastores", template: "/v1/datastores", body: CreateDatastoreRequest(), expect: .unauthorized)
        try await expectRequestError(
            session.send(
                .post, "/v1/datastores", template: "/v1/datastores", headers: user, body: #"{"titel": "Trip"}"#,
                expect: .badRequest))
        try await session.send(.get, "/v1/datastores", template: "/v1/datastores", headers: user, expect: .ok)
        try await session.send(.put, "/v1/datastores/default", template: single, headers: user, expect: .ok)
        try await session.send(.put, "/v1/datastores/Bad!", template: single, headers: user, expect: .badRequest)
        try await session.send(.get, "/v1/datastores/\(info.id)", template: single, headers: user, expect: .ok)
        try await session.send(.get, "/v1/datastores/.missing", template: single, headers: user, expect: .notFound)
        try await session.send(.get, "/v1/datastores/:app", template: single, expect: .ok)
        try await session.send(.delete, "/v1/datastores/:app", template: single, headers: user, expect: .forbidden)
        try await session.send(.get, "/v1/datastores/\(info.id)/roles", template: "\(single)/roles", headers: user, expect: .ok)
        try await session.send(
            .put, "/v1/datastores/\(info.id)/roles", template: "\(single)/roles", headers: user,
            body: SetRoleRequest(principal: .role("Team"), role: .editor), expect: .ok)
        try await session.send(
            .put, "/v1/datastores/\(info.id)/roles", template: "\(single)/roles", headers: user,
            body: #"{"principal": "*", "role": "admin"}"#, expect: .badRequest)
        return info.id.rawValue
    }

    /// Checks that an error body carries the `request` code that unknown keys get everywhere.
    private func expectRequestError(_ body: Data, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let error = try JSONDecoder().decode(RooftopError.self, from: body)
        #expect(error.code == .request, "\(error)", sourceLocation: sourceLocation)
        #expect(error.message.contains("unexpected key"), "\(error)", sourceLocation: sourceLocation)
    }
}
