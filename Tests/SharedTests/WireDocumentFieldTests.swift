import Foundation
import RooftopShared
import RooftopTestSupport
import Testing

/// One field read from a stored object's JSON (what a local query reads of a field the store keeps
/// no rows of) is the field the decoded object holds, whatever the other fields hold.
@Suite("Wire types: one field read from a stored object")
struct WireDocumentFieldTests {
    /// Field names, some of which need escapes in JSON or are not ASCII.
    static let names = ["a", "score", "with \"quote\"", "back\\slash", "é", "tab\tname", "objectId"]

    @Test("each field, built-in ones included, reads as the decoded object holds it", arguments: 1...4)
    func fieldsOfRandomObjects(seed: UInt64) throws {
        var rng = SeededGenerator(seed: seed)
        for round in 0..<150 {
            var fields: [String: Value] = [:]
            for name in Self.names.dropLast() where Bool.random(using: &rng) {
                fields[name] = RandomValues.edges.value(&rng, depth: 2)
            }
            let snapshot = ObjectSnapshot(
                className: "Thing", objectId: "t\(round)", datastore: .app, fields: fields,
                acl: Bool.random(using: &rng) ? nil : .only("u1"),
                createdAt: Bool.random(using: &rng) ? nil : Timestamp(millisecondsSinceEpoch: RandomValues.edges.int(&rng)),
                updatedAt: Bool.random(using: &rng) ? nil : Timestamp(millisecondsSinceEpoch: 7),
                version: 3, fieldVersions: Bool.random(using: &rng) ? nil : ["a": 2])
            let text = try snapshot.encodedDocument()
            let decoded = try ObjectSnapshot.decodeDocument(text)
            for name in Self.names + ["createdAt", "updatedAt", "missing", "ACL"] {
                let read = try ObjectSnapshot.field(name, ofDocument: text)
                // Compared by key: a NaN double is equal to itself there.
                #expect(read?.sortKey == decoded[name]?.sortKey, "round \(round), \(name) in \(text)")
            }
        }
    }

    @Test("the reader skips values of every kind without decoding them, and reads the one asked for")
    func skipsWithoutDecoding() throws {
        let text = """
            {"acl":{"*":{"read":true}},"className":"Thing","createdAt":5,"datastore":"app",\
            "fields":{"j":{"$json":{"x":[1,{"y":"\\u00e9\\""}],"z":null}},"n":-1.5e3,"s":"a\\\\b\\"c","t":[true,false,null],\
            "p":{"$pointer":{"className":"A","objectId":"b"}},"wanted":[1,"two",{"$double":"0.5"}]},\
            "objectId":"t1","updatedAt":null,"version":2}
            """
        let wanted = try DocumentReader.read(text) { try $0.readField("wanted") }
        #expect(wanted == .list([1, "two", .double(0.5)]))
        #expect(try DocumentReader.read(text) { try $0.readField("updatedAt") } == nil)
        #expect(try DocumentReader.read(text) { try $0.readField("createdAt") } == .date(Timestamp(millisecondsSinceEpoch: 5)))
        #expect(try DocumentReader.read(text) { try $0.readField("objectId") } == "t1")
        // A value the reader leaves to `Codable` (a pointer) is read through the whole object.
        #expect(try ObjectSnapshot.field("p", ofDocument: text) == .pointer(Pointer(className: "A", objectId: "b")))
    }

    @Test("a field met twice, a repeated `fields`, names equal as strings but not as bytes: read as the decoded object holds them")
    func repeatedAndEquivalentNames() throws {
        let head = #"{"className":"T","objectId":"o","datastore":"default","version":1,"#
        let cases: [(text: String, name: String)] = [
            (head + #""fields":{"a":1,"a":2}}"#, "a"),
            (head + #""fields":{"a":1},"fields":{"a":2,"b":3}}"#, "b"),
            (head + #""fields":{"a":1},"objectId":"p"}"#, "objectId"),
            // An accent composed and not: one name to a string (and to `Codable`'s dictionary).
            (head + "\"fields\":{\"e\u{301}\":1}}", "\u{E9}"),
            (head + "\"fields\":{\"\u{E9}\":1}}", "e\u{301}"),
            // The Kelvin sign is canonically a capital K.
            (head + "\"fields\":{\"\u{212A}\":1}}", "K"),
            (head + "\"fields\":{\"K\":1}}", "\u{212A}"),
        ]
        for (text, name) in cases {
            let decoded = try? JSONDecoder().decode(ObjectSnapshot.self, from: Data(text.utf8))
            let read = try? ObjectSnapshot.field(name, ofDocument: text)
            #expect(read == decoded?[name], "\(name) in \(text)")
        }
        // Read directly where nothing is repeated or equivalent only as a string.
        #expect(try DocumentReader.read(head + #""fields":{"a":1,"b":2}}"#) { try $0.readField("b") } == 2)
        #expect(try DocumentReader.read(head + "\"fields\":{\"\u{E9}\":1}}") { try $0.readField("\u{E9}") } == 1)
    }

    @Test("nesting past the reader's depth is left to Codable, not followed down the stack")
    func deepNesting() throws {
        let deep = 100_000
        let nested = String(repeating: "[", count: deep) + String(repeating: "]", count: deep)
        #expect(throws: DocumentReader.Unhandled.self) { try DocumentReader.read(nested) { try $0.skipValue() } }
        #expect(throws: DocumentReader.Unhandled.self) { try DocumentReader.read(nested) { try $0.readValue() } }
        // A pull page whose first key nests that deep: no continuation, and no crash.
        let page = "{\"x\":\(nested),\"checkpoint\":\"c\",\"hasMore\":true,\"changes\":[]}"
        #expect(PullResponse.continuation(of: page) == nil)
        // At the limit itself it is read.
        let limit = DocumentReader.maxDepth
        let deepest = String(repeating: "[", count: limit) + String(repeating: "]", count: limit)
        try DocumentReader.read(deepest) { try $0.skipValue() }
        let shallow = "{\"x\":[[1]],\"checkpoint\":\"c\",\"hasMore\":true,\"changes\":[]}"
        #expect(PullResponse.continuation(of: shallow) == Checkpoint("c"))
    }

    @Test("text that is not a stored object fails the read")
    func malformed() {
        for text in ["", "{", "{\"fields\":{\"a\":1}", "[1]", "{\"className\":\"A\",\"fields\":{\"a\":\"unterminated}}"] {
            #expect(throws: (any Error).self, "\(text)") { try ObjectSnapshot.field("a", ofDocument: text) }
        }
    }
}
