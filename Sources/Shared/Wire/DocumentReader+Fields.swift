extension DocumentReader {
    /// Skips one value of any kind, without building it.
    /// - Throws: ``Unhandled`` for text that is not a JSON value.
    package mutating func skipValue() throws {
        switch try peek() {
        case UInt8(ascii: "\""):
            try skipString()
        case UInt8(ascii: "{"):
            index += 1
            if try peek() == UInt8(ascii: "}") {
                index += 1
                return
            }
            while true {
                try skipString()
                try consume(UInt8(ascii: ":"))
                try skipValue()
                guard try peek() == UInt8(ascii: ",") else { return try consume(UInt8(ascii: "}")) }
                index += 1
            }
        case UInt8(ascii: "["):
            index += 1
            if try peek() == UInt8(ascii: "]") {
                index += 1
                return
            }
            while true {
                try skipValue()
                guard try peek() == UInt8(ascii: ",") else { return try consume(UInt8(ascii: "]")) }
                index += 1
            }
        case UInt8(ascii: "n"): try consumeLiteral("null")
        case UInt8(ascii: "t"): try consumeLiteral("true")
        case UInt8(ascii: "f"): try consumeLiteral("false")
        default:
            let start = index
            while index < bytes.count, Self.isNumberByte(bytes[index]) { index += 1 }
            guard index > start else { throw Unhandled() }
        }
    }

    /// Skips a string, escapes included.
    private mutating func skipString() throws {
        try consume(UInt8(ascii: "\""))
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""):
                index += 1
                return
            case UInt8(ascii: "\\"): index += 2
            default: index += 1
            }
        }
        throw Unhandled()
    }

    /// The value of one field of a stored or sent object (``ObjectSnapshot``'s `Codable` form) as
    /// the object's subscript gives it, reading nothing else of the object: its
    /// built-in fields (`objectId`, `createdAt`, `updatedAt`) or one of its `fields`.
    /// - Throws: ``Unhandled`` for what the reader leaves to `Codable`.
    package mutating func readField(_ name: String) throws -> Value? {
        var found: Value?
        try readObject { reader, key in
            switch key {
            case "objectId" where name == "objectId": found = .string(try reader.readString())
            case "createdAt" where name == "createdAt", "updatedAt" where name == "updatedAt":
                found = try reader.readNull() ? nil : .date(Timestamp(millisecondsSinceEpoch: try reader.readInt64()))
            case "fields" where !Identifier.builtInFields.contains(name):
                try reader.readObject { reader, field in
                    if field == name { found = try reader.readValue() } else { try reader.skipValue() }
                }
            default: try reader.skipValue()
            }
        }
        return found
    }
}

extension ObjectSnapshot {
    /// The value of one field of an object from its stored JSON, as its subscript gives
    /// it: read directly when it can be (only that field is decoded), else from the whole object
    /// decoded with `Codable`.
    /// - Throws: What `JSONDecoder` throws for text that is not an object.
    package static func field(_ name: String, ofDocument text: String) throws -> Value? {
        do {
            return try DocumentReader.read(text) { try $0.readField(name) }
        } catch {
            // Left to `Codable` (a pointer, bytes, an escape the reader does not take).
            return try decodeDocument(text)[name]
        }
    }
}
