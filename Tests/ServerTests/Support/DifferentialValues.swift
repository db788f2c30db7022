import Foundation
import RooftopShared
import RooftopTestSupport

/// Small pools of values for the differential tests, shared by the data and the queries so that
/// conditions match often. They hold the awkward cases on purpose: ints and doubles that are
/// equivalent (`1` and `1.0`, `2^53` both ways) or only nearly so (`2^53 + 1`), `-0.0`, NaN and
/// infinities, strings with NUL bytes, combining marks and multi-byte characters, points on the
/// antimeridian and the poles, and values of every kind.
enum DifferentialValues {
    static let ints: [Int64] = [0, 1, -1, 2, 3, 10, .max, .min, 9_007_199_254_740_992, 9_007_199_254_740_993]

    static let doubles: [Double] = [
        0.0, -0.0, 1.0, 2.5, -1.5, 3.0, .nan, .infinity, -.infinity, .leastNonzeroMagnitude, 0.1, 1e300,
        9_007_199_254_740_992.0, 9_223_372_036_854_775_808.0, -9_223_372_036_854_775_808.0,
    ]

    /// Strings, including prefixes of each other in bytes but not in characters (`e` + U+0301).
    static let strings: [String] = [
        "", "a", "ab", "abc", "b", "A", "Z", "é", "e\u{301}", "e", "😀", "😀x", "a\0", "a\0b", "\0", "\0\0", "ä",
        "€uro", "\u{7F}", "\u{FFFF}", "zz",
    ]

    /// Strings whose keys are longer than ``Value/indexedKeyLimit``, so that the index leaves them
    /// out and the evaluator decides; some share long prefixes with each other and short ones.
    static let longStrings: [String] = [
        String(repeating: "a", count: 300), String(repeating: "a", count: 300) + "b",
        "ab" + String(repeating: "c", count: 260), String(repeating: "é", count: 200), "zz" + String(repeating: "\0", count: 255),
    ]

    /// Prefixes for `startsWith`: empty, multi-byte, with NUL bytes, and some matching nothing.
    static let prefixes: [String] = [
        "", "a", "ab", "é", "e", "😀", "\0", "a\0", "€", "\u{FFFF}", "q", "A", String(repeating: "a", count: 280),
    ]

    static let timestamps: [Int64] = [0, -1, 1_000, 1_700_000_000_000, .max, .min]

    static let decimals: [String] = ["0", "1", "1.50", "1.5", "-0.001", "123456789012345678901234567890.5"]

    static let points: [GeoPoint] = [
        (0, 0), (10, 170), (10, -170), (-10, -179.5), (0, 180), (0, -180), (-90, 180), (90, -180), (90, 0),
        (40.4168, -3.7038), (45, 179.9), (-45, -179.9), (12.345678901234, -98.7654321), (0.5, 0.5),
        // Antipodes of points above: haversine rounding is at its worst there.
        (-10, -10), (-40.4168, 176.2962), (-12.345678901234, 81.2345679), (-0.5, -179.5),
        // Antipodal pairs whose haversine term rounds above 1 (see nanAntipodes).
        (76.201, 8.385), (-76.201, -171.615), (12.783, 82.117), (-12.783, -97.883),
    ].compactMap { try? GeoPoint(latitude: $0.0, longitude: $0.1) }

    /// Antipodal pairs whose haversine term rounds above 1, where an unclamped haversine gives NaN
    /// (see `SQLQueryDistanceTests`); their points are also in ``points``.
    static let nanAntipodes: [(GeoPoint, GeoPoint)] = [
        ((76.201, 8.385), (-76.201, -171.615)), ((12.783, 82.117), (-12.783, -97.883)),
    ].compactMap { pair in
        guard let a = try? GeoPoint(latitude: pair.0.0, longitude: pair.0.1),
            let b = try? GeoPoint(latitude: pair.1.0, longitude: pair.1.1)
        else { return nil }
        return (a, b)
    }

    static let classes = ["T", "U", "V"]

    /// Object IDs chosen so that bytewise order differs from case-insensitive and numeric orders.
    static let objectIds = [
        "a", "b", "c", "A", "B", "Z9", "a.b", "_x", "a-1", "=", "u1", "zz", "0", "10", "9", "+", "a/b", "Ab", "aB",
        "x=y", "long-object-id-0123456789",
    ]

    static let jsons: [JSONValue] = [
        .null, .int(1), .string("a"), .array([.int(1), .string("x")]), .object(["k": .bool(true)]),
    ]

    /// Any value, of every kind; lists (mixed kinds) nest up to `depth` more levels.
    static func value(_ rng: inout SeededGenerator, depth: Int = 1) -> Value {
        switch rng.int(0...16) {
        case 0: return .null
        case 1: return .bool(rng.chance(50))
        case 2, 3: return .int(rng.pick(ints))
        case 4, 5: return .double(rng.pick(doubles))
        case 6: return .string(rng.pick(strings))
        case 7: return .string(rng.chance(25) ? rng.pick(longStrings) : rng.pick(strings))
        case 8: return .date(Timestamp(millisecondsSinceEpoch: rng.pick(timestamps)))
        case 9: return .day(Day(daysSinceEpoch: rng.pick([0, -1, 19_000, 2_932_896])))
        case 10: return (try? DecimalNumber(rng.pick(decimals))).map(Value.decimal) ?? .null
        case 11: return .geoPoint(rng.pick(points))
        case 12:
            let bytes = rng.pick([[], [0], [0, 0], [1, 2, 3], [0xFF]] as [[UInt8]])
            return .bytes(BinaryValue(Data(bytes), mimeType: rng.pick([nil, "image/png", ""])))
        case 13: return .json(rng.pick(jsons))
        case 14: return .pointer(pointer(&rng))
        case 15: return .relation(relation(&rng))
        default:
            guard depth > 0 else { return .int(rng.pick(ints)) }
            return .list(list(&rng, depth: depth - 1))
        }
    }

    /// A list of 0-4 values of mixed kinds.
    static func list(_ rng: inout SeededGenerator, depth: Int = 0) -> [Value] {
        (0..<rng.int(0...4)).map { _ in value(&rng, depth: depth) }
    }

    /// A numeric value, int or double, often equivalent across the two.
    static func number(_ rng: inout SeededGenerator) -> Value {
        rng.chance(50) ? .int(rng.pick(ints)) : .double(rng.pick(doubles))
    }

    static func pointer(_ rng: inout SeededGenerator) -> Pointer {
        Pointer(className: rng.pick(classes), objectId: rng.pick(Array(objectIds.prefix(8))))
    }

    static func relation(_ rng: inout SeededGenerator) -> Relation {
        Relation(className: rng.pick(["T", "U"]), objectIds: rng.subset(Array(objectIds.prefix(6)), percent: 35))
    }

    /// A value typical of a field, most of the time, and any value otherwise, so that every field
    /// holds mixed kinds across objects.
    static func fieldValue(_ field: String, _ rng: inout SeededGenerator) -> Value {
        guard rng.chance(70) else { return value(&rng) }
        switch field {
        case "score", "n": return number(&rng)
        case "name": return .string(rng.chance(15) ? rng.pick(longStrings) : rng.pick(strings))
        case "tags": return .list(list(&rng))
        case "loc", "home": return .geoPoint(rng.pick(points))
        case "friends": return .relation(relation(&rng))
        case "owner": return .pointer(pointer(&rng))
        default: return value(&rng)
        }
    }

    /// The fields objects may have (built-ins come on top).
    static let fields = ["score", "n", "name", "tags", "loc", "home", "friends", "owner", "data", "a.b", "when"]
}
