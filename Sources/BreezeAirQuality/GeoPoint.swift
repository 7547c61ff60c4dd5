#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A latitude and longitude in degrees (WGS 84 as the sources give them), with the great-circle distance
/// between two points (`shared/docs/domain.md` section 7).
public struct GeoPoint: Hashable, Sendable {
    /// Degrees north, -90...90.
    public var latitude: Double
    /// Degrees east, -180...180.
    public var longitude: Double

    /// The mean Earth radius used for distances, km. (The IUGG mean radius is 6371.0088 km; a sphere is off
    /// by about 0.3-0.5 % anyway.)
    public static let earthRadiusKm = 6371.0

    /// Makes a point.
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// The haversine great-circle distance, km:
    /// `a = sin²(Δφ/2) + cos φ₁·cos φ₂·sin²(Δλ/2)`, `d = 2R·atan2(√a, √(1−a))`.
    ///
    /// ```swift
    /// GeoPoint(latitude: 36.12, longitude: -86.67)
    ///     .distanceKm(to: GeoPoint(latitude: 33.94, longitude: -118.40))  // 2886.44…
    /// ```
    public func distanceKm(to other: GeoPoint, radiusKm: Double = GeoPoint.earthRadiusKm) -> Double {
        let radians = Double.pi / 180
        let phi1 = latitude * radians, phi2 = other.latitude * radians
        let dPhi = (other.latitude - latitude) * radians
        let dLambda = (other.longitude - longitude) * radians
        let sinPhi = sin(dPhi / 2), sinLambda = sin(dLambda / 2)
        // Rounding can push a a hair past 1 for antipodal points; clamp so the square roots stay real.
        let a = min(1, sinPhi * sinPhi + cos(phi1) * cos(phi2) * sinLambda * sinLambda)
        return 2 * radiusKm * atan2(a.squareRoot(), (1 - a).squareRoot())
    }
}
