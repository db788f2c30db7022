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
        var index = skipSpace(text, 0)
        guard index < text.count, text[index] == UInt8(ascii: "{") else { return nil }
        index = skipSpace(text, index + 1)
        let start = index
        var seen: UInt8 = 0
        while true {
            // A key, compared as bytes.
            guard index < text.count, text[index] == UInt8(ascii: "\""), let keyEnd = endOfString(text, index) else {
                return nil
            }
            let key = UnsafeBufferPointer(rebasing: text[(index + 1)..<(keyEnd - 1)])
            let bit: UInt8 =
                key.elementsEqual("fields".utf8) ? 1 : key.elementsEqual("acl".utf8) ? 2
                : key.elementsEqual("fieldVersions".utf8) ? 4 : 0
            guard bit != 0, seen & bit == 0 else { return nil }
            seen |= bit
            index = skipSpace(text, keyEnd)
            guard index < text.count, text[index] == UInt8(ascii: ":"),
                let valueEnd = endOfValue(text, from: index + 1, depth: 1)
            else { return nil }
            let end = valueEnd
            index = skipSpace(text, valueEnd)
            guard index < text.count else { return nil }
            if text[index] == UInt8(ascii: ",") {
                index = skipSpace(text, index + 1)
                continue
            }
            guard text[index] == UInt8(ascii: "}"), seen & 1 != 0, skipSpace(text, index + 1) == text.count else {
                return nil
            }
            return start..<end
        }
    }

    /// Where the value that begins at `start` (after whitespace) ends: the index after it, or
    /// `nil` when none is there. `depth`: the containers open around it.
    private static func endOfValue(_ text: UnsafeBufferPointer<UInt8>, from start: Int, depth: Int) -> Int? {
        var open = OpenContainers(depth: depth)
        var index = start
        while true {
            // A value.
            index = skipSpace(text, index)
            guard index < text.count else { return nil }
            switch text[index] {
            case UInt8(ascii: "\""):
                guard let end = endOfString(text, index) else { return nil }
                index = end
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let isObject = text[index] == UInt8(ascii: "{")
                guard open.push(object: isObject) else { return nil }
                index = skipSpace(text, index + 1)
                guard index < text.count else { return nil }
                if text[index] == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    open.pop()
                    index += 1
                } else {
                    if isObject {
                        guard let afterKey = afterKey(text, index) else { return nil }
                        index = afterKey
                    }
                    continue
                }
            case UInt8(ascii: "n"):
                guard let end = endOfLiteral(text, index, "null") else { return nil }
                index = end
            case UInt8(ascii: "t"):
                guard let end = endOfLiteral(text, index, "true") else { return nil }
                index = end
            case UInt8(ascii: "f"):
                guard let end = endOfLiteral(text, index, "false") else { return nil }
                index = end
            default:
                let first = index
                while index < text.count, DocumentReader.isNumberByte(text[index]) { index += 1 }
                guard index > first else { return nil }
            }
            // After a value: commas and the ends of the containers it closes.
            while true {
                guard let isObject = open.top else { return index }
                index = skipSpace(text, index)
                guard index < text.count else { return nil }
                if text[index] == UInt8(ascii: ",") {
                    index += 1
                    if isObject {
                        guard let afterKey = afterKey(text, skipSpace(text, index)) else { return nil }
                        index = afterKey
                    }
                    break
                }
                guard text[index] == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) else { return nil }
                open.pop()
                index += 1
            }
        }
    }

    /// After a member's key and its colon, the key's opening quote at `index`; `nil` when they
    /// are not there.
    private static func afterKey(_ text: UnsafeBufferPointer<UInt8>, _ index: Int) -> Int? {
        guard index < text.count, text[index] == UInt8(ascii: "\""), let end = endOfString(text, index) else {
            return nil
        }
        let colon = skipSpace(text, end)
        guard colon < text.count, text[colon] == UInt8(ascii: ":") else { return nil }
        return colon + 1
    }

    /// The index after the string whose opening quote is at `quote`, or `nil` when it does not
    /// end: its closing quote is the first one after an even run of backslashes (each escapes the
    /// byte after it).
    private static func endOfString(_ text: UnsafeBufferPointer<UInt8>, _ quote: Int) -> Int? {
        guard let base = text.baseAddress else { return nil }
        var from = quote + 1
        while from < text.count, let found = memchr(base + from, Int32(UInt8(ascii: "\"")), text.count - from) {
            let closing = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            var backslash = closing - 1
            while backslash > quote, text[backslash] == UInt8(ascii: "\\") { backslash -= 1 }
            if (closing - 1 - backslash) % 2 == 0 { return closing + 1 }
            from = closing + 1
        }
        return nil
    }

    private static func endOfLiteral(_ text: UnsafeBufferPointer<UInt8>, _ index: Int, _ literal: StaticString) -> Int? {
        let count = literal.utf8CodeUnitCount
        guard count <= text.count - index else { return nil }
        let bytes = literal.utf8Start
        for offset in 0..<count where text[index + offset] != bytes[offset] { return nil }
        return index + count
    }

    private static func skipSpace(_ text: UnsafeBufferPointer<UInt8>, _ start: Int) -> Int {
        var index = start
        while index < text.count {
            switch text[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return index
            }
        }
        return index
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
