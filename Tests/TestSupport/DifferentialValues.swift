import Foundation
import RooftopShared

/// The objects of the differential tests, shared by the data and the queries so that conditions
/// match often: values from the ``RandomValues/collisions`` pools, fields that usually hold their
/// typical kind and sometimes any other, object IDs whose bytewise order differs from
/// case-insensitive and numeric orders, and random ACLs and timestamps.
public enum DifferentialValues {
    /// The value pools.
    public static let values = RandomValues.collisions

    /// Ints of the pools.
    public static var ints: [Int64] { values.ints }
    /// Doubles of the pools.
    public static var doubles: [Double] { values.doubles }
    /// Points of the pools.
    public static var points: [GeoPoint] { values.points }

    /// Prefixes for `startsWith`: empty, multi-byte, with NUL bytes, and some matching nothing.
    public static let prefixes: [String] = [
        "", "a", "ab", "é", "e", "😀", "\0", "a\0", "€", "\u{FFFF}", "q", "A", String(repeating: "a", count: 280),
    ]

    /// Antipodal pairs whose haversine term rounds above 1, where an unclamped haversine gives NaN
    /// (see `SQLQueryDistanceTests`); their points are also in ``points``.
    public static let nanAntipodes: [(GeoPoint, GeoPoint)] = [
        ((76.201, 8.385), (-76.201, -171.615)), ((12.783, 82.117), (-12.783, -97.883)),
    ].compactMap { pair in
        guard let a = try? GeoPoint(latitude: pair.0.0, longitude: pair.0.1),
            let b = try? GeoPoint(latitude: pair.1.0, longitude: pair.1.1)
        else { return nil }
        return (a, b)
    }

    /// The classes objects belong to.
    public static let classes = ["T", "U", "V"]

    /// Object IDs chosen so that bytewise order differs from case-insensitive and numeric orders.
    public static let objectIds = [
        "a", "b", "c", "A", "B", "Z9", "a.b", "_x", "a-1", "=", "u1", "zz", "0", "10", "9", "+", "a/b", "Ab", "aB",
        "x=y", "long-object-id-0123456789",
    ]

    /// The fields objects may have (built-ins come on top).
    public static let fields = ["score", "n", "name", "tags", "loc", "home", "friends", "owner", "data", "a.b", "when"]

    /// The principals ACLs name.
    public static let principals: [Principal] = [.everyone, .user("u1"), .user("u2"), .user("u3"), .role("R1"), .role("R2")]

    /// Any value, of every kind; lists (mixed kinds) nest up to `depth` more levels.
    public static func value(_ rng: inout SeededGenerator, depth: Int = 1) -> Value {
        values.value(&rng, depth: depth)
    }

    /// A value typical of a field, most of the time, and any value otherwise, so that every field
    /// holds mixed kinds across objects.
    public static func fieldValue(_ field: String, _ rng: inout SeededGenerator) -> Value {
        guard rng.chance(70) else { return value(&rng) }
        switch field {
        case "score", "n": return values.number(&rng)
        case "name": return .string(rng.chance(15) ? rng.pick(RandomValues.longStrings) : rng.pick(values.strings))
        case "tags": return .list(values.list(&rng))
        case "loc", "home": return .geoPoint(rng.pick(points))
        case "friends": return .relation(values.relation(&rng))
        case "owner": return .pointer(values.pointer(&rng))
        default: return value(&rng)
        }
    }

    /// A random state of an object: random fields, ACL and timestamps (sometimes absent).
    public static func snapshot(
        className: String, objectId: String, datastore: DatastoreID, version: Int64, rng: inout SeededGenerator
    ) -> ObjectSnapshot {
        var fields: [String: Value] = [:]
        for field in Self.fields where rng.chance(45) {
            fields[field] = fieldValue(field, &rng)
        }
        return ObjectSnapshot(
            className: className, objectId: objectId, datastore: datastore, fields: fields, acl: acl(&rng),
            createdAt: timestamp(&rng), updatedAt: timestamp(&rng), version: version,
            fieldVersions: rng.chance(50) ? fields.mapValues { _ in version } : nil)
    }

    /// `count` random objects (``snapshot(className:objectId:datastore:version:rng:)``, IDs `o0`,
    /// `o1`, …) for each seed of the run (``TestSeeds``, `fixed` unless replaced), handed to `body`
    /// with their seed and index.
    public static func forEachSnapshot(
        seeds fixed: [UInt64] = [1, 2, 3], count: Int, _ body: (ObjectSnapshot, UInt64, Int) throws -> Void
    ) rethrows {
        for seed in TestSeeds.seeds(fixed: fixed) {
            var rng = SeededGenerator(seed: seed)
            for index in 0..<count {
                let snapshot = Self.snapshot(
                    className: rng.pick(classes), objectId: "o\(index)", datastore: rng.pick([.app, .default]),
                    version: Int64(rng.int(0...9)), rng: &rng)
                try body(snapshot, seed, index)
            }
        }
    }

    /// No ACL a third of the time; otherwise random entries (possibly none that reads).
    public static func acl(_ rng: inout SeededGenerator) -> ACL? {
        guard rng.chance(65) else { return nil }
        var entries: [Principal: ACL.Access] = [:]
        for principal in principals where rng.chance(35) {
            entries[principal] = ACL.Access(read: rng.chance(70), write: rng.chance(50))
        }
        return ACL(entries)
    }

    /// A timestamp from a small pool (so ties happen), absent one time in ten.
    public static func timestamp(_ rng: inout SeededGenerator) -> Timestamp? {
        guard rng.chance(90) else { return nil }
        return Timestamp(millisecondsSinceEpoch: rng.pick([0, -5, 1_000, 1_700_000_000_000, 1_700_000_000_001]))
    }
}
