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
    /// refuse a repeated one. Most objects have a few keys (an ACL's access has two, an object's
    /// envelope nine): they are compared in their level's list, which neither hashes nor, once
    /// the reader has read an object at that level, allocates; past ``listedKeys`` they go to a
    /// set.
    private var keyLists: [[String]] = []
    /// The most keys of one object compared in a list.
    private static let listedKeys = 16
    /// The last ACL read, and where its text is: the objects of one page or one answer mostly
    /// share their ACL, and the same bytes read the same way (``readACL()``).
    private var lastACL: (text: Range<Int>, acl: ACL)?

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
    mutating func peek() throws -> UInt8 {
        skipWhitespace()
        guard index < bytes.count else { throw Unhandled() }
        return bytes[index]
    }

    mutating func consume(_ byte: UInt8) throws {
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
        let start = index
        while index < bytes.count, Self.isNumberByte(bytes[index]) { index += 1 }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard Self.isJSONNumber(text), let value = Double(text), value.isFinite else { throw Unhandled() }
        return value
    }

    static func isNumberByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: "+") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e")
            || byte == UInt8(ascii: "E")
    }

    /// Whether `text` has JSON's number grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    static func isJSONNumber(_ text: String) -> Bool {
        var utf8 = Array(text.utf8)[...]
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

    // MARK: The data model

    /// A value in the portable form (see `Value`'s `Codable` conformance), for the kinds this
    /// reader handles.
    package mutating func readValue() throws -> Value {
        switch try peek() {
        case UInt8(ascii: "n"):
            try consumeLiteral("null")
            return .null
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            return .bool(try readBool())
        case UInt8(ascii: "\""):
            return .string(try readString())
        case UInt8(ascii: "["):
            var values: [Value] = []
            try readArray { reader in values.append(try reader.readValue()) }
            return .list(values)
        case UInt8(ascii: "{"):
            return try readTaggedValue()
        default:
            return .int(try readInt64())
        }
    }

    private mutating func readTaggedValue() throws -> Value {
        var value: Value?
        try readObject { reader, key in
            guard value == nil else { throw Unhandled() }
            switch key {
            case "$double":
                guard let double = Value.parseDouble(try reader.readString()) else { throw Unhandled() }
                value = .double(double)
            case "$date":
                value = .date(Timestamp(millisecondsSinceEpoch: try reader.readInt64()))
            case "$geoPoint":
                var latitude: Double?
                var longitude: Double?
                try reader.readObject { reader, key in
                    switch key {
                    case "latitude": latitude = try reader.readDouble()
                    case "longitude": longitude = try reader.readDouble()
                    default: throw Unhandled()
                    }
                }
                guard let latitude, let longitude,
                    let point = try? GeoPoint(latitude: latitude, longitude: longitude)
                else { throw Unhandled() }
                value = .geoPoint(point)
            default:
                throw Unhandled()
            }
        }
        guard let value else { throw Unhandled() }
        return value
    }

    /// The fields a dictionary of an object's fields (or their versions) is made with room for.
    static let typicalFieldCount = 8

    /// Field values by name.
    package mutating func readFields() throws -> [String: Value] {
        // Room for a typical object's fields: growing from empty rehashed them three times.
        var fields = [String: Value](minimumCapacity: Self.typicalFieldCount)
        try readObject { reader, key in fields[key] = try reader.readValue() }
        return fields
    }

    /// Field versions by name.
    package mutating func readFieldVersions() throws -> [String: Int64] {
        var versions = [String: Int64](minimumCapacity: Self.typicalFieldCount)
        try readObject { reader, key in versions[key] = try reader.readInt64() }
        return versions
    }

    /// An ACL in Parse's form, each principal validated.
    ///
    /// An ACL whose text is byte for byte the last one's is not read again: an object's text
    /// ends where its braces balance, so the same bytes are the same ACL, ending at the same
    /// place (a page of 500 objects sharing one ACL read it once; reading it was a third of
    /// reading such an object).
    package mutating func readACL() throws -> ACL {
        skipWhitespace()
        let start = index
        if let last = lastACL, let base = bytes.baseAddress, last.text.count <= bytes.count - start,
            memcmp(base + start, base + last.text.lowerBound, last.text.count) == 0
        {
            index = start + last.text.count
            return last.acl
        }
        let acl = try readNewACL()
        lastACL = (start..<index, acl)
        return acl
    }

    private mutating func readNewACL() throws -> ACL {
        var entries = [Principal: ACL.Access](minimumCapacity: 3)
        try readObject { reader, key in
            guard let principal = try? Principal(key) else { throw Unhandled() }
            var access = ACL.Access(read: false, write: false)
            try reader.readObject { reader, flag in
                switch flag {
                case "read": access.read = try reader.readBool()
                case "write": access.write = try reader.readBool()
                default: throw Unhandled()
                }
            }
            entries[principal] = access
        }
        return ACL(entries)
    }

    /// A stored or sent object (``ObjectSnapshot``'s `Codable` form).
    package mutating func readObjectSnapshot() throws -> ObjectSnapshot {
        var className: String?
        var objectId: String?
        var datastore: DatastoreID?
        var fields: [String: Value]?
        var acl: ACL?
        var createdAt: Timestamp?
        var updatedAt: Timestamp?
        var version: Int64?
        var fieldVersions: [String: Int64]?
        try readObject { reader, key in
            switch key {
            case "className": className = try reader.readString()
            case "objectId": objectId = try reader.readString()
            case "datastore":
                guard let id = try? DatastoreID(try reader.readString()) else { throw Unhandled() }
                datastore = id
            case "fields": fields = try reader.readFields()
            case "acl": acl = try reader.readNull() ? nil : try reader.readACL()
            case "createdAt":
                createdAt = try reader.readNull() ? nil : Timestamp(millisecondsSinceEpoch: try reader.readInt64())
            case "updatedAt":
                updatedAt = try reader.readNull() ? nil : Timestamp(millisecondsSinceEpoch: try reader.readInt64())
            case "version": version = try reader.readInt64()
            case "fieldVersions": fieldVersions = try reader.readNull() ? nil : try reader.readFieldVersions()
            default: throw Unhandled()
            }
        }
        guard let className, let objectId, let datastore, let fields, let version else { throw Unhandled() }
        return ObjectSnapshot(
            className: className, objectId: objectId, datastore: datastore, fields: fields, acl: acl,
            createdAt: createdAt, updatedAt: updatedAt, version: version, fieldVersions: fieldVersions)
    }
}

extension DocumentReader {
    /// A page of the change feed (``PullResponse``'s `Codable` form).
    package mutating func readPullResponse() throws -> PullResponse {
        var spans: [Range<Int>?] = []
        return try readPullResponse(objectSpans: &spans)
    }

    /// A page of the change feed, and where in the text each upserted object's JSON is
    /// (`objectSpans`, by change; `nil` for a tombstone or a removal).
    mutating func readPullResponse(objectSpans: inout [Range<Int>?]) throws -> PullResponse {
        var changes: [PullChange]?
        var checkpoint: Checkpoint?
        var hasMore: Bool?
        var remaining: Int?
        var roles: [String]?
        try readObject { reader, key in
            switch key {
            case "changes":
                var list: [PullChange] = []
                var spans: [Range<Int>?] = []
                try reader.readArray { reader in
                    var span: Range<Int>?
                    list.append(try reader.readPullChange(objectSpan: &span))
                    spans.append(span)
                }
                changes = list
                objectSpans = spans
            case "checkpoint": checkpoint = Checkpoint(try reader.readString())
            case "hasMore": hasMore = try reader.readBool()
            case "remaining":
                guard !(try reader.readNull()) else { return }
                let count = try reader.readInt64()
                guard (0...Int64(WireBounds.maxCount)).contains(count) else { throw Unhandled() }
                remaining = Int(count)
            case "roles":
                guard !(try reader.readNull()) else { return }
                var names: [String] = []
                try reader.readArray { reader in
                    guard names.count < RoleInfo.maxRolesPerUser else { throw Unhandled() }
                    names.append(try reader.readString())
                }
                roles = names
            default: throw Unhandled()
            }
        }
        guard let changes, let checkpoint, let hasMore else { throw Unhandled() }
        return PullResponse(changes: changes, checkpoint: checkpoint, hasMore: hasMore, remaining: remaining, roles: roles)
    }

    /// One change of a page (``PullChange``'s `Codable` form), and where its object's JSON is.
    private mutating func readPullChange(objectSpan: inout Range<Int>?) throws -> PullChange {
        var kind: String?
        var object: ObjectSnapshot?
        var className: String?
        var objectId: String?
        var version: Int64?
        try readObject { reader, key in
            switch key {
            case "kind": kind = try reader.readString()
            case "object":
                reader.skipWhitespace()
                let start = reader.index
                object = try reader.readObjectSnapshot()
                objectSpan = start..<reader.index
            case "className": className = try reader.readString()
            case "objectId": objectId = try reader.readString()
            case "version": version = try reader.readInt64()
            default: throw Unhandled()
            }
        }
        switch kind {
        case "upsert":
            guard let object, className == nil, objectId == nil, version == nil else { throw Unhandled() }
            return .upsert(object)
        case "tombstone":
            guard let className, let objectId, let version, object == nil else { throw Unhandled() }
            return .tombstone(className: className, objectId: objectId, version: version)
        case "removal":
            guard let className, let objectId, object == nil, version == nil else { throw Unhandled() }
            return .removal(className: className, objectId: objectId)
        default:
            throw Unhandled()
        }
    }
}

extension DocumentCoding {
    /// Decodes a document with a ``DocumentReader`` (`fast`), or with `Codable` when the reader
    /// leaves it (then `Codable`'s value or error stands).
    /// - Throws: What `JSONDecoder` throws for text that is not such a document.
    package static func decode<T: Decodable>(
        _ type: T.Type, from text: String, fast: (inout DocumentReader) throws -> T
    ) throws -> T {
        if let value = try? DocumentReader.read(text, fast) { return value }
        return try decode(type, from: text)
    }

    /// Decodes a document from its bytes with a ``DocumentReader`` (`fast`), or with
    /// `JSONDecoder` when the reader leaves it (then `JSONDecoder`'s value or error stands). The
    /// bytes are read as they are: text that is not UTF-8 is never repaired into another document
    /// (the reader validates every string that is not ASCII, and refuses what it cannot read).
    /// - Throws: What `JSONDecoder` throws for data that is not such a document.
    package static func decode<T: Decodable>(
        _ type: T.Type, from data: Data, fast: (inout DocumentReader) throws -> T
    ) throws -> T {
        let read = data.withUnsafeBytes { raw in
            try? DocumentReader.read(bytes: raw.bindMemory(to: UInt8.self), fast)
        }
        if let read { return read }
        return try JSONDecoder().decode(type, from: data)
    }
}

extension PullResponse {
    /// A page of the change feed from the server's JSON, read directly when it can be
    /// (``DocumentReader``), else with `Codable`.
    /// - Throws: What `JSONDecoder` throws for data that is not a page.
    package static func decodeDocument(_ data: Data) throws -> PullResponse {
        try DocumentCoding.decode(PullResponse.self, from: data) { try $0.readPullResponse() }
    }

    /// A page of the change feed from the server's JSON (``decodeDocument(_:)``), with each
    /// upserted object's own JSON text as received (`objectTexts`, by change), so that a client
    /// can store that text rather than encode the object again. The texts are those of a page
    /// the direct reader read whole (every key once, the forms the encoders write), so each is
    /// exactly the object decoded from it; `nil` for a tombstone or a removal, and all `nil` when
    /// the page was left to `Codable`.
    /// - Throws: What `JSONDecoder` throws for data that is not a page.
    package static func decodeDocumentWithObjectTexts(_ data: Data) throws
        -> (page: PullResponse, objectTexts: [String?])
    {
        // The bytes as they are (``DocumentCoding/decode(_:from:fast:)``): the reader validated
        // every non-ASCII string in the spans, so each text is made without validating again.
        let read = data.withUnsafeBytes { raw in
            try? DocumentReader.read(bytes: raw.bindMemory(to: UInt8.self)) { reader in
                var spans: [Range<Int>?] = []
                let page = try reader.readPullResponse(objectSpans: &spans)
                let bytes = reader.bytes
                let texts = spans.map { span in
                    span.map { String(decoding: UnsafeBufferPointer(rebasing: bytes[$0]), as: UTF8.self) }
                }
                return (page, texts)
            }
        }
        if let read { return read }
        let page = try JSONDecoder().decode(PullResponse.self, from: data)
        return (page, Array(repeating: nil, count: page.changes.count))
    }

    /// Where the pull goes on after the page whose JSON is `data`: its checkpoint when it has more
    /// changes, read without reading its changes (they are skipped, and not read at all when they
    /// come after `checkpoint` and `hasMore`, as the server writes them). `nil` when the page is
    /// the last, or when the text cannot be read that far (reading the whole page then says why).
    /// A hint only: the page's own reading is what counts.
    ///
    /// ```swift
    /// if let next = PullResponse.continuation(of: body) { prefetch(next) }
    /// let page = try PullResponse.decodeDocument(body)
    /// ```
    package static func continuation(of data: Data) -> Checkpoint? {
        data.withUnsafeBytes { continuation(of: $0.bindMemory(to: UInt8.self)) }
    }

    /// Where the pull goes on after the page whose JSON text is `text` (``continuation(of:)``).
    package static func continuation(of text: String) -> Checkpoint? {
        var text = text
        return text.withUTF8 { continuation(of: $0) }
    }

    private static func continuation(of bytes: UnsafeBufferPointer<UInt8>) -> Checkpoint? {
        /// Thrown once both are read, to stop before the changes.
        struct Found: Error {}
        var checkpoint: Checkpoint?
        var hasMore: Bool?
        do {
            try DocumentReader.read(bytes: bytes) { reader in
                try reader.readObject { reader, key in
                    switch key {
                    case "checkpoint": checkpoint = Checkpoint(try reader.readString())
                    case "hasMore": hasMore = try reader.readBool()
                    default: try reader.skipValue()
                    }
                    if checkpoint != nil, hasMore != nil { throw Found() }
                }
            }
        } catch is Found {
        } catch {
            return nil
        }
        return hasMore == true ? checkpoint : nil
    }
}

extension ObjectSnapshot {
    /// An object from its stored JSON (``DocumentCoding``), read directly when it can be.
    /// - Throws: What `JSONDecoder` throws for text that is not an object.
    package static func decodeDocument(_ text: String) throws -> ObjectSnapshot {
        try DocumentCoding.decode(ObjectSnapshot.self, from: text) { try $0.readObjectSnapshot() }
    }
}
