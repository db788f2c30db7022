import Foundation
import RooftopShared

/// Where points lie in the index: the band of keys a `near` or a box reads, and the longitudes
/// in reach, tested on the keys' own bytes.
extension SQLQueryCompiler {
    /// The keys (``Value/sortKey``) between which lie the keys of every point within `meters` of
    /// `point`: a point's key starts with its latitude, and a great-circle distance is at least
    /// the earth's radius times the difference of latitudes (in radians), so points farther in
    /// latitude than `meters / radius` (widened by a rounding margin) are farther than `meters`.
    /// `nil` when the band would span every latitude, or `meters` is not a finite distance.
    package static func latitudeBand(around point: GeoPoint, within meters: Double) -> (low: [UInt8], high: [UInt8])? {
        guard meters.isFinite, meters >= 0 else { return nil }
        let degrees = (meters / GeoPoint.earthRadiusMeters) * (180 / Double.pi) * (1 + 1e-9) + 1e-9
        let low = point.latitude - degrees
        let high = point.latitude + degrees
        guard low > -90 || high < 90 else { return nil }
        return pointKeys(south: max(low, -90), north: min(high, 90))
    }

    /// The keys (``Value/sortKey``) between which lie, both included, the keys of exactly the
    /// points with a latitude from `south` to `north`: a point's key is its latitude's, then its
    /// longitude's. `nil` when `south` is north of `north` (no point), or either is not a latitude.
    package static func pointKeys(south: Double, north: Double) -> (low: [UInt8], high: [UInt8])? {
        guard south <= north else { return nil }
        do {
            let southwest = try GeoPoint(latitude: south, longitude: -180)
            let northeast = try GeoPoint(latitude: north, longitude: 180)
            return (Value.geoPoint(southwest).sortKey, Value.geoPoint(northeast).sortKey)
        } catch {
            return nil
        }
    }

    /// Where a point's longitude starts in its key (``Value/sortKey``), as SQL's `substr` counts
    /// (from 1): after the kind byte and the latitude's 8 bytes. Its 8 bytes end the key.
    package static let longitudeKeyStart = 10

    /// The bytes a point's key (``Value/sortKey``) ends with for each end of `longitudes`,
    /// ordered bytewise as the longitudes are; `nil` when an end is not a longitude.
    package static func longitudeKeys(_ longitudes: ClosedRange<Double>) -> (low: [UInt8], high: [UInt8])? {
        do {
            let west = Value.geoPoint(try GeoPoint(latitude: 0, longitude: longitudes.lowerBound)).sortKey
            let east = Value.geoPoint(try GeoPoint(latitude: 0, longitude: longitudes.upperBound)).sortKey
            return (Array(west[(longitudeKeyStart - 1)...]), Array(east[(longitudeKeyStart - 1)...]))
        } catch {
            return nil
        }
    }

    /// The ranges of longitude a box from `southwest` to `northeast` spans: two when it crosses
    /// the antimeridian (its west is east of its east).
    package static func longitudes(west southwest: GeoPoint, east northeast: GeoPoint) -> [ClosedRange<Double>] {
        southwest.longitude <= northeast.longitude
            ? [southwest.longitude...northeast.longitude]
            : [southwest.longitude...180, -180...northeast.longitude]
    }

    /// The ranges of longitude (degrees, each `low...high` within -180...180; two when the
    /// circle crosses the antimeridian) that hold every point within `meters` of `point`: on a
    /// sphere, a point at angular distance `r` from one at latitude `φ` differs from it in
    /// longitude by at most `asin(sin r / cos φ)` while the circle reaches no pole (widened by a
    /// rounding margin). `nil` when the circle reaches a pole or spans every longitude, or `meters`
    /// is not a finite distance: then longitude narrows nothing. Also `nil` where rounding could
    /// make the span disagree with the exact distance by more than the margin: within a hair of a
    /// pole (`cos φ` tiny, and computed otherwise than the distance computes it) and where the
    /// span nears a quarter of the earth (`asin` of nearly 1 magnifies every rounding). Tested
    /// against the exact distance by `SQLLatitudeBandTests`.
    package static func longitudeRanges(around point: GeoPoint, within meters: Double) -> [ClosedRange<Double>]? {
        guard meters.isFinite, meters >= 0 else { return nil }
        let angle = meters / GeoPoint.earthRadiusMeters
        let latitude = abs(point.latitude) * Double.pi / 180
        // Reaching a pole (with a margin), every longitude is within reach.
        guard angle < Double.pi / 2, latitude + angle * (1 + 1e-9) + 1e-9 < Double.pi / 2 else { return nil }
        let cosine = cos(latitude)
        guard cosine > 1e-6 else { return nil }
        let ratio = sin(angle) / cosine
        guard ratio < 0.999_999 else { return nil }
        let span = asin(ratio) * (180 / Double.pi) * (1 + 1e-9) + 1e-9
        guard span < 180 else { return nil }
        let low = point.longitude - span
        let high = point.longitude + span
        if low < -180 { return [-180...high, (low + 360)...180] }
        if high > 180 { return [-180...(high - 360), low...180] }
        return [low...high]
    }
}
