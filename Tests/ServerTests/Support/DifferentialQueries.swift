import RooftopShared
import RooftopTestSupport

/// Random valid queries for the differential tests: every predicate kind, nested `and`/`or`/`not`,
/// 0-3 order keys (built-in and missing fields included, either direction), limit and offset,
/// `near` with and without a maximum (and the distance order it implies), boxes that cross the
/// antimeridian, `thisIn` with IDs and pointers, empty `in` and `containsAll` lists, and
/// `startsWith` with empty and multi-byte prefixes. Values come from ``DifferentialValues``, the
/// pools the data is drawn from, so conditions match often.
enum DifferentialQueries {
    /// Fields queries name: the data's, the built-ins, and one no object has.
    static let fields = DifferentialValues.fields + ["objectId", "createdAt", "updatedAt", "missing"]

    /// A random valid query, mostly of class `T`.
    static func query(_ rng: inout SeededGenerator) -> Query {
        let className = rng.chance(75) ? "T" : rng.pick(["U", "V", "Empty"])
        var predicate: QueryPredicate? = rng.chance(10) ? nil : self.predicate(&rng, depth: 0)
        var order = (0..<rng.pick([0, 0, 1, 1, 2, 3])).map { _ in
            QueryOrder(rng.pick(fields), descending: rng.chance(50))
        }
        if rng.chance(15) {
            // The distance order: a `near` reached through `and`s, and no explicit order.
            let near = self.near(&rng)
            predicate =
                predicate.map { rng.chance(50) ? .and([near, $0]) : .and([$0, .and([near, .exists(field: "loc")])]) }
                ?? near
            order = []
        }
        return Query(
            className: className, predicate: predicate, order: order,
            limit: rng.chance(50) ? nil : rng.int(0...15), offset: rng.chance(60) ? 0 : rng.int(0...10))
    }

    /// A random predicate; `and`, `or` and `not` nest at most three levels.
    static func predicate(_ rng: inout SeededGenerator, depth: Int) -> QueryPredicate {
        let field = rng.pick(fields)
        switch rng.int((depth >= 3 ? 3 : 0)...21) {
        case 0: return .and((0..<rng.int(2...3)).map { _ in predicate(&rng, depth: depth + 1) })
        case 1: return .or((0..<rng.int(2...3)).map { _ in predicate(&rng, depth: depth + 1) })
        case 2: return .not(predicate(&rng, depth: depth + 1))
        case 3, 4, 5, 6:
            return .comparison(
                field: field, op: rng.pick(QueryPredicate.ComparisonOperator.allCases), value: value(for: field, &rng))
        case 7: return .in(field: field, values: (0..<rng.pick([0, 1, 2, 4])).map { _ in value(for: field, &rng) })
        case 8: return .notIn(field: field, values: (0..<rng.pick([0, 1, 2, 4])).map { _ in value(for: field, &rng) })
        case 9: return .exists(field: field)
        case 10: return .notExists(field: field)
        case 11, 12:
            return .startsWith(
                field: rng.chance(60) ? "name" : field, prefix: rng.pick(DifferentialValues.prefixes))
        case 13, 14:
            let collection = rng.chance(70) ? rng.pick(["tags", "friends"]) : field
            return .listContains(field: collection, value: element(for: collection, &rng))
        case 15:
            let collection = rng.chance(70) ? rng.pick(["tags", "friends"]) : field
            return .containsAll(
                field: collection, values: (0..<rng.pick([0, 1, 2, 3])).map { _ in element(for: collection, &rng) })
        case 16: return near(&rng)
        case 17, 18: return box(&rng)
        case 19: return thisIn(&rng)
        default:
            // Range conditions on the fields that are usually numbers or dates.
            let ranged = rng.pick(["score", "n", "createdAt", "updatedAt", "objectId"])
            return .comparison(
                field: ranged, op: rng.pick([.less, .lessOrEqual, .greater, .greaterOrEqual]),
                value: value(for: ranged, &rng))
        }
    }

    /// A value suited to a field most of the time, any value otherwise.
    static func value(for field: String, _ rng: inout SeededGenerator) -> Value {
        guard rng.chance(75) else { return DifferentialValues.value(&rng) }
        switch field {
        case "objectId": return .string(rng.pick(DifferentialValues.objectIds + ["", "a0", "zzz"]))
        case "createdAt", "updatedAt":
            return .date(Timestamp(millisecondsSinceEpoch: rng.pick([0, -5, 1_000, 1_700_000_000_000, 2_000])))
        default: return DifferentialValues.fieldValue(field, &rng)
        }
    }

    /// A value to look for in a list or relation.
    static func element(for field: String, _ rng: inout SeededGenerator) -> Value {
        if field == "friends" || rng.chance(20) {
            // Relation members are pointers of the relation's class; other classes never match.
            return .pointer(
                Pointer(
                    className: rng.pick(["T", "U", "V"]),
                    objectId: rng.pick(Array(DifferentialValues.objectIds.prefix(7)))))
        }
        return DifferentialValues.value(&rng)
    }

    /// A `near`; a quarter of the maxima are the exact distance from the point to a point of the
    /// data's pool, so that the inclusive bound is tested.
    static func near(_ rng: inout SeededGenerator) -> QueryPredicate {
        let point = point(&rng)
        let maximum =
            rng.chance(25)
            ? rng.pick(DifferentialValues.points).distanceMeters(to: point)
            : rng.pick([nil, nil, 0, 1, 1000, 500_000, 1_200_000, 5_000_000, 20_015_087])
        return .near(
            field: rng.chance(80) ? rng.pick(["loc", "home"]) : rng.pick(fields), point: point,
            maxDistanceMeters: maximum.map { $0.isFinite ? $0 : 0 })
    }

    /// A box; its longitudes come in either order, so about half cross the antimeridian.
    static func box(_ rng: inout SeededGenerator) -> QueryPredicate {
        let field = rng.chance(80) ? rng.pick(["loc", "home"]) : rng.pick(fields)
        if rng.chance(20) {
            let southwest = (try? GeoPoint(latitude: -20, longitude: 170)) ?? rng.pick(DifferentialValues.points)
            let northeast = (try? GeoPoint(latitude: 20, longitude: -170)) ?? rng.pick(DifferentialValues.points)
            return .withinBox(field: field, southwest: southwest, northeast: northeast)
        }
        let (a, b) = (point(&rng), point(&rng))
        let latitudes = (min(a.latitude, b.latitude), max(a.latitude, b.latitude))
        let longitudes = rng.chance(50) ? (a.longitude, b.longitude) : (b.longitude, a.longitude)
        guard let southwest = try? GeoPoint(latitude: latitudes.0, longitude: longitudes.0),
            let northeast = try? GeoPoint(latitude: latitudes.1, longitude: longitudes.1)
        else { return .exists(field: field) }
        return .withinBox(field: field, southwest: southwest, northeast: northeast)
    }

    /// A point from the data's pool (so boundaries are hit exactly) or anywhere.
    static func point(_ rng: inout SeededGenerator) -> GeoPoint {
        if rng.chance(60) { return rng.pick(DifferentialValues.points) }
        let latitude = Double.random(in: -90...90, using: &rng)
        let longitude = Double.random(in: -180...180, using: &rng)
        return (try? GeoPoint(latitude: latitude, longitude: longitude)) ?? rng.pick(DifferentialValues.points)
    }

    static func thisIn(_ rng: inout SeededGenerator) -> QueryPredicate {
        .thisIn(
            (0..<rng.pick([0, 1, 2, 4])).map { _ in
                rng.chance(50)
                    ? .objectId(rng.pick(DifferentialValues.objectIds))
                    : .pointer(
                        Pointer(
                            className: rng.pick(["T", "U", "V", "W"]), objectId: rng.pick(DifferentialValues.objectIds))
                    )
            })
    }
}
