import Foundation
import RooftopShared
import Testing
import RooftopTestSupport

/// A push written by hand, as a client in another language would: a creation as plain `fields`.
@Suite("Push: plain fields", .sharedServer())
struct PushPlainFieldsTests {
    @Test("a mutation's plain fields create the object, then its operations apply, over the wire as written")
    func plainFields() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser()
        let id = "m-\(UUID().uuidString.prefix(13))"
        let body =
            #"{"mutations": [{"mutationId": "\#(id)", "datastore": ":app", "className": "Item", "objectId": "plain1", "change": {"fields": {"title": "Ada", "when": {"$date": 1700000000000}, "tags": ["a", "b"], "n": 1}, "update": [{"field": "n", "do": {"op": "increment", "amount": 2}}]}}]}"#
        let reply = try await client.send(.POST, "/v1/push", raw: Data(body.utf8), token: user.token)
        #expect(reply.status == 200, "\(reply.text)")
        let response = try reply.decode(PushResponse.self)
        let object = try #require(response.results.first?.appliedObject, "\(reply.text)")
        #expect(object.fields["title"] == "Ada")
        #expect(object.fields["tags"] == ["a", "b"])
        #expect(object.fields["n"] == 3)
        #expect(object.fields["when"] == .date(Timestamp(millisecondsSinceEpoch: 1_700_000_000_000)))

        // A field the app may not write is the mutation's refusal, as with an operation.
        let reserved =
            #"{"mutations": [{"mutationId": "m-\#(UUID().uuidString.prefix(13))", "datastore": ":app", "className": "Item", "objectId": "plain2", "change": {"fields": {"objectId": "x"}}}]}"#
        let refused = try await client.send(.POST, "/v1/push", raw: Data(reserved.utf8), token: user.token)
        #expect(refused.status == 200, "\(refused.text)")
        #expect(try refused.decode(PushResponse.self).results.first?.error?.code == .invalidOperation)
        // A name that is no identifier cannot even be read: the request is refused.
        let malformed =
            #"{"mutations": [{"mutationId": "m-\#(UUID().uuidString.prefix(13))", "datastore": ":app", "className": "Item", "objectId": "plain3", "change": {"fields": {"a b": 1}}}]}"#
        let bad = try await client.send(.POST, "/v1/push", raw: Data(malformed.utf8), token: user.token)
        Refusal.expect(bad, "a field name with a space", status: 400, code: .request)
        #expect(try await client.object(.app, className: "Item", objectId: "plain3", token: user.token) == nil)
    }
}
