import Foundation
import RooftopTestSupport
import Testing

@testable import RooftopShared

/// ``StoredBodyScan``, the check a stored body passes before a pull page or a query's answer
/// splices it in as it is, against the reader-based check it replaced (``reference(_:)``, kept
/// here as the oracle): the same answer on stored bodies, on bodies damaged byte by byte, and at
/// the nesting limit; the one difference, a top-level key written with escapes, is refused.
@Suite("Stored bodies: the structural check before splicing")
struct StoredBodyScanTests {
    @Test("stored bodies and damaged copies of them: the scan answers as the reader-based check")
    func randomAndDamagedBodies() throws {
        var rng = SeededGenerator(seed: 41)
        var accepted = 0
        var refused = 0
        try DifferentialValues.forEachSnapshot(count: 300) { snapshot, _, _ in
            let body = try Self.body(snapshot, padded: rng.chance(20), reordered: rng.chance(30))
            #expect(Self.scan(body) == Self.reference(body), "\(body)")
            #expect(Self.scan(body) != nil, "a body as stored is spliced: \(body)")
            for _ in 0..<8 {
                let damaged = Self.damage(body, &rng)
                let expected = Self.reference(damaged)
                #expect(Self.scan(damaged) == expected, "\(String(decoding: damaged, as: UTF8.self))")
                if expected == nil { refused += 1 } else { accepted += 1 }
            }
        }
        // Both kinds were met: the comparison says something either way.
        #expect(accepted > 100 && refused > 100, "accepted \(accepted), refused \(refused)")
    }

    @Test("members that would add to the object or the page, repeated or unknown keys: refused as before")
    func hostileBodies() {
        let bodies = [
            #"{"fields":{}}},{"kind":"upsert","object":{"className":"X"}},{"fields":{}"#,
            #"{"fields":{"n":1},"className":"Y","version":9}"#,
            #"{"fields":{"n":1},"fields":{"n":2}}"#,
            #"{"fields":{"n":1}} {"fields":{}}"#,
            #"{"fields":{"n":"unterminated}}"#,
            #"{"fields":{"n":"escaped quote\"}}"#,
            #"{"fields":{"n":"two backslashes\\"}}"#,
            #"{"fields":[1,]}"#, #"{"fields":{"a":1,}}"#, #"{"fields":{,}}"#, #"{"fields":{"a"}}"#,
            #"{"fields":{"a":}}"#, #"{"fields":tru}"#, #"{"fields":nulll}"#, #"{"acl":{}}"#, "{}", "", "  ",
            #"{"fields":{}"#, #"{"fields":{}},"#, #"{"fields":{"a":[{"b":[]}]}}"#,
            " \n{\"fields\" : { \"a\" : [ 1 , 2 ] } , \"acl\" : { } }\t",
        ]
        for body in bodies {
            let bytes = Array(body.utf8)
            #expect(Self.scan(bytes) == Self.reference(bytes), "\(body)")
        }
        // The one difference: a key written with escapes, which the reader read as its text, is
        // refused (the server never writes one; such a body is decoded and written anew).
        let escapedKey = #"{"\u0066ields":{}}"#
        #expect(Self.reference(escapedKey) != nil && Self.scan(escapedKey) == nil)
    }

    @Test("nesting up to the reader's limit is accepted, one level more is refused, as before")
    func nestingLimit() {
        for levels in [DocumentReader.maxDepth - 2, DocumentReader.maxDepth - 1, DocumentReader.maxDepth, 300] {
            for open in ["[", "{\"k\":"] {
                let close = open == "[" ? "]" : "}"
                let body = Array(
                    (#"{"fields":{"n":"# + String(repeating: open, count: levels) + "1"
                        + String(repeating: close, count: levels) + "}}").utf8)
                #expect(Self.scan(body) == Self.reference(body), "\(levels) levels of \(open)")
            }
        }
        // The body's object and `fields` count: 254 more levels fit, 255 do not.
        let fits = Array(
            (#"{"fields":{"n":"# + String(repeating: "[", count: DocumentReader.maxDepth - 2) + "1"
                + String(repeating: "]", count: DocumentReader.maxDepth - 2) + "}}").utf8)
        #expect(Self.scan(fits) != nil)
        let deeper = Array(
            (#"{"fields":{"n":"# + String(repeating: "[", count: DocumentReader.maxDepth - 1) + "1"
                + String(repeating: "]", count: DocumentReader.maxDepth - 1) + "}}").utf8)
        #expect(Self.scan(deeper) == nil)
    }

    // MARK: Support

    private static func scan(_ bytes: [UInt8]) -> [UInt8]? {
        bytes.withUnsafeBufferPointer { text in
            StoredBodyScan.members(of: text).map { Array(text[$0]) }
        }
    }

    private static func scan(_ text: String) -> [UInt8]? { scan(Array(text.utf8)) }
    private static func reference(_ text: String) -> [UInt8]? { reference(Array(text.utf8)) }

    /// The check the scan replaced, on the reader: one object read with `readObject` (distinct
    /// keys) whose members are `fields` (required), `acl` and `fieldVersions`, each skipped with
    /// `skipValue`; the members between the braces, whitespace around them trimmed.
    private static func reference(_ bytes: [UInt8]) -> [UInt8]? {
        bytes.withUnsafeBufferPointer { text -> [UInt8]? in
            var reader = DocumentReader(bytes: text)
            var hasFields = false
            reader.skipWhitespace()
            let open = reader.index
            do {
                try reader.readObject { reader, key in
                    switch key {
                    case "fields": hasFields = true
                    case "acl", "fieldVersions": break
                    default: throw DocumentReader.Unhandled()
                    }
                    try reader.skipValue()
                }
            } catch {
                return nil
            }
            let close = reader.index - 1
            reader.skipWhitespace()
            guard hasFields, reader.index == text.count else { return nil }
            func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
            let inner = text[(open + 1)..<close]
            guard let start = inner.firstIndex(where: { !isSpace($0) }), let end = inner.lastIndex(where: { !isSpace($0) })
            else { return nil }
            return Array(text[start...end])
        }
    }

    /// A stored body of `snapshot`'s fields, ACL and field versions, as the server writes it, its
    /// members now and then in another order or padded with whitespace.
    private static func body(_ snapshot: ObjectSnapshot, padded: Bool, reordered: Bool) throws -> [UInt8] {
        var members: [[UInt8]] = []
        var fields = DocumentWriter()
        fields.raw("\"fields\":")
        try fields.fields(snapshot.fields)
        members.append(fields.bytes)
        if let acl = snapshot.acl {
            var writer = DocumentWriter()
            writer.raw("\"acl\":")
            writer.acl(acl)
            members.append(writer.bytes)
        }
        if let versions = snapshot.fieldVersions {
            var writer = DocumentWriter()
            writer.raw("\"fieldVersions\":")
            writer.fieldVersions(versions)
            members.append(writer.bytes)
        }
        if reordered { members.reverse() }
        let space: [UInt8] = padded ? Array(" \n\t".utf8) : []
        var body: [UInt8] = space + [UInt8(ascii: "{")] + space
        for (index, member) in members.enumerated() {
            if index > 0 { body += space + [UInt8(ascii: ",")] + space }
            body += member
        }
        return body + space + [UInt8(ascii: "}")] + space
    }

    /// `body` with a few bytes inserted, removed or replaced, mostly JSON's structural ones.
    private static func damage(_ body: [UInt8], _ rng: inout SeededGenerator) -> [UInt8] {
        let alphabet = Array(#"{}[],:"\ ntfe0-1aA"#.utf8) + [0x0A, 0x00, 0xC3]
        var bytes = body
        for _ in 0..<rng.int(1...3) {
            let position = rng.int(0...bytes.count)
            switch rng.int(0...3) {
            case 0: bytes.insert(alphabet[rng.int(0...(alphabet.count - 1))], at: position)
            case 1 where position < bytes.count: bytes.remove(at: position)
            case 2 where position < bytes.count: bytes[position] = alphabet[rng.int(0...(alphabet.count - 1))]
            default: bytes = Array(bytes.prefix(position))
            }
        }
        return bytes
    }
}
