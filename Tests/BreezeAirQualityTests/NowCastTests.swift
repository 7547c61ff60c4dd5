import Testing
import BreezeAirQuality

struct NowCastTests {
    /// The EPA slide example, oldest to newest (`shared/docs/domain.md` section 2).
    static let slideOldestFirst: [Double] = [50, 80, 75, 90, 82, 53, 64, 74, 21, 10, 16, 13]

    @Test func theEPASlideExampleGives17point4AndAQI66() throws {
        let hours = Self.slideOldestFirst.reversed().map { Optional($0) }
        let c = try #require(NowCast.concentration(hourlyNewestFirst: hours))
        #expect((c * 100).rounded() / 100 == 17.41)
        let result = try #require(NowCast.aqi(hourlyNewestFirst: hours))
        #expect(result.truncatedConcentration == 17.4)
        #expect(result.aqi == 66)
        #expect(result.category == .moderate)
    }

    @Test func twoMissingOfTheThreeNewestHoursMeansNoNowCast() {
        let rest: [Double?] = Array(repeating: 12, count: 9)
        #expect(NowCast.concentration(hourlyNewestFirst: [nil, nil, 10] + rest) == nil)
        #expect(NowCast.concentration(hourlyNewestFirst: [nil, 10, nil] + rest) == nil)
        #expect(NowCast.concentration(hourlyNewestFirst: [10, nil, nil] + rest) == nil)
        #expect(NowCast.concentration(hourlyNewestFirst: [10, .nan, nil] + rest) == nil)
        #expect(NowCast.aqi(hourlyNewestFirst: [nil, nil, 10] + rest) == nil)
        #expect(NowCast.concentration(hourlyNewestFirst: []) == nil)
    }

    @Test func oneMissingOfTheThreeNewestHoursIsStillValid() {
        // Including a missing current hour: 2 of 3 is the only completeness rule.
        #expect(NowCast.concentration(hourlyNewestFirst: [nil, 10, 10]) == 10)
        #expect(NowCast.concentration(hourlyNewestFirst: [10, 10, nil] + Array(repeating: nil, count: 9)) == 10)
    }

    @Test func missingHoursAreSkippedButStillAgeTheWeights() throws {
        // With w = 0.5 (cmin/cmax = 0.25): 40 at w^0 and 10 at w^2 (hour 2 missing).
        let c = try #require(NowCast.concentration(hourlyNewestFirst: [40, nil, 10]))
        #expect(abs(c - (40 + 0.25 * 10) / (1 + 0.25)) < 1e-12)
    }

    @Test func theWeightIsFlooredAtOneHalf() throws {
        // cmin/cmax = 0.8 is used as is; 0.2 is raised to 0.5.
        let gentle = try #require(NowCast.concentration(hourlyNewestFirst: [10, 8]))
        #expect(abs(gentle - (10 + 0.8 * 8) / 1.8) < 1e-12)
        let steep = try #require(NowCast.concentration(hourlyNewestFirst: [10, 2]))
        #expect(abs(steep - (10 + 0.5 * 2) / 1.5) < 1e-12)
    }

    @Test func allZeroHoursGiveZeroAndEqualHoursGiveTheirValue() {
        #expect(NowCast.concentration(hourlyNewestFirst: Array(repeating: 0, count: 12)) == 0)
        #expect(NowCast.aqi(hourlyNewestFirst: Array(repeating: 0, count: 12))?.aqi == 0)
        #expect(NowCast.concentration(hourlyNewestFirst: Array(repeating: 7.25, count: 12)) == 7.25)
    }

    @Test func rawHoursAreNotTruncatedOnlyTheResultIs() throws {
        let hours: [Double?] = Array(repeating: 9.05, count: 12)
        let c = try #require(NowCast.concentration(hourlyNewestFirst: hours))
        #expect(abs(c - 9.05) < 1e-12)
        let result = try #require(NowCast.aqi(hourlyNewestFirst: hours))
        #expect(result.truncatedConcentration == 9.0)
        #expect(result.aqi == 50)
    }

    @Test func onlyTheNewestTwelveHoursCount() {
        let twelve: [Double?] = Self.slideOldestFirst.reversed().map { Optional($0) }
        #expect(NowCast.concentration(hourlyNewestFirst: twelve + [1000])
                == NowCast.concentration(hourlyNewestFirst: twelve))
    }

    @Test func theResultLiesBetweenTheLowestAndHighestHour() throws {
        let hours: [Double?] = [3, 90, nil, 45, 60, 12, nil, 8, 33, 70, 2, 15]
        let c = try #require(NowCast.concentration(hourlyNewestFirst: hours))
        let valid = hours.compactMap { $0 }
        #expect(c >= valid.min()! && c <= valid.max()!)
    }

    @Test func pm10UsesItsOwnTableAndPrecision() throws {
        let result = try #require(NowCast.aqi(hourlyNewestFirst: Array(repeating: 54.9, count: 12),
                                              table: .pm10Daily2024))
        #expect(result.pollutant == .pm10)
        #expect(result.truncatedConcentration == 54)
        #expect(result.aqi == 50)
    }
}
