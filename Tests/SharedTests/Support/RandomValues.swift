import Foundation
import PropertyBased
import RooftopShared

/// Random values of every kind, with the floating-point edge cases over-represented.
enum RandomValues {
    /// Doubles that break naive encodings.
    static let edgeDoubles: [Double] = [
        0.0, -0.0, 1.0, -1.0, 0.1, 1.0 / 3.0, .leastNonzeroMagnitude, -.leastNonzeroMagnitude,
        .leastNormalMagnitude, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .infinity, -.infinity, .nan,
        9_007_199_254_740_992, 9_007_199_254_740_994, 9_223_372_036_854_775_808, -9_223_372_036_854_775_808,
        1e-300, 123_456.789e10, .ulpOfOne,
    ]

    /// Integers at the edges of the 64-bit range and of exact doubles.
    static let edgeInts: [Int64] = [
        0, 1, -1, .max, .min, .max - 1, .min + 1, 9_007_199_254_740_992, 9_007_199_254_740_993, -9_007_199_254_740_993,
    ]

    static func double<R: RandomNumberGenerator>(_ rng: inout R) -> Double {
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: return edgeDoubles.randomElement(using: &rng) ?? 0
        case 1: return Double(bitPattern: rng.next())
        case 2: return Double(Int.random(in: -5...5, using: &rng))
        default: return Double.random(in: -1000...1000, using: &rng)
        }
    }

    static func int<R: RandomNumberGenerator>(_ rng: inout R) -> Int64 {
        switch Int.random(in: 0..<3, using: &rng) {
        case 0: return edgeInts.randomElement(using: &rng) ?? 0
        case 1: return Int64(bitPattern: rng.next())
        default: return Int64.random(in: -5...5, using: &rng)
        }
    }

    static func string<R: RandomNumberGenerator>(_ rng: inout R, maxLength: Int = 8) -> String {
        let pool: [Unicode.Scalar] = ["a", "b", "z", "A", "0", " ", "\0", "\u{7F}", "é", "\u{301}", "€", "😀", "\u{FFFF}"]
        let length = Int.random(in: 0...maxLength, using: &rng)
        var scalars = String.UnicodeScalarView()
        for _ in 0..<length { scalars.append(pool.randomElement(using: &rng) ?? "a") }
        return String(scalars)
    }

    static func id<R: RandomNumberGenerator>(_ rng: inout R) -> String {
        let alphabet = Array("abcXYZ019._-+/=")
        let length = Int.random(in: 1...4, using: &rng)
        return String((0..<length).map { _ in alphabet.randomElement(using: &rng) ?? "a" })
    }

    static func json<R: RandomNumberGenerator>(_ rng: inout R, depth: Int) -> JSONValue {
        switch Int.random(in: 0..<(depth > 0 ? 7 : 5), using: &rng) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &rng))
        case 2: return .int(int(&rng))
        case 3:
            let value = double(&rng)
            return .double(value.isFinite ? value : 0.5)
        case 4: return .string(string(&rng))
        case 5: return .array((0..<Int.random(in: 0...3, using: &rng)).map { _ in json(&rng, depth: depth - 1) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0...3, using: &rng) { members[string(&rng)] = json(&rng, depth: depth - 1) }
            return .object(members)
        }
    }

    /// A random value of any kind; lists nest up to `depth`.
    static func value<R: RandomNumberGenerator>(_ rng: inout R, depth: Int = 2) -> Value {
        switch Int.random(in: 0..<(depth > 0 ? 15 : 14), using: &rng) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &rng))
        case 2, 3: return .int(int(&rng))
        case 4, 5: return .double(double(&rng))
        case 6: return .string(string(&rng))
        case 7: return .date(Timestamp(millisecondsSinceEpoch: int(&rng)))
        case 8:
            let bytes = (0..<Int.random(in: 0...6, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let mimeType = Bool.random(using: &rng) ? nil : ["image/png", "text/plain", ""].randomElement(using: &rng)
            return .bytes(BinaryValue(Data(bytes), mimeType: mimeType))
        case 9:
            let texts = ["0", "-0.0", "1.50", "1.5", "-1.5", "123456789012345678901234567890.5", "1e-30", "-2E+5", "0.001", "+7"]
            let text = texts.randomElement(using: &rng) ?? "0"
            return (try? DecimalNumber(text)).map(Value.decimal) ?? .null
        case 10:
            let latitude = Bool.random(using: &rng) ? Double.random(in: -90...90, using: &rng) : [-90, 0, 90].randomElement(using: &rng) ?? 0
            let longitude = Bool.random(using: &rng) ? Double.random(in: -180...180, using: &rng) : [-180, 0, 180].randomElement(using: &rng) ?? 0
            return (try? GeoPoint(latitude: latitude, longitude: longitude)).map(Value.geoPoint) ?? .null
        case 11:
            return .day(Day(daysSinceEpoch: Int64.random(in: -719_162...2_932_896, using: &rng)))
        case 12:
            if Bool.random(using: &rng) {
                return .pointer(Pointer(className: id(&rng), objectId: id(&rng)))
            }
            return .relation(Relation(className: id(&rng), objectIds: (0..<Int.random(in: 0...3, using: &rng)).map { _ in id(&rng) }))
        case 13:
            return .json(json(&rng, depth: 2))
        default:
            return .list((0..<Int.random(in: 0...4, using: &rng)).map { _ in value(&rng, depth: depth - 1) })
        }
    }
}

extension Gen where Value == RooftopShared.Value {
    /// Any value, lists nested up to two levels.
    static var anyValue: Generator<RooftopShared.Value, Shrink.None<RooftopShared.Value>> {
        Generator { rng in RandomValues.value(&rng) }
    }

    /// Numbers and nearby kinds, so that equal and close values come up often.
    static var numericValue: Generator<RooftopShared.Value, Shrink.None<RooftopShared.Value>> {
        Generator { rng in
            switch Int.random(in: 0..<3, using: &rng) {
            case 0: .int(RandomValues.int(&rng))
            case 1: .double(RandomValues.double(&rng))
            default: .int(Int64.random(in: -3...3, using: &rng))
            }
        }
    }
}
