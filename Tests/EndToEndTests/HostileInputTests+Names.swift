import Foundation
import RooftopShared
import Testing

/// Hostile names and IDs: field names, class names, object, mutation and datastore IDs, in
/// bodies and in paths; and hostile string values, which are data and must round-trip exactly.
extension HostileInputTests {
    static let hostileNames = [
        "a;DROP TABLE objects", "'", "\"", "\\", "a'--", "x' OR '1'='1", "a b", "", String(repeating: "a", count: 65),
        String(repeating: "z", count: 20_000), "a\u{0}b", "\u{0}", "café", "😀", "\u{202E}abc", "a\nb", "$where",
        "a%00", "%27",
    ]
    /// Names that are valid IDs but may not be written: built-in and reserved ones.
    static let unwritableNames = ["objectId", "ACL", "createdAt", "updatedAt", ":reserved"]

    @Test("hostile field names are refused in writes, queries and merge rules")
    func hostileFieldNames() async throws {
        let (_, client) = try SharedServer.require()
        let target = try await target(client)
        let className = uniqueClassName("Hostile")
        for name in Self.hostileNames + Self.unwritableNames {
            let shown = String(name.prefix(40).debugDescription)
            let push = try await client.send(
                API.push,
                body: PushRequest(mutations: [
                    Mutations.update(target.datastore, "Item", "one", base: 1, [FieldUpdate(name, .set(1))]),
                    Mutations.create(target.datastore, "Item", "new", fields: [name: 1]),
                ]), token: target.user.token)
            Refusal.expectPushRefused(push, "push setting field \(shown)")

            let rest = try await client.send(
                .POST, "/v1/datastores/target/classes/Item/objects",
                raw: try JSONEncoder().encode(["fields": [name: Value.int(1)]]), token: target.user.token)
            Refusal.expect(rest, "REST create with field \(shown)")
            guard Self.hostileNames.contains(name) else { continue }

            let predicate = QueryRequest.query(
                Query(className: "Item", predicate: .comparison(field: name, op: .equal, value: 1)))
            Refusal.expect(
                try await client.send(.POST, "/v1/datastores/target/query", body: predicate, token: target.user.token),
                "query on field \(shown)", status: 400)
            let order = QueryRequest.query(Query(className: "Item", order: [QueryOrder(name)]))
            Refusal.expect(
                try await client.send(.POST, "/v1/datastores/target/query", body: order, token: target.user.token),
                "order by \(shown)", status: 400)
            let rules = ClassSettingsChange(className: className, mergeRules: [name: .sum])
            Refusal.expect(
                try await client.send(.PUT, "/v1/classes/\(className)", body: rules, admin: true),
                "merge rule on \(shown)")
        }
        try await expectUnchanged(target, client)
    }

    @Test("odd but valid field names are stored, returned and queried like any other")
    func oddValidFieldNames() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser()
        let datastore = try DatastoreID("odd")
        let names = ["--", "a/b", "=", "+", ".", "_", "a.b", "A-Z_0.9+/=", String(repeating: "q", count: 64)]
        let fields = Dictionary(
            uniqueKeysWithValues: names.enumerated().map { ($0.element, Value.int(Int64($0.offset))) })
        let created = try await client.push(Mutations.create(datastore, "Odd", "o", fields: fields), token: user.token)
        #expect(created.appliedObject?.fields == fields)
        for (index, name) in names.enumerated() {
            let query = QueryRequest.query(
                Query(className: "Odd", predicate: .comparison(field: name, op: .equal, value: .int(Int64(index)))))
            let found = try await client.call(
                .POST, "/v1/datastores/odd/query", body: query, token: user.token, as: QueryResponse.self)
            #expect(found.objects.map(\.objectId) == ["o"], "query on \(name)")
        }
        let text = try await client.query(
            datastore, className: "Odd", text: "where `--` = 0 and `a/b` = 1", token: user.token)
        #expect(text.objects.count == 1)
        #expect(try await client.count(datastore, className: "Odd", token: user.token) == 1)
    }

    @Test("hostile string values are data: stored and matched exactly")
    func hostileValues() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser()
        let datastore = try DatastoreID("values")
        let values: [String] = [
            "'); DROP TABLE objects; --", "a\u{0}b", "a", "\u{0}", "😀👨‍👩‍👧", "\u{202E}gnp.exe", "\\\"", "%00%27",
            String(repeating: "long", count: 5_000), "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
            "{\"$double\": \"abc\"}", "",
        ]
        _ = try await client.push(
            values.enumerated().map {
                Mutations.create(datastore, "Val", "v\($0.offset)", fields: ["s": .string($0.element)])
            },
            token: user.token)
        let stored = try await client.allObjects(datastore, className: "Val", token: user.token)
        for (index, value) in values.enumerated() {
            #expect(stored["v\(index)"]?.fields["s"] == .string(value), "value \(index) round trip")
            let found = try await client.query(
                datastore, className: "Val", text: "where s = ?", parameters: [.string(value)], token: user.token)
            #expect(found.objects.map(\.objectId) == ["v\(index)"], "equality on value \(index) matches only itself")
        }
        let prefixed = try await client.query(
            datastore, className: "Val", text: "where s starts with ?", parameters: ["a"], token: user.token)
        #expect(Set(prefixed.objects.map(\.objectId)) == ["v1", "v2"])
    }

    @Test("invalid object, class and datastore IDs in paths are refused")
    func invalidIDsInPaths() async throws {
        let (_, client) = try SharedServer.require()
        let target = try await target(client)
        let long = String(repeating: "o", count: 65)
        let requests: [(HTTPMethodName, String)] = [
            (.get, "/v1/datastores/target/classes/Item/objects/bad%20id"),
            (.get, "/v1/datastores/target/classes/Item/objects/%27%3B--"),
            (.get, "/v1/datastores/target/classes/Item/objects/\(long)"),
            (.get, "/v1/datastores/target/classes/Item/objects/%00"),
            (.get, "/v1/datastores/target/classes/a%3BDROP%20TABLE%20objects/objects/one"),
            (.get, "/v1/datastores/target/classes/%3Areserved/objects/one"),
            (.get, "/v1/datastores/target/classes/Item/objects/one/operations?after=abc"),
            (.get, "/v1/datastores/target/classes/Item/objects/one/operations?after=-1"),
            (.patch, "/v1/datastores/target/classes/Item/objects/bad%20id"),
            (.delete, "/v1/datastores/target/classes/Item/objects/bad%20id"),
            (.delete, "/v1/datastores/target/classes/Item%27/objects/one"),
            (.post, "/v1/datastores/target/classes/bad%20class/objects"),
            (.get, "/v1/datastores/UPPER"),
            (.put, "/v1/datastores/UPPER"),
            (.put, "/v1/datastores/a%3Bb"),
            (.put, "/v1/datastores/%00"),
            (.put, "/v1/datastores/.."),
            (.delete, "/v1/datastores/%3Aapp"),
            (.post, "/v1/datastores/Target/query"),
            (.post, "/v1/datastores/\(String(repeating: "d", count: 65))/query"),
            (.get, "/v1/classes/a%3Bb"),
            (.put, "/v1/classes/a%3Bb"),
        ]
        for (method, path) in requests {
            let body =
                [.patch, .post, .put].contains(method)
                ? Data(#"{"fields": {"n": 1}, "className": "x", "text": ""}"#.utf8) : nil
            let reply = try await client.send(
                method.method, path, raw: body, token: target.user.token, admin: path.hasPrefix("/v1/classes"))
            Refusal.expect(reply, "\(method) \(path)")
        }
        try await expectUnchanged(target, client)
    }

    @Test("invalid IDs in bodies: mutations rejected, unreadable envelopes refused whole")
    func invalidIDsInBodies() async throws {
        let (_, client) = try SharedServer.require()
        let target = try await target(client)
        // Decodable, but each mutation names something invalid: each is rejected on its own.
        for (what, mutation) in [
            ("object ID", Mutations.create(target.datastore, "Item", "bad id", fields: ["n": 1])),
            (
                "object ID",
                Mutations.create(target.datastore, "Item", String(repeating: "o", count: 65), fields: ["n": 1])
            ),
            ("class name", Mutations.create(target.datastore, "Item;--", "x", fields: ["n": 1])),
            ("reserved class", Mutations.create(target.datastore, ":users", "x", fields: ["n": 1])),
            (
                "pointer target",
                Mutations.create(
                    target.datastore, "Item", "p", fields: ["p": .pointer(Pointer(className: "Item", objectId: "x y"))])
            ),
            ("negative base", Mutations.update(target.datastore, "Item", "one", base: -1, [FieldUpdate("n", .set(2))])),
        ] {
            let reply = try await client.send(
                API.push, body: PushRequest(mutations: [mutation]), token: target.user.token)
            Refusal.expectPushRefused(reply, "push with an invalid \(what)")
        }
        // A REST create never reads a base version, but a negative one is still malformed
        // (schemathesis found it accepted).
        for path in ["/v1/datastores/target/classes/Item/objects", "/v1/datastores/target/classes/Item/objects/one"] {
            let reply = try await client.send(
                path.hasSuffix("one") ? .PATCH : .POST, path, raw: Data(#"{"baseVersion": -1}"#.utf8),
                token: target.user.token)
            Refusal.expect(reply, "REST write with a negative base version at \(path)", status: 400)
        }
        // IDs checked while decoding: the push cannot be read at all.
        let envelope =
            #"{"mutations": [{"mutationId": "MID", "datastore": "DS", "className": "Item", "objectId": "x", "change": {"delete": true}}]}"#
        for (mutationId, datastore) in [
            ("", "target"), (String(repeating: "m", count: 65), "target"), ("m 1", "target"), (":m", "target"),
            ("m1", "UPPER"), ("m1", ""), ("m1", "."), ("m1", "a."), ("m1", ":other"), ("m1", "a;b"),
            ("m1", String(repeating: "d", count: 65)),
        ] {
            let body = envelope.replacingOccurrences(of: "MID", with: mutationId).replacingOccurrences(
                of: "DS", with: datastore)
            let reply = try await client.send(API.push, raw: Data(body.utf8), token: target.user.token)
            Refusal.expect(
                reply, "push with mutation ID '\(mutationId.prefix(20))' in '\(datastore.prefix(20))'", status: 400)
            let pull = try await client.send(
                API.pull, raw: Data(#"{"datastore": "\#(datastore)"}"#.utf8), token: target.user.token)
            if datastore != "target" { Refusal.expect(pull, "pull of '\(datastore.prefix(20))'", status: 400) }
        }
        try await expectUnchanged(target, client)
    }
}

/// IDs that are valid but need escaping in a URL path.
extension HostileInputTests {
    @Test("valid IDs with '/', '+', '=' or dots are reached through REST paths when percent-encoded")
    func escapedIDsInPaths() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser()
        let datastore = try DatastoreID("escaped")
        let ids = ["a/b", "x+y=", "..", ".", "a.b", "/", "=/+"]
        let classes = ["Item", "Name/Space"]
        for className in classes {
            _ = try await client.push(
                ids.map { Mutations.create(datastore, className, $0, fields: ["id": .string($0)]) }, token: user.token)
        }
        func path(_ className: String, _ id: String) -> String {
            let encode = { (text: String) in text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text }
            return "/v1/datastores/escaped/classes/\(encode(className))/objects/\(encode(id))"
        }
        for className in classes {
            for id in ids {
                let got = try await client.send(.GET, path(className, id), token: user.token)
                #expect(got.status == 200, "GET \(className)/\(id): \(got.text.prefix(200))")
                #expect((try? got.decode(ObjectWithIncludes.self))?.object.objectId == id)
                let patched = try await client.send(
                    .PATCH, path(className, id), raw: Data(#"{"fields": {"patched": true}}"#.utf8), token: user.token)
                #expect(patched.status == 200, "PATCH \(className)/\(id): \(patched.text.prefix(200))")
            }
            let deleted = try await client.send(.DELETE, path(className, "a/b"), token: user.token)
            #expect(deleted.status == 204, "DELETE \(className)/a/b: \(deleted.text.prefix(200))")
        }
        let stored = try await client.allObjects(datastore, className: "Name/Space", token: user.token)
        #expect(Set(stored.keys) == Set(ids).subtracting(["a/b"]))
        #expect(stored.values.allSatisfy { $0.fields["patched"] == true })
        // A malformed escape is an invalid ID, not a server error.
        Refusal.expect(
            try await client.send(.GET, "/v1/datastores/escaped/classes/Item/objects/%ZZ", token: user.token),
            "bad escape",
            status: 400)
    }
}
