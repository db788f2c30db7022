/// An arbitrary-precision decimal number carried as its text: the `decimal` value kind.
///
/// The text is kept exactly as given (`"1.50"` stays `"1.50"`: its digits are preserved), but
/// decimals are ordered by their numeric value, so `1.50` and `1.5` sort as equals (Cloudant Sync
/// carries decimals as strings; Rooftop also orders them properly).
///
/// Accepted syntax: an optional `-` or `+`, digits with an optional `.` and fraction (at least one
/// digit in all), then an optional exponent `e`/`E` with an optional sign and 1-9 digits.
public struct DecimalNumber: Hashable, Sendable, CustomStringConvertible {
    /// The text, exactly as given.
    public let text: String

    /// The numeric value in normalized form: sign, significant digits (no leading or trailing
    /// zeros; empty for zero) and the exponent `e` such that the value is `0.d1d2d3… × 10^e`.
    let normalized: (negative: Bool, digits: [UInt8], exponent: Int)

    /// The largest accepted number of characters in a decimal's text.
    public static let maxLength = 1000

    /// Parses and validates a decimal.
    /// - Throws: ``RooftopError/Code/illegalArgument`` when the text is not a decimal number.
    public init(_ text: String) throws(RooftopError) {
        guard let normalized = DecimalNumber.parse(text) else {
            throw RooftopError(.illegalArgument, "'\(text.prefix(40))' is not a decimal number")
        }
        self.text = text
        self.normalized = normalized
    }

    /// Whether the number is zero.
    public var isZero: Bool { normalized.digits.isEmpty }

    /// The text.
    public var description: String { text }

    /// Two decimals are identical when their texts are.
    public static func == (lhs: DecimalNumber, rhs: DecimalNumber) -> Bool { lhs.text == rhs.text }

    /// Hashes the text.
    public func hash(into hasher: inout Hasher) { hasher.combine(text) }

    /// Compares numeric values: `-1`, `0` or `1`.
    func compareNumerically(to other: DecimalNumber) -> Int {
        let (l, r) = (normalized, other.normalized)
        func sign(_ value: (negative: Bool, digits: [UInt8], exponent: Int)) -> Int {
            value.digits.isEmpty ? 0 : (value.negative ? -1 : 1)
        }
        let (ls, rs) = (sign(l), sign(r))
        if ls != rs { return ls < rs ? -1 : 1 }
        if ls == 0 { return 0 }
        var magnitude: Int
        if l.exponent != r.exponent {
            magnitude = l.exponent < r.exponent ? -1 : 1
        } else if l.digits.lexicographicallyPrecedes(r.digits) {
            magnitude = -1
        } else {
            magnitude = l.digits == r.digits ? 0 : 1
        }
        return ls < 0 ? -magnitude : magnitude
    }

    private static func parse(_ text: String) -> (negative: Bool, digits: [UInt8], exponent: Int)? {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= maxLength else { return nil }
        var index = 0
        var negative = false
        if bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") {
            negative = bytes[index] == UInt8(ascii: "-")
            index += 1
        }
        func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        var integerDigits: [UInt8] = []
        while index < bytes.count, isDigit(bytes[index]) {
            integerDigits.append(bytes[index] - UInt8(ascii: "0"))
            index += 1
        }
        var fractionDigits: [UInt8] = []
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            while index < bytes.count, isDigit(bytes[index]) {
                fractionDigits.append(bytes[index] - UInt8(ascii: "0"))
                index += 1
            }
        }
        guard !integerDigits.isEmpty || !fractionDigits.isEmpty else { return nil }
        var exponent = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            var exponentNegative = false
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") {
                exponentNegative = bytes[index] == UInt8(ascii: "-")
                index += 1
            }
            // At most 9 digits are accumulated, so the exponent (|e| < 10⁹) and the scale below
            // (plus at most `maxLength` digits) stay far inside `Int`: a longer exponent is
            // refused before it is ever multiplied.
            var count = 0
            while index < bytes.count, isDigit(bytes[index]) {
                guard count < 9 else { return nil }
                exponent = exponent * 10 + Int(bytes[index] - UInt8(ascii: "0"))
                index += 1
                count += 1
            }
            guard count >= 1 else { return nil }
            if exponentNegative { exponent = -exponent }
        }
        guard index == bytes.count else { return nil }
        // value = 0.(integer fraction) × 10^(integerDigits.count + exponent)
        var digits = integerDigits + fractionDigits
        var scale = integerDigits.count + exponent
        let leadingZeros = digits.prefix { $0 == 0 }.count
        digits.removeFirst(leadingZeros)
        scale -= leadingZeros
        while digits.last == 0 { digits.removeLast() }
        if digits.isEmpty { return (false, [], 0) }
        return (negative, digits, scale)
    }
}

extension DecimalNumber: Codable {
    /// Decodes from its text.
    public init(from decoder: any Decoder) throws {
        try self.init(try decoder.singleValueContainer().decode(String.self))
    }

    /// Encodes its text.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }
}
