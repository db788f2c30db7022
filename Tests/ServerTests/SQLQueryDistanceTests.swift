import RooftopShared
import RooftopTestSupport
import Testing

@testable import RooftopServer

/// `near` at the far side of the Earth. The haversine's intermediate term can round above 1 for
/// antipodal points; `GeoPoint.distanceMeters` clamps it, so that the distance stays finite and
/// the evaluator and SQL agree there (before the clamp, the evaluator dropped or misordered the
/// antipode and SQLite, seeing NaN as NULL, sorted it first).
@Suite("SQL distance conditions at antipodes")
struct SQLQueryDistanceTests {
    /// Half the Earth's circumference by the shared radius: every point is within it.
    static let halfCircumference = GeoPoint.earthRadiusMeters * Double.pi + 1

    @Test("the distance between antipodal points is finite: half the circumference")
    func antipodalDistanceIsFinite() {
        for (a, b) in DifferentialValues.nanAntipodes {
            let distance = a.distanceMeters(to: b)
            #expect(
                distance.isFinite && abs(distance - GeoPoint.earthRadiusMeters * Double.pi) < 1,
                "\(a) to \(b): \(distance)")
        }
    }

    @Test("near orders an antipodal point last, and within half the circumference", arguments: StorageBackend.tested)
    func antipodeOrdersLast(backend: StorageBackend) async throws {
        let (far, anchor) = try #require(DifferentialValues.nanAntipodes.first)
        try await withStorage(backend.factory) { storage, _ in
            let key = try await storage.openOrCreateDatastore(id: .default, ownerId: "u1", title: nil).key
            let points = [("far", far), ("near", anchor), ("mid", try GeoPoint(latitude: 0, longitude: 0))]
            var objects: [ObjectSnapshot] = []
            for (objectId, point) in points {
                let object = StorageConformance.object(objectId, fields: ["loc": .geoPoint(point)])
                try await StorageWrites.put(object, datastoreKey: key, into: storage)
                objects.append(object)
            }
            for maximum in [nil, Self.halfCircumference] {
                let query = Query("T").where(Field("loc").near(anchor, maxDistanceMeters: maximum))
                let sql = try await storage.find(query, datastoreKey: key, readers: nil, limit: 10).objects.map(
                    \.objectId)
                let evaluator = QueryEvaluator.run(query, over: objects, lookup: { _ in nil }, canRead: { _ in true })
                    .objects.map(\.objectId)
                #expect(sql == ["near", "mid", "far"], "SQL, max \(maximum.map(String.init(describing:)) ?? "none")")
                #expect(
                    evaluator == ["near", "mid", "far"],
                    "evaluator, max \(maximum.map(String.init(describing:)) ?? "none")")
            }
        }
    }
}
