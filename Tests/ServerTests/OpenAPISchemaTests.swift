import Foundation
import PropertyBased
@testable import RooftopServer
import RooftopShared
import Testing
import RooftopTestSupport

/// The component schemas agree with the Codable wire types: what the types encode validates,
/// what the schemas refuse is really refused, and the document's examples decode.
@Suite("OpenAPI schemas")
struct OpenAPISchemaTests {
    @Test("JSON encoded by the wire types validates against their schemas")
    func samplesValidate() async throws {
        var checker = OpenAPISchemaChecker()
        let samples = try OpenAPISamples.all
        for sample in samples { try checker.add(sample.label, sample.value, schema: sample.schema) }
        #expect(samples.count > 80)
        let failures = try await checker.failures()
        #expect(failures.isEmpty, "\(failures.count) samples fail:\n\(failures.joined(separator: "\n"))")
    }

    @Test("the schemas refuse malformed wire JSON")
    func malformedIsRefused() async throws {
        var checker = OpenAPISchemaChecker()
        let invalid: [(String, String, String)] = [
            ("Value", #"{"$double": "1.5", "extra": 1}"#, "a tag with an extra member"),
            ("Value", #"{"$unknown": 1}"#, "an unknown tag"),
            ("Value", #"{"$double": "one"}"#, "a double that is not a number"),
            ("Value", #"{"$geoPoint": {"latitude": 91, "longitude": 0}}"#, "a latitude out of range"),
            ("Value", #"{"$day": "2026-1-2"}"#, "a day with short parts"),
            ("FieldOperation", #"{"op": "set"}"#, "set without a value"),
            ("FieldOperation", #"{"op": "shuffle"}"#, "an unknown operation"),
            ("ObjectChange", #"{"delete": true, "update": []}"#, "a delete that updates"),
            ("Mutation", #"{"datastore": ":app", "className": "A", "objectId": "b", "change": {}}"#, "no mutation ID"),
            ("Mutation", #"{"mutationId": ":m", "datastore": ":app", "className": "A", "objectId": "b", "change": {}}"#, "a reserved mutation ID"),
            ("DatastoreID", #"".""#, "a bare dot"),
            ("DatastoreID", #""Upper""#, "a private ID with capitals"),
            ("DatastoreID", #""trailing.""#, "a private ID ending with a dot"),
            ("Principal", #""role:""#, "an empty role name"),
            ("ObjectSnapshot", #"{"className": "A", "objectId": "b", "datastore": ":app", "fields": {}, "version": 1, "extra": 2}"#, "an undocumented member"),
            ("QueryPredicate", #"{"field": "a", "op": "like", "value": 1}"#, "an unknown predicate op"),
            ("QueryPredicate", #"{"and": [{"field": "a", "op": "exists"}], "or": []}"#, "two combinators"),
            ("QueryPredicate", #"{"field": "a", "op": "near", "point": {"latitude": 0, "longitude": 0}, "value": 1}"#, "near with a value"),
            ("QueryRequest", #"{"query": {"className": "A"}, "text": "where a = 1"}"#, "both request forms"),
            ("PullChange", #"{"kind": "upsert"}"#, "an upsert without an object"),
            ("MutationResult", #"{"mutationId": "m1", "status": "rejected"}"#, "a rejection without an error"),
            ("LiveClientMessage", #"{"type": "ping", "datastores": []}"#, "an unknown live message"),
            ("Error", #"{"code": "notFound"}"#, "an error without a message"),
            ("Identifier", #"":reserved""#, "a reserved ID"),
            ("Principal", #"":u1""#, "a reserved user ID"),
            ("PullRequest", #"{"datastore": ":app", "limit": 1001}"#, "a pull limit above the maximum"),
            ("Query", #"{"className": "A", "limit": 1001}"#, "a query limit above the maximum"),
            ("SignUpRequest", #"{"username": "ada", "password": "short"}"#, "a password under 8 characters"),
            ("UpdateRoleRequest", #"{"addUser": ["u1"]}"#, "an unknown key in a role update"),
        ]
        for (schema, json, label) in invalid {
            checker.add(label, .schema(schema, json: Data(json.utf8), valid: false))
        }
        let failures = try await checker.failures()
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    @Test("every example in the document validates, decodes with its Swift type, and re-encodes validly")
    func examplesDecode() async throws {
        let document = try OpenAPITestSupport.document()
        guard case .object(let schemas)? = OpenAPITestSupport.member(document, "components", "schemas") else {
            Issue.record("no component schemas")
            return
        }
        var checker = OpenAPISchemaChecker()
        var count = 0
        for (name, schema) in schemas.sorted(by: { $0.key < $1.key }) {
            guard case .array(let examples)? = OpenAPITestSupport.member(schema, "examples") else { continue }
            guard let roundTrip = OpenAPIWireTypes.roundTrips[name] else {
                Issue.record("schema \(name) has examples but no Swift type to decode them with")
                continue
            }
            for (index, example) in examples.enumerated() {
                count += 1
                let json = try JSONEncoder().encode(example)
                checker.add("\(name) example \(index)", .schema(name, json: json, valid: true))
                do {
                    let reencoded = try roundTrip(json)
                    checker.add("\(name) example \(index) re-encoded", .schema(name, json: reencoded, valid: true))
                } catch {
                    Issue.record("\(name) example \(index) does not decode: \(error)\n\(String(decoding: json, as: UTF8.self))")
                }
            }
        }
        #expect(count > 30)
        let failures = try await checker.failures()
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    @Test("random values and mutations validate against Value and Mutation")
    func randomWireValuesValidate() async throws {
        await propertyCheck(count: 4, input: OpenAPIRandomValues.batch(of: 150)) { batch in
            await OpenAPITestSupport.recordingErrors {
                var checker = OpenAPISchemaChecker()
                for (index, value) in batch.values.enumerated() {
                    try checker.add("value \(index): \(value)", value, schema: "Value")
                }
                for (index, mutation) in batch.mutations.enumerated() {
                    try checker.add("mutation \(index)", mutation, schema: "Mutation")
                }
                let failures = try await checker.failures()
                #expect(failures.isEmpty, "\(failures.prefix(20).joined(separator: "\n"))")
            }
        }
    }
}
