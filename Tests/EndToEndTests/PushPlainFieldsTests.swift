import Foundation
import RooftopShared
import Testing
import RooftopTestSupport

/// A push written by hand, as a client in another language would: a creation as plain `fields`,
/// and compact answers.
@Suite("Push: plain fields and compact answers", .sharedServer())
struct PushPlainFieldsTests {
    @Test("a mutation's plain fields create the object, then its operations apply, over the wire as written")
    func plainFields() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser()
        let id = "m-\(UUID().uuidString.prefix(13))"
        let body =
            #"{"mutations": [{"mutationId": "\#(id)", "datastore": ":app", "className": "Item", "objectId": "plain1", "change": {"fields": {"title": "Ada", "when": {"$date": 1700000000000}, "tags": ["a", "b"], "n": 1}, "update": [{"field": "n", "do": {"op": "increment", "amount": 2}}]}}]}"#
        let reply = try await client.send(API.push, raw: Data(body.utf8), token: user.token)
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
        let refused = try await client.send(API.push, raw: Data(reserved.utf8), token: user.token)
        #expect(refused.status == 200, "\(refused.text)")
        #expect(try refused.decode(PushResponse.self).results.first?.error?.code == .invalidOperation)
        // A name that is no identifier cannot even be read: the request is refused.
        let malformed =
            #"{"mutations": [{"mutationId": "m-\#(UUID().uuidString.prefix(13))", "datastore": ":app", "className": "Item", "objectId": "plain3", "change": {"fields": {"a b": 1}}}]}"#
        let bad = try await client.send(API.push, raw: Data(malformed.utf8), token: user.token)
        Refusal.expect(bad, "a field name with a space", status: 400, code: .request)
        #expect(try await client.object(.app, className: "Item", objectId: "plain3", token: user.token) == nil)
    }

    @Test("a compact push is answered with versions and merges, no objects, also when retried")
    func compactAnswers() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser()
        let create = Mutations.create(.app, "Counter", "compact1", fields: ["n": 0])
        let created = try await client.push(create, token: user.token)
        let base = try #require(created.appliedVersion)
        let other = Mutations.update(.app, "Counter", "compact1", base: base, [FieldUpdate("n", .increment(1))])
        _ = try await client.push(other, token: user.token)
        // Based on the creation, so merged with `other`: the merge decisions stay in the answer.
        let mine = Mutations.update(.app, "Counter", "compact1", base: base, [FieldUpdate("n", .set(5))])
        let refused = Mutations.create(.app, "Counter", "bad id", fields: ["n": 0])
        let request = PushRequest(mutations: [mine, refused], compact: true)
        for attempt in ["first", "retry"] {
            let reply = try await client.send(API.push, body: request, token: user.token)
            #expect(reply.status == 200, "\(reply.text)")
            #expect(!reply.text.contains("\"object\""), "\(attempt): \(reply.text)")
            let results = try reply.decode(PushResponse.self).results
            guard case .applied(_, let version, nil, let merges)? = results.first else {
                Issue.record("\(attempt): \(results)")
                continue
            }
            #expect(version > base)  // the remote increment won (default rule): the version it made
            #expect(!merges.isEmpty, "\(attempt)")
            #expect(results.last?.error?.code == .illegalArgument)
        }
        // The full answer to the same mutation ID carries the object again.
        let full = try await client.push([mine], token: user.token)
        #expect(full.results.first?.appliedObject?.fields["n"] != nil)
    }
}
