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
        var longitudeChecked = 0
        for round in 0..<4_000 {
            var center = try GeoPoint(
                latitude: Double.random(in: -90...90, using: &rng), longitude: Double.random(in: -180...180, using: &rng))
            var meters = rng.pick([0, 1, 10, 5_000, 100_000, 2_000_000, Double.random(in: 0..<10_000_000, using: &rng)])
            // Where rounding is magnified: a hair from the equator at about a quarter of the
            // earth, and a hair from a pole within a few meters.
            switch round % 8 {
            case 6:
                center = try GeoPoint(
                    latitude: Double.random(in: -1e-5...1e-5, using: &rng), longitude: Double.random(in: -180...180, using: &rng))
                meters = Double.random(in: 10_006_000...10_007_600, using: &rng)
            case 7:
                center = try GeoPoint(
                    latitude: rng.pick([-1.0, 1.0]) * Double.random(in: 89.99999...90, using: &rng),
                    longitude: Double.random(in: -180...180, using: &rng))
                meters = Double.random(in: 0.01...10, using: &rng)
            default:
                break
            }
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
            // Points due east and west at about the distance's longitude span, and near the
            // circle's eastmost and westmost points.
            let span = degrees / max(cos(center.latitude * .pi / 180), 1e-9)
            for factor in [1 - 1e-12, 1.0, 1 + 1e-12, 0.999, 0.5] {
                for sign in [-1.0, 1.0] {
                    var longitude = center.longitude + sign * span * factor
                    if longitude > 180 { longitude -= 360 }
                    if longitude < -180 { longitude += 360 }
                    guard abs(longitude) <= 180 else { continue }
                    for shift in [0.0, -degrees * factor * factor, degrees * factor * factor] {
                        let latitude = center.latitude + shift * sin(center.latitude * .pi / 180)
                        if abs(latitude) <= 90 { candidates.append(try GeoPoint(latitude: latitude, longitude: longitude)) }
                    }
                }
            }
            // The circle's eastmost and westmost points themselves (where a meridian touches it):
            // latitude asin(sin φ / cos r), longitude ± asin(sin r / cos φ).
            let angle = meters / GeoPoint.earthRadiusMeters
            let phi = center.latitude * .pi / 180
            let touching = sin(phi) / cos(angle)
            let reach = sin(angle) / cos(phi)
            if angle < .pi / 2, abs(touching) <= 1, reach <= 1 {
                let latitude = asin(touching) * 180 / .pi
                for factor in [1 - 1e-12, 1.0, 1 - 1e-9] {
                    for sign in [-1.0, 1.0] {
                        var longitude = center.longitude + sign * asin(reach) * 180 / .pi * factor
                        if longitude > 180 { longitude -= 360 }
                        if longitude < -180 { longitude += 360 }
                        if abs(latitude) <= 90, abs(longitude) <= 180 {
                            candidates.append(try GeoPoint(latitude: latitude, longitude: longitude))
                        }
                    }
                }
            }
            let ranges = SQLQueryCompiler.longitudeRanges(around: center, within: meters)
            for point in candidates where point.distanceMeters(to: center) <= meters {
                if let ranges {
                    #expect(
                        ranges.contains { $0.contains(point.longitude) },
                        "\(point) is \(point.distanceMeters(to: center)) m from \(center), within \(meters) m, outside \(ranges)")
                    longitudeChecked += 1
                }
                let key = Value.geoPoint(point).sortKey
                #expect(
                    !key.lexicographicallyPrecedes(band.low) && !band.high.lexicographicallyPrecedes(key),
                    "\(point) is \(point.distanceMeters(to: center)) m from \(center), within \(meters) m, outside the band")
                checked += 1
            }
        }
        #expect(checked > 5_000, "only \(checked) points within the distance were checked")
        #expect(longitudeChecked > 5_000, "only \(longitudeChecked) points were checked against the longitudes")
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

    @Test("the longitudes are narrow, wrap at the antimeridian, and narrow nothing near a pole")
    func longitudes() throws {
        let madrid = try GeoPoint(latitude: 40.5, longitude: -3.5)
        let ranges = try #require(SQLQueryCompiler.longitudeRanges(around: madrid, within: 5_000))
        // 5 km at 40.5° is about 0.059° of longitude.
        #expect(ranges.count == 1 && ranges[0].lowerBound > -3.56 && ranges[0].upperBound < -3.44)
        #expect(ranges[0].lowerBound < -3.558 && ranges[0].upperBound > -3.442)
        let fiji = try GeoPoint(latitude: -17.7, longitude: 179.99)
        let wrapped = try #require(SQLQueryCompiler.longitudeRanges(around: fiji, within: 5_000))
        #expect(wrapped.count == 2 && wrapped.contains { $0.contains(-179.99) } && wrapped.contains { $0.contains(179.95) })
        #expect(!wrapped.contains { $0.contains(0) })
        let pole = try GeoPoint(latitude: 89.99, longitude: 10)
        #expect(SQLQueryCompiler.longitudeRanges(around: pole, within: 5_000) == nil)
        #expect(SQLQueryCompiler.longitudeRanges(around: madrid, within: .infinity) == nil)
        #expect(SQLQueryCompiler.longitudeRanges(around: madrid, within: 8_000_000) == nil)
        // Where rounding is magnified past the margin, no ranges: a point the exact distance puts
        // within reach would otherwise fall outside them (both found by a reviewer's search).
        let cases: [(center: GeoPoint, meters: Double, point: GeoPoint)] = [
            (try GeoPoint(latitude: 0, longitude: 0), 10_007_557.1509, try GeoPoint(latitude: 0, longitude: 89.999999369)),
            (
                try GeoPoint(latitude: -89.99999188483457, longitude: 0), 0.8513602256,
                try GeoPoint(latitude: -89.99999731013067, longitude: 70.64357825650863)
            ),
        ]
        for (center, meters, point) in cases {
            #expect(point.distanceMeters(to: center) <= meters)
            let ranges = SQLQueryCompiler.longitudeRanges(around: center, within: meters)
            #expect(ranges.map { $0.contains { $0.contains(point.longitude) } } ?? true, "\(point) from \(center)")
        }
    }
}
