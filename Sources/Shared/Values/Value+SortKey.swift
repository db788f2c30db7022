/// Order-preserving byte keys: `memcmp` on two keys orders them exactly as
/// ``Value/compare(_:_:)`` orders the values, and equivalent values have identical keys.
///
/// The server stores a key per indexed field so that SQL (SQLite or PostgreSQL, which both compare
/// blobs bytewise) sorts and range-filters in the same order as the client's evaluator.
///
/// Layout: one kind byte (the kind's place in the order, plus one), then a payload that is
/// prefix-free, so that keys concatenate (as list elements do) without ambiguity:
/// - numbers: a class byte (NaN, -inf, negative, zero, positive, +inf); finite non-zero numbers
///   then carry the exact binary exponent (2 bytes) and the 64 bits after the leading one,
///   all inverted for negatives;
/// - strings and bytes: the bytes with `00` escaped as `00 FF`, ended by `00 00`;
/// - decimals: a sign class, the exponent (4 bytes) and the digits (each `digit + 1`, ended by
///   `00`), all inverted for negatives;
/// - lists and relations: `01` before each element, `00` at the end.
extension Value {
    /// The longest key, in bytes, that an index stores: 256. Longer values (long strings, large
    /// lists, bytes and JSON objects) are not indexed, on the server or on the client; conditions
    /// and orders on them are decided by the shared evaluator from the stored object. Keeping them
    /// out keeps the index a small fraction of the data.
    public static let indexedKeyLimit = 256

    /// This value's key when an index stores it: `nil` when it is longer than
    /// ``indexedKeyLimit``.
    public var indexedSortKey: [UInt8]? {
        let key = sortKey
        return key.count <= Value.indexedKeyLimit ? key : nil
    }

    /// The order-preserving key of this value.
    public var sortKey: [UInt8] {
        var key: [UInt8] = []
        appendSortKey(to: &key)
        return key
    }

    /// Appends this value's key to `key`.
    public func appendSortKey(to key: inout [UInt8]) {
        key.append(UInt8(kind.rawValue + 1))
        switch self {
        case .null:
            break
        case .bool(let value):
            key.append(value ? 1 : 0)
        case .int(let value):
            SortKeyEncoding.appendNumber(ExactBinary(value), to: &key)
        case .double(let value):
            SortKeyEncoding.appendNumber(ExactBinary(value), to: &key)
        case .decimal(let value):
            SortKeyEncoding.appendDecimal(value, to: &key)
        case .date(let value):
            SortKeyEncoding.appendBigEndian(UInt64(bitPattern: value.millisecondsSinceEpoch) ^ (1 << 63), to: &key)
        case .day(let value):
            SortKeyEncoding.appendBigEndian(UInt16(value.year), to: &key)
            key.append(UInt8(value.month))
            key.append(UInt8(value.day))
        case .string(let value):
            SortKeyEncoding.appendEscaped(value.utf8, to: &key)
        case .bytes(let value):
            SortKeyEncoding.appendEscaped(value.data, to: &key)
            if let mimeType = value.mimeType {
                key.append(1)
                SortKeyEncoding.appendEscaped(mimeType.utf8, to: &key)
            } else {
                key.append(0)
            }
        case .list(let values):
            for element in values {
                key.append(1)
                element.appendSortKey(to: &key)
            }
            key.append(0)
        case .geoPoint(let value):
            SortKeyEncoding.appendOrderedDouble(value.latitude, to: &key)
            SortKeyEncoding.appendOrderedDouble(value.longitude, to: &key)
        case .pointer(let value):
            SortKeyEncoding.appendEscaped(value.className.utf8, to: &key)
            SortKeyEncoding.appendEscaped(value.objectId.utf8, to: &key)
        case .relation(let value):
            SortKeyEncoding.appendEscaped(value.className.utf8, to: &key)
            for objectId in value.objectIds {
                key.append(1)
                SortKeyEncoding.appendEscaped(objectId.utf8, to: &key)
            }
            key.append(0)
        case .json(let value):
            SortKeyEncoding.appendEscaped(value.canonicalText.utf8, to: &key)
        }
    }
}

/// A finite or special number as sign, binary exponent and fraction bits: the common exact form
/// of `Int64` and `Double` values.
struct ExactBinary {
    enum Class: UInt8 {
        case nan = 1, negativeInfinity, negative, zero, positive, positiveInfinity
    }

    let numberClass: Class
    /// For finite non-zero numbers: `E` such that `2^E <= |x| < 2^(E+1)`.
    let exponent: Int
    /// For finite non-zero numbers: the bits after the leading one, left-aligned.
    let fraction: UInt64

    init(_ value: Int64) {
        if value == 0 {
            (numberClass, exponent, fraction) = (.zero, 0, 0)
            return
        }
        let magnitude = value.magnitude
        let leading = magnitude.leadingZeroBitCount
        numberClass = value < 0 ? .negative : .positive
        exponent = 63 - leading
        fraction = magnitude << (leading + 1)  // Smart shift: shifting by 64 gives 0.
    }

    init(_ value: Double) {
        if value.isNaN {
            (numberClass, exponent, fraction) = (.nan, 0, 0)
        } else if value.isInfinite {
            (numberClass, exponent, fraction) = (value < 0 ? .negativeInfinity : .positiveInfinity, 0, 0)
        } else if value == 0 {
            (numberClass, exponent, fraction) = (.zero, 0, 0)
        } else {
            let biased = Int(value.exponentBitPattern)
            let significand: UInt64
            let scale: Int
            if biased == 0 {
                significand = value.significandBitPattern
                scale = -1074
            } else {
                significand = value.significandBitPattern | (1 << 52)
                scale = biased - 1075
            }
            let leading = significand.leadingZeroBitCount
            numberClass = value < 0 ? .negative : .positive
            exponent = 63 - leading + scale
            fraction = significand << (leading + 1)
        }
    }
}

extension GeoPoint {
    /// The point whose key (``Value/sortKey``) is `key`; `nil` when `key` is not a point's key.
    /// A point's key is its kind's byte, then its latitude's and its longitude's 8 bytes, which
    /// keep every bit: the point read back is the point the key was made of, so a distance
    /// worked out from an index's key is the distance from the stored point.
    package init?(sortKey key: some Collection<UInt8>) {
        guard key.count == 17, key.first == UInt8(Value.Kind.geoPoint.rawValue + 1) else { return nil }
        var bytes = key.dropFirst().makeIterator()
        func orderedDouble() -> Double {
            var bits: UInt64 = 0
            for _ in 0..<8 { bits = bits << 8 | UInt64(bytes.next() ?? 0) }
            return Double(bitPattern: bits & (1 << 63) != 0 ? bits & ~(1 << 63) : ~bits)
        }
        let latitude = orderedDouble()
        let longitude = orderedDouble()
        guard let point = try? GeoPoint(latitude: latitude, longitude: longitude) else { return nil }
        self = point
    }
}

/// Building blocks of sort keys.
enum SortKeyEncoding {
    static func appendNumber(_ number: ExactBinary, to key: inout [UInt8]) {
        key.append(number.numberClass.rawValue)
        guard number.numberClass == .positive || number.numberClass == .negative else { return }
        // Exponents run from -1074 (smallest subnormal) to 1023; bias into an unsigned 16 bits.
        let biasedExponent = UInt16(number.exponent + 1100)
        if number.numberClass == .positive {
            appendBigEndian(biasedExponent, to: &key)
            appendBigEndian(number.fraction, to: &key)
        } else {
            appendBigEndian(~biasedExponent, to: &key)
            appendBigEndian(~number.fraction, to: &key)
        }
    }

    static func appendDecimal(_ decimal: DecimalNumber, to key: inout [UInt8]) {
        let (negative, digits, exponent) = decimal.normalized
        if digits.isEmpty {
            key.append(2)
            return
        }
        key.append(negative ? 1 : 3)
        // Exponents are bounded by the text's length and its 9-digit exponent.
        let biased = UInt32(truncatingIfNeeded: Int64(exponent) + (1 << 31))
        var body: [UInt8] = []
        appendBigEndian(biased, to: &body)
        body.append(contentsOf: digits.map { $0 + 1 })
        body.append(0)
        key.append(contentsOf: negative ? body.map { ~$0 } : body)
    }

    static func appendOrderedDouble(_ value: Double, to key: inout [UInt8]) {
        let bits = value.bitPattern
        appendBigEndian(bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63), to: &key)
    }

    static func appendEscaped<S: Sequence<UInt8>>(_ bytes: S, to key: inout [UInt8]) {
        for byte in bytes {
            key.append(byte)
            if byte == 0 { key.append(0xFF) }
        }
        key.append(0)
        key.append(0)
    }

    static func appendBigEndian<T: FixedWidthInteger>(_ value: T, to key: inout [UInt8]) {
        var bigEndian = value.bigEndian
        withUnsafeBytes(of: &bigEndian) { key.append(contentsOf: $0) }
    }
}
