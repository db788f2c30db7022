import Foundation

extension DocumentReader {
    /// Skips one value of any kind, without building it.
    /// - Throws: ``Unhandled`` for text that is not a JSON value.
    package mutating func skipValue() throws {
        switch try peek() {
        case UInt8(ascii: "\""):
            try skipString()
        case UInt8(ascii: "{"):
            try readContainer(UInt8(ascii: "{"), UInt8(ascii: "}")) { reader in
                try reader.skipString()
                try reader.consume(UInt8(ascii: ":"))
                try reader.skipValue()
            }
        case UInt8(ascii: "["):
            try readContainer(UInt8(ascii: "["), UInt8(ascii: "]")) { try $0.skipValue() }
        case UInt8(ascii: "n"): try consumeLiteral("null")
        case UInt8(ascii: "t"): try consumeLiteral("true")
        case UInt8(ascii: "f"): try consumeLiteral("false")
        default: _ = try skipNumberBytes()
        }
    }

    /// Skips a string, escapes included. Its first bytes are looked at eight at a time (most
    /// strings of a stored body, which a pull page checks before splicing it in, are keys and
    /// short values that end there); a longer string's closing quote is found with `memchr`: a
    /// quote ends the string unless an odd run of backslashes precedes it (each backslash
    /// escapes the byte after it).
    mutating func skipString() throws {
        try consume(UInt8(ascii: "\""))
        guard let base = bytes.baseAddress else { throw Unhandled() }
        var from = index
        // Up to two words: a quote before any backslash ends the string there (the first byte
        // a zero-byte test marks is exact); a backslash first leaves the rest to the loop below.
        for _ in 0..<2 where from &+ 8 <= bytes.count {
            // The first byte in memory is the word's lowest on any machine.
            let word = UInt64(littleEndian: UnsafeRawPointer(base + from).loadUnaligned(as: UInt64.self))
            let quotes = Self.zeroBytes(word ^ Self.repeated(UInt8(ascii: "\"")))
            let backslashes = Self.zeroBytes(word ^ Self.repeated(UInt8(ascii: "\\")))
            if quotes == 0 && backslashes == 0 {
                from &+= 8
                continue
            }
            if quotes != 0, backslashes == 0 || quotes.trailingZeroBitCount < backslashes.trailingZeroBitCount {
                index = from &+ quotes.trailingZeroBitCount / 8 &+ 1
                return
            }
            break
        }
        while from < bytes.count,
            let found = memchr(base + from, Int32(UInt8(ascii: "\"")), bytes.count - from)
        {
            let quote = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            var backslash = quote - 1
            while backslash >= index, bytes[backslash] == UInt8(ascii: "\\") { backslash -= 1 }
            if (quote - 1 - backslash) % 2 == 0 {
                index = quote + 1
                return
            }
            from = quote + 1
        }
        throw Unhandled()
    }

    /// The value of one field of a stored or sent object (``ObjectSnapshot``'s `Codable` form) as
    /// the object's subscript gives it, reading nothing else of the object: its built-in fields
    /// (`objectId`, `createdAt`, `updatedAt`) or one of its `fields`. Keys are compared as bytes,
    /// without making strings of them (a local query on a field without index rows reads it from
    /// every object of the class), unless a field's name or the one asked for is not ASCII. A
    /// member met twice is left to `Codable`, which decides which one counts.
    /// - Throws: ``Unhandled`` for what the reader leaves to `Codable`.
    package mutating func readField(_ name: String) throws -> Value? {
        let builtIn = ["objectId", "createdAt", "updatedAt", "ACL"].contains(name)
        var utf8 = name
        return try utf8.withUTF8 { wanted in
            var found: Value?
            // A member met twice (the field, or `fields` itself): `Codable` decides which counts.
            var (matched, fieldsRead) = (false, false)
            try readMembers { reader, key in
                if !builtIn, reader.matches(key, "fields") {
                    guard !fieldsRead else { throw Unhandled() }
                    fieldsRead = true
                    try reader.readMembers { reader, field in
                        guard try reader.names(field, name, wanted) else { return try reader.skipValue() }
                        guard !matched else { throw Unhandled() }
                        matched = true
                        found = try reader.readValue()
                    }
                } else if builtIn, reader.matches(key, wanted), name != "ACL" {
                    guard !matched else { throw Unhandled() }
                    matched = true
                    if name == "objectId" {
                        found = .string(try reader.readString())
                    } else {
                        found = try reader.readNull() ? nil : .date(Timestamp(millisecondsSinceEpoch: try reader.readInt64()))
                    }
                } else {
                    try reader.skipValue()
                }
            }
            return found
        }
    }

    /// Reads an object's members, calling `member` with the bytes of each key (positions in the
    /// text) positioned on its value, which it must read. A key with escapes or a control byte
    /// is ``Unhandled``.
    mutating func readMembers(_ member: (inout DocumentReader, Range<Int>) throws -> Void) throws {
        try readContainer(UInt8(ascii: "{"), UInt8(ascii: "}")) { reader in
            try reader.consume(UInt8(ascii: "\""))
            let start = reader.index
            while reader.index < reader.bytes.count, reader.bytes[reader.index] != UInt8(ascii: "\"") {
                // An escape, or a control byte (which JSON does not allow in a string).
                guard reader.bytes[reader.index] != UInt8(ascii: "\\"), reader.bytes[reader.index] >= 0x20 else {
                    throw Unhandled()
                }
                reader.index += 1
            }
            guard reader.index < reader.bytes.count else { throw Unhandled() }
            let key = start..<reader.index
            reader.index += 1
            try reader.consume(UInt8(ascii: ":"))
            try member(&reader, key)
        }
    }

    /// Reads an object whose keys are all among `keys`, each once, calling `member` with each
    /// key positioned on its value, which it must read. Keys are compared as bytes, without
    /// making strings of them; an unknown, repeated or escaped key is ``Unhandled``.
    mutating func readObject<Key>(_ keys: DocumentKeys<Key>, _ member: (inout DocumentReader, Key) throws -> Void) throws {
        var seen: UInt64 = 0
        try readMembers { reader, key in
            guard let (position, found) = keys.find(key, in: reader.bytes), seen & (1 << position) == 0 else {
                throw Unhandled()
            }
            seen |= 1 << position
            try member(&reader, found)
        }
    }

    /// The value read by `read` from the reader's position, or the value kept at `last` when the
    /// text there is byte for byte that value's text, which is then skipped: a value's text ends
    /// where its quotes or braces close, so the same bytes are the same value, ending at the same
    /// place (the objects of one page share their class, datastore and mostly their ACL). `last`
    /// then keeps the value read and where its text is.
    mutating func reusing<T>(
        _ last: WritableKeyPath<DocumentReader, (text: Range<Int>, value: T)?>, _ read: (inout DocumentReader) throws -> T
    ) rethrows -> T {
        skipWhitespace()
        let start = index
        if let kept = self[keyPath: last], let base = bytes.baseAddress, kept.text.count <= bytes.count - start,
            memcmp(base + start, base + kept.text.lowerBound, kept.text.count) == 0
        {
            index = start + kept.text.count
            return kept.value
        }
        let value = try read(&self)
        self[keyPath: last] = (start..<index, value)
        return value
    }

    /// Whether the field name at `key` is `name` (whose UTF-8 is `utf8`) as a string compares
    /// them: by their bytes when both are ASCII, else as strings (canonically equivalent names,
    /// an accent composed or not, are one name, as `Codable`'s dictionary of fields has them).
    /// A key that is not UTF-8 is ``Unhandled`` (`Codable` refuses the document).
    private func names(_ key: Range<Int>, _ name: String, _ utf8: UnsafeBufferPointer<UInt8>) throws -> Bool {
        let keyBytes = UnsafeBufferPointer(rebasing: bytes[key])
        guard keyBytes.allSatisfy({ $0 < 0x80 }), utf8.allSatisfy({ $0 < 0x80 }) else {
            guard let text = String(validating: keyBytes, as: UTF8.self) else { throw Unhandled() }
            return text == name
        }
        return matches(key, utf8)
    }

    /// Whether the key at `key` is `name`'s UTF-8.
    private func matches(_ key: Range<Int>, _ name: UnsafeBufferPointer<UInt8>) -> Bool {
        guard key.count == name.count else { return false }
        for offset in 0..<key.count where bytes[key.lowerBound + offset] != name[offset] { return false }
        return true
    }

    private func matches(_ key: Range<Int>, _ name: StaticString) -> Bool {
        matches(key, UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
    }

    /// Runs `body` over `bytes`, UTF-8 text; the reader must reach its end.
    /// - Throws: ``Unhandled``, or what `body` throws.
    package static func read<T>(bytes: UnsafeBufferPointer<UInt8>, _ body: (inout DocumentReader) throws -> T) throws -> T {
        var reader = DocumentReader(bytes: bytes)
        let value = try body(&reader)
        reader.skipWhitespace()
        guard reader.index == bytes.count else { throw Unhandled() }
        return value
    }
}

extension ObjectSnapshot {
    /// The value of one field of an object from its stored JSON, as its subscript gives
    /// it: read directly when it can be (only that field is decoded), else from the whole object
    /// decoded with `Codable`.
    /// - Throws: What `JSONDecoder` throws for text that is not an object.
    package static func field(_ name: String, ofDocument text: String) throws -> Value? {
        var text = text
        return try text.withUTF8 { try field(name, ofDocument: $0) }
    }

    /// The value of one field of an object from the UTF-8 of its stored JSON, as
    /// ``field(_:ofDocument:)-(_,String)`` reads it. The JSON is an object's (``ObjectSnapshot``'s
    /// `Codable` form) or any document whose `fields` member holds the fields, as the server
    /// stores an object's body: such a document has no built-in fields.
    /// - Throws: What `JSONDecoder` throws for text that is neither.
    package static func field(_ name: String, ofDocument utf8: UnsafeBufferPointer<UInt8>) throws -> Value? {
        do {
            return try DocumentReader.read(bytes: utf8) { try $0.readField(name) }
        } catch {
            // Left to `Codable` (a pointer, bytes, an escaped key or a key the reader does not take).
            let text = String(decoding: utf8, as: UTF8.self)
            let document = try DocumentCoding.decode(FieldsDocument.self, from: text)
            guard document.className != nil else { return document.fields[name] }
            return try decodeDocument(text)[name]
        }
    }

    /// The `fields` of a stored document, and whether it is a whole object's (it has a class).
    private struct FieldsDocument: Decodable {
        var fields: [String: Value]
        var className: String?
    }
}

/// The keys of one kind of object the reader knows by name (an object's envelope, a change's),
/// found by their bytes (``DocumentReader/readObject(_:_:)-(DocumentKeys<Key>,_)``).
struct DocumentKeys<Key: Sendable>: Sendable {
    private let keys: [(utf8: [UInt8], key: Key)]

    /// The keys of `cases`, each its raw value (at most 64).
    init(_ cases: [Key]) where Key: RawRepresentable<String> {
        precondition(cases.count <= 64, "at most 64 keys")
        keys = cases.map { (Array($0.rawValue.utf8), $0) }
    }

    /// The key whose bytes are those of `range` in `bytes`, and its position among the keys.
    func find(_ range: Range<Int>, in bytes: UnsafeBufferPointer<UInt8>) -> (Int, Key)? {
        guard let base = bytes.baseAddress else { return nil }
        for (position, entry) in keys.enumerated() where entry.utf8.count == range.count {
            let equal = entry.utf8.withUnsafeBufferPointer { name in
                name.baseAddress.map { memcmp(base + range.lowerBound, $0, range.count) == 0 } ?? false
            }
            if equal { return (position, entry.key) }
        }
        return nil
    }
}
