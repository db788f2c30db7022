import Foundation
import RooftopShared
import Testing

/// Hostile input: every malformed, mistyped, oversized or malicious request gets a 4xx with a
/// `{code, message}` body (a push may instead reject each mutation), never a 500, and nothing is
/// written: afterwards each test's datastore holds exactly what it seeded.
@Suite("Hostile input: refused with a clear error, nothing written", .sharedServer())
struct HostileInputTests {
    /// A user with a seeded datastore `target`, and the state to compare with at the end.
    struct Target {
        var user: TestUser
        var datastore: DatastoreID
        var state: [String: Int64]
        var datastores: Set<String>
    }

    func target(_ client: APIClient) async throws -> Target {
        let user = try await client.newUser("hostile")
        let datastore = try DatastoreID("target")
        _ = try await client.push(
            [
                Mutations.create(datastore, "Item", "one", fields: ["n": 1, "s": "a"]),
                Mutations.create(datastore, "Item", "two", fields: ["n": 2, "s": "b"]),
                Mutations.create(datastore, "Other", "three", fields: ["tags": ["x"]]),
            ], token: user.token)
        return Target(
            user: user, datastore: datastore, state: try await client.feedState(datastore, token: user.token),
            datastores: try await client.datastoreIDs(token: user.token))
    }

    /// Nothing was written: the feed and the datastore list are as seeded.
    func expectUnchanged(
        _ target: Target, _ client: APIClient, sourceLocation: SourceLocation = #_sourceLocation
    )
        async throws
    {
        let state = try await client.feedState(target.datastore, token: target.user.token)
        #expect(state == target.state, "the datastore changed", sourceLocation: sourceLocation)
        #expect(state.count == 3, sourceLocation: sourceLocation)
        let datastores = try await client.datastoreIDs(token: target.user.token)
        #expect(datastores == target.datastores, "datastores appeared", sourceLocation: sourceLocation)
        let (server, _) = try SharedServer.require()
        #expect(
            !server.log.contains("request failed"), "the server logged an internal error:\n\(server.log)",
            sourceLocation: sourceLocation)
    }

    /// The endpoints that read a JSON body, for a user's `target` datastore.
    static let bodyEndpoints: [(HTTPMethodName, String)] = [
        (.post, "/v1/push"), (.post, "/v1/pull"), (.post, "/v1/datastores/target/query"),
        (.post, "/v1/datastores/target/count"), (.post, "/v1/datastores/target/remove"),
        (.post, "/v1/datastores/target/classes/Item/objects"),
        (.patch, "/v1/datastores/target/classes/Item/objects/one"),
        (.post, "/v1/users"), (.post, "/v1/login"), (.post, "/v1/roles"), (.post, "/v1/datastores"),
    ]

    @Test("malformed, empty and non-JSON bodies are refused on every endpoint that reads a body")
    func malformedBodies() async throws {
        let (_, client) = try SharedServer.require()
        let target = try await target(client)
        let bodies: [(String, Data)] = [
            ("empty", Data()),
            ("text", Data("not json".utf8)),
            ("open brace", Data("{".utf8)),
            ("unclosed array", Data(#"{"mutations": ["#.utf8)),
            ("bad member", Data(#"{"mutations": [{]}"#.utf8)),
            ("trailing comma", Data(#"{"mutations": [],}"#.utf8)),
            ("single quotes", Data("{'mutations': []}".utf8)),
            ("array", Data("[]".utf8)),
            ("null", Data("null".utf8)),
            ("number", Data("42".utf8)),
            ("string", Data(#""mutations""#.utf8)),
            ("two documents", Data(#"{"mutations": []} {"mutations": []}"#.utf8)),
            ("binary", Data([0xFF, 0xFE, 0x00, 0x7B, 0x22, 0xC3, 0x28, 0x80, 0x00, 0x5D])),
            ("invalid UTF-8 in a string", Data([0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xC3, 0x28, 0x22, 0x7D])),
            ("NUL bytes", Data(repeating: 0, count: 64)),
            ("form", Data("mutations=1&datastore=target".utf8)),
            ("XML", Data("<push><mutation/></push>".utf8)),
        ]
        for (method, path) in Self.bodyEndpoints {
            for (what, body) in bodies {
                let reply = try await client.send(method.method, path, raw: body, token: target.user.token)
                Refusal.expect(reply, "\(method) \(path) with \(what)")
            }
        }
        // Content types other than JSON are not a way around anything.
        for contentType in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", nil] {
            let reply = try await client.sendRaw(
                .POST, "/v1/push", body: Data("mutations=%5B%5D".utf8), contentType: contentType,
                token: target.user.token)
            Refusal.expect(reply, "push as \(contentType ?? "no content type")", status: 400)
        }
        try await expectUnchanged(target, client)
    }

    @Test("REST writes with unknown or misspelled keys are refused, not applied as empty writes")
    func unknownKeysInWrites() async throws {
        let (_, client) = try SharedServer.require()
        let target = try await target(client)
        for body in [
            #"{"feilds": {"n": 5}}"#, #"{"mutations": []}"#, #"{"fields": {"n": 5}, "objectID": "x"}"#, #"{"a": "b"}"#,
        ] {
            let created = try await client.send(
                .POST, "/v1/datastores/target/classes/Item/objects", raw: Data(body.utf8), token: target.user.token)
            Refusal.expect(created, "create with \(body)", status: 400, code: .request)
            let updated = try await client.send(
                .PATCH, "/v1/datastores/target/classes/Item/objects/one", raw: Data(body.utf8), token: target.user.token
            )
            Refusal.expect(updated, "update with \(body)", status: 400, code: .request)
        }
        try await expectUnchanged(target, client)
    }

    @Test("every truncation of a valid push is refused, and none of it is applied")
    func truncatedPushes() async throws {
        let (_, client) = try SharedServer.require()
        let target = try await target(client)
        let push = PushRequest(mutations: [
            Mutations.create(target.datastore, "Item", "new1", fields: ["n": 10, "s": "quoted \"text\" [x]"]),
            Mutations.update(target.datastore, "Item", "one", base: 1, [FieldUpdate("n", .increment(5))]),
            Mutations.delete(target.datastore, "Item", "two", base: 1),
        ])
        let body = try JSONEncoder().encode(push)
        for length in stride(from: 0, to: body.count, by: 3) {
            let reply = try await client.send(API.push, raw: body.prefix(length), token: target.user.token)
            Refusal.expect(reply, "push truncated to \(length) of \(body.count) bytes", status: 400)
        }
        try await expectUnchanged(target, client)
    }

    @Test("wrong types anywhere in a push, pull or query are refused whole")
    func wrongTypes() async throws {
        let (_, client) = try SharedServer.require()
        let target = try await target(client)
        func mutation(_ fields: String) -> Data {
            Data(
                #"{"mutations": [{"mutationId": "m-\#(UUID().uuidString.prefix(8))", "datastore": "target", "className": "Item", "objectId": "x", \#(fields)}]}"#
                    .utf8)
        }
        let pushes: [(String, Data)] = [
            ("mutations as an object", Data(#"{"mutations": {}}"#.utf8)),
            ("mutations as a string", Data(#"{"mutations": "all"}"#.utf8)),
            ("a mutation as a number", Data(#"{"mutations": [1]}"#.utf8)),
            ("no mutations", Data(#"{}"#.utf8)),
            (
                "mutationId as a number",
                Data(
                    #"{"mutations": [{"mutationId": 5, "datastore": "target", "className": "Item", "objectId": "x", "change": {"delete": true}}]}"#
                        .utf8)
            ),
            (
                "datastore as a number",
                Data(
                    #"{"mutations": [{"mutationId": "m1", "datastore": 7, "className": "Item", "objectId": "x", "change": {"delete": true}}]}"#
                        .utf8)
            ),
            (
                "className as a list",
                Data(
                    #"{"mutations": [{"mutationId": "m1", "datastore": "target", "className": ["Item"], "objectId": "x", "change": {"delete": true}}]}"#
                        .utf8)
            ),
            ("baseVersion as a string", mutation(#""baseVersion": "3", "change": {"delete": true}"#)),
            ("baseVersion as a fraction", mutation(#""baseVersion": 1.5, "change": {"delete": true}"#)),
            ("change as a string", mutation(#""change": "delete""#)),
            ("update as an object", mutation(#""change": {"update": {"field": "n"}}"#)),
            ("delete as a string", mutation(#""change": {"delete": "yes"}"#)),
            (
                "delete with updates",
                mutation(#""change": {"delete": true, "update": [{"field": "n", "do": {"op": "unset"}}]}"#)
            ),
            ("unknown op", mutation(#""change": {"update": [{"field": "n", "do": {"op": "explode"}}]}"#)),
            ("op without value", mutation(#""change": {"update": [{"field": "n", "do": {"op": "set"}}]}"#)),
            (
                "index as a string",
                mutation(
                    #""change": {"update": [{"field": "n", "do": {"op": "listInsert", "index": "0", "value": 1}}]}"#)
            ),
            ("field as a number", mutation(#""change": {"update": [{"field": 5, "do": {"op": "unset"}}]}"#)),
            ("ACL as a list", mutation(#""change": {"update": [], "acl": ["*"]}"#)),
            ("ACL with a bad principal", mutation(#""change": {"update": [], "acl": {"role:": {"read": true}}}"#)),
            ("null change", mutation(#""change": null"#)),
        ]
        for (what, body) in pushes {
            let reply = try await client.send(API.push, raw: body, token: target.user.token)
            Refusal.expect(reply, "push with \(what)", status: 400)
        }
        let pulls = [
            #"{"datastore": "target", "since": 5}"#, #"{"datastore": "target", "limit": "10"}"#,
            #"{"datastore": "target", "classes": "Item"}"#, #"{"datastore": ["target"]}"#, #"{"since": "x"}"#,
            #"{"datastore": "target", "limit": 1e100}"#,
        ]
        for body in pulls {
            Refusal.expect(
                try await client.send(API.pull, raw: Data(body.utf8), token: target.user.token),
                "pull \(body)", status: 400)
        }
        let queries = [
            #"{"query": {"className": 5}}"#, #"{"query": {"className": "Item", "limit": "10"}}"#,
            #"{"query": {"className": "Item", "predicate": 5}}"#, #"{"query": {"className": "Item", "order": "n"}}"#,
            #"{"query": {"className": "Item", "includes": "owner"}}"#, #"{"className": "Item", "text": 5}"#,
            #"{"className": "Item", "text": "where n = ?", "parameters": 5}"#, #"{"query": "select * from objects"}"#,
        ]
        for body in queries {
            Refusal.expect(
                try await client.send(
                    .POST, "/v1/datastores/target/query", raw: Data(body.utf8), token: target.user.token),
                "query \(body)", status: 400)
        }
        try await expectUnchanged(target, client)
    }

    @Test("unknown query keys, operators and malformed query text are refused with invalidQuery or request")
    func unknownQueryParts() async throws {
        let (_, client) = try SharedServer.require()
        let target = try await target(client)
        let bodies = [
            #"{"query": {"className": "Item", "limt": 5}}"#,
            #"{"query": {"className": "Item"}, "extra": 1}"#,
            #"{"query": {"className": "Item", "predicate": {"field": "n", "op": "~=", "value": 1}}}"#,
            #"{"query": {"className": "Item", "predicate": {"field": "n", "op": "regex", "value": ".*"}}}"#,
            #"{"query": {"className": "Item", "predicate": {"$where": "1 = 1"}}}"#,
            #"{"query": {"className": "Item", "predicate": {"field": "n", "op": "=", "value": 1, "or": []}}}"#,
            #"{"query": {"className": "Item", "predicate": {"and": [{"field": "n", "op": "exists", "value": 1}]}}}"#,
            #"{"query": {"className": "Item", "order": [{"field": "n", "direction": "up"}]}}"#,
            #"{"className": "Item", "text": "where n ~ 1"}"#,
            #"{"className": "Item", "text": "where n = 1; DROP TABLE objects"}"#,
            #"{"className": "Item", "text": "where s = 'unterminated"}"#,
            #"{"className": "Item", "text": "where n = ?"}"#,
            #"{"className": "Item", "text": "where n = ?", "parameters": [1, 2]}"#,
            #"{"className": "Item", "text": "where n = 1 union select * from users"}"#,
            #"{"className": "Item", "text": "limit -1"}"#,
            #"{"className": "Item", "text": "order by"}"#,
            #"{"className": "Item", "text": "where `a;DROP TABLE objects` = 1"}"#,
            #"{"className": "Item'; --", "text": ""}"#,
            #"{"className": "Item", "text": "", "query": {"className": "Item"}}"#,
        ]
        for path in ["/v1/datastores/target/query", "/v1/datastores/target/count", "/v1/datastores/target/remove"] {
            for body in bodies {
                let wrapped = path.hasSuffix("remove") ? #"{"query": \#(body)}"# : body
                let reply = try await client.send(.POST, path, raw: Data(wrapped.utf8), token: target.user.token)
                Refusal.expect(reply, "\(path) \(wrapped)", status: 400)
                #expect(
                    reply.error.map { [.invalidQuery, .request].contains($0.code) } == true,
                    "\(path) \(wrapped): \(reply.text)")
            }
        }
        try await expectUnchanged(target, client)
    }
}
