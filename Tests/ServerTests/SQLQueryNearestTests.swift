import Foundation
import RooftopSQL
import RooftopShared
import RooftopTestSupport
import Testing

@testable import RooftopServer

/// `near` without a maximum distance orders a class by distance from a point; storage answers it
/// within a radius widened until the page is full (``SQLQueryRunner/nearestFirst(_:readers:limit:)``).
/// Points at every scale of the radii, ties at one place and at a radius's length, pages of every
/// size and offset, with and without another condition and readers: the same pages and counts as
/// the shared evaluator.
@Suite("SQL nearest first")
struct SQLQueryNearestTests {
    /// Points around an anchor at distances spread over each radius tried (and beyond the last),
    /// some objects without a point, some unreadable by `u1`.
    static func objects(around anchor: GeoPoint) throws -> [ObjectSnapshot] {
        var random = SeededGenerator(seed: 7)
        var objects: [ObjectSnapshot] = []
        let scales: [(count: Int, meters: ClosedRange<Double>)] = [
            (12, 10...900), (20, 1_100...7_000), (25, 9_000...60_000), (30, 70_000...500_000),
            (30, 600_000...4_000_000), (20, 5_000_000...19_000_000),
        ]
        for (scale, (count, meters)) in scales.enumerated() {
            for index in 0..<count {
                let distance = Double.random(in: meters, using: &random)
                let bearing = Double.random(in: 0..<(2 * Double.pi), using: &random)
                let point = try Self.point(from: anchor, meters: distance, bearing: bearing)
                let readers: ACL = index % 5 == 0 ? StorageConformance.readable(by: .user("u2")) : StorageConformance.readable(by: .everyone)
                objects.append(
                    StorageConformance.object(
                        "p\(scale)-\(index)", fields: ["loc": .geoPoint(point), "n": .int(Int64(index))], acl: readers))
            }
        }
        for index in 0..<5 {
            objects.append(StorageConformance.object("none\(index)", fields: ["n": .int(Int64(index))]))
        }
        // Ties: points at one place, ordered by ID among themselves, across page boundaries (a
        // page of 12 ends among the first group) and at about a radius's length (1 km, 8 km).
        for (group, meters) in [(0, 950.0), (1, 1_000.0), (2, 8_000.0)] {
            let point = try Self.point(from: anchor, meters: meters, bearing: 1.0 + Double(group))
            for index in 0..<4 {
                objects.append(
                    StorageConformance.object(
                        "tie\(group)-\(index)", fields: ["loc": .geoPoint(point), "n": .int(Int64(index))]))
            }
        }
        return objects
    }

    /// The point `meters` from `origin` along `bearing` (radians), on the shared sphere.
    static func point(from origin: GeoPoint, meters: Double, bearing: Double) throws -> GeoPoint {
        let angle = meters / GeoPoint.earthRadiusMeters
        let latitude = origin.latitude * .pi / 180
        let longitude = origin.longitude * .pi / 180
        let toLatitude = asin(sin(latitude) * cos(angle) + cos(latitude) * sin(angle) * cos(bearing))
        let toLongitude =
            longitude + atan2(sin(bearing) * sin(angle) * cos(latitude), cos(angle) - sin(latitude) * sin(toLatitude))
        var degrees = toLongitude * 180 / .pi
        degrees = (degrees + 540).truncatingRemainder(dividingBy: 360) - 180
        return try GeoPoint(latitude: toLatitude * 180 / .pi, longitude: degrees)
    }

    @Test("pages of every size and offset, with another condition and readers, agree with the evaluator",
        arguments: StorageBackend.tested)
    func pagesAgree(backend: StorageBackend) async throws {
        let anchors = [try GeoPoint(latitude: 48.85, longitude: 2.35), try GeoPoint(latitude: -33.9, longitude: 179.99)]
        for anchor in anchors {
            let objects = try Self.objects(around: anchor)
            try await withStorage(backend.factory) { storage, _ in
                let key = try await storage.openOrCreateDatastore(id: .app, ownerId: nil, title: nil).key
                for object in objects { try await StorageWrites.put(object, datastoreKey: key, into: storage) }
                let near = Field("loc").near(anchor)
                for predicate in [near, .and([Field("n") < 10, near]), .and([.and([near]), Field("n") >= 3])] {
                    for readers: Set<String>? in [nil, ["*", "u1"]] {
                        for (limit, offset) in [(1, 0), (5, 0), (12, 0), (14, 0), (20, 0), (20, 3), (50, 0), (50, 40), (100, 0), (300, 0), (20, 150)] {
                            let query = Query("T").where(predicate).limit(limit).offset(offset)
                            let expected = QueryEvaluator.run(
                                query, over: objects, lookup: { _ in nil },
                                canRead: { object in
                                    readers.map { !SQLIndexRows.readers(of: object.acl).isDisjoint(with: $0) } ?? true
                                })
                            let page = try await storage.find(query, datastoreKey: key, readers: readers, limit: limit)
                            let described = "\(anchor) \(predicate) readers \(readers?.sorted() ?? []) limit \(limit) offset \(offset)"
                            #expect(page.objects.map(\.objectId) == expected.objects.map(\.objectId), "\(described)")
                            #expect(page.totalCount == expected.totalCount, "\(described)")
                            #expect(
                                try await storage.count(query, datastoreKey: key, readers: readers) == expected.totalCount,
                                "\(described)")
                        }
                    }
                }
            }
        }
    }
}
