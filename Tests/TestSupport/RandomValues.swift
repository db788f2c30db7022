import Foundation
import RooftopShared

/// Random values, field operations and mutations for every randomized test: one generator,
/// drawing each value kind from pools.
///
/// Two sets of pools cover what the suites need:
/// - ``edges`` reaches the encodings' edge cases — raw 64-bit patterns for ints, doubles and
///   timestamps, non-finite and signed-zero doubles, strings of NUL bytes, combining marks,
///   surrogates' neighbours and JSON escapes, nested JSON — for coding and order properties and
///   the wire schema;
/// - ``collisions`` keeps small pools of awkward values (`1` and `1.0`, `2^53` both ways and
///   `2^53 + 1`, NaN, strings that are prefixes of each other in bytes but not in characters,
///   keys too long to index, points on the antimeridian and the poles), so that conditions match
///   and equal values meet often: the differential and query tests.
///
/// A suite that needs other pools changes a copy (`var values = RandomValues.collisions;
/// values.strings = …`).
///
/// ```swift
/// var rng = SeededGenerator(seed: 7)
/// let value = RandomValues.edges.value(&rng)
/// ```
public struct RandomValues: Sendable {
    /// Integers drawn as they are.
    public var ints: [Int64]
    /// Doubles drawn as they are.
    public var doubles: [Double]
    /// Strings drawn as they are.
    public var strings: [String]
    /// With ``arbitrary``, strings of up to ``maxStringLength`` of these scalars are drawn too.
    public var scalars: [Unicode.Scalar]
    /// The longest string made of ``scalars``.
    public var maxStringLength: Int
    /// Milliseconds since the epoch of dates.
    public var timestamps: [Int64]
    /// Days since the epoch.
    public var days: [Int64]
    /// Decimal numbers' texts.
    public var decimals: [String]
    /// Points.
    public var points: [GeoPoint]
    /// Byte strings.
    public var bytes: [[UInt8]]
    /// Their MIME types.
    public var mimeTypes: [String?]
    /// Class names of pointers and relations.
    public var classNames: [String]
    /// Object IDs of pointers and relations.
    public var objectIds: [String]
    /// JSON values drawn as they are.
    public var jsons: [JSONValue]
    /// Whether half of the draws of each kind are arbitrary instead of from the pools: any bit
    /// pattern of an int, a double or a timestamp, any day, point, byte string or ID, strings of
    /// ``scalars``, nested JSON.
    public var arbitrary: Bool

    /// Pools of edge cases, and arbitrary values half of the time.
    public static let edges = RandomValues(
        ints: [
            0, 1, -1, 2, -5, 5, .max, .min, .max - 1, .min + 1, 9_007_199_254_740_992, 9_007_199_254_740_993,
            -9_007_199_254_740_993,
        ],
        doubles: [
            0.0, -0.0, 1.0, -1.0, -1.5, 0.1, 1.0 / 3.0, 3, -5, .leastNonzeroMagnitude, -.leastNonzeroMagnitude,
            .leastNormalMagnitude, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .infinity, -.infinity, .nan,
            9_007_199_254_740_992, 9_007_199_254_740_994, 9_223_372_036_854_775_808, -9_223_372_036_854_775_808,
            1e-300, 123_456.789e10, .ulpOfOne,
        ],
        strings: ["", "a", "\0", "e\u{301}", "\"", "\\"],
        scalars: [
            "a", "b", "z", "A", "Z", "0", " ", "\0", "\u{7F}", "\"", "\\", "/", "$", "é", "\u{301}", "€", "😀", "\u{FFFF}",
        ],
        maxStringLength: 8,
        timestamps: [0, -1, 1_700_000_000_000, .max, .min],
        days: [-719_162, 0, 2_932_896],
        decimals: [
            "0", "-0.0", "1.50", "1.5", "-1.5", "+7", ".5", "5.", "123456789012345678901234567890.5", "1e-30", "-2E+5",
            "0.001",
        ],
        points: [(-90, 0), (90, 0), (0, -180), (0, 180), (0, 0), (-90, -180), (90, 180), (-90, 180), (90, -180)].compactMap {
            try? GeoPoint(latitude: $0.0, longitude: $0.1)
        },
        bytes: [[], [0], [0xFF]],
        mimeTypes: [nil, nil, "image/png", "text/plain", ""],
        classNames: ["T", "_User", "a.b"],
        objectIds: ["a", "X9", "+/="],
        jsons: [.null, .object([:]), .array([])],
        arbitrary: true)

    /// Small pools, so that values collide; nothing arbitrary.
    public static let collisions = RandomValues(
        ints: [0, 1, -1, 2, 3, 10, .max, .min, 9_007_199_254_740_992, 9_007_199_254_740_993],
        doubles: [
            0.0, -0.0, 1.0, 2.5, -1.5, 3.0, .nan, .infinity, -.infinity, .leastNonzeroMagnitude, 0.1, 1e300,
            9_007_199_254_740_992.0, 9_223_372_036_854_775_808.0, -9_223_372_036_854_775_808.0,
        ],
        strings: collisionStrings + longStrings,
        scalars: [],
        maxStringLength: 0,
        timestamps: [0, -1, 1_000, 1_700_000_000_000, .max, .min],
        days: [0, -1, 19_000, 2_932_896],
        decimals: ["0", "1", "1.50", "1.5", "-0.001", "123456789012345678901234567890.5"],
        points: collisionPoints,
        bytes: [[], [0], [0, 0], [1], [1, 2], [1, 2, 3], [0xFF]],
        mimeTypes: [nil, "image/png", ""],
        classNames: ["T", "U", "V"],
        objectIds: ["a", "b", "c", "A", "B", "Z9", "a.b", "_x"],
        jsons: [
            .null, .int(1), .string("a"), .array([.int(1), .string("x")]), .object(["k": .bool(true)]),
            .object(["k": .array([.string("v")])]),
        ],
        arbitrary: false)

    /// Strings of the ``collisions`` pools, including prefixes of each other in bytes but not in
    /// characters (`e` + U+0301), NUL bytes and multi-byte characters.
    public static let collisionStrings: [String] = [
        "", "a", "ab", "abc", "b", "A", "Z", "é", "e\u{301}", "e", "😀", "😀x", "a\0", "a\0b", "\0", "\0\0", "ä",
        "€uro", "\u{7F}", "\u{FFFF}", "zz",
    ]

    /// Strings whose keys are longer than ``Value/indexedKeyLimit``, so that an index leaves
    /// them out and the evaluator decides; some share long prefixes with each other and with
    /// short ones.
    public static let longStrings: [String] = [
        String(repeating: "a", count: 300), String(repeating: "a", count: 300) + "b",
        "ab" + String(repeating: "c", count: 260), String(repeating: "é", count: 200), "zz" + String(repeating: "\0", count: 255),
    ]

    /// Points of the ``collisions`` pools: the antimeridian, the poles, antipodes of each other
    /// (where haversine rounding is at its worst) and antipodal pairs whose haversine term rounds
    /// above 1.
    public static let collisionPoints: [GeoPoint] = [
        (0, 0), (10, 170), (10, -170), (-10, -179.5), (0, 180), (0, -180), (-90, 180), (90, -180), (90, 0),
        (40.4168, -3.7038), (45, 179.9), (-45, -179.9), (12.345678901234, -98.7654321), (0.5, 0.5),
        (-10, -10), (-40.4168, 176.2962), (-12.345678901234, 81.2345679), (-0.5, -179.5),
        (76.201, 8.385), (-76.201, -171.615), (12.783, 82.117), (-12.783, -97.883),
    ].compactMap { try? GeoPoint(latitude: $0.0, longitude: $0.1) }

    // MARK: Values

    /// A value of any kind, ints and doubles twice as often as the others; lists of mixed kinds
    /// nest up to `depth` levels.
    public func value<R: RandomNumberGenerator>(_ rng: inout R, depth: Int = 1) -> Value {
        switch Int.random(in: 0..<(depth > 0 ? 16 : 15), using: &rng) {
        case 0: .null
        case 1: .bool(Bool.random(using: &rng))
        case 2, 3: .int(int(&rng))
        case 4, 5: .double(double(&rng))
        case 6: .string(string(&rng))
        case 7: .date(Timestamp(millisecondsSinceEpoch: timestamp(&rng)))
        case 8: .day(Day(daysSinceEpoch: day(&rng)))
        case 9: (try? DecimalNumber(Self.pick(decimals, &rng))).map(Value.decimal) ?? .null
        case 10: .geoPoint(point(&rng))
        case 11: .bytes(BinaryValue(Data(byteString(&rng)), mimeType: Self.pick(mimeTypes, &rng)))
        case 12: .json(json(&rng, depth: 2))
        case 13: .pointer(pointer(&rng))
        case 14: .relation(relation(&rng))
        default: .list(list(&rng, depth: depth - 1))
        }
    }

    /// A list of 0-4 values of mixed kinds, nesting up to `depth` more levels.
    public func list<R: RandomNumberGenerator>(_ rng: inout R, depth: Int = 0) -> [Value] {
        (0..<Int.random(in: 0...4, using: &rng)).map { _ in value(&rng, depth: depth) }
    }

    /// An int or a double, often equivalent across the two.
    public func number<R: RandomNumberGenerator>(_ rng: inout R) -> Value {
        Bool.random(using: &rng) ? .int(int(&rng)) : .double(double(&rng))
    }

    /// An integer.
    public func int<R: RandomNumberGenerator>(_ rng: inout R) -> Int64 {
        arbitrary(&rng) ? Int64(bitPattern: rng.next()) : Self.pick(ints, &rng)
    }

    /// A double; when arbitrary, any bit pattern (NaNs with payloads, subnormals) or an ordinary
    /// finite one between -1000 and 1000, half of the time each.
    public func double<R: RandomNumberGenerator>(_ rng: inout R) -> Double {
        guard arbitrary(&rng) else { return Self.pick(doubles, &rng) }
        return Bool.random(using: &rng) ? Double(bitPattern: rng.next()) : Double.random(in: -1000...1000, using: &rng)
    }

    /// A string.
    public func string<R: RandomNumberGenerator>(_ rng: inout R) -> String {
        guard !scalars.isEmpty, arbitrary(&rng) else { return Self.pick(strings, &rng) }
        let length = Int.random(in: 0...maxStringLength, using: &rng)
        return String(String.UnicodeScalarView((0..<length).map { _ in Self.pick(scalars, &rng) }))
    }

    /// Milliseconds since the epoch.
    public func timestamp<R: RandomNumberGenerator>(_ rng: inout R) -> Int64 {
        arbitrary(&rng) ? Int64(bitPattern: rng.next()) : Self.pick(timestamps, &rng)
    }

    /// Days since the epoch, from year 1 to 9999.
    public func day<R: RandomNumberGenerator>(_ rng: inout R) -> Int64 {
        arbitrary(&rng) ? Int64.random(in: -719_162...2_932_896, using: &rng) : Self.pick(days, &rng)
    }

    /// A point; when arbitrary, anywhere, or at a random latitude on the antimeridian or the
    /// prime meridian one time in four.
    public func point<R: RandomNumberGenerator>(_ rng: inout R) -> GeoPoint {
        guard arbitrary(&rng) else { return Self.pick(points, &rng) }
        let latitude = Double.random(in: -90...90, using: &rng)
        let longitude =
            Int.random(in: 0..<4, using: &rng) == 0
            ? Self.pick([-180, 0, 180], &rng) : Double.random(in: -180...180, using: &rng)
        return (try? GeoPoint(latitude: latitude, longitude: longitude)) ?? Self.pick(points, &rng)
    }

    /// A byte string.
    public func byteString<R: RandomNumberGenerator>(_ rng: inout R) -> [UInt8] {
        guard arbitrary(&rng) else { return Self.pick(bytes, &rng) }
        return (0..<Int.random(in: 0...6, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    /// An object ID (or a class name's stand-in when arbitrary: any of `abcXYZ019._-+/=`).
    public func id<R: RandomNumberGenerator>(_ rng: inout R) -> String {
        guard arbitrary(&rng) else { return Self.pick(objectIds, &rng) }
        let alphabet = Array("abcXYZ019._-+/=")
        return String((0..<Int.random(in: 1...5, using: &rng)).map { _ in Self.pick(alphabet, &rng) })
    }

    /// A pointer.
    public func pointer<R: RandomNumberGenerator>(_ rng: inout R) -> Pointer {
        Pointer(className: className(&rng), objectId: id(&rng))
    }

    /// A class name (any of `abcXYZ019._-+/=` when arbitrary).
    public func className<R: RandomNumberGenerator>(_ rng: inout R) -> String {
        arbitrary(&rng) ? id(&rng) : Self.pick(classNames, &rng)
    }

    /// A relation of 0-3 members (distinct ones from the pool).
    public func relation<R: RandomNumberGenerator>(_ rng: inout R) -> Relation {
        let target = className(&rng)
        let count = Int.random(in: 0...3, using: &rng)
        guard arbitrary(&rng) else {
            return Relation(className: target, objectIds: Array(objectIds.shuffled(using: &rng).prefix(count)))
        }
        return Relation(className: target, objectIds: (0..<count).map { _ in id(&rng) })
    }

    /// A JSON value; arbitrary ones nest arrays and objects up to `depth` levels.
    public func json<R: RandomNumberGenerator>(_ rng: inout R, depth: Int) -> JSONValue {
        guard arbitrary(&rng) else { return Self.pick(jsons, &rng) }
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

    // MARK: Changes

    /// A field operation of any kind, with indexes that may be out of range.
    public func operation<R: RandomNumberGenerator>(_ rng: inout R) -> FieldOperation {
        let index = Int.random(in: 0...5, using: &rng)
        switch Int.random(in: 0..<10, using: &rng) {
        case 0: return .set(value(&rng))
        case 1: return .unset
        case 2: return .increment(Bool.random(using: &rng) ? .int(Int64.random(in: -9...9, using: &rng)) : .double(double(&rng)))
        case 3: return .listAppend(list(&rng))
        case 4: return .listInsert(index: index, value: value(&rng))
        case 5: return .listRemove(index: index)
        case 6: return .listMove(from: index, to: Int.random(in: 0...5, using: &rng))
        case 7: return .listReplace(index: index, value: value(&rng))
        case 8: return .relationAdd(className: className(&rng), objectIds: [id(&rng)])
        default: return .relationRemove(className: className(&rng), objectIds: [id(&rng), id(&rng)])
        }
    }

    /// A mutation: a delete one time in four, else up to four field updates and sometimes an ACL;
    /// with or without a base version, in one of three datastores.
    public func mutation<R: RandomNumberGenerator>(_ rng: inout R) -> Mutation {
        var acl = ACL()
        acl.setReadAccess(Bool.random(using: &rng), for: .everyone)
        acl.setWriteAccess(true, for: .user(id(&rng)))
        let change: ObjectChange =
            Int.random(in: 0..<4, using: &rng) == 0
            ? .delete
            : .update(
                (0..<Int.random(in: 0...4, using: &rng)).map { _ in FieldUpdate(id(&rng), operation(&rng)) },
                acl: Bool.random(using: &rng) ? acl : nil)
        let datastores = [DatastoreID.app, .default, (try? DatastoreID(".Xy-3_")) ?? .app]
        return Mutation(
            datastore: Self.pick(datastores, &rng), className: id(&rng), objectId: id(&rng),
            baseVersion: Bool.random(using: &rng) ? Int64.random(in: 0...100, using: &rng) : nil, change: change)
    }

    // MARK: Drawing

    /// Whether this draw is arbitrary: half of them when ``arbitrary`` is set, else none.
    private func arbitrary<R: RandomNumberGenerator>(_ rng: inout R) -> Bool {
        arbitrary && Bool.random(using: &rng)
    }

    /// One element of a non-empty pool.
    public static func pick<T, R: RandomNumberGenerator>(_ items: [T], _ rng: inout R) -> T {
        precondition(!items.isEmpty, "pick from an empty pool")
        return items[Int.random(in: 0..<items.count, using: &rng)]
    }
}
