import Foundation

/// A direct reader of the JSON documents Rooftop writes itself (stored objects, their fields and
/// ACLs), several times faster than `Codable` because it builds values straight from the bytes.
///
/// It reads only the forms the encoder produces for the common kinds, each through the same
/// constructors the `Codable` conformances use: `null`, booleans, integer literals within 64 bits,
/// strings, lists, `{"$double": "…"}`, `{"$date": n}` and `{"$geoPoint": {…}}` values, ACLs and
/// field versions. Anything else — another tag, a number with a fraction or exponent, an unknown
/// or repeated key, invalid UTF-8, malformed JSON — stops it with ``Unhandled``, and the caller
/// decodes the whole document with `Codable` instead (``DocumentCoding/decode(_:from:fast:)``),
/// which is the reference: it gives the same value, or the error. A property test compares the
/// two on random values.
package struct DocumentReader {
    /// The reader met something it leaves to `Codable`.
    package struct Unhandled: Error {
        package init() {}
    }

    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    /// The arrays and objects open around the reader's position.
    private var depth = 0
    /// The keys read so far of the object open at each nesting level (``readObject(_:)``), to
    /// refuse a repeated one. Most such objects have a few keys (an ACL's access has two, a
    /// page's or a push's envelope a few): they are compared in their level's list, which
    /// neither hashes nor, once the reader has read an object at that level, allocates; past
    /// ``listedKeys`` they go to a set. (An object's envelope, a change, a mutation and a tagged
    /// value find their keys by their bytes, ``DocumentKeys``; fields and field versions refuse a
    /// repeated name through their dictionary.)
    private var keyLists: [[String]] = []
    /// The most keys of one object compared in a list.
    private static let listedKeys = 16
    /// The last ACL, datastore and class read, and where their texts are: the objects of one
    /// page or one answer share their class and datastore and mostly their ACL, and the same
    /// bytes read the same way (``reusing(_:_:)``).
    var lastACL: (text: Range<Int>, value: ACL)?
    var lastDatastore: (text: Range<Int>, value: DatastoreID)?
    var lastClassName: (text: Range<Int>, value: String)?

    /// The deepest nesting of arrays and objects the reader reads (past it, ``Unhandled``: the
    /// text goes to `Codable`, which applies its own limit). Deeper than any document this system
    /// writes (values nest at most ``Limits/maxNestingDepth`` levels inside a few of envelope),
    /// and shallow enough that hostile text cannot exhaust a task's stack.
    package static let maxDepth = 256

    /// Runs `body` over the UTF-8 of `text`; the reader must reach the end of the text.
    /// - Throws: ``Unhandled``, or what `body` throws.
    package static func read<T>(_ text: String, _ body: (inout DocumentReader) throws -> T) throws -> T {
        var text = text
        return try text.withUTF8 { buffer in
            var reader = DocumentReader(bytes: buffer)
            let value = try body(&reader)
            reader.skipWhitespace()
            guard reader.index == buffer.count else { throw Unhandled() }
            return value
        }
    }

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    // MARK: Tokens

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// The next byte after whitespace, not consumed.
    @inline(__always)
    mutating func peek() throws -> UInt8 {
        // JSON's whitespace is at most 0x20: a byte above it is the next one as it is.
        if index < bytes.count, bytes[index] > 0x20 { return bytes[index] }
        skipWhitespace()
        guard index < bytes.count else { throw Unhandled() }
        return bytes[index]
    }

    @inline(__always)
    mutating func consume(_ byte: UInt8) throws {
        // Most often the very next byte (text this system wrote has no whitespace).
        if index < bytes.count, bytes[index] == byte {
            index &+= 1
            return
        }
        guard try peek() == byte else { throw Unhandled() }
        index += 1
    }

    mutating func consumeLiteral(_ literal: StaticString) throws {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw Unhandled() }
        let start = literal.utf8Start
        for offset in 0..<count where bytes[index + offset] != start[offset] { throw Unhandled() }
        index += count
    }

    /// Whether the next token is `null` (consumed if so).
    package mutating func readNull() throws -> Bool {
        guard try peek() == UInt8(ascii: "n") else { return false }
        try consumeLiteral("null")
        return true
    }

    /// A boolean.
    package mutating func readBool() throws -> Bool {
        switch try peek() {
        case UInt8(ascii: "t"):
            try consumeLiteral("true")
            return true
        case UInt8(ascii: "f"):
            try consumeLiteral("false")
            return false
        default: throw Unhandled()
        }
    }

    /// An integer literal (`-?digits`) that fits in 64 bits.
    package mutating func readInt64() throws -> Int64 {
        _ = try peek()
        var negative = false
        if bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        let start = index
        var magnitude: UInt64 = 0
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            let (times, overflowTimes) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflowSum) = times.addingReportingOverflow(UInt64(bytes[index] - UInt8(ascii: "0")))
            guard !overflowTimes, !overflowSum else { throw Unhandled() }
            magnitude = sum
            index += 1
        }
        let digits = index - start
        // JSON has no leading zeros; a fraction or exponent is left to Codable.
        guard digits > 0, !(digits > 1 && bytes[start] == UInt8(ascii: "0")) else { throw Unhandled() }
        if index < bytes.count, [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[index]) {
            throw Unhandled()
        }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { throw Unhandled() }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        guard magnitude <= UInt64(Int64.max) else { throw Unhandled() }
        return Int64(magnitude)
    }

    /// A JSON number as a double (any JSON number form, finite).
    package mutating func readDouble() throws -> Double {
        _ = try peek()
        let number = try skipNumberBytes()
        guard Self.isJSONNumber(bytes[number]) else { throw Unhandled() }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[number]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw Unhandled() }
        return value
    }

    /// Skips the bytes a number may be made of (its grammar unchecked), at least one, and gives
    /// where they are.
    /// - Throws: ``Unhandled`` when none is there.
    mutating func skipNumberBytes() throws -> Range<Int> {
        let start = index
        while index < bytes.count, Self.isNumberByte(bytes[index]) { index += 1 }
        guard index > start else { throw Unhandled() }
        return start..<index
    }

    static func isNumberByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: "+") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e")
            || byte == UInt8(ascii: "E")
    }

    /// Whether the UTF-8 `text` has JSON's number grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    static func isJSONNumber(_ text: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        var utf8 = text
        func digits() -> Int {
            var count = 0
            while let first = utf8.first, first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9") {
                utf8 = utf8.dropFirst()
                count += 1
            }
            return count
        }
        if utf8.first == UInt8(ascii: "-") { utf8 = utf8.dropFirst() }
        if utf8.first == UInt8(ascii: "0") {
            utf8 = utf8.dropFirst()
        } else if digits() == 0 {
            return false
        }
        if utf8.first == UInt8(ascii: ".") {
            utf8 = utf8.dropFirst()
            guard digits() > 0 else { return false }
        }
        if utf8.first == UInt8(ascii: "e") || utf8.first == UInt8(ascii: "E") {
            utf8 = utf8.dropFirst()
            if utf8.first == UInt8(ascii: "+") || utf8.first == UInt8(ascii: "-") { utf8 = utf8.dropFirst() }
            guard digits() > 0 else { return false }
        }
        return utf8.isEmpty
    }

    /// A string, unescaped; its bytes must be valid UTF-8.
    package mutating func readString() throws -> String {
        try consume(UInt8(ascii: "\""))
        let start = index
        // Whether every byte so far is ASCII: such text is valid UTF-8 as it is, and is made
        // into a string without validating it again (the generic validation was a twentieth of
        // an initial sync's reading).
        var highBits: UInt8 = 0
        // Eight bytes at a time while none of them ends the string, escapes or is a control
        // byte (most of a page's bytes are long texts: byte by byte, this loop was an eighth of
        // reading one).
        if let base = bytes.baseAddress {
            while index &+ 8 <= bytes.count {
                let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
                guard !Self.hasSpecialByte(word) else { break }
                highBits |= word & Self.highBitsMask == 0 ? 0 : 0x80
                index &+= 8
            }
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
                index += 1
                if highBits < 0x80 { return String(decoding: slice, as: UTF8.self) }
                guard let text = String(validating: slice, as: UTF8.self) else { throw Unhandled() }
                return text
            }
            if byte == UInt8(ascii: "\\") { return try readEscapedString(from: start) }
            guard byte >= 0x20 else { throw Unhandled() }
            highBits |= byte
            index += 1
        }
        throw Unhandled()
    }

    /// Each byte's high bit.
    private static let highBitsMask: UInt64 = 0x8080_8080_8080_8080

    /// `byte` in each of a word's eight bytes.
    static func repeated(_ byte: UInt8) -> UInt64 { 0x0101_0101_0101_0101 &* UInt64(byte) }

    /// The high bit of each zero byte of `word`, and perhaps of bytes above the lowest zero byte
    /// (a borrow runs on from it): the lowest bit set, if any, marks the first zero byte exactly.
    package static func zeroBytes(_ word: UInt64) -> UInt64 {
        (word &- 0x0101_0101_0101_0101) & ~word & highBitsMask
    }

    /// Whether `byte` is one a JSON string must escape: a quote, a backslash or a control byte
    /// (below 0x20); ``hasSpecialByte(_:)`` asks it of eight at once.
    package static func isSpecialByte(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    /// Whether one of the eight bytes of `word` is a quote, a backslash or a control byte
    /// (below 0x20): the tests for a zero byte and for a byte below a bound of Sean Anderson's
    /// "Bit Twiddling Hacks", which are exact for any bytes (a byte of 0x80 or more is none of
    /// the three).
    package static func hasSpecialByte(_ word: UInt64) -> Bool {
        let below0x20 = (word &- repeated(0x20)) & ~word & highBitsMask != 0
        let quote = zeroBytes(word ^ repeated(UInt8(ascii: "\""))) != 0
        let backslash = zeroBytes(word ^ repeated(UInt8(ascii: "\\"))) != 0
        return below0x20 || quote || backslash
    }

    /// The rest of a string that has escapes, from its first byte at `start`.
    private mutating func readEscapedString(from start: Int) throws -> String {
        var buffer = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: buffer, as: UTF8.self) else { throw Unhandled() }
                return text
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { throw Unhandled() }
                let escaped = bytes[index]
                index += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): buffer.append(escaped)
                case UInt8(ascii: "b"): buffer.append(0x08)
                case UInt8(ascii: "f"): buffer.append(0x0C)
                case UInt8(ascii: "n"): buffer.append(0x0A)
                case UInt8(ascii: "r"): buffer.append(0x0D)
                case UInt8(ascii: "t"): buffer.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try readHex4()
                    if (0xD800..<0xDC00).contains(scalar) {
                        // A surrogate pair; a lone surrogate is left to Codable.
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                            bytes[index + 1] == UInt8(ascii: "u")
                        else { throw Unhandled() }
                        index += 2
                        let low = try readHex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw Unhandled() }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00..<0xE000).contains(scalar) {
                        throw Unhandled()
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw Unhandled() }
                    buffer.append(contentsOf: String(Character(unicode)).utf8)
                default:
                    throw Unhandled()
                }
            default:
                guard byte >= 0x20 else { throw Unhandled() }
                buffer.append(byte)
            }
        }
        throw Unhandled()
    }

    private mutating func readHex4() throws -> UInt32 {
        guard index + 4 <= bytes.count else { throw Unhandled() }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw Unhandled()
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    /// Reads an object, calling `member` with each key (distinct, or ``Unhandled``) positioned
    /// on its value, which `member` must read.
    package mutating func readObject(_ member: (inout DocumentReader, String) throws -> Void) throws {
        let level = depth
        while keyLists.count <= level { keyLists.append([]) }
        keyLists[level].removeAll(keepingCapacity: true)
        var overflow: Set<String>?
        try readContainer(UInt8(ascii: "{"), UInt8(ascii: "}")) { reader in
            let key = try reader.readString()
            guard reader.noteKey(key, level: level, overflow: &overflow) else { throw Unhandled() }
            try reader.consume(UInt8(ascii: ":"))
            try member(&reader, key)
        }
    }

    /// Reads an object or an array (`open` to `close`), calling `element` positioned on each
    /// member or element, which it must read whole; the commas between are read here.
    mutating func readContainer(_ open: UInt8, _ close: UInt8, _ element: (inout DocumentReader) throws -> Void) throws {
        guard depth < Self.maxDepth else { throw Unhandled() }
        depth += 1
        defer { depth -= 1 }
        try consume(open)
        if try peek() == close {
            index += 1
            return
        }
        while true {
            try element(&self)
            switch try peek() {
            case UInt8(ascii: ","): index += 1
            case close:
                index += 1
                return
            default: throw Unhandled()
            }
        }
    }

    /// Notes `key` among the keys of the object open at `level` (``keyLists``; past
    /// ``listedKeys`` in `overflow`); `false` when it was read already.
    private mutating func noteKey(_ key: String, level: Int, overflow: inout Set<String>?) -> Bool {
        if let inserted = overflow?.insert(key).inserted { return inserted }
        guard !keyLists[level].contains(key) else { return false }
        keyLists[level].append(key)
        if keyLists[level].count > Self.listedKeys { overflow = Set(keyLists[level]) }
        return true
    }

    /// Reads an array, calling `element` positioned on each element, which it must read.
    package mutating func readArray(_ element: (inout DocumentReader) throws -> Void) throws {
        try readContainer(UInt8(ascii: "["), UInt8(ascii: "]"), element)
    }
}
