import Foundation

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

    /// The members of a change's form (``PullChange``'s `Codable` keys).
    private enum ChangeKey: String, CaseIterable, Sendable {
        case kind, object, className, objectId, version
        static let keys = DocumentKeys(allCases)
    }

    /// One change of a page (``PullChange``'s `Codable` form), and where its object's JSON is.
    private mutating func readPullChange(objectSpan: inout Range<Int>?) throws -> PullChange {
        var kind: String?
        var object: ObjectSnapshot?
        var className: String?
        var objectId: String?
        var version: Int64?
        try readObject(ChangeKey.keys) { reader, key in
            switch key {
            case .kind: kind = try reader.readString()
            case .object:
                reader.skipWhitespace()
                let start = reader.index
                object = try reader.readObjectSnapshot()
                objectSpan = start..<reader.index
            case .className: className = try reader.readString()
            case .objectId: objectId = try reader.readString()
            case .version: version = try reader.readInt64()
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
