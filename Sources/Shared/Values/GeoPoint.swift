import Foundation

/// A point on Earth: the `geoPoint` value kind.
///
/// Latitude is in -90...90 and longitude in -180...180 degrees; both are finite. A negative zero
/// is stored as zero so that equal points are always identical.
public struct GeoPoint: Hashable, Sendable, CustomStringConvertible {
    /// Degrees north of the equator, -90...90.
    public let latitude: Double
    /// Degrees east of Greenwich, -180...180.
    public let longitude: Double

    /// The mean Earth radius in meters (IUGG), used for every distance computation.
    public static let earthRadiusMeters = 6_371_008.8

    /// Creates a point, validating its ranges.
    /// - Throws: ``RooftopError/Code/illegalArgument`` when a coordinate is out of range or not
    ///   finite.
    public init(latitude: Double, longitude: Double) throws(RooftopError) {
        guard latitude.isFinite, (-90...90).contains(latitude) else {
            throw RooftopError(.illegalArgument, "latitude \(latitude) is not within -90...90")
        }
        guard longitude.isFinite, (-180...180).contains(longitude) else {
            throw RooftopError(.illegalArgument, "longitude \(longitude) is not within -180...180")
        }
        self.latitude = latitude == 0 ? 0 : latitude
        self.longitude = longitude == 0 ? 0 : longitude
    }

    /// The great-circle (haversine) distance to another point, in meters.
    public func distanceMeters(to other: GeoPoint) -> Double {
        let radians = Double.pi / 180
        let deltaLatitude = (other.latitude - latitude) * radians
        let deltaLongitude = (other.longitude - longitude) * radians
        let sinLat = sin(deltaLatitude / 2)
        let sinLon = sin(deltaLongitude / 2)
        // Rounding can push the haversine term past 1 for antipodal points; clamp it, or the
        // distance would be NaN.
        let a = min(
            1,
            sinLat * sinLat
            + cos(latitude * radians) * cos(other.latitude * radians) * sinLon * sinLon)
        let c = 2 * atan2(a.squareRoot(), (1 - a).squareRoot())
        return GeoPoint.earthRadiusMeters * c
    }

    /// `(latitude, longitude)`.
    public var description: String { "(\(latitude), \(longitude))" }
}

extension GeoPoint: Codable {
    private enum CodingKeys: String, CodingKey, CaseIterable { case latitude, longitude }

    /// Decodes `{"latitude": ..., "longitude": ...}`, validating the ranges.
    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, allowed: CodingKeys.allCases.map(\.rawValue), in: "geo point")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(
            latitude: try container.decode(Double.self, forKey: .latitude),
            longitude: try container.decode(Double.self, forKey: .longitude))
    }

    /// Encodes `{"latitude": ..., "longitude": ...}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(latitude, forKey: .latitude)
        try container.encode(longitude, forKey: .longitude)
    }
}
