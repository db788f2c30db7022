import Foundation
import RooftopShared
import Testing

/// Sync wire objects refuse keys they do not know: a typo must not silently change meaning.
@Suite("Strict decoding of sync wire objects")
struct WireStrictDecodingTests {
    private func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(json.utf8))
    }

    private let mutation =
        #"{"mutationId":"m1","datastore":":app","className":"C","objectId":"o1","baseVersion":3,"change":{"update":[{"field":"n","do":{"op":"increment","amount":1}}]}}"#

    @Test("well-formed objects decode")
    func accepted() throws {
        let decoded = try decode(Mutation.self, mutation)
        #expect(decoded.baseVersion == 3)
        #expect(try decode(PushRequest.self, #"{"mutations":[\#(mutation)]}"#).mutations.count == 1)
        #expect(try decode(PullRequest.self, #"{"datastore":":app","limit":5}"#).limit == 5)
        #expect(try decode(FieldOperation.self, #"{"op":"listMove","from":0,"to":2}"#) == .listMove(from: 0, to: 2))
    }

    @Test(
        "unknown keys are refused",
        arguments: [
            #"{"mutationId":"m1","datastore":":app","className":"C","objectId":"o1","basVersion":3,"change":{"delete":true}}"#,
        ])
    func mutationTypo(_ json: String) {
        #expect(throws: DecodingError.self) { try decode(Mutation.self, json) }
    }

    @Test("unknown keys are refused in every sync object")
    func everyType() {
        #expect(throws: DecodingError.self) { try decode(PushRequest.self, #"{"mutations":[],"atomic":true}"#) }
        #expect(throws: DecodingError.self) { try decode(PullRequest.self, #"{"datastore":":app","limt":5}"#) }
        #expect(throws: DecodingError.self) { try decode(ObjectChange.self, #"{"update":[],"acls":{}}"#) }
        #expect(throws: DecodingError.self) {
            try decode(FieldUpdate.self, #"{"field":"n","do":{"op":"unset"},"to":1}"#)
        }
        // A member of another operation is refused too: `set` has no amount.
        #expect(throws: DecodingError.self) { try decode(FieldOperation.self, #"{"op":"set","value":1,"amount":2}"#) }
        #expect(throws: DecodingError.self) { try decode(FieldOperation.self, #"{"op":"unset","value":1}"#) }
    }

    @Test("counts a client does arithmetic with are refused when negative or absurd")
    func countsBounded() throws {
        #expect(try decode(PullResponse.self, #"{"changes":[],"checkpoint":"x","hasMore":true,"remaining":12}"#).remaining == 12)
        #expect(try decode(QueryResponse.self, #"{"objects":[],"totalCount":3}"#).totalCount == 3)
        for remaining in ["-1", "9223372036854775807", "281474976710657"] {
            #expect(throws: DecodingError.self, "remaining \(remaining)") {
                try decode(PullResponse.self, #"{"changes":[],"checkpoint":"x","hasMore":true,"remaining":\#(remaining)}"#)
            }
        }
        let roles = try decode(PullResponse.self, #"{"changes":[],"checkpoint":"x","hasMore":false,"roles":["a","b"]}"#)
        #expect(roles.roles == ["a", "b"])
        let tooMany = (0...RoleInfo.maxRolesPerUser).map { "\"r\($0)\"" }.joined(separator: ",")
        #expect(throws: DecodingError.self, "more roles than a user may hold") {
            try decode(PullResponse.self, #"{"changes":[],"checkpoint":"x","hasMore":false,"roles":[\#(tooMany)]}"#)
        }
        for total in ["-9223372036854775808", "-1", "9223372036854775807"] {
            #expect(throws: DecodingError.self, "totalCount \(total)") {
                try decode(QueryResponse.self, #"{"objects":[],"totalCount":\#(total)}"#)
            }
        }
    }

    @Test("unknown keys are refused in role updates and datastore creations")
    func restBodies() throws {
        #expect(try decode(UpdateRoleRequest.self, #"{"addUsers":["u1"]}"#).addUsers == ["u1"])
        #expect(try decode(CreateDatastoreRequest.self, #"{"title":"Trip"}"#).title == "Trip")
        #expect(try decode(CreateDatastoreRequest.self, #"{}"#).title == nil)
        #expect(throws: DecodingError.self) { try decode(UpdateRoleRequest.self, #"{"addUser":["u1"]}"#) }
        #expect(throws: DecodingError.self) { try decode(UpdateRoleRequest.self, #"{"addUsers":[],"name":"x"}"#) }
        #expect(throws: DecodingError.self) { try decode(CreateDatastoreRequest.self, #"{"titel":"Trip"}"#) }
        #expect(throws: DecodingError.self) { try decode(CreateDatastoreRequest.self, #"{"title":"Trip","id":".x"}"#) }
    }
}
