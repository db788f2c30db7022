import Foundation
import PropertyBased
import RooftopShared
import RooftopTestSupport

/// Random values, objects, predicates and valid queries for the property tests. Values come from
/// small pools so that conditions match often, with the awkward cases (NaN, -0.0, quotes,
/// combining marks, keywords as names) mixed in.
enum QueryGen {
    typealias RNG = any SeededRandomNumberGenerator

    /// Field names: plain, keywords in any case, names that need backticks, built-ins.
    static let fields = [
        "score", "name", "tags", "loc", "friends", "order", "first-name", "a.b", "objectId", "createdAt", "_x",
        "Limit", "NULL", "when",
    ]

    static let points: [GeoPoint] = [
        (0, 0), (10, 170), (-10, -170), (40.4168, -3.7038), (-90, 180), (90, -180), (12.345678901234, -98.7654321),
    ].compactMap { try? GeoPoint(latitude: $0.0, longitude: $0.1) }

    static let strings = ["", "a", "ab", "b", "O'x", "''", "Seán", "e\u{301}", "?", "where", "`", "line\nbreak"]

    static func pick<T>(_ items: [T], _ rng: inout RNG) -> T {
        items[Int.random(in: 0..<items.count, using: &rng)]
    }

    /// The shared generator's ``RandomValues/collisions`` pools, with this file's strings (quotes,
    /// backticks, keywords, line breaks: the text form's cases), points and pointer targets.
    static let pools: RandomValues = {
        var values = RandomValues.collisions
        values.strings = strings
        values.points = points
        values.classNames = ["T", "_User"]
        values.objectIds = ["a", "b", "u1"]
        return values
    }()

    static func randomValue(_ rng: inout RNG) -> Value {
        pools.value(&rng, depth: 2)
    }

    static func randomValues(_ rng: inout RNG) -> [Value] {
        (0..<Int.random(in: 0...3, using: &rng)).map { _ in randomValue(&rng) }
    }

    static let value = Generator(run: { rng in randomValue(&rng) })
    static let values = Generator(run: { rng in randomValues(&rng) })
    static let field = Generator(run: { rng in pick(fields, &rng) })

    /// An object of class `T` with a random subset of the fields; `tags`, `loc` and `friends`
    /// usually hold a list, a point and a relation.
    static let object = Generator(run: { rng in
        var values: [String: Value] = [:]
        for field in fields where !["objectId", "createdAt"].contains(field) && Bool.random(using: &rng) {
            let typical = Int.random(in: 0..<10, using: &rng) < 7
            values[field] =
                switch (field, typical) {
                case ("tags", true): .list(randomValues(&rng))
                case ("loc", true): .geoPoint(pick(points, &rng))
                case ("friends", true): .relation(Relation(className: "T", objectIds: pick([[], ["a"], ["a", "b"]], &rng)))
                default: randomValue(&rng)
                }
        }
        let createdAt = Bool.random(using: &rng) ? Timestamp(millisecondsSinceEpoch: pick([0, 1_700_000_000_000], &rng)) : nil
        return ObjectSnapshot(className: "T", objectId: pick(["a", "b", "s1", "z"], &rng), fields: values, createdAt: createdAt)
    })

    /// A valid predicate: `and`/`or` with 2-3 operands, finite distances, ordered boxes.
    static func randomPredicate(_ rng: inout RNG, depth: Int = 0) -> QueryPredicate {
        let field = pick(fields, &rng)
        switch Int.random(in: (depth >= 3 ? 3 : 0)..<18, using: &rng) {
        case 0: return .and((0..<Int.random(in: 2...3, using: &rng)).map { _ in randomPredicate(&rng, depth: depth + 1) })
        case 1: return .or((0..<Int.random(in: 2...3, using: &rng)).map { _ in randomPredicate(&rng, depth: depth + 1) })
        case 2: return .not(randomPredicate(&rng, depth: depth + 1))
        case 6: return .in(field: field, values: randomValues(&rng))
        case 7: return .notIn(field: field, values: randomValues(&rng))
        case 8: return .exists(field: field)
        case 9: return .notExists(field: field)
        case 10: return .startsWith(field: field, prefix: pick(strings, &rng))
        case 11: return .listContains(field: field, value: randomValue(&rng))
        case 12: return .containsAll(field: field, values: randomValues(&rng))
        case 13:
            let maximum = pick([nil, 0, 1000.5, 2e7, 123_456.789], &rng)
            return .near(field: field, point: pick(points, &rng), maxDistanceMeters: maximum)
        case 14:
            let (a, b) = (pick(points, &rng), pick(points, &rng))
            return a.latitude <= b.latitude
                ? .withinBox(field: field, southwest: a, northeast: b) : .withinBox(field: field, southwest: b, northeast: a)
        case 15:
            return .thisIn(
                (0..<Int.random(in: 0...3, using: &rng)).map { _ in
                    Bool.random(using: &rng)
                        ? .objectId(pick(["a", "b", "z"], &rng))
                        : .pointer(Pointer(className: pick(["T", "U"], &rng), objectId: pick(["a", "s1"], &rng)))
                })
        default:
            return .comparison(field: field, op: pick(QueryPredicate.ComparisonOperator.allCases, &rng), value: randomValue(&rng))
        }
    }

    static let predicate = Generator(run: { rng in randomPredicate(&rng) })

    /// A valid query of class `T`.
    static let query = Generator(run: { rng in
        Query(
            className: "T",
            predicate: Int.random(in: 0..<5, using: &rng) == 0 ? nil : randomPredicate(&rng),
            order: (0..<Int.random(in: 0...2, using: &rng)).map { _ in
                QueryOrder(pick(fields, &rng), descending: Bool.random(using: &rng))
            },
            limit: Bool.random(using: &rng) ? Int.random(in: 0...20, using: &rng) : nil,
            offset: Int.random(in: 0...5, using: &rng),
            includes: (0..<Int.random(in: 0...2, using: &rng)).map { _ in
                (0..<Int.random(in: 1...2, using: &rng)).map { _ in pick(fields, &rng) }
            })
    })
}
