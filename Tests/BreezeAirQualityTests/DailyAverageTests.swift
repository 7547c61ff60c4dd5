import Testing
import BreezeAirQuality

struct DailyAverageTests {
    @Test func aDayNeedsEighteenOfItsTwentyFourHours() {
        let eighteen: [Double?] = Array(repeating: 12, count: 18) + Array(repeating: nil, count: 6)
        #expect(DailyAverage.mean(hourly: eighteen) == 12)
        let seventeen: [Double?] = Array(repeating: 12, count: 17) + Array(repeating: nil, count: 7)
        #expect(DailyAverage.mean(hourly: seventeen) == nil)
        #expect(DailyAverage.aqi(hourly: seventeen) == nil)
        #expect(DailyAverage.mean(hourly: Array(repeating: 12, count: 25)) == nil)
    }

    @Test func theDailyAQITruncatesTheComputedMean() throws {
        // Six hours each of 30.0, 30.3 and 30.9: a mean of 30.4 that Double may compute a hair low.
        let hours: [Double?] = [30.0, 30.3, 30.9].flatMap { Array(repeating: $0, count: 6) } + [nil, .nan]
        let result = try #require(DailyAverage.aqi(hourly: hours))
        #expect(result.truncatedConcentration == 30.4)
        #expect(result == BreakpointTable.pm25Daily2024.aqi(concentration: 30.4))
    }
}
