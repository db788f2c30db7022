import Foundation
import RooftopShared
import Testing

@Suite("Wire types: golden JSON and validation")
struct WireGoldenTests {
    @Test func mutationGolden() throws {
        let mutation = Mutation(
            mutationId: try MutationID("m-0001"), datastore: .app, className: "GameScore", objectId: "obj1",
            baseVersion: 3,
            change: .update(
                [FieldUpdate("score", .increment(1)), FieldUpdate("tags", .listAppend(["a"]))], acl: .only("u1")))
        let golden =
            #"{"baseVersion":3,"change":{"acl":{"u1":{"read":true,"write":true}},"update":[{"do":{"amount":1,"op":"increment"},"field":"score"},{"do":{"op":"listAppend","values":["a"]},"field":"tags"}]},"className":"GameScore","datastore":":app","mutationId":"m-0001","objectId":"obj1"}"#
        let (decoded, text) = try roundTrip(mutation)
        #expect(text == golden)
        #expect(decoded == mutation)
        #expect(try JSONDecoder().decode(Mutation.self, from: Data(golden.utf8)) == mutation)
    }

    @Test func mutationWithoutBaseVersion() throws {
        let json =
            #"{"mutationId":"m2","datastore":"settings","className":"Prefs","objectId":"p","change":{"delete":true}}"#
        let mutation = try JSONDecoder().decode(Mutation.self, from: Data(json.utf8))
        #expect(mutation.baseVersion == nil)
        #expect(mutation.change == .delete)
        #expect(mutation.datastore == (try DatastoreID("settings")))
    }

    @Test func pullResponseGolden() throws {
        let response = PullResponse(
            changes: [
                .upsert(
                    ObjectSnapshot(
                        className: "GameScore", objectId: "obj1", datastore: .app, fields: ["score": 7],
                        createdAt: Timestamp(millisecondsSinceEpoch: 1000),
                        updatedAt: Timestamp(millisecondsSinceEpoch: 2000),
                        version: 4)),
                .tombstone(className: "GameScore", objectId: "obj2", version: 5),
                .removal(className: "GameScore", objectId: "obj3"),
            ],
            checkpoint: Checkpoint("c:42"), hasMore: true, remaining: 10)
        let golden =
            #"{"changes":[{"kind":"upsert","object":{"className":"GameScore","createdAt":1000,"datastore":":app","fields":{"score":7},"objectId":"obj1","updatedAt":2000,"version":4}},{"className":"GameScore","kind":"tombstone","objectId":"obj2","version":5},{"className":"GameScore","kind":"removal","objectId":"obj3"}],"checkpoint":"c:42","hasMore":true,"remaining":10}"#
        let (decoded, text) = try roundTrip(response)
        #expect(text == golden)
        #expect(decoded == response)
        #expect(try JSONDecoder().decode(PullResponse.self, from: Data(golden.utf8)) == response)
    }

    @Test func compactPushRequest() throws {
        let mutation = Mutation(
            mutationId: try MutationID("m1"), datastore: .app, className: "C", objectId: "o", change: .delete)
        let full = PushRequest(mutations: [mutation])
        let compact = PushRequest(mutations: [mutation], compact: true)
        #expect(try !roundTrip(full).1.contains("compact"))
        let (decoded, text) = try roundTrip(compact)
        #expect(text.hasPrefix(#"{"compact":true,"#))
        #expect(decoded == compact)
        let object = ObjectSnapshot(className: "C", objectId: "o", datastore: .app, fields: ["n": 1], version: 2)
        let decision = MergeDecision(
            field: "n", baseValue: 1, localValue: 2, remoteValue: 2, rule: .sum, result: 3, resolution: .rule)
        #expect(
            MutationResult.applied(mutationId: try MutationID("m1"), version: 2, object: object, merges: [decision])
                .compacted == .applied(mutationId: try MutationID("m1"), version: 2, object: nil, merges: [decision]))
        let refusal = MutationResult.rejected(mutationId: try MutationID("m2"), error: RooftopError(.disallowed, "no"))
        #expect(refusal.compacted == refusal)
    }

    @Test func pushResponseGolden() throws {
        let response = PushResponse(results: [
            .applied(mutationId: try MutationID("m1"), version: 9, object: nil),
            .rejected(
                mutationId: try MutationID("m2"),
                error: RooftopError(.disallowed, "object ACL: the caller may not write this GameScore object")),
        ])
        let golden =
            #"{"results":[{"mutationId":"m1","status":"applied","version":9},{"error":{"code":"disallowed","message":"object ACL: the caller may not write this GameScore object"},"mutationId":"m2","status":"rejected"}]}"#
        #expect(try roundTrip(response).1 == golden)
    }

    @Test func mutationIDRules() throws {
        #expect(MutationID.generate() != MutationID.generate())
        #expect(MutationID.generate().rawValue.count == 26)
        _ = try MutationID(String(repeating: "a", count: 64))
        for bad in ["", String(repeating: "a", count: 65), ":reserved", "has space", "é"] {
            let error = #expect(throws: RooftopError.self) { try MutationID(bad) }
            #expect(error?.code == .illegalArgument)
        }
        let json =
            #"{"mutationId":"bad id","datastore":":app","className":"T","objectId":"o","change":{"delete":true}}"#
        #expect(throws: (any Error).self) { try JSONDecoder().decode(Mutation.self, from: Data(json.utf8)) }
        var generator = SystemRandomNumberGenerator()
        let early = MutationID.generate(at: Timestamp(millisecondsSinceEpoch: 1_000), using: &generator)
        let late = MutationID.generate(at: Timestamp(millisecondsSinceEpoch: 2_000), using: &generator)
        #expect(early < late)
    }

    @Test func malformedWireForms() {
        let bad = [
            (#"{"kind":"merge","className":"T","objectId":"o"}"#, PullChange.self as any Decodable.Type),
            (#"{"mutationId":"m","status":"maybe"}"#, MutationResult.self),
            (#"{"type":"shout","datastores":[]}"#, LiveClientMessage.self),
            (#"{"type":"changed","datastore":"BAD ID"}"#, LiveServerMessage.self),
            (#"{"datastore":"Not Valid"}"#, PullRequest.self),
            (#"{"principal":"role:","role":"viewer"}"#, SetRoleRequest.self),
        ]
        for (json, type) in bad {
            #expect(throws: (any Error).self, "\(json)") { try JSONDecoder().decode(type, from: Data(json.utf8)) }
        }
    }

    @Test func requestValidation() {
        func code(_ body: () throws(RooftopError) -> Void) -> RooftopError.Code? {
            do {
                try body()
                return nil
            } catch { return error.code }
        }
        #expect(
            code { () throws(RooftopError) in try SignUpRequest(username: "ada", password: "long enough").validate() }
                == nil)
        let shortPassword = SignUpRequest(username: "ada", password: "short")
        #expect(code { () throws(RooftopError) in try shortPassword.validate() } == .illegalArgument)
        for username in ["", " ada", "ada ", "a\u{0}b", String(repeating: "a", count: 129)] {
            #expect(
                code { () throws(RooftopError) in
                    try SignUpRequest(username: username, password: "long enough").validate()
                }
                    == .illegalArgument)
        }
        for email in ["no-at-sign", "@example.com", "ada@", "a b@example.com"] {
            #expect(
                code { () throws(RooftopError) in
                    try SignUpRequest(username: "ada", password: "long enough", email: email).validate()
                } == .illegalArgument)
        }
        do {
            try shortPassword.validate()
        } catch {
            #expect(!error.message.contains("short"))  // the password never appears in messages
            #expect(error.field == "password")
        }
        #expect(code { () throws(RooftopError) in try CreateRoleRequest(name: "Team").validate() } == nil)
        #expect(code { () throws(RooftopError) in try CreateRoleRequest(name: ":Team").validate() } == .illegalArgument)
        #expect(
            code { () throws(RooftopError) in try CreateRoleRequest(name: "Team", roles: ["bad name"]).validate() }
                == .illegalArgument)
        #expect(
            code { () throws(RooftopError) in
                try CreateDatastoreRequest(title: String(repeating: "t", count: 1001)).validate()
            } == .illegalArgument)
    }
}
