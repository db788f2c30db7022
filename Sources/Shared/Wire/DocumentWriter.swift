import Foundation

/// A direct writer of the JSON documents Rooftop sends and stores (objects, their fields and
/// ACLs, pull pages), the counterpart of ``DocumentReader``: it appends bytes instead of going
/// through `Encodable`'s containers.
///
/// It writes the same forms as the `Codable` conformances (`Value`'s portable form, Parse's ACL
/// form, the synthesized object form), not necessarily the same bytes: members are not sorted and
/// numbers are Swift's shortest round-trip text. The kinds it does not write itself (bytes,
/// decimals, days, JSON values, pointers, relations) are encoded with `JSONEncoder` and spliced
/// in. A property test decodes its output with `Codable` and compares.
package struct DocumentWriter {
    /// The document so far.
    package internal(set) var bytes: [UInt8] = []

    package init(capacity: Int = 1024) {
        bytes.reserveCapacity(capacity)
    }

    /// The document as text.
    package var text: String { String(decoding: bytes, as: UTF8.self) }

    // MARK: Tokens

    package mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    package mutating func string(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in string(utf8: utf8) }
    }

    /// A string whose UTF-8 is `utf8` (read over its contiguous bytes: a page writes several per
    /// object).
    private mutating func string(utf8: UnsafeBufferPointer<UInt8>) {
        bytes.append(UInt8(ascii: "\""))
        // Most texts need no escape: copied whole, not byte by byte.
        if !Self.needsEscape(utf8) {
            bytes.append(contentsOf: utf8)
            bytes.append(UInt8(ascii: "\""))
            return
        }
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "\""): raw("\\\"")
            case UInt8(ascii: "\\"): raw("\\\\")
            case 0x0A: raw("\\n")
            case 0x0D: raw("\\r")
            case 0x09: raw("\\t")
            case 0x08: raw("\\b")
            case 0x0C: raw("\\f")
            case 0..<0x20:
                raw("\\u00")
                bytes.append(DocumentWriter.hex[Int(byte >> 4)])
                bytes.append(DocumentWriter.hex[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static let hex = Array("0123456789abcdef".utf8)

    /// A JSON array of strings.
    package mutating func strings(_ texts: some Sequence<String>) {
        bytes.append(UInt8(ascii: "["))
        for (index, text) in texts.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            string(text)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    package mutating func int(_ value: Int64) {
        // Its digits straight into the text (no string made for each: a page writes three
        // numbers for each of its objects).
        var magnitude = value.magnitude
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = 20
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start..<20]))
        }
    }

    /// Whether a string of these UTF-8 bytes has a byte JSON escapes: a quote, a backslash or a
    /// control byte (looked at eight bytes at a time, ``DocumentReader/hasSpecialByte(_:)``).
    static func needsEscape(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = utf8.baseAddress else { return false }
        var index = 0
        while index &+ 8 <= utf8.count {
            if DocumentReader.hasSpecialByte(UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)) { return true }
            index &+= 8
        }
        return UnsafeBufferPointer(rebasing: utf8[index...]).contains(where: DocumentReader.isSpecialByte)
    }

    package mutating func bool(_ value: Bool) {
        if value { raw("true") } else { raw("false") }
    }

    /// A finite double as a JSON number.
    mutating func number(_ value: Double) {
        bytes.append(contentsOf: "\(value)".utf8)
    }

    /// `"key":`, preceded by a comma unless `first`.
    package mutating func key(_ key: String, first: Bool) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        string(key)
        bytes.append(UInt8(ascii: ":"))
    }

    /// Splices in `value` as `JSONEncoder` writes it.
    /// - Throws: What `JSONEncoder` throws.
    package mutating func encoded<T: Encodable>(_ value: T) throws {
        bytes.append(contentsOf: try JSONEncoder().encode(value))
    }
}

extension ObjectSnapshot {
    /// The object's JSON as stored (``DocumentCoding``'s form, written directly).
    /// - Throws: What `JSONEncoder` throws for the values it writes.
    package func encodedDocument() throws -> String {
        var writer = DocumentWriter()
        try writer.objectSnapshot(self)
        return writer.text
    }
}
