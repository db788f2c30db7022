import Foundation
import RooftopShared
import RooftopTestSupport
import Testing

/// ``DocumentReader`` must read every stored document exactly as `Codable` does, or leave it to
/// `Codable`: random objects of every value kind (edge numbers, strings with NUL bytes and
/// escapes, long texts) are encoded as the stores encode them and decoded both ways; damaged
/// documents must fail or succeed alike both ways.
@Suite("Stored documents: the direct reader agrees with Codable")
struct DocumentReaderTests {
    @Test("random objects decode to the same values both ways")
    func randomDocuments() throws {
        var read = 0
        var total = 0
        try DifferentialValues.forEachSnapshot(count: 400) { snapshot, seed, index in
            let text = try DocumentCoding.encode(snapshot)
            let reference = try DocumentCoding.decode(ObjectSnapshot.self, from: text)
            let fast = try ObjectSnapshot.decodeDocument(text)
            #expect(try DocumentCoding.encode(fast) == DocumentCoding.encode(reference), "seed \(seed) #\(index): \(text)")
            if (try? DocumentReader.read(text, { try $0.readObjectSnapshot() })) != nil { read += 1 }
            total += 1
        }
        // These objects mix every kind, half of which the reader leaves to Codable; still, some
        // documents must be read directly, or the comparison above compares nothing.
        #expect(read * 10 > total, "the reader read \(read) of \(total) documents itself")
    }

    @Test("an object of the common kinds is read directly, not by Codable")
    func commonKindsReadDirectly() throws {
        let point = try GeoPoint(latitude: 40.860350947772176, longitude: -3.101136604381823)
        let snapshot = ObjectSnapshot(
            className: "BenchItem", objectId: "o1", datastore: .default,
            fields: [
                "category": "cat-18", "score": 123_456, "done": true, "tags": ["a", "b\"c"], "location": .geoPoint(point),
                "ratio": .double(0.1), "when": .date(Timestamp(millisecondsSinceEpoch: 1_700_000_000_000)), "none": .null,
                "note": .string(String(repeating: "é", count: 300)),
            ],
            acl: ACL([.user("u1"): ACL.Access(read: true, write: true), .everyone: ACL.Access(read: true)]),
            createdAt: Timestamp(millisecondsSinceEpoch: 1), updatedAt: Timestamp(millisecondsSinceEpoch: 2), version: 3,
            fieldVersions: ["score": 3])
        let text = try DocumentCoding.encode(snapshot)
        #expect(try DocumentReader.read(text, { try $0.readObjectSnapshot() }) == snapshot)
    }

    @Test("a page's ACLs: one the same as the last is reused, one that differs by a byte, a key or its layout is read")
    func pageACLs() throws {
        let owner = ACL([.user("u1"): ACL.Access(read: true, write: true), .everyone: ACL.Access(read: true)])
        let readOnly = ACL([.user("u1"): ACL.Access(read: true), .everyone: ACL.Access(read: true)])
        let other = ACL([.user("u2"): ACL.Access(read: true, write: true), .everyone: ACL.Access(read: true)])
        let roles = ACL([.role("staff"): ACL.Access(read: true)])
        let acls: [ACL?] = [owner, owner, readOnly, owner, other, other, nil, roles, owner, roles, roles]
        let objects = try acls.enumerated().map { index, acl in
            try DocumentCoding.encode(
                ObjectSnapshot(
                    className: "Item", objectId: "o\(index)", datastore: .default, fields: ["n": .int(Int64(index))],
                    acl: acl, version: 1))
        }
        // The same ACL laid out otherwise (members swapped, spaces): equal, but read, not reused.
        let spaced = objects[0].replacingOccurrences(of: #""acl":{"#, with: #""acl": {"#)
        #expect(spaced != objects[0])
        let texts = objects + [spaced, objects[0]]
        let body = #"{"checkpoint":"c:1","hasMore":false,"changes":["#
            + texts.map { #"{"kind":"upsert","object":"# + $0 + "}" }.joined(separator: ",") + "]}"
        let (page, _) = try PullResponse.decodeDocumentWithObjectTexts(Data(body.utf8))
        let reference = try JSONDecoder().decode(PullResponse.self, from: Data(body.utf8))
        #expect(page == reference)
        #expect(page.changes.map { change -> ACL? in if case .upsert(let object) = change { object.acl } else { nil } } == acls + [owner, owner])
        // Read directly, not left to Codable.
        #expect(try DocumentReader.read(body) { try $0.readPullResponse() } == reference)
    }

    @Test("damaged documents fail, or decode to the same value, both ways")
    func damagedDocuments() throws {
        var rng = SeededGenerator(seed: 7)
        let replacements = Array("{}[]\",:0123456789-.eE\\ntfu aé$".utf8)
        for index in 0..<3_000 {
            let snapshot = DifferentialValues.snapshot(
                className: "T", objectId: "o\(index)", datastore: .default, version: 1, rng: &rng)
            var bytes = Array(try DocumentCoding.encode(snapshot).utf8)
            for _ in 0..<rng.int(1...3) {
                let position = rng.int(0...(bytes.count - 1))
                switch rng.int(0...2) {
                case 0: bytes[position] = rng.pick(replacements)
                case 1: bytes.remove(at: position)
                default: bytes.insert(rng.pick(replacements), at: position)
                }
            }
            let text = String(decoding: bytes, as: UTF8.self)
            let reference = try? DocumentCoding.decode(ObjectSnapshot.self, from: text)
            let fast = try? ObjectSnapshot.decodeDocument(text)
            #expect(
                (try fast.map(DocumentCoding.encode)) == (try reference.map(DocumentCoding.encode)),
                "#\(index): \(text)")
        }
    }

    @Test("integers at the edges of 64 bits, escapes and surrogates read exactly")
    func edges() throws {
        let texts = [
            #"{"n": 9223372036854775807, "m": -9223372036854775808}"#,
            #"{"n": 9223372036854775808}"#, #"{"n": -9223372036854775809}"#, #"{"n": 2.0}"#, #"{"n": 1e2}"#,
            #"{"n": 01}"#, #"{"n": -0}"#, #"{"s": "a\"b\\c\/d\b\f\n\r\t\u0000\u00e9\ud83d\ude00"}"#,
            #"{"s": "\ud83d"}"#, #"{"s": "\ude00x"}"#, #"{"d": {"$double": "-0.0"}}"#,
            #"{"d": {"$double": "NaN"}, "e": {"$double": "1e400"}}"#, #"{"g": {"$geoPoint": {"latitude": 1e1, "longitude": -0.5E-3}}}"#,
            #"{"g": {"$geoPoint": {"latitude": 91, "longitude": 0}}}"#, #"{"a": 1, "a": 2}"#, #"{"t": {"$date": 5, "$day": "2026-01-01"}}"#,
        ]
        for text in texts {
            let reference = try? DocumentCoding.decode([String: Value].self, from: text)
            let fast = try? DocumentCoding.decode([String: Value].self, from: text) { try $0.readFields() }
            #expect((try fast.map(DocumentCoding.encode)) == (try reference.map(DocumentCoding.encode)), "\(text)")
        }
    }

    @Test("a repeated key is refused, among a few keys and past the ones compared in a list")
    func repeatedKeys() throws {
        func object(_ keys: [String]) -> String {
            "{" + keys.enumerated().map { "\"\($1)\": \($0)" }.joined(separator: ", ") + "}"
        }
        for count in [1, 2, 15, 16, 17, 18, 40] {
            let keys = (0..<count).map { "k\($0)" }
            #expect(try DocumentReader.read(object(keys)) { try $0.readFields() }.count == count, "\(count) distinct keys")
            for repeated in Set([0, count / 2, count - 1]) {
                let text = object(keys + [keys[repeated]])
                #expect(throws: DocumentReader.Unhandled.self, "\(count) keys, then k\(repeated) again") {
                    try DocumentReader.read(text) { try $0.readFields() }
                }
            }
        }
        // The same key written with an escape is the same key.
        #expect(throws: DocumentReader.Unhandled.self) {
            try DocumentReader.read(#"{"a": 1, "\u0061": 2}"#) { try $0.readFields() }
        }
    }

    @Test("a skipped string ends at the first quote no odd run of backslashes precedes, as scanning byte by byte finds")
    func skippedStrings() throws {
        // Byte by byte, each backslash taking the byte after it: the reader's rule before it
        // searched for quotes with `memchr`. Answers how many strings the array holds, or `nil`.
        func reference(_ bytes: [UInt8]) -> Int? {
            let (quote, backslash) = (UInt8(ascii: "\""), UInt8(ascii: "\\"))
            guard bytes.first == UInt8(ascii: "[") else { return nil }
            var (index, count) = (1, 0)
            while true {
                guard index < bytes.count, bytes[index] == quote else { return nil }
                index += 1
                var closed = false
                while index < bytes.count {
                    if bytes[index] == quote {
                        index += 1
                        closed = true
                        break
                    }
                    index += bytes[index] == backslash ? 2 : 1
                }
                guard closed, index < bytes.count else { return nil }
                count += 1
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                } else {
                    return bytes[index] == UInt8(ascii: "]") && index + 1 == bytes.count ? count : nil
                }
            }
        }
        var rng = SeededGenerator(seed: 13)
        // With the bytes beside the bounds of the word tests (`#` and `]` beside the quote and
        // the backslash, bytes of 0x80 and more, 0x00 and 0x01, where a borrow starts).
        let alphabet = Array(#"ab\"n,]#"#.utf8) + [0xA2, 0xDC, 0x00, 0x01]
        var (agreed, ended) = (0, 0)
        for _ in 0..<5_000 {
            // Short strings of any bytes (their end within the two words looked at first) and
            // longer ones of mostly letters (their end found past them, with `memchr`).
            let strings = (0..<rng.int(1...3)).map { _ in
                let long = rng.chance(40)
                let bytes = (0..<(long ? rng.int(13...40) : rng.int(0...12))).map { _ in
                    long && !rng.chance(8) ? UInt8(ascii: "a") : alphabet[rng.int(0...(alphabet.count - 1))]
                }
                return "\"" + String(decoding: bytes, as: UTF8.self) + "\""
            }
            let document = "[" + strings.joined(separator: ",") + "]"
            let expected = reference(Array(document.utf8))
            let skipped = try? DocumentReader.read(document) { reader in
                var count = 0
                try reader.readArray { element in
                    try element.skipValue()
                    count += 1
                }
                return count
            }
            #expect(skipped == expected, "\(document)")
            if skipped == expected { agreed += 1 }
            if expected != nil { ended += 1 }
        }
        #expect(agreed == 5_000 && ended > 500, "both outcomes are met: \(ended) read whole")
    }

    @Test("a skipped string ends right at the edges of the words its end is looked for in")
    func skippedStringsAtWordEdges() throws {
        // The strings of an array skipped one by one: how many, or `nil` when it is refused.
        func skipped(_ document: String) -> Int? {
            try? DocumentReader.read(document) { reader in
                var count = 0
                try reader.readArray { element in
                    try element.skipValue()
                    count += 1
                }
                return count
            }
        }
        // One string alone: its closing quote is the text's last byte.
        func alone(_ document: String) -> Bool { (try? DocumentReader.read(document) { try $0.skipValue() }) != nil }
        for length in 0..<40 {
            let plain = String(repeating: "a", count: length)
            #expect(alone("\"\(plain)\""), "a closing quote at offset \(length), the text's last byte")
            #expect(skipped("[\"\(plain)\",\"b\"]") == 2, "a closing quote at offset \(length), more after it")
            // A backslash just before the place of a quote escapes it: the string ends later.
            if length > 0 {
                let escaped = String(repeating: "a", count: length - 1) + "\\\""
                #expect(skipped("[\"\(escaped)x\",\"b\"]") == 2, "an escaped quote at offset \(length)")
                #expect(alone("\"\(escaped)\""), "an escaped quote at offset \(length), then the end")
            }
            // Runs of two and three backslashes before a quote, across the first two words: two
            // leave the quote to end the string; three escape it, so the next quote ends the
            // string and a `b` follows it, which the array refuses.
            for run in 2...3 where length >= run {
                let text = String(repeating: "a", count: length - run) + String(repeating: "\\", count: run)
                #expect(skipped("[\"\(text)\",\"b\"]") == (run == 2 ? 2 : nil), "\(run) backslashes before offset \(length)")
            }
        }
        #expect(!alone("\"abc") && !alone("\"abcdefghijklmnopq\\\""), "an unclosed string is refused")
    }

    @Test("a zero-byte test marks the first zero byte of a word exactly, whatever the bytes after it")
    func firstZeroByteOfAWord() {
        func word(_ bytes: [UInt8]) -> UInt64 {
            bytes.enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
        }
        let edges: [UInt8] = [0x00, 0x01, 0x02, 0x7F, 0x80, 0x81, 0xFE, 0xFF, UInt8(ascii: "a")]
        var rng = SeededGenerator(seed: 19)
        var checked = 0
        for _ in 0..<20_000 {
            let bytes = (0..<8).map { _ in rng.pick(edges) }
            let marks = DocumentReader.zeroBytes(word(bytes))
            let first = bytes.firstIndex(of: 0)
            #expect((marks == 0) == (first == nil), "\(bytes)")
            if let first {
                #expect(marks.trailingZeroBitCount / 8 == first, "\(bytes)")
                checked += 1
            }
        }
        #expect(checked > 10_000)
    }

    @Test("a word of eight bytes has a quote, a backslash or a control byte exactly when one of its bytes is one")
    func specialBytesInAWord() {
        func special(_ byte: UInt8) -> Bool { byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 }
        func word(_ bytes: [UInt8]) -> UInt64 {
            bytes.enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
        }
        // The bytes beside each bound (a borrow from one byte into the next is where such tests
        // go wrong), everywhere in a word of ordinary bytes, and random words of them.
        let edges: [UInt8] = [0x00, 0x01, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x5B, 0x5C, 0x5D, 0x7F, 0x80, 0x81, 0xA2, 0xDC, 0xFF]
        var checked = 0
        for edge in edges {
            for position in 0..<8 {
                for filler in [UInt8(ascii: "a"), 0x00, 0x20, 0x80, 0xFF] {
                    var bytes = [UInt8](repeating: filler, count: 8)
                    bytes[position] = edge
                    #expect(DocumentReader.hasSpecialByte(word(bytes)) == bytes.contains(where: special), "\(bytes)")
                    checked += 1
                }
            }
        }
        var rng = SeededGenerator(seed: 17)
        var found = 0
        for _ in 0..<20_000 {
            let bytes = (0..<8).map { _ in rng.chance(20) ? rng.pick(edges) : UInt8(rng.int(0...255)) }
            let expected = bytes.contains(where: special)
            #expect(DocumentReader.hasSpecialByte(word(bytes)) == expected, "\(bytes)")
            if expected { found += 1 }
        }
        #expect(checked == 640 && found > 2_000 && found < 18_000, "both answers are met: \(found) words with one")
    }

    @Test("strings read eight bytes at a time end, unescape and refuse where Codable does, at every offset")
    func stringsAtEveryOffset() throws {
        var rng = SeededGenerator(seed: 19)
        let pieces = ["a", "Z", " ", "é", "😀", "\u{7F}", #"\""#, #"\\"#, #"\n"#, #"\u0041"#, "\u{01}", "\u{1F}", "\t"]
        var (read, refused) = (0, 0)
        for _ in 0..<4_000 {
            // Pieces at random offsets from the string's start (where its words of eight begin),
            // and a second string after it, so that a quote the scan missed reads a wrong string
            // instead of running off the end.
            let body = (0..<rng.int(0...30)).map { _ in rng.chance(80) ? "x" : rng.pick(pieces) }.joined()
            let text = "[\"" + body + "\", \"" + String(repeating: "y", count: rng.int(0...20)) + "\"]"
            let reference = try? JSONDecoder().decode([String].self, from: Data(text.utf8))
            let fast = try? DocumentReader.read(text) { reader -> [String] in
                var strings: [String] = []
                try reader.readArray { strings.append(try $0.readString()) }
                return strings
            }
            // Every piece is one the reader reads itself: it refuses exactly what Codable refuses.
            #expect(fast == reference, "\(text)")
            if fast != nil { read += 1 } else { refused += 1 }
        }
        #expect(read > 1_000 && refused > 300, "both outcomes are met: \(read) read, \(refused) refused")
    }

    @Test("a page's objects of other classes and datastores, the same length or not, read as Codable reads them")
    func pageClassesAndDatastores() throws {
        let datastores = [DatastoreID.default, .app, try DatastoreID("team-aa"), try DatastoreID("team-bb")]
        let classes = ["Item", "Iten", "Items", "Item"]
        var rng = SeededGenerator(seed: 23)
        let texts = try (0..<60).map { index in
            try DocumentCoding.encode(
                ObjectSnapshot(
                    className: rng.pick(classes), objectId: "o\(index)", datastore: rng.pick(datastores),
                    fields: ["n": .int(Int64(index))], version: 1))
        }
        let body = #"{"checkpoint":"c:1","hasMore":false,"changes":["#
            + texts.map { #"{"kind":"upsert","object":"# + $0 + "}" }.joined(separator: ",") + "]}"
        let reference = try JSONDecoder().decode(PullResponse.self, from: Data(body.utf8))
        #expect(try DocumentReader.read(body) { try $0.readPullResponse() } == reference)
        // An envelope's key repeated, unknown or written with an escape: left to Codable, which
        // gives its own answer.
        let object = texts[0]
        let variants = [
            object.replacingOccurrences(of: #""version":1"#, with: #""version":1,"version":2"#),
            object.replacingOccurrences(of: #""version":1"#, with: #""version":1,"versions":2"#),
            object.replacingOccurrences(of: #""objectId""#, with: #""object\u0049d""#),
            object.replacingOccurrences(of: #""fields":{"n":0}"#, with: #""fields":{"n":0,"\u006e":1}"#),
        ]
        Self.expectLeftToCodable(variants, of: object, read: { try $0.readObjectSnapshot() }) {
            try ObjectSnapshot.decodeDocument($0)
        }
    }

    /// Each of `variants` (of `original`, each different from it) is refused by the reader
    /// (`read`) and decodes through `decode` as `Codable` decodes it.
    private static func expectLeftToCodable<T: Decodable & Equatable>(
        _ variants: [String], of original: String, read: (inout DocumentReader) throws -> T,
        decode: (String) throws -> T
    ) {
        for variant in variants {
            #expect(variant != original)
            #expect(throws: DocumentReader.Unhandled.self, "\(variant)") { try DocumentReader.read(variant, read) }
            let codable = try? JSONDecoder().decode(T.self, from: Data(variant.utf8))
            #expect((try? decode(variant)) == codable, "\(variant)")
        }
    }

    @Test("a REST write's body is read directly as Codable reads it; other shapes and keys are left to Codable")
    func objectWriteBodies() throws {
        let bodies = [
            #"{"objectId":"o1","fields":{"n":1,"s":"x","b":true,"l":["a","b"],"d":{"$date":5}},"acl":{"*":{"read":true}}}"#,
            #"{"fields":{"n":1},"update":[{"field":"c","do":{"op":"increment","amount":2}}],"baseVersion":3}"#,
            #"{"objectId":null,"fields":null,"update":null,"acl":null,"baseVersion":null}"#,
            #"{}"#,
        ]
        for body in bodies {
            let reference = try JSONDecoder().decode(ObjectWriteBody.self, from: Data(body.utf8))
            #expect(try DocumentReader.read(body) { try $0.readObjectWriteBody() } == reference, "\(body)")
        }
        let body = bodies[1]
        let variants = [
            body.replacingOccurrences(of: #""baseVersion":3"#, with: #""baseVersion":-1"#),
            body.replacingOccurrences(of: #""baseVersion":3"#, with: #""baseVersion":3,"baseVersion":4"#),
            body.replacingOccurrences(of: #""baseVersion":3"#, with: #""baseVersion":3,"version":4"#),
            body.replacingOccurrences(of: #""fields":{"n":1}"#, with: #""fields":{"n m":1}"#),
            body.replacingOccurrences(of: #""fields""#, with: #""field\u0073""#),
            body.replacingOccurrences(of: #""op":"increment""#, with: #""op":"remove""#),
        ]
        Self.expectLeftToCodable(variants, of: body, read: { try $0.readObjectWriteBody() }) {
            try JSONDecoder().decode(ObjectWriteBody.self, from: Data($0.utf8))
        }
    }

    @Test("a push's and a tagged value's keys, repeated, unknown or escaped, are left to Codable")
    func pushAndTagKeys() throws {
        let mutation = #"{"mutationId":"m_0123456789abcdef","datastore":"default","className":"T","objectId":"o1","#
            + #""change":{"fields":{"n":1,"d":{"$date":5},"p":{"$geoPoint":{"latitude":1.5,"longitude":2}}},"#
            + #""update":[{"field":"s","do":{"op":"increment","amount":2}}]}}"#
        let push = #"{"mutations":["# + mutation + "]}"
        let reference = try JSONDecoder().decode(PushRequest.self, from: Data(push.utf8))
        #expect(try DocumentReader.read(push) { try $0.readPushRequest() } == reference, "read directly")
        let variants = [
            push.replacingOccurrences(of: #""objectId":"o1","#, with: #""objectId":"o1","objectId":"o2","#),
            push.replacingOccurrences(of: #""objectId""#, with: #""object\u0049d""#),
            push.replacingOccurrences(of: #""op":"increment","#, with: #""op":"increment","op":"set","#),
            push.replacingOccurrences(of: #""field":"s","#, with: #""field":"s","fields":"t","#),
            push.replacingOccurrences(of: #"{"$date":5}"#, with: #"{"$date":5,"$date":6}"#),
            push.replacingOccurrences(of: #"{"$date":5}"#, with: #"{"$date":5,"$double":"1"}"#),
            push.replacingOccurrences(of: #""latitude":1.5,"#, with: #""latitude":1.5,"latitude":3,"#),
            push.replacingOccurrences(of: #""longitude":2"#, with: #""longitude":2,"altitude":3"#),
            push.replacingOccurrences(of: #""fields":{"n":1,"#, with: #""fields":{"x":0},"fields":{"n":1,"#),
            push.replacingOccurrences(of: #""change":{"#, with: #""change":{"acl":null,"shape":1,"#),
            push.replacingOccurrences(of: #"{"$date":5}"#, with: #"{"$bytes":"AA=="}"#),
            push.replacingOccurrences(of: #""className""#, with: #""class\u004eame""#),
        ]
        Self.expectLeftToCodable(variants, of: push, read: { try $0.readPushRequest() }) {
            try PushRequest.decodeDocument($0)
        }
        // Mutations of two datastores and classes in turn: each its own, though the reader
        // reuses what the one before read when the bytes are the same.
        let mixed = #"{"mutations":["# + [("default", "T"), ("app-x", "T"), ("app-x", "U"), ("default", "U")].enumerated()
            .map { index, names in
                #"{"mutationId":"m\#(index)","datastore":"\#(names.0)","className":"\#(names.1)","objectId":"o\#(index)","#
                    + #""change":{"fields":{"n":\#(index)}}}"#
            }.joined(separator: ",") + "]}"
        let mixedReference = try JSONDecoder().decode(PushRequest.self, from: Data(mixed.utf8))
        #expect(try DocumentReader.read(mixed) { try $0.readPushRequest() } == mixedReference)
        // A push's answer: an applied result's keys repeated or unknown go to Codable too.
        let answer = #"{"results":[{"mutationId":"m1","status":"applied","version":2,"object":null}]}"#
        let answerReference = try JSONDecoder().decode(PushResponse.self, from: Data(answer.utf8))
        #expect(try DocumentReader.read(answer) { try $0.readPushResponse() } == answerReference)
        for variant in [
            answer.replacingOccurrences(of: #""version":2"#, with: #""version":2,"version":3"#),
            answer.replacingOccurrences(of: #""version":2"#, with: #""version":2,"merges":[]"#),
        ] {
            #expect(throws: DocumentReader.Unhandled.self, "\(variant)") {
                try DocumentReader.read(variant) { try $0.readPushResponse() }
            }
            let codable = try? JSONDecoder().decode(PushResponse.self, from: Data(variant.utf8))
            #expect((try? PushResponse.decodeDocument(Data(variant.utf8))) == codable, "\(variant)")
        }
    }

    @Test("pull pages decode to the same value both ways, damaged or not")
    func pullPages() throws {
        var rng = SeededGenerator(seed: 11)
        var read = 0
        for index in 0..<300 {
            var changes: [PullChange] = []
            for position in 0..<rng.int(0...6) {
                switch rng.int(0...3) {
                case 0: changes.append(.tombstone(className: "T", objectId: "t\(position)", version: Int64(rng.int(1...9))))
                case 1: changes.append(.removal(className: "U", objectId: "r\(position)"))
                default:
                    changes.append(
                        .upsert(
                            DifferentialValues.snapshot(
                                className: "T", objectId: "u\(position)", datastore: .default, version: 2, rng: &rng)))
                }
            }
            let page = PullResponse(
                changes: changes, checkpoint: Checkpoint("c\(index)"), hasMore: rng.chance(50),
                remaining: rng.chance(50) ? rng.int(0...1000) : nil,
                roles: rng.chance(30) ? (0..<rng.int(0...3)).map { "R\"\\\($0)" } : nil)
            var writer = DocumentWriter()
            try writer.pullResponse(page)
            #expect(
                try DocumentCoding.encode(JSONDecoder().decode(PullResponse.self, from: Data(writer.bytes)))
                    == DocumentCoding.encode(page), "the server's writer")
            var bytes = Array(try JSONEncoder().encode(page))
            if (try? DocumentReader.read(String(decoding: bytes, as: UTF8.self), { try $0.readPullResponse() })) != nil {
                read += 1
            }
            // Where the pull goes on: read ahead of the changes in the server's order (checkpoint
            // first), and past them in `Codable`'s.
            let next = page.hasMore ? page.checkpoint : nil
            #expect(PullResponse.continuation(of: String(decoding: writer.bytes, as: UTF8.self)) == next)
            #expect(PullResponse.continuation(of: String(decoding: bytes, as: UTF8.self)) == next)
            let cut = String(decoding: writer.bytes.prefix(writer.bytes.count / 2), as: UTF8.self)
            if !page.hasMore {
                #expect(PullResponse.continuation(of: cut) == nil, "a last page, even cut, has no continuation")
            } else if cut.contains("\"changes\"") {
                #expect(PullResponse.continuation(of: cut) == next, "read before the changes, which are cut")
            }
            if rng.chance(50), !bytes.isEmpty {
                bytes[rng.int(0...(bytes.count - 1))] = rng.pick(Array("{}[]\",:0-9ntf".utf8))
            }
            let data = Data(bytes)
            let reference = try? JSONDecoder().decode(PullResponse.self, from: data)
            let fast = try? PullResponse.decodeDocument(data)
            #expect(
                (try fast.map { try DocumentCoding.encode($0) }) == (try reference.map { try DocumentCoding.encode($0) }),
                "#\(index): \(String(decoding: data, as: UTF8.self))")
        }
        #expect(read > 30, "the reader read \(read) of 300 pages itself")
    }

    /// A random push: creations as plain fields, updates with operations (some of the kinds the
    /// reader leaves to Codable), deletes, ACLs, with and without base versions.
    private static func randomPush(_ index: Int, rng: inout SeededGenerator) -> PushRequest {
        let mutations = (0..<rng.int(0...5)).map { position -> Mutation in
            let snapshot = DifferentialValues.snapshot(
                className: "T", objectId: "o\(position)", datastore: .default, version: 1, rng: &rng)
            let fields = snapshot.fields.map { FieldUpdate($0.key, .set($0.value)) }
            let change: ObjectChange
            switch rng.int(0...5) {
            case 0: change = .delete
            case 1: change = .update(ordering: fields, acl: snapshot.acl)
            case 2:
                change = .update([
                    FieldUpdate("n", .increment(.int(Int64(rng.int(-5...5))))), FieldUpdate("gone", .unset),
                    FieldUpdate("tags", .listAppend(Array(snapshot.fields.values.prefix(2)))),
                ])
            case 3: change = .update([FieldUpdate("tags", .listInsert(index: 0, value: "x"))])
            default: change = .update(ordering: fields + [FieldUpdate("n", .increment(1))])
            }
            return Mutation(
                mutationId: MutationID.generate(), datastore: rng.pick([.app, .default]), className: "T",
                objectId: "o\(index)-\(position)", baseVersion: rng.chance(50) ? Int64(rng.int(0...9)) : nil,
                change: change)
        }
        return PushRequest(mutations: mutations, compact: rng.chance(30))
    }

    @Test("push requests decode to the same value both ways, damaged or not")
    func pushRequests() throws {
        var rng = SeededGenerator(seed: 13)
        var read = 0
        let replacements = Array("{}[]\",:0123456789-ntf".utf8)
        for index in 0..<600 {
            let push = Self.randomPush(index, rng: &rng)
            var bytes = Array(try JSONEncoder().encode(push))
            let text = String(decoding: bytes, as: UTF8.self)
            if (try? DocumentReader.read(text, { try $0.readPushRequest() })) != nil { read += 1 }
            #expect(try PushRequest.decodeDocument(text) == push, "#\(index): \(text)")
            if rng.chance(60), !bytes.isEmpty {
                for _ in 0..<rng.int(1...2) {
                    bytes[rng.int(0...(bytes.count - 1))] = rng.pick(replacements)
                }
            }
            let damaged = String(decoding: bytes, as: UTF8.self)
            let reference = try? JSONDecoder().decode(PushRequest.self, from: Data(damaged.utf8))
            let fast = try? PushRequest.decodeDocument(damaged)
            #expect(fast == reference, "#\(index): \(damaged)")
        }
        // Random values mix every kind, many of which the reader leaves to Codable.
        #expect(read > 100, "the reader read \(read) of 600 pushes itself")
    }

    @Test("pushes the direct writer writes, of every operation kind, read back as the push written, both ways")
    func writtenPushes() throws {
        var rng = SeededGenerator(seed: 29)
        for index in 0..<600 {
            var push = Self.randomPush(index, rng: &rng)
            let value = DifferentialValues.value(&rng)
            // Every operation kind, some in each push, after a run of plain sets or alone.
            let operations: [FieldOperation] = [
                .set(value), .unset, .increment(.double(1.5)), .listAppend([value, "a\"b/c\n"]),
                .listInsert(index: rng.int(0...9), value: value), .listRemove(index: rng.int(0...9)),
                .listMove(from: rng.int(0...9), to: rng.int(0...9)), .listReplace(index: 2, value: value),
                .relationAdd(className: "U", objectIds: ["u1", "u2"]), .relationRemove(className: "U", objectIds: []),
            ]
            let updates = (0..<rng.int(1...4)).map { _ in FieldUpdate(rng.pick(["a", "b", "c/d"]), rng.pick(operations)) }
            push.mutations.append(
                Mutation(
                    datastore: .default, className: "T", objectId: "x\(index)", baseVersion: rng.chance(50) ? 1 : nil,
                    change: .update(ordering: updates, acl: rng.chance(50) ? .only("u1") : nil)))
            let bytes = try push.encodedBody()
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(try JSONDecoder().decode(PushRequest.self, from: Data(bytes)) == push, "#\(index): \(text)")
            #expect(try PushRequest.decodeDocument(text) == push, "#\(index): \(text)")
            // What the client sends: the push as written (kinds left to `JSONEncoder` may order
            // their members differently from one encoding to the next).
            #expect(try PushRequest.decodeDocument(String(decoding: try ClientRequestBody.encoded(push), as: UTF8.self)) == push)
        }
        // What is sent, byte for byte: the leading plain sets as `fields`.
        let plain = PushRequest(
            mutations: [
                Mutation(
                    datastore: .default, className: "T", objectId: "p", baseVersion: 2,
                    change: .update([FieldUpdate("a", .set(1)), FieldUpdate("b", .set("x")), FieldUpdate("n", .increment(1))]))
            ], compact: true)
        #expect(
            String(decoding: try ClientRequestBody.encoded(plain), as: UTF8.self)
                == #"{"mutations":[{"baseVersion":2,"change":{"fields":{"a":1,"b":"x"},"update":[{"field":"n","do":{"op":"increment","amount":1}}]},"className":"T","datastore":"default","mutationId":""#
                + plain.mutations[0].mutationId.rawValue + #"","objectId":"p"}],"compact":true}"#)
        // Plain sets alone, with an ACL; nothing but operations; a delete.
        var writer = DocumentWriter()
        try writer.objectChange(.update([FieldUpdate("a", .set(1))], acl: .only("u1")), plainFields: true)
        try writer.objectChange(.update([FieldUpdate("b", .unset), FieldUpdate("a", .set(1))]), plainFields: true)
        try writer.objectChange(.update([]), plainFields: true)
        try writer.objectChange(.delete, plainFields: true)
        #expect(
            writer.text
                == #"{"fields":{"a":1},"acl":{"u1":{"read":true,"write":true}}}"#
                + #"{"update":[{"field":"b","do":{"op":"unset"}},{"field":"a","do":{"op":"set","value":1}}]}"#
                + #"{"update":[]}{"delete":true}"#)
        // Creations of the common kinds, as a sync pushes them: the server's reader reads them itself.
        var created: [Mutation] = []
        for index in 0..<50 {
            let point = try GeoPoint(latitude: 40, longitude: Double(index) - 3)
            let fields: [String: Value] = [
                "score": .int(Int64(index)), "category": .string("c\(index % 7)"), "done": .bool(index % 2 == 0),
                "tags": .list([.string("a"), .string("b\"c")]), "sum": .double(Double(index) / 3), "at": .geoPoint(point),
            ]
            created.append(
                Mutation(
                    datastore: .default, className: "T", objectId: "c\(index)",
                    change: .update(ObjectChange.updates(fields: fields, then: nil), acl: .only("u1"))))
        }
        let creations = PushRequest(mutations: created, compact: true)
        let text = String(decoding: try creations.encodedBody(), as: UTF8.self)
        #expect(try DocumentReader.read(text, { try $0.readPushRequest() }) == creations)
    }

    @Test("queued mutations as the client stores them decode to the same value both ways, damaged or not")
    func storedMutations() throws {
        var rng = SeededGenerator(seed: 17)
        var read = 0
        let replacements = Array("{}[]\",:0123456789-ntf".utf8)
        for index in 0..<300 {
            for mutation in Self.randomPush(index, rng: &rng).mutations {
                // The offline queue's column: `DocumentCoding`'s sorted keys.
                let text = try DocumentCoding.encode(mutation)
                if (try? DocumentReader.read(text, { try $0.readMutation() })) != nil { read += 1 }
                #expect(try Mutation.decodeDocument(text) == mutation, "#\(index): \(text)")
                var bytes = Array(text.utf8)
                bytes[rng.int(0...(bytes.count - 1))] = rng.pick(replacements)
                let damaged = String(decoding: bytes, as: UTF8.self)
                let reference = try? DocumentCoding.decode(Mutation.self, from: damaged)
                #expect((try? Mutation.decodeDocument(damaged)) == reference, "#\(index): \(damaged)")
            }
        }
        #expect(read > 150, "the reader read \(read) stored mutations itself")
    }

    @Test("hand-written pushes the reader must leave to Codable decode as Codable decodes them")
    func pushEdges() throws {
        let mutation = #""mutationId": "m1", "datastore": ":app", "className": "T", "objectId": "o""#
        let texts = [
            #"{"mutations": [{\#(mutation), "change": {"delete": true, "fields": null}}]}"#,
            #"{"mutations": [{\#(mutation), "change": {"delete": false}}]}"#,
            #"{"mutations": [{\#(mutation), "change": {"fields": {"a b": 1}}}]}"#,
            #"{"mutations": [{\#(mutation), "change": {"update": [{"field": "n", "do": {"op": "set", "value": 1, "amount": 2}}]}}]}"#,
            #"{"mutations": [{\#(mutation), "change": {"update": [{"field": "n", "do": {"op": "set"}}]}}]}"#,
            #"{"mutations": [{\#(mutation), "change": {"fields": {"n": 1.5}}}]}"#,
            #"{"mutations": [{\#(mutation), "change": {"fields": {"n": 1}}, "baseVersion": null}], "compact": null}"#,
            #"{"mutations": [{\#(mutation), "mutationId": "m2", "change": {}}]}"#,
            #"{"mutations": [{"mutationId": ":m", "datastore": ":app", "className": "T", "objectId": "o", "change": {}}]}"#,
            #"{"mutations": [], "atomic": true}"#,
        ]
        for text in texts {
            let reference = try? JSONDecoder().decode(PushRequest.self, from: Data(text.utf8))
            let fast = try? PushRequest.decodeDocument(text)
            #expect(fast == reference, "\(text)")
        }
    }

    @Test("push answers as the server writes them decode to the same value both ways, damaged or not")
    func pushResponses() throws {
        var rng = SeededGenerator(seed: 19)
        var read = 0
        let replacements = Array("{}[]\",:0123456789-ntf".utf8)
        func encoded(_ response: PushResponse?) -> String? { response.flatMap { try? DocumentCoding.encode($0) } }
        for index in 0..<400 {
            let results = try (0..<rng.int(0...4)).map { position -> MutationResult in
                let id = try MutationID("m\(index)x\(position)")
                let snapshot = DifferentialValues.snapshot(
                    className: "T", objectId: "o\(position)", datastore: .default, version: 2, rng: &rng)
                switch rng.int(0...5) {
                case 0: return .rejected(mutationId: id, error: RooftopError(.disallowed, "no \"way\"", field: "x"))
                case 1:
                    let merge = MergeDecision(
                        field: "f", baseValue: .int(0), localValue: .int(1), remoteValue: .int(2), rule: .sum,
                        result: .int(3), resolution: .rule)
                    return .applied(mutationId: id, version: 3, object: snapshot, merges: [merge])
                case 2: return .applied(mutationId: id, version: 3, object: nil)
                default: return .applied(mutationId: id, version: Int64(rng.int(1...9)), object: snapshot)
                }
            }
            let response = PushResponse(results: results)
            var writer = DocumentWriter()
            try writer.pushResponse(response)
            // As the server writes it, and as `JSONEncoder` does (another order of keys).
            for var bytes in [writer.bytes, Array(try JSONEncoder().encode(response))] {
                let text = String(decoding: bytes, as: UTF8.self)
                if (try? DocumentReader.read(text, { try $0.readPushResponse() })) != nil { read += 1 }
                let reference = try JSONDecoder().decode(PushResponse.self, from: Data(bytes))
                #expect(encoded(try PushResponse.decodeDocument(Data(bytes))) == encoded(reference), "#\(index): \(text)")
                #expect(encoded(reference) == encoded(response), "#\(index): \(text)")
                bytes[rng.int(0...(bytes.count - 1))] = rng.pick(replacements)
                let damaged = Data(bytes)
                let fast = try? PushResponse.decodeDocument(damaged)
                let damagedReference = try? JSONDecoder().decode(PushResponse.self, from: damaged)
                #expect(encoded(fast) == encoded(damagedReference), "#\(index): \(String(decoding: damaged, as: UTF8.self))")
            }
        }
        // Rejections and merges are left to Codable; answers with none of them are read directly.
        #expect(read > 150, "the reader read \(read) of 800 answers itself")
    }

    @Test("pages and push answers with bytes that are not UTF-8 are refused both ways, never repaired")
    func invalidUTF8Refused() throws {
        // Non-ASCII text in a plain string, in a key and in a string with escapes.
        let snapshot = ObjectSnapshot(
            className: "T", objectId: "o1", datastore: .default,
            fields: ["name": "caf\u{E9} au lait", "na\u{EF}ve": 1, "q": "a \"quoted\" caf\u{E9}"], version: 2)
        let page = PullResponse(changes: [.upsert(snapshot)], checkpoint: Checkpoint("c:1"), hasMore: false)
        var pageWriter = DocumentWriter()
        try pageWriter.pullResponse(page)
        var answerWriter = DocumentWriter()
        try answerWriter.pushResponse(
            PushResponse(results: [.applied(mutationId: try MutationID("m1"), version: 2, object: snapshot)]))
        for (name, valid) in [("page", pageWriter.bytes), ("answer", answerWriter.bytes)] {
            let accents = valid.indices.filter { valid[$0] == 0xC3 }
            #expect(accents.count == 3, "each string's first non-ASCII byte")
            let id = try #require(valid.indices.first { valid[$0] == UInt8(ascii: "o") && valid[$0 + 1] == UInt8(ascii: "1") })
            var damaged: [(String, [UInt8])] = [("0xFF in an ASCII ID", { var bytes = valid; bytes[id] = 0xFF; return bytes }())]
            for accent in accents {
                damaged.append(("a lone lead byte at \(accent)", { var bytes = valid; bytes[accent + 1] = UInt8(ascii: "x"); return bytes }()))
                damaged.append(("a cut sequence at \(accent)", { var bytes = valid; bytes.remove(at: accent + 1); return bytes }()))
            }
            if name == "page" {
                #expect((try? JSONDecoder().decode(PullResponse.self, from: Data(valid))) != nil)
            } else {
                #expect((try? JSONDecoder().decode(PushResponse.self, from: Data(valid))) != nil)
            }
            for (damage, bytes) in damaged {
                let data = Data(bytes)
                if name == "page" {
                    #expect((try? JSONDecoder().decode(PullResponse.self, from: data)) == nil, "\(damage): the reference refuses")
                    #expect(throws: (any Error).self, "\(name), \(damage)") { try PullResponse.decodeDocument(data) }
                    #expect(throws: (any Error).self, "\(name), \(damage)") {
                        try PullResponse.decodeDocumentWithObjectTexts(data)
                    }
                } else {
                    #expect((try? JSONDecoder().decode(PushResponse.self, from: data)) == nil, "\(damage): the reference refuses")
                    #expect(throws: (any Error).self, "\(name), \(damage)") { try PushResponse.decodeDocument(data) }
                }
            }
        }
        // Undamaged, both read directly, the accent kept.
        let read = try PullResponse.decodeDocumentWithObjectTexts(Data(pageWriter.bytes))
        #expect(read.objectTexts.first??.contains("caf\u{E9}") == true)
        #expect(try PushResponse.decodeDocument(Data(answerWriter.bytes)).results.count == 1)
    }

    @Test("what the direct writer writes, Codable and the reader read back as the value written")
    func writerRoundTrips() throws {
        var rng = SeededGenerator(seed: 13)
        for index in 0..<1_000 {
            let snapshot = DifferentialValues.snapshot(
                className: "T", objectId: "w\(index)", datastore: rng.pick([.app, .default]), version: 3, rng: &rng)
            let expected = try DocumentCoding.encode(snapshot)
            let written = try snapshot.encodedDocument()
            #expect(try DocumentCoding.encode(DocumentCoding.decode(ObjectSnapshot.self, from: written)) == expected, "\(written)")
            #expect(try DocumentCoding.encode(ObjectSnapshot.decodeDocument(written)) == expected, "\(written)")


            let page = PullResponse(
                changes: [
                    .upsert(snapshot), .tombstone(className: "T\"", objectId: "x\n", version: 2),
                    .removal(className: "U", objectId: "y"),
                ], checkpoint: Checkpoint("c/\(index)"), hasMore: rng.chance(50), remaining: rng.chance(50) ? index : nil)
            let push = PushResponse(results: [
                .applied(mutationId: try MutationID("m\(index)"), version: 3, object: rng.chance(50) ? snapshot : nil),
                .applied(
                    mutationId: try MutationID("n\(index)"), version: 4, object: nil,
                    merges: [
                        MergeDecision(
                            field: "f", baseValue: .int(0), localValue: .int(1), remoteValue: .int(2), rule: .sum,
                            result: .int(3), resolution: .rule)
                    ]),
                .rejected(mutationId: try MutationID("r\(index)"), error: RooftopError(.disallowed, "no \"way\"", field: "x")),
            ])
            var pushWriter = DocumentWriter()
            try pushWriter.pushResponse(push)
            #expect(try JSONDecoder().decode(PushResponse.self, from: Data(pushWriter.bytes)) == push)

            let result = QueryResult(objects: [snapshot, snapshot], totalCount: index, included: rng.chance(50) ? [snapshot] : [])
            var queryWriter = DocumentWriter()
            try queryWriter.queryResult(result)
            #expect(
                try DocumentCoding.encode(JSONDecoder().decode(QueryResult.self, from: Data(queryWriter.bytes)))
                    == DocumentCoding.encode(result))
            var includesWriter = DocumentWriter()
            try includesWriter.objectWithIncludes(ObjectWithIncludes(object: snapshot, included: [snapshot]))
            #expect(
                try DocumentCoding.encode(JSONDecoder().decode(ObjectWithIncludes.self, from: Data(includesWriter.bytes)))
                    == DocumentCoding.encode(ObjectWithIncludes(object: snapshot, included: [snapshot])))
            for response in [
                WriteResponse(objectId: "o1", version: 2, object: snapshot, merges: []), WriteResponse(objectId: "o1", version: 3, object: nil, merges: []),
            ] {
                var restWriter = DocumentWriter()
                try restWriter.writeResponse(response)
                #expect(
                    try DocumentCoding.encode(JSONDecoder().decode(WriteResponse.self, from: Data(restWriter.bytes)))
                        == DocumentCoding.encode(response))
            }

            let fields = snapshot.fields.map { FieldUpdate($0.key, .set($0.value)) }
            let operations: [FieldUpdate] = [
                FieldUpdate("n", .increment(.int(Int64(index)))), FieldUpdate("gone", .unset),
                FieldUpdate("tags", .listAppend(Array(snapshot.fields.values.prefix(2)))),
                FieldUpdate("tags", .listMove(from: 0, to: 1)),
                FieldUpdate("r", .relationAdd(className: "U", objectIds: ["a", "b"])),
                FieldUpdate("tags", .listInsert(index: 1, value: .string("i\"\\n"))),
                FieldUpdate("tags", .listRemove(index: 0)), FieldUpdate("tags", .listReplace(index: 0, value: .int(4))),
                FieldUpdate("r", .relationRemove(className: "U", objectIds: ["b"])),
            ]
            for change in [
                ObjectChange.update(fields + operations.shuffled(using: &rng), acl: snapshot.acl), .delete,
                .update([]),
            ] {
                let record = OperationRecord(
                    version: Int64(index), change: change,
                    priorValues: snapshot.fields.mapValues { rng.chance(30) ? nil : $0 }.merging(["none": nil]) { $1 },
                    origin: rng.chance(50) ? "o/\"\(index)" : nil)
                let stored = try record.encodedDocument()
                #expect(try DocumentCoding.decode(OperationRecord.self, from: stored) == record, "\(stored)")
                // The offline queue's form of a mutation: `Codable` reads it back as it was, and so
                // does the direct reader.
                let mutation = Mutation(
                    datastore: snapshot.datastore, className: snapshot.className, objectId: snapshot.objectId,
                    baseVersion: rng.chance(50) ? nil : Int64(index), change: change)
                let queued = try mutation.encodedDocument()
                #expect(try DocumentCoding.decode(Mutation.self, from: queued) == mutation, "\(queued)")
                #expect(try Mutation.decodeDocument(queued) == mutation, "\(queued)")
            }

            var writer = DocumentWriter()
            try writer.pullResponse(page)
            let decoded = try JSONDecoder().decode(PullResponse.self, from: Data(writer.bytes))
            #expect(try DocumentCoding.encode(decoded) == DocumentCoding.encode(page))
        }
    }
}
