import Foundation

/// The structural check a stored body passes before a page splices it in as it is
/// (``DocumentWriter/storedObject(className:objectId:datastore:createdAt:updatedAt:version:body:)``):
/// one JSON object whose members are `fields`, and `acl` and `fieldVersions` or not, each once,
/// each one whole JSON value.
///
/// One pass over the bytes, with the open containers kept as bits rather than on the call stack:
/// every object of every pull page goes through it (the reader's `readObject` and `skipValue`,
/// a closure call per member and element, were a tenth of a full pull's server time). It accepts
/// what they accepted, or less: a value is a string (its end found with `memchr`, an odd run of
/// backslashes escaping a quote), an object or array, `null`, `true`, `false`, or a run of number
/// bytes; nesting stops at ``DocumentReader/maxDepth`` levels, the body's own object counted; a
/// top-level key must be one of the three byte for byte (a key written with escapes is refused,
/// and such a body is decoded and written anew instead, never written so by the server).
enum StoredBodyScan {
    /// The members of `text` (between its braces, whitespace around them trimmed), or `nil` when it
    /// is not such an object.
    static func members(of text: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
        guard text.baseAddress != nil else { return nil }
        var reader = DocumentReader(bytes: text)
        return try? members(&reader)
    }

    /// The members of the object `reader` stands before, read with the reader's own tokens.
    /// - Throws: ``DocumentReader/Unhandled`` when it is not such an object.
    private static func members(_ reader: inout DocumentReader) throws -> Range<Int> {
        let text = reader.bytes
        try reader.consume(UInt8(ascii: "{"))
        reader.skipWhitespace()
        let start = reader.index
        var seen: UInt8 = 0
        while true {
            // A key, compared as bytes.
            guard try reader.peek() == UInt8(ascii: "\"") else { throw DocumentReader.Unhandled() }
            let keyStart = reader.index + 1
            try reader.skipString()
            let key = UnsafeBufferPointer(rebasing: text[keyStart..<(reader.index - 1)])
            let bit: UInt8 =
                key.elementsEqual("fields".utf8) ? 1 : key.elementsEqual("acl".utf8) ? 2
                : key.elementsEqual("fieldVersions".utf8) ? 4 : 0
            guard bit != 0, seen & bit == 0 else { throw DocumentReader.Unhandled() }
            seen |= bit
            try reader.consume(UInt8(ascii: ":"))
            try skipValue(&reader, depth: 1)
            let end = reader.index
            switch try reader.peek() {
            case UInt8(ascii: ","):
                reader.index += 1
            case UInt8(ascii: "}"):
                reader.index += 1
                reader.skipWhitespace()
                guard seen & 1 != 0, reader.index == text.count else { throw DocumentReader.Unhandled() }
                return start..<end
            default:
                throw DocumentReader.Unhandled()
            }
        }
    }

    /// Skips the value `reader` stands before (after whitespace), its containers kept as bits.
    /// `depth`: the containers open around it.
    /// - Throws: ``DocumentReader/Unhandled`` when no whole value is there.
    private static func skipValue(_ reader: inout DocumentReader, depth: Int) throws {
        var open = OpenContainers(depth: depth)
        while true {
            // A value.
            switch try reader.peek() {
            case UInt8(ascii: "\""):
                try reader.skipString()
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let isObject = reader.bytes[reader.index] == UInt8(ascii: "{")
                guard open.push(object: isObject) else { throw DocumentReader.Unhandled() }
                reader.index += 1
                if try reader.peek() == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    open.pop()
                    reader.index += 1
                } else {
                    if isObject { try skipKey(&reader) }
                    continue
                }
            case UInt8(ascii: "n"): try reader.consumeLiteral("null")
            case UInt8(ascii: "t"): try reader.consumeLiteral("true")
            case UInt8(ascii: "f"): try reader.consumeLiteral("false")
            default: _ = try reader.skipNumberBytes()
            }
            // After a value: commas and the ends of the containers it closes.
            closing: while let isObject = open.top {
                switch try reader.peek() {
                case UInt8(ascii: ","):
                    reader.index += 1
                    if isObject { try skipKey(&reader) }
                    break closing
                case isObject ? UInt8(ascii: "}") : UInt8(ascii: "]"):
                    open.pop()
                    reader.index += 1
                default:
                    throw DocumentReader.Unhandled()
                }
            }
            if open.top == nil { return }
        }
    }

    /// Skips a member's key and its colon.
    private static func skipKey(_ reader: inout DocumentReader) throws {
        try reader.skipString()
        try reader.consume(UInt8(ascii: ":"))
    }

    /// The containers open inside the value being scanned, innermost last: a bit each (object or
    /// array), at most ``DocumentReader/maxDepth`` levels with those open around the value.
    private struct OpenContainers {
        private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        private var count = 0
        private let limit: Int

        init(depth: Int) {
            limit = min(max(DocumentReader.maxDepth - depth, 0), 256)
        }

        /// The innermost: `true` for an object; `nil` when none is open.
        var top: Bool? {
            guard count > 0 else { return nil }
            return bit(count - 1)
        }

        /// Opens one; `false` past the limit.
        mutating func push(object: Bool) -> Bool {
            guard count < limit else { return false }
            let (word, shift) = (count / 64, UInt64(count % 64))
            let mask: UInt64 = 1 << shift
            switch word {
            case 0: words.0 = object ? words.0 | mask : words.0 & ~mask
            case 1: words.1 = object ? words.1 | mask : words.1 & ~mask
            case 2: words.2 = object ? words.2 | mask : words.2 & ~mask
            default: words.3 = object ? words.3 | mask : words.3 & ~mask
            }
            count += 1
            return true
        }

        mutating func pop() {
            if count > 0 { count -= 1 }
        }

        private func bit(_ position: Int) -> Bool {
            let word: UInt64
            switch position / 64 {
            case 0: word = words.0
            case 1: word = words.1
            case 2: word = words.2
            default: word = words.3
            }
            return word >> UInt64(position % 64) & 1 == 1
        }
    }
}
