import Foundation

/// Unpadded base64url (RFC 4648 §5), the form of session tokens and checkpoints: `+` and `/`
/// become `-` and `_`, and the `=` padding is left out.
///
/// Written over the bytes directly: every pull page decodes a checkpoint and encodes the next
/// (and every session a token), where going through standard base64 and replacing characters
/// in strings was 3–4% of a full pull's server samples (docs/benchmarks.md).
///
/// ```swift
/// let text = Base64URL.encode([0xFB, 0xFF])   // "-_8"
/// let bytes = Base64URL.decode(text)          // Data([0xFB, 0xFF])
/// ```
enum Base64URL {
    /// The 64 digits, in value order.
    private static let digits = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Each byte's digit value, or `invalid`.
    private static let values: [UInt8] = {
        var values = [UInt8](repeating: invalid, count: 256)
        for (value, digit) in digits.enumerated() { values[Int(digit)] = UInt8(value) }
        return values
    }()

    /// Not a base64url digit.
    private static let invalid: UInt8 = 0xFF

    /// The unpadded base64url text of `bytes`.
    static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let input = Array(bytes)
        var text: [UInt8] = []
        text.reserveCapacity(input.count / 3 * 4 + 3)
        func append(_ group: UInt32, digits count: Int) {
            for index in 0..<count {
                text.append(digits[Int((group >> (18 - 6 * UInt32(index))) & 0x3F)])
            }
        }
        var index = 0
        while input.count - index >= 3 {
            append(UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2]), digits: 4)
            index += 3
        }
        switch input.count - index {
        case 1: append(UInt32(input[index]) << 16, digits: 2)
        case 2: append(UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8, digits: 3)
        default: break
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The bytes of unpadded (or correctly padded) base64url text; `nil` when it is not
    /// base64url: a byte that is no digit, one digit left over, padding that does not complete
    /// the last group, or leftover bits that are not zero (each byte string has one unpadded text).
    static func decode(_ text: String) -> Data? {
        var utf8 = Array(text.utf8)
        if utf8.last == UInt8(ascii: "=") {
            // Padded: the whole text is groups of four.
            guard utf8.count % 4 == 0 else { return nil }
            utf8.removeLast()
            if utf8.last == UInt8(ascii: "=") { utf8.removeLast() }
        }
        let leftover = utf8.count % 4
        guard leftover != 1 else { return nil }
        var bytes = Data(capacity: utf8.count / 4 * 3 + 2)
        var group: UInt32 = 0
        for (index, digit) in utf8.enumerated() {
            let value = values[Int(digit)]
            guard value != invalid else { return nil }
            group = group << 6 | UInt32(value)
            if index % 4 == 3 {
                bytes.append(UInt8(truncatingIfNeeded: group >> 16))
                bytes.append(UInt8(truncatingIfNeeded: group >> 8))
                bytes.append(UInt8(truncatingIfNeeded: group))
                group = 0
            }
        }
        switch leftover {
        case 2:
            guard group & 0x0F == 0 else { return nil }
            bytes.append(UInt8(truncatingIfNeeded: group >> 4))
        case 3:
            guard group & 0x03 == 0 else { return nil }
            bytes.append(UInt8(truncatingIfNeeded: group >> 10))
            bytes.append(UInt8(truncatingIfNeeded: group >> 2))
        default: break
        }
        return bytes
    }
}
