import Testing
import BreezeAirQuality

struct GeoPointTests {
    static let nashville = GeoPoint(latitude: 36.12, longitude: -86.67)
    static let losAngeles = GeoPoint(latitude: 33.94, longitude: -118.40)

    @Test func nashvilleToLosAngelesIs2886point44Kilometres() {
        let d = Self.nashville.distanceKm(to: Self.losAngeles)
        #expect((d * 100).rounded() / 100 == 2886.44)
        // domain.md section 7: 2887.26 km with Rosetta Code's R = 6372.8.
        #expect((Self.nashville.distanceKm(to: Self.losAngeles, radiusKm: 6372.8) * 100).rounded() / 100 == 2887.26)
    }

    @Test func distanceIsSymmetricAndZeroToItself() {
        #expect(Self.nashville.distanceKm(to: Self.nashville) == 0)
        #expect(abs(Self.nashville.distanceKm(to: Self.losAngeles) - Self.losAngeles.distanceKm(to: Self.nashville))
                < 1e-9)
    }

    @Test func antipodesAreHalfACircumferenceApart() {
        let d = GeoPoint(latitude: 0, longitude: 0).distanceKm(to: GeoPoint(latitude: 0, longitude: 180))
        #expect(abs(d - Double.pi * GeoPoint.earthRadiusKm) < 1e-6)
        let poles = GeoPoint(latitude: 90, longitude: 0).distanceKm(to: GeoPoint(latitude: -90, longitude: 0))
        #expect(abs(poles - Double.pi * GeoPoint.earthRadiusKm) < 1e-6)
    }
}
