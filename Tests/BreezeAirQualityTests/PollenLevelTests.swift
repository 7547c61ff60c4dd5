import Testing
import BreezeAirQuality

struct PollenLevelTests {
    @Test func theSixUniversalPollenIndexLevelsHaveGooglesNames() {
        let titles = (0...5).map { PollenLevel(upi: $0)?.title }
        #expect(titles == ["None", "Very Low", "Low", "Moderate", "High", "Very High"])
        #expect(PollenLevel.allCases.count == 6)
    }

    @Test func valuesOutsideZeroToFiveAreNotLevels() {
        #expect(PollenLevel(upi: -1) == nil)
        #expect(PollenLevel(upi: 6) == nil)
        #expect(PollenLevel(upi: 0) == .noPollen)
        #expect(PollenLevel.noPollen < .veryHigh)
    }
}
