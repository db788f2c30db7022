import Foundation
import Hummingbird
import HummingbirdTesting
@testable import RooftopServer
import RooftopShared
import Testing

extension OpenAPIExchangeTests {
    /// Objects over REST and queries, in `:app`.
    func objects(_ session: inout OpenAPIExchangeSession, token: String) async throws {
        let user = OpenAPIExchangeSession.headers(token: token)
        let objects = "/v1/datastores/:app/classes/GameScore/objects"
        let objectsTemplate = "/v1/datastores/{datastore}/classes/{className}/objects"
        let object = "\(objectsTemplate)/{objectId}"
        let author = #"{"objectId": "a1", "fields": {"name": "Ada"}, "acl": {"*": {"read": true}}}"#
        try await session.send(
            .post, "/v1/datastores/:app/classes/Author/objects", template: objectsTemplate, headers: user, body: author,
            expect: .created)
        let score = #"{"objectId": "o1", "fields": {"score": 10, "author": {"$pointer": {"className": "Author", "objectId": "a1"}}, "ratio": {"$double": "0.5"}}}"#
        try await session.send(.post, objects, template: objectsTemplate, headers: user, body: score, expect: .created)
        try await session.send(.post, objects, template: objectsTemplate, headers: user, body: "[]", expect: .badRequest)
        try await session.send(
            .post, objects, template: objectsTemplate, body: #"{"fields": {"score": 1}}"#, expect: .forbidden)
        try await session.send(.get, "\(objects)/o1?include=author", template: object, headers: user, expect: .ok)
        try await session.send(.get, "\(objects)/nope", template: object, headers: user, expect: .notFound)
        try await session.send(.get, "\(objects)/:bad", template: object, headers: user, expect: .badRequest)
        let increment = #"{"update": [{"field": "score", "do": {"op": "increment", "amount": 5}}], "baseVersion": 1}"#
        try await session.send(.patch, "\(objects)/o1", template: object, headers: user, body: increment, expect: .ok)
        // Based on version 1 again: merged with the first increment by the class's `sum` rule.
        try await session.send(.patch, "\(objects)/o1", template: object, headers: user, body: increment, expect: .ok)
        let badIndex = #"{"update": [{"field": "score", "do": {"op": "listRemove", "index": 0}}]}"#
        try await session.send(.patch, "\(objects)/o1", template: object, headers: user, body: badIndex, expect: .badRequest)
        let huge = #"{"fields": {"blob": "\#(String(repeating: "x", count: 300 * 1024))"}}"#
        try await session.send(.patch, "\(objects)/o1", template: object, headers: user, body: huge, expect: .contentTooLarge)
        try await session.send(.get, "\(objects)/o1/operations?after=1", template: "\(object)/operations", headers: user, expect: .ok)
        try await session.send(.get, "\(objects)/o1/operations?after=x", template: "\(object)/operations", headers: user, expect: .badRequest)

        let query = "/v1/datastores/:app/query"
        let queryTemplate = "/v1/datastores/{datastore}/query"
        let tree = QueryRequest.query(
            Query(className: "GameScore", predicate: .comparison(field: "score", op: .greater, value: .int(1)),
                  includes: [["author"]]))
        try await session.send(.post, query, template: queryTemplate, headers: user, body: tree, expect: .ok)
        let text = QueryRequest.text(className: "GameScore", text: "where score > ? order by score desc", parameters: [.int(1)])
        try await session.send(.post, query, template: queryTemplate, headers: user, body: text, expect: .ok)
        try await session.send(
            .post, query, template: queryTemplate, headers: user,
            body: QueryRequest.text(className: "GameScore", text: "where score >", parameters: []), expect: .badRequest)
        try await session.send(
            .post, "/v1/datastores/.missing/query", template: queryTemplate, headers: user, body: tree, expect: .notFound)
        try await session.send(
            .post, "/v1/datastores/:app/count", template: "/v1/datastores/{datastore}/count", headers: user, body: tree,
            expect: .ok)
        let remove = RemoveRequest(query: .query(Query(className: "Author")), limit: 1)
        try await session.send(
            .post, "/v1/datastores/:app/remove", template: "/v1/datastores/{datastore}/remove", headers: user, body: remove,
            expect: .ok)
        try await session.send(.delete, "\(objects)/o1", template: object, expect: .forbidden)
        try await session.send(.delete, "\(objects)/o1", template: object, headers: user, expect: .noContent)
        try await session.send(.get, "\(objects)/o1", template: object, headers: user, expect: .notFound)
    }

    /// Push and pull.
    func sync(_ session: inout OpenAPIExchangeSession, token: String, shareable: String) async throws {
        let user = OpenAPIExchangeSession.headers(token: token)
        let mutations = [
            Mutation(
                datastore: .app, className: "GameScore", objectId: "p1",
                change: .update([FieldUpdate("score", .set(.int(3)))])),
            Mutation(datastore: .app, className: ":Reserved", objectId: "p2", change: .update([])),
            Mutation(datastore: .app, className: "GameScore", objectId: "p1", change: .delete),
        ]
        try await session.send(.post, "/v1/push", template: "/v1/push", headers: user, body: PushRequest(mutations: mutations), expect: .ok)
        try await session.send(.post, "/v1/push", template: "/v1/push", headers: user, body: #"{"mutations": "x"}"#, expect: .badRequest)
        let many = (0..<501).map { index in
            Mutation(datastore: .app, className: "GameScore", objectId: "m\(index)", change: .update([]))
        }
        try await session.send(
            .post, "/v1/push", template: "/v1/push", headers: user, body: PushRequest(mutations: many), expect: .contentTooLarge)
        try await session.send(.post, "/v1/pull", template: "/v1/pull", headers: user, body: PullRequest(datastore: .app), expect: .ok)
        try await session.send(
            .post, "/v1/pull", template: "/v1/pull", headers: user,
            body: PullRequest(datastore: .app, since: Checkpoint("nope")), expect: .badRequest)
        try await session.send(
            .post, "/v1/pull", template: "/v1/pull", body: PullRequest(datastore: try DatastoreID(shareable)),
            expect: .notFound)
        try await session.send(.post, "/v1/pull", template: "/v1/pull", body: PullRequest(datastore: .default), expect: .unauthorized)
    }
}
