import Foundation
import RooftopSQL
import RooftopShared
import RooftopTestSupport
import Testing

/// The latitude band a `near … within` condition reads from the index must hold every point
/// within the distance: a point left out would be a match lost, on the client and the server.
@Suite("near: the latitude band of the index")
struct SQLLatitudeBandTests {
    @Test("every point within the distance, the farthest ones included, has its key in the band")
    func holdsEveryPointWithin() throws {
        var rng = SeededGenerator(seed: 20_261_127)
        var checked = 0
        for _ in 0..<2_000 {
            let center = try GeoPoint(
                latitude: Double.random(in: -90...90, using: &rng), longitude: Double.random(in: -180...180, using: &rng))
            let meters = rng.pick([0, 1, 10, 5_000, 100_000, 2_000_000, Double.random(in: 0..<10_000_000, using: &rng)])
            guard let band = SQLQueryCompiler.latitudeBand(around: center, within: meters) else {
                // No band: it would span every latitude.
                #expect(meters / GeoPoint.earthRadiusMeters * 180 / .pi >= 90 - abs(center.latitude))
                continue
            }
            // Points due north and south at about the distance (a hair inside and outside), and
            // anywhere around.
            let degrees = meters / GeoPoint.earthRadiusMeters * 180 / .pi
            var candidates: [GeoPoint] = []
            for factor in [1 - 1e-12, 1.0, 1 + 1e-12, 0.5, 0] {
                for sign in [-1.0, 1.0] {
                    let latitude = center.latitude + sign * degrees * factor
                    if abs(latitude) <= 90 { candidates.append(try GeoPoint(latitude: latitude, longitude: center.longitude)) }
                }
            }
            for _ in 0..<5 {
                candidates.append(
                    try GeoPoint(
                        latitude: max(-90, min(90, center.latitude + Double.random(in: -2...2, using: &rng) * degrees)),
                        longitude: Double.random(in: -180...180, using: &rng)))
            }
            for point in candidates where point.distanceMeters(to: center) <= meters {
                let key = Value.geoPoint(point).sortKey
                #expect(
                    !key.lexicographicallyPrecedes(band.low) && !band.high.lexicographicallyPrecedes(key),
                    "\(point) is \(point.distanceMeters(to: center)) m from \(center), within \(meters) m, outside the band")
                checked += 1
            }
        }
        #expect(checked > 5_000, "only \(checked) points within the distance were checked")
    }

    @Test("the band is narrow: points well beyond the distance in latitude are outside it")
    func excludesFarLatitudes() throws {
        let center = try GeoPoint(latitude: 40.5, longitude: -3.5)
        let band = try #require(SQLQueryCompiler.latitudeBand(around: center, within: 5_000))
        for latitude in [40.4, 40.6, -40.5, 0] {
            let key = Value.geoPoint(try GeoPoint(latitude: latitude, longitude: -3.5)).sortKey
            #expect(key.lexicographicallyPrecedes(band.low) || band.high.lexicographicallyPrecedes(key), "\(latitude)")
        }
        #expect(SQLQueryCompiler.latitudeBand(around: center, within: .infinity) == nil)
        #expect(SQLQueryCompiler.latitudeBand(around: center, within: 30_000_000) == nil)
    }
}
