import Foundation
import PropertyBased
@testable import Rooftop
import RooftopShared
import Testing

/// ``RemoteAPI`` over a recording fake transport: what goes on the wire (headers, paths,
/// bodies) and how answers and error answers come back.
@Suite struct TransportRemoteAPITests {
    private let user = UserInfo(objectId: "u1", username: "ada", roles: ["admins"])

    private func api(
        token: String? = nil, _ responder: @escaping NetworkFakeTransport.Responder
    ) -> (RemoteAPI, NetworkFakeTransport) {
        let transport = NetworkFakeTransport(responder)
        let session = SessionTokenStore()
        session.set(token)
        return (RemoteAPI(transport: transport, appId: "my-app", session: session), transport)
    }

    // MARK: Headers

    @Test func everyRequestCarriesTheApplicationID() async throws {
        let (api, transport) = api { _ in .json(ServerInfo(version: "9.9")) }
        let info = try await api.info()
        #expect(info.version == "9.9")
        let request = try #require(transport.requests.first)
        #expect(request.method == "GET")
        #expect(request.path == "/v1/info")
        #expect(request.header("X-Rooftop-Application-Id") == "my-app")
        #expect(request.header("X-Rooftop-Session-Token") == nil)
        #expect(request.body == nil)
    }

    @Test func theSessionTokenIsSentOnlyWhenSignedIn() async throws {
        let (api, transport) = api(token: "r:secret") { _ in .json(DatastoreList(datastores: [])) }
        _ = try await api.datastores()
        #expect(transport.requests.first?.header("X-Rooftop-Session-Token") == "r:secret")
    }

    @Test func signUpAndLogInNeverSendAToken() async throws {
        let session = Session(user: user, sessionToken: "r:new", expiresAt: Timestamp(millisecondsSinceEpoch: 0))
        let (api, transport) = api(token: "r:stale") { _ in .json(session) }
        let signedUp = try await api.signUp(SignUpRequest(username: "ada", password: "correct horse"))
        let loggedIn = try await api.logIn(LogInRequest(username: "ada", password: "correct horse"))
        #expect(signedUp == session)
        #expect(loggedIn.sessionToken == "r:new")
        #expect(transport.requests.map(\.path) == ["/v1/users", "/v1/login"])
        for request in transport.requests {
            #expect(request.header("X-Rooftop-Session-Token") == nil)
            #expect(request.header("X-Rooftop-Application-Id") == "my-app")
        }
        let body = try transport.requests[0].decodeBody(SignUpRequest.self)
        #expect(body.username == "ada")
    }

    // MARK: Paths

    @Test func anEmptyNameOrIDIsRefusedBeforeAnythingIsSent() async throws {
        let (api, transport) = api { _ in .json(RoleInfo(name: "x", users: [], roles: [])) }
        let error = await #expect(throws: RooftopError.self) { try await api.role(named: "") }
        #expect(error?.code == .illegalArgument)
        let key = ObjectKey(datastore: .default, className: "Note", objectId: "")
        await #expect(throws: RooftopError.self) { try await api.operations(key, after: 1) }
        #expect(transport.requests.isEmpty)
        // Only the path counts: a query may hold anything.
        #expect(!APIOperation.hasEmptySegment("/v1/datastores/a/query?x=//"))
        #expect(APIOperation.hasEmptySegment("/v1/users//sessions") && APIOperation.hasEmptySegment("/v1/roles/"))
        #expect(!APIOperation.hasEmptySegment("/health") && !APIOperation.hasEmptySegment("/v1/push"))
    }

    @Test func objectPathsEscapeSlashPlusAndEquals() async throws {
        let snapshot = ObjectSnapshot(className: "Game+Score", objectId: "a/b+c=d", datastore: .default)
        let (api, transport) = api { _ in .json(ObjectWithIncludes(object: snapshot, included: [])) }
        let key = ObjectKey(datastore: .default, className: "Game+Score", objectId: "a/b+c=d")
        let found = try await api.object(key, includes: [["owner", "team"], ["a/b"]])
        #expect(found.object == snapshot)
        #expect(
            transport.requests.first?.path
                == "/v1/datastores/default/classes/Game%2BScore/objects/a%2Fb%2Bc%3Dd?include=owner.team,a%2Fb")
    }

    @Test func theAppDatastoreKeepsItsColon() async throws {
        let (api, transport) = api { _ in .json(OperationList(operations: [])) }
        let key = ObjectKey(datastore: .app, className: "Note", objectId: "x=")
        let operations = try await api.operations(key, after: 41)
        #expect(operations.isEmpty)
        #expect(transport.requests.first?.path == "/v1/datastores/:app/classes/Note/objects/x%3D/operations?after=41")
    }

    @Test func datastorePaths() async throws {
        let shareable = try DatastoreID(".Ab-c_9")
        let info = DatastoreInfo(id: shareable, owner: "u1", role: .owner)
        let (api, transport) = api { request in
            request.method == "DELETE" ? .text("", status: 204) : .json(info)
        }
        _ = try await api.openDatastore(shareable)
        try await api.deleteDatastore(shareable)
        _ = try await api.setRole(.editor, for: .user("u2"), on: shareable)
        #expect(transport.requests.map(\.method) == ["PUT", "DELETE", "PUT"])
        #expect(
            transport.requests.map(\.path) == [
                "/v1/datastores/.Ab-c_9", "/v1/datastores/.Ab-c_9", "/v1/datastores/.Ab-c_9/roles",
            ])
        let role = try transport.requests[2].decodeBody(SetRoleRequest.self)
        #expect(role.role == .editor)
        #expect(role.principal == .user("u2"))
    }

    @Test func escapedSegmentsDecodeBackAndUseOnlyUnreservedCharacters() async {
        let alphabet = Array("ABCXYZabcxyz0189.-_+/=:") as [Character]
        let id = Gen<Character?>.element(of: alphabet).map { $0 ?? "a" }.string(of: 1...64)
        await propertyCheck(count: 500, input: id) { id in
            let escaped = APIOperation.escape(id)
            #expect(escaped.removingPercentEncoding == id)
            #expect(!escaped.contains("/") && !escaped.contains("+") && !escaped.contains("="))
            #expect(escaped.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-._~:%".contains($0)) })
        }
    }

    @Test func nonASCIIIsPercentEncodedAsUTF8() {
        #expect(APIOperation.escape("é") == "%C3%A9")
        #expect(APIOperation.escape("a b?c#d") == "a%20b%3Fc%23d")
    }

    // MARK: Bodies and answers

    @Test func pushSendsTheMutationsAndDecodesTheResults() async throws {
        let mutation = Mutation(
            datastore: .default, className: "Counter", objectId: "c/1", baseVersion: 3,
            change: .update([FieldUpdate("n", .increment(.int(2)))], acl: nil))
        let object = ObjectSnapshot(className: "Counter", objectId: "c/1", datastore: .default, version: 4)
        let answer = PushResponse(results: [.applied(mutationId: mutation.mutationId, version: 4, object: object)])
        let (api, transport) = api(token: "r:t") { _ in .json(answer) }
        let response = try await api.push(PushRequest(mutations: [mutation]))
        #expect(response == answer)
        let request = try #require(transport.requests.first)
        #expect(request.method == "POST")
        #expect(request.path == "/v1/push")
        #expect(try request.decodeBody(PushRequest.self) == PushRequest(mutations: [mutation]))
        // Slashes in IDs are sent as they are, not as `\/`.
        let text = String(decoding: try #require(request.body), as: UTF8.self)
        #expect(text.contains("\"c/1\""))
    }

    @Test func listAnswersAreUnwrapped() async throws {
        let (api, _) = api { request in
            switch request.path {
            case "/v1/datastores/default/count": .json(CountResponse(count: 12))
            case "/v1/datastores/default/remove": .json(RemoveResponse(removed: 3))
            default: .text("", status: 404)
            }
        }
        let query = QueryRequest.query(Query("Game"))
        #expect(try await api.count(query, in: .default) == 12)
        #expect(try await api.remove(RemoveRequest(query: query, limit: 5), in: .default) == 3)
    }

    // MARK: Errors

    @Test func errorAnswersBecomeTheServersError() async {
        let sent = RooftopError(.disallowed, "you may not write here")
        let (api, _) = api { _ in
            TransportResponse(status: 403, body: (try? JSONEncoder().encode(sent)) ?? Data())
        }
        let error = await #expect(throws: RooftopError.self) { try await api.currentUser() }
        #expect(error == sent)
    }

    @Test func anUndecodableSuccessIsAResponseError() async {
        let (api, _) = api { _ in .text("{\"not\": \"info\"}", status: 200) }
        let error = await #expect(throws: RooftopError.self) { try await api.info() }
        #expect(error?.code == .response)
        #expect(error?.cause != nil)
    }

    @Test func aServerErrorWithoutBodyIsAServerError() async {
        let (api, _) = api { _ in .text("", status: 500) }
        let error = await #expect(throws: RooftopError.self) { try await api.logOut() }
        #expect(error?.code == .server)
    }

    @Test func transportFailuresPassThrough() async {
        let (api, transport) = api { _ throws(RooftopError) in
            throw RooftopError(.noConnection, "down")
        }
        let error = await #expect(throws: RooftopError.self) {
            try await api.pull(PullRequest(datastore: .default))
        }
        #expect(error?.code == .noConnection)
        #expect(transport.requests.count == 1)
    }

    @Test("a pull page naming an object by an invalid class name or object ID, or giving one a field by an invalid name, is refused as a whole")
    func pulledIdentifiersAreChecked() async throws {
        func page(_ changes: String) -> TransportResponse {
            .text(#"{"checkpoint":"c:1","hasMore":false,"changes":["# + changes + "]}", status: 200)
        }
        func object(_ className: String, _ objectId: String, fields: String = "{}") -> String {
            let datastore = DatastoreID.default.rawValue
            return #"{"kind":"upsert","object":{"className":"\#(className)","objectId":"\#(objectId)","#
                + #""datastore":"\#(datastore)","fields":\#(fields),"version":1}}"#
        }
        let removal = { (objectId: String) in #"{"kind":"removal","className":"Item","objectId":"\#(objectId)"}"# }
        let valid = page(
            object("Item", "a/b+c=d", fields: #"{"a.b-c_d+e/f=g":1,":kept":2}"#) + "," + object(":User", "u1") + ","
                + removal("x"))
        let (accepting, _) = api { _ in valid }
        #expect(try await accepting.pull(PullRequest(datastore: .default)).changes.map(\.objectId) == ["a/b+c=d", "u1", "x"])
        // A field whose name breaks the rules: the page is refused, whichever object has it.
        for fields in [#"{"a b":1}"#, #"{"":1}"#, #"{"x\u0000":1}"#, #"{"ok":1,"\#(String(repeating: "f", count: 65))":2}"#] {
            let answer = page(object("Item", "ok") + "," + object("Item", "bad", fields: fields))
            let (api, _) = api { _ in answer }
            let error = await #expect(throws: RooftopError.self, "\(fields)") { try await api.pull(PullRequest(datastore: .default)) }
            #expect(error?.code == .response, "\(fields)")
            #expect(error?.message.contains("object 1, Item/bad: ") == true, "\(String(describing: error))")
        }
        let refused = [
            object("Item", "a\\u0000b"), object("Item", "a b"), object("Item", ""), object(String(repeating: "C", count: 65), "x"),
            removal("x\\u0000"), removal(String(repeating: "x", count: 65)),
            object("Item", "ok") + "," + #"{"kind":"tombstone","className":"It em","objectId":"y","version":2}"#,
        ]
        for changes in refused {
            let answer = page(changes)
            let (api, _) = api { _ in answer }
            let error = await #expect(throws: RooftopError.self, "\(changes)") {
                try await api.pull(PullRequest(datastore: .default))
            }
            #expect(error?.code == .response, "\(changes)")
            #expect(error?.message.contains("invalid class name or object ID") == true, "\(String(describing: error))")
        }
    }

    @Test("a query's, a get's or a push's answer naming an object, or one of its fields, against the ID rules is refused")
    func answeredIdentifiersAreChecked() async throws {
        let good = ObjectSnapshot(className: "Game", objectId: "g/1", datastore: .default, fields: [":x": 1, "y": 2], version: 1)
        for bad in [
            ObjectSnapshot(className: "Game", objectId: "g\u{0}1", datastore: .default, version: 1),
            ObjectSnapshot(className: "Ga me", objectId: "g1", datastore: .default, version: 1),
            ObjectSnapshot(className: "Game", objectId: String(repeating: "g", count: 65), datastore: .default, version: 1),
            ObjectSnapshot(className: "Game", objectId: "g1", datastore: .default, fields: ["ok": 1, "a b": 2], version: 1),
            ObjectSnapshot(className: "Game", objectId: "g1", datastore: .default, fields: ["": 1], version: 1),
            ObjectSnapshot(
                className: "Game", objectId: "g1", datastore: .default, fields: [String(repeating: "f", count: 65): 1], version: 1),
        ] {
            let expected = bad.fields.isEmpty ? "invalid class name or object ID" : "a field with an invalid name"
            let answers: [(String, TransportResponse, @Sendable (RemoteAPI) async throws -> Void)] = [
                ("query", .json(QueryResponse(objects: [good, bad], totalCount: 2)), { api in
                    _ = try await api.query(.query(Query("Game")), in: .default)
                }),
                ("query's included", .json(QueryResponse(objects: [good], totalCount: 1, included: [bad])), { api in
                    _ = try await api.query(.query(Query("Game")), in: .default)
                }),
                ("get", .json(ObjectWithIncludes(object: bad, included: [])), { api in
                    _ = try await api.object(ObjectKey(good), includes: [])
                }),
                ("get's included", .json(ObjectWithIncludes(object: good, included: [bad])), { api in
                    _ = try await api.object(ObjectKey(good), includes: [["owner"]])
                }),
                ("push", .json(PushResponse(results: [.applied(mutationId: .generate(), version: 1, object: bad)])), { api in
                    _ = try await api.push(PushRequest(mutations: []))
                }),
            ]
            for (what, answer, request) in answers {
                let (api, _) = api { _ in answer }
                let error = await #expect(throws: RooftopError.self, "\(what): \(bad.objectId)") { try await request(api) }
                #expect(error?.code == .response, "\(what)")
                #expect(error?.message.contains(expected) == true, "\(what): \(String(describing: error))")
            }
        }
        // An object's operations, which a rebase writes into the local view.
        let key = ObjectKey(good)
        let valid = OperationRecord(
            version: 2, change: .update([FieldUpdate("score", .set(1)), FieldUpdate(":kept", .set(2))]), priorValues: ["score": 0])
        let (reading, _) = api { _ in .json(OperationList(operations: [valid])) }
        #expect(try await reading.operations(key, after: 1) == [valid])
        // Decoding refuses an update's invalid field name; a prior value's is refused by this
        // check alone.
        let (prior, _) = api { _ in
            .json(OperationList(operations: [OperationRecord(version: 3, change: .update([FieldUpdate("ok", .set(1))]), priorValues: ["a b": .some(0)])]))
        }
        let priorError = await #expect(throws: RooftopError.self) { try await prior.operations(key, after: 1) }
        #expect(
            priorError?.message.contains("changes a field with an invalid name (operation 0: \"a b\")") == true,
            "\(priorError?.message ?? "")")
        for bad in [
            OperationRecord(version: 3, change: .update([FieldUpdate("a b", .set(1))]), priorValues: [:]),
            OperationRecord(version: 3, change: .update([FieldUpdate("ok", .set(1))]), priorValues: ["": .some(1)]),
            OperationRecord(version: 3, change: .update([FieldUpdate(String(repeating: "f", count: 65), .unset)]), priorValues: [:]),
        ] {
            let (api, _) = api { _ in .json(OperationList(operations: [valid, bad])) }
            let error = await #expect(throws: RooftopError.self, "\(bad)") { try await api.operations(key, after: 1) }
            // Refused by this check, or already by decoding (which refuses some names itself).
            let message = error?.message ?? ""
            #expect(error?.code == .response, "\(message)")
            #expect(message.contains("operation 1: ") || message.hasSuffix("could not be read"), "\(message)")
        }
        // The same answers with valid names are read.
        let (api, _) = api { _ in .json(QueryResponse(objects: [good], totalCount: 1, included: [good])) }
        #expect(try await api.query(.query(Query("Game")), in: .default).objects == [good])
    }
}
