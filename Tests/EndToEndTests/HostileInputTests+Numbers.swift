import Foundation
import RooftopShared
import Testing

/// Numbers that Swift would trap on (overflowing exponents, counts, offsets, increments): each is
/// refused with a 4xx, and the server is still there to answer the next request.
@Suite("Hostile numbers: refused, and the server keeps running", .sharedServer())
struct HostileNumberTests {
    /// Decimal texts whose exponent does not fit the accepted 1-9 digits.
    static let hostileDecimals = [
        "1e99999999999999999999", "1e-99999999999999999999", "9.9e+18446744073709551616",
        "1e" + String(repeating: "9", count: 900),
    ]

    /// The server still answers, and logged no internal error.
    func expectAlive(_ what: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let (server, client) = try SharedServer.require()
        #expect(server.isRunning, "\(what): the server exited; log:\n\(server.log)", sourceLocation: sourceLocation)
        let health = try await client.send(.GET, "/health", appId: .some(nil))
        #expect(health.status == 200, "\(what): /health answered \(health.status)", sourceLocation: sourceLocation)
        #expect(
            !server.log.contains("request failed"), "\(what): the server logged an internal error:\n\(server.log)",
            sourceLocation: sourceLocation)
    }

    @Test("a decimal with an overflowing exponent as an anonymous query parameter")
    func decimalQueryParameter() async throws {
        let (_, client) = try SharedServer.require()
        for text in Self.hostileDecimals {
            let body = #"{"className":"X","text":"where d = ?","parameters":[{"$decimal":"\#(text)"}]}"#
            for path in ["/v1/datastores/:app/query", "/v1/datastores/:app/count"] {
                let reply = try await client.send(.POST, path, raw: Data(body.utf8))
                Refusal.expect(reply, "\(path) with decimal \(text.prefix(30))", status: 400)
            }
            try await expectAlive("query parameter \(text.prefix(30))")
        }
    }

    @Test("a decimal with an overflowing exponent as a field value, in a create, an update and a push")
    func decimalFieldValue() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser("decimals")
        for text in Self.hostileDecimals {
            let value = #"{"$decimal":"\#(text)"}"#
            let create = try await client.send(
                .POST, "/v1/datastores/:app/classes/Item/objects", raw: Data(#"{"fields":{"d":\#(value)}}"#.utf8),
                token: user.token)
            Refusal.expect(create, "create with decimal \(text.prefix(30))", status: 400)
            let push = Data(
                #"{"mutations":[{"mutationId":"m-\#(UUID().uuidString)","datastore":"default","className":"Item","objectId":"d1","change":{"update":[{"field":"d","do":{"op":"set","value":\#(value)}}]}}]}"#
                    .utf8)
            Refusal.expectPushRefused(
                try await client.send(API.push, raw: push, token: user.token), "push with decimal \(text.prefix(30))")
            try await expectAlive("field value \(text.prefix(30))")
        }
        let stored = try await client.send(.GET, "/v1/datastores/default/classes/Item/objects/d1", token: user.token)
        #expect(stored.status == 404, "a refused decimal was written: \(stored.text)")
    }

    @Test("extreme counts, offsets, indices, increments and dates are refused or handled, never trapped on")
    func extremeNumbers() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser("numbers")
        _ = try await client.create(
            "Item", in: .default, fields: ["n": .int(.max), "m": .int(.min), "list": ["a", "b"]], objectId: "big", as: user)
        let queries = [
            #"{"className":"Item","text":"limit 9223372036854775807 offset 9223372036854775807"}"#,
            #"{"className":"Item","text":"offset 9223372036854775807"}"#,
            #"{"className":"Item","text":"where n > ?","parameters":[-9223372036854775808]}"#,
            #"{"className":"Item","text":"where n = 99999999999999999999999"}"#,
            #"{"query":{"className":"Item","limit":9223372036854775807,"skip":9223372036854775807}}"#,
            #"{"className":"Item","text":"where d = ?","parameters":[{"$date":9223372036854775807}]}"#,
            #"{"className":"Item","text":"where d = ?","parameters":[{"$date":-9223372036854775808}]}"#,
            #"{"className":"Item","text":"where d = ?","parameters":[{"$double":"1e400"}]}"#,
        ]
        for body in queries {
            let reply = try await client.send(.POST, "/v1/datastores/default/query", raw: Data(body.utf8), token: user.token)
            #expect(Refusal.isWellBehaved(reply), "query \(body): \(reply.status) \(reply.text.prefix(200))")
            try await expectAlive("query \(body)")
        }
        let updates: [(String, String)] = [
            ("increment past Int64.max", #"{"field":"n","do":{"op":"increment","amount":1}}"#),
            ("decrement past Int64.min", #"{"field":"m","do":{"op":"increment","amount":-1}}"#),
            ("insert at a huge index", #"{"field":"list","do":{"op":"listInsert","index":9223372036854775807,"value":"x"}}"#),
            ("insert at a negative index", #"{"field":"list","do":{"op":"listInsert","index":-9223372036854775808,"value":"x"}}"#),
            ("move from a huge index", #"{"field":"list","do":{"op":"listMove","from":9223372036854775807,"to":0}}"#),
            ("remove at a huge index", #"{"field":"list","do":{"op":"listRemove","index":9223372036854775807}}"#),
            ("a date at the end of time", #"{"field":"d","do":{"op":"set","value":{"$date":9223372036854775807}}}"#),
        ]
        for (what, update) in updates {
            let push = Data(
                #"{"mutations":[{"mutationId":"m-\#(UUID().uuidString)","datastore":"default","className":"Item","objectId":"big","baseVersion":9223372036854775807,"change":{"update":[\#(update)]}}]}"#
                    .utf8)
            let reply = try await client.send(API.push, raw: push, token: user.token)
            #expect(Refusal.isWellBehaved(reply), "\(what): \(reply.status) \(reply.text.prefix(200))")
            try await expectAlive(what)
        }
        for body in [
            #"{"datastore":"default","limit":9223372036854775807}"#, #"{"datastore":"default","limit":-9223372036854775808}"#,
        ] {
            let reply = try await client.send(API.pull, raw: Data(body.utf8), token: user.token)
            #expect(Refusal.isWellBehaved(reply), "pull \(body): \(reply.status) \(reply.text.prefix(200))")
        }
        let operations = try await client.send(
            .GET, "/v1/datastores/default/classes/Item/objects/big/operations?after=9223372036854775807", token: user.token)
        #expect(Refusal.isWellBehaved(operations), "\(operations.status) \(operations.text.prefix(200))")
        try await expectAlive("pulls and operations")
        // The object is as created: nothing above was applied.
        let stored = try await client.send(.GET, "/v1/datastores/default/classes/Item/objects/big", token: user.token)
        let object = try stored.decode(ObjectWithIncludes.self).object
        #expect(object.fields["n"] == .int(.max))
        #expect(object.fields["m"] == .int(.min))
        #expect(object.fields["list"] == ["a", "b"])
        #expect(object.fields["d"] == nil || object.fields["d"].map { if case .date = $0 { true } else { false } } == true)
    }
}
