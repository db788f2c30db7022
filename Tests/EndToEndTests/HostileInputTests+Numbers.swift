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
                try await client.send(.POST, "/v1/push", raw: push, token: user.token), "push with decimal \(text.prefix(30))")
            try await expectAlive("field value \(text.prefix(30))")
        }
        let stored = try await client.send(.GET, "/v1/datastores/default/classes/Item/objects/d1", token: user.token)
        #expect(stored.status == 404, "a refused decimal was written: \(stored.text)")
    }
}
