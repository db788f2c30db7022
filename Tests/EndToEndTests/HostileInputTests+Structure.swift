import Foundation
import RooftopShared
import Testing

/// Hostile structure: deep nesting (in bodies, values, predicates and query text), extreme
/// numbers, malformed tagged values, out-of-range indices and overflowing increments.
extension HostileInputTests {
    /// A push body setting field `v` of a new object `objectId` in `datastore` to raw JSON `value`.
    static func pushSetting(_ value: String, objectId: String = "new", datastore: String = "target") -> Data {
        let mutationId = "m-\(UUID().uuidString.prefix(13))"
        return Data(
            #"{"mutations": [{"mutationId": "\#(mutationId)", "datastore": "\#(datastore)", "className": "Item", "objectId": "\#(objectId)", "change": {"update": [{"field": "v", "do": {"op": "set", "value": \#(value)}}]}}]}"#
                .utf8)
    }

    static func nested(_ depth: Int, _ inner: String = "1") -> String {
        String(repeating: "[", count: depth) + inner + String(repeating: "]", count: depth)
    }

    @Test("JSON nested beyond the depth limit is refused before decoding; values beyond it are rejected")
    func deepNesting() async throws {
        let (_, client) = try SharedServer.require()
        let target = try await target(client)
        let token = target.user.token
        for depth in [60, 10_000, 1_000_000] {
            let reply = try await client.send(
                API.push, raw: Self.pushSetting(Self.nested(depth)), token: token)
            Refusal.expect(reply, "push nested \(depth) deep", status: 400, code: .request)
            let unclosed = try await client.send(
                API.push, raw: Data(String(repeating: "[", count: depth).utf8), token: token)
            Refusal.expect(unclosed, "unclosed \(depth) deep", status: 400)
        }
        // Within the body's depth but deeper than a value may be: the mutation is rejected.
        let objectDepth = String(repeating: #"{"a": "#, count: 40) + "1" + String(repeating: "}", count: 40)
        for (what, value) in [
            ("a list 33 deep", Self.nested(33)), ("a list 41 deep", Self.nested(41)),
            ("JSON 40 deep", #"{"$json": \#(objectDepth)}"#),
        ] {
            let reply = try await client.send(API.push, raw: Self.pushSetting(value), token: token)
            Refusal.expectPushRefused(reply, "push of \(what)", code: .sizeLimit)
        }
        // Predicates and query text.
        let nots =
            String(repeating: #"{"not": "#, count: 40) + #"{"field": "n", "op": "exists"}"#
            + String(repeating: "}", count: 40)
        let queries = [
            #"{"query": {"className": "Item", "predicate": \#(nots)}}"#,
            #"{"className": "Item", "text": "where \#(String(repeating: "(", count: 200))n = 1\#(String(repeating: ")", count: 200))"}"#,
            #"{"className": "Item", "text": "where \#(String(repeating: "not ", count: 5000))n = 1"}"#,
        ]
        for body in queries {
            let reply = try await client.send(.POST, "/v1/datastores/target/query", raw: Data(body.utf8), token: token)
            Refusal.expect(reply, "query \(body.prefix(60))…", status: 400)
        }
        // A deep parameter is only data to compare with; it must not hurt either.
        let parameter = try await client.send(
            .POST, "/v1/datastores/target/query",
            raw: Data(#"{"className": "Item", "text": "where n in ?", "parameters": [\#(Self.nested(40))]}"#.utf8),
            token: token)
        #expect(Refusal.isWellBehaved(parameter), "\(parameter.text)")
        try await expectUnchanged(target, client)

        // At the limit, and brackets inside strings, are fine.
        let deep = try DatastoreID("deep")
        let atLimit = try await client.send(
            API.push, raw: Self.pushSetting(Self.nested(32), datastore: "deep"), token: token)
        let brackets = String(repeating: "[{", count: 500)
        let inString = try await client.send(
            API.push, raw: Self.pushSetting(#""\"\#(brackets)""#, objectId: "str", datastore: "deep"),
            token: token)
        #expect(try atLimit.decode(PushResponse.self).results.allSatisfy { $0.isApplied }, "\(atLimit.text)")
        #expect(try inString.decode(PushResponse.self).results.allSatisfy { $0.isApplied }, "\(inString.text)")
        let stored = try await client.allObjects(deep, className: "Item", token: token)
        #expect(stored["str"]?.fields["v"] == .string("\"" + brackets))
    }

    @Test("malformed tagged values and numbers that cannot be represented are refused")
    func malformedValues() async throws {
        let (_, client) = try SharedServer.require()
        let target = try await target(client)
        let values = [
            #"{"$double": "abc"}"#, #"{"$double": 1.5}"#, #"{"$double": "0x1p3"}"#, #"{"$double": ""}"#,
            #"{"$double": "1", "$date": 1}"#, #"{"$date": 1e300}"#, #"{"$date": "yesterday"}"#,
            #"{"$date": 9223372036854775808}"#, #"{"$bytes": "!!!"}"#, #"{"$bytes": "AAAA", "mimeType": 5}"#,
            #"{"$decimal": "1.2.3"}"#, #"{"$decimal": "1e9999999999"}"#, #"{"$decimal": "NaN"}"#,
            #"{"$geoPoint": {"latitude": 1000, "longitude": 0}}"#, #"{"$geoPoint": {"latitude": "0", "longitude": 0}}"#,
            #"{"$day": "2026-02-30"}"#, #"{"$day": "tomorrow"}"#, #"{"$evil": 1}"#, #"{}"#, #"{"a": 1}"#,
            #"{"$pointer": {"className": "Item"}}"#, #"{"$relation": {"className": "Item", "objectIds": "a"}}"#,
            #"{"$json": }"#, "1e400", "-1e400", "NaN", "Infinity", "01", "+1", ".5", "1.", "0x10",
        ]
        for value in values {
            let reply = try await client.send(API.push, raw: Self.pushSetting(value), token: target.user.token)
            Refusal.expectPushRefused(reply, "value \(value)")
        }
        try await expectUnchanged(target, client)
    }

    @Test("extreme but valid numbers round-trip; overflowing increments and wild indices are rejected")
    func extremeNumbers() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser()
        let datastore = try DatastoreID("numbers")
        let accepted: [(String, Value)] = [
            ("9223372036854775807", .int(.max)), ("-9223372036854775808", .int(.min)),
            (#"{"$double": "1.7976931348623157e308"}"#, .double(.greatestFiniteMagnitude)),
            (#"{"$double": "5e-324"}"#, .double(.leastNonzeroMagnitude)), (#"{"$double": "-0.0"}"#, .double(-0.0)),
            (#"{"$date": 9223372036854775807}"#, .date(Timestamp(millisecondsSinceEpoch: .max))),
            (#"{"$date": -9223372036854775808}"#, .date(Timestamp(millisecondsSinceEpoch: .min))),
        ]
        for (index, (json, expected)) in accepted.enumerated() {
            let reply = try await client.send(
                API.push, raw: Self.pushSetting(json, objectId: "a\(index)", datastore: "numbers"),
                token: user.token)
            let result = try #require(try reply.decode(PushResponse.self).results.first)
            #expect(result.appliedObject?.fields["v"] == expected, "\(json): \(reply.text)")
        }
        // Numbers that JSON can carry but a value cannot: refused or turned into a double, never a 500.
        for json in ["99999999999999999999", "9223372036854775808", "-9223372036854775809", "1e-400", "123456789e-5"] {
            let reply = try await client.send(
                API.push, raw: Self.pushSetting(json, objectId: "b", datastore: "numbers"), token: user.token)
            #expect(Refusal.isWellBehaved(reply), "\(json): HTTP \(reply.status) \(reply.text)")
        }

        let seeded = try await client.push(
            Mutations.create(datastore, "Item", "big", fields: ["n": .int(.max), "list": [1, 2]]), token: user.token)
        let base = try #require(seeded.appliedVersion)
        let wild: [(String, FieldUpdate, RooftopError.Code)] = [
            ("overflowing increment", FieldUpdate("n", .increment(1)), .illegalArgument),
            ("insert far out", FieldUpdate("list", .listInsert(index: .max, value: 1)), .badIndex),
            ("remove far out", FieldUpdate("list", .listRemove(index: .max)), .badIndex),
            ("move far out", FieldUpdate("list", .listMove(from: 0, to: .max)), .badIndex),
            ("replace far out", FieldUpdate("list", .listReplace(index: 2, value: 1)), .badIndex),
            ("negative index", FieldUpdate("list", .listRemove(index: -1)), .badIndex),
            ("increment by text", FieldUpdate("n", .increment("1")), .badType),
        ]
        for (what, update, code) in wild {
            let result = try await client.push(
                Mutations.update(datastore, "Item", "big", base: base, [update]), token: user.token)
            #expect(result.error?.code == code, "\(what): \(result)")
        }
        let stored = try await client.object(datastore, className: "Item", objectId: "big", token: user.token)
        #expect(stored?.version == base)
        #expect(stored?.fields["n"] == .int(.max))

        // Extreme paging values.
        let offset = try await client.send(
            .POST, "/v1/datastores/numbers/query",
            raw: Data(#"{"query": {"className": "Item", "offset": 9223372036854775807, "limit": 10}}"#.utf8),
            token: user.token)
        #expect(offset.status == 200, "\(offset.text)")
        #expect((try? offset.decode(QueryResponse.self))?.objects.isEmpty == true)
        for body in [
            #"{"query": {"className": "Item", "limit": 9223372036854775807}}"#,
            #"{"query": {"className": "Item", "limit": 9223372036854775808}}"#,
            #"{"query": {"className": "Item", "offset": -1}}"#,
            #"{"query": {"className": "Item", "predicate": {"field": "at", "op": "near", "point": {"latitude": 0, "longitude": 0}, "maxDistanceMeters": -1}}}"#,
        ] {
            let reply = try await client.send(
                .POST, "/v1/datastores/numbers/query", raw: Data(body.utf8), token: user.token)
            Refusal.expect(reply, body)
        }
        let pull = try await client.send(
            API.pull, raw: Data(#"{"datastore": "numbers", "limit": 9223372036854775807}"#.utf8),
            token: user.token)
        Refusal.expect(pull, "pull with the largest limit", status: 413, code: .sizeLimit)
    }
}

/// Hostile breadth: queries and pulls that are shallow but very wide.
extension HostileInputTests {
    @Test("very wide queries and filters are answered or refused with a clear error, never a 500")
    func wideQueries() async throws {
        let (_, client) = try SharedServer.require()
        let target = try await target(client)
        func comparisons(_ count: Int) -> [QueryPredicate] {
            (0..<count).map { .comparison(field: "n", op: .equal, value: .int(Int64($0))) }
        }
        // Within the bounds: answered, and correctly.
        let answered: [(String, QueryPredicate)] = [
            ("or of 1000", .or(comparisons(1000))),
            (
                "and of 1000",
                .and((0..<1000).map { .comparison(field: "n", op: .notEqual, value: .int(Int64($0 + 10))) })
            ),
            ("in of 10000", .in(field: "n", values: (0..<10_000).map { .int(Int64($0)) })),
            ("containsAll of 999", .containsAll(field: "tags", values: (0..<999).map { .int(Int64($0)) })),
            (
                "thisIn of 999 pointers",
                .thisIn((0..<999).map { .pointer(Pointer(className: "Item", objectId: "id\($0)")) } + ["one"])
            ),
        ]
        let expected: [String: Set<String>] = [
            "or of 1000": ["one", "two"], "and of 1000": ["one", "two"], "in of 10000": ["one", "two"],
            "containsAll of 999": [], "thisIn of 999 pointers": ["one"],
        ]
        for (what, predicate) in answered {
            let reply = try await client.send(
                .POST, "/v1/datastores/target/query",
                body: QueryRequest.query(Query(className: "Item", predicate: predicate)),
                token: target.user.token)
            #expect(reply.status == 200, "\(what): \(reply.text.prefix(200))")
            let objects = (try? reply.decode(QueryResponse.self))?.objects.map(\.objectId) ?? []
            #expect(Set(objects) == expected[what], "\(what)")
        }
        // Beyond them: refused as too complex.
        let refused: [(String, Query)] = [
            ("or of 5000", Query(className: "Item", predicate: .or(comparisons(5000)))),
            (
                "in of 40000",
                Query(className: "Item", predicate: .in(field: "n", values: (0..<40_000).map { .int(Int64($0)) }))
            ),
            (
                "containsAll of 20000",
                Query(
                    className: "Item", predicate: .containsAll(field: "n", values: (0..<20_000).map { .int(Int64($0)) })
                )
            ),
            ("order by 2000 keys", Query(className: "Item", order: (0..<2000).map { QueryOrder("f\($0)") })),
        ]
        for (what, query) in refused {
            for path in ["/v1/datastores/target/query", "/v1/datastores/target/count"] {
                let reply = try await client.send(
                    .POST, path, body: QueryRequest.query(query), token: target.user.token)
                Refusal.expect(reply, "\(path) \(what)", status: 400, code: .invalidQuery)
            }
        }
        let classes = try await client.send(
            API.pull, body: PullRequest(datastore: target.datastore, classes: (0..<40_000).map { "C\($0)" }),
            token: target.user.token)
        Refusal.expect(classes, "pull filtered by 40000 classes", status: 400, code: .illegalArgument)
        try await expectUnchanged(target, client)
    }
}
