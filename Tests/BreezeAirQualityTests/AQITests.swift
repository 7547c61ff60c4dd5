import Testing
import BreezeAirQuality

struct AQITests {
    /// `shared/docs/domain.md` section 1.6: 2024 PM2.5 concentration (µg/m³) to AQI.
    static let pm25Vectors2024: [(concentration: Double, aqi: Int)] = [
        (0, 0), (4.5, 25), (9.0, 50), (9.05, 50), (9.1, 51), (12.0, 56), (20.0, 71), (35.4, 100), (35.45, 100),
        (35.5, 101), (45, 124), (55.4, 150), (55.5, 151), (100, 182), (125.4, 200), (125.5, 201), (150, 225),
        (225.4, 300), (225.5, 301), (300, 449), (325.4, 500),
    ]

    @Test func everyDocumentedPM25VectorGivesItsAQIAndCategory() throws {
        for (c, expected) in Self.pm25Vectors2024 {
            let result = try #require(BreakpointTable.pm25Daily2024.aqi(concentration: c), "C = \(c)")
            #expect(result.aqi == expected, "C = \(c)")
            #expect(result.category == AQILevel(aqi: expected), "C = \(c)")
            #expect(result.colour == result.category.colourHex)
            #expect(!result.beyondIndex, "C = \(c)")
            #expect(result.pollutant == .pm25)
        }
    }

    @Test func concentrationsAreTruncatedNotRoundedBeforeTheEquation() throws {
        let result = try #require(BreakpointTable.pm25Daily2024.aqi(concentration: 35.49))
        #expect(result.truncatedConcentration == 35.4)
        #expect(result.aqi == 100)
        let pm10 = try #require(BreakpointTable.pm10Daily2024.aqi(concentration: 54.9))
        #expect(pm10.truncatedConcentration == 54)
        #expect(pm10.category == .good)
    }

    @Test func aComputedAverageJustBelowATenthIsNotPushedDownAStep() {
        let mean = [30.0, 30.3, 30.9].reduce(0, +) / 3
        #expect(mean < 30.4)  // 30.399999999999995 in Double: the case the 1e-9 is for.
        #expect((mean * 10).rounded(.down) / 10 == 30.3)
        #expect(BreakpointTable.pm25Daily2024.truncate(mean) == 30.4)
    }

    @Test func aboveTheTopBreakpointIsBeyondTheIndexReportedAs500Hazardous() throws {
        let table = BreakpointTable.pm25Daily2024
        let beyond = try #require(table.aqi(concentration: 400))
        #expect(beyond.aqi == 500)
        #expect(beyond.category == .hazardous)
        #expect(beyond.beyondIndex)
        #expect(beyond.colour == "#7E0023")
        #expect(try #require(table.aqi(concentration: 325.5)).beyondIndex)
        // 325.45 truncates to the top breakpoint itself, which is inside the index.
        let top = try #require(table.aqi(concentration: 325.45))
        #expect(top.aqi == 500 && !top.beyondIndex)
        #expect(try #require(BreakpointTable.pm10Daily2024.aqi(concentration: 605)).beyondIndex)
    }

    @Test func eightHourOzoneIsUndefinedAboveItsTopAndOneHourOzoneBelowItsBottom() throws {
        #expect(BreakpointTable.ozone8Hour2024.aqi(concentration: 0.200)?.aqi == 300)
        #expect(BreakpointTable.ozone8Hour2024.aqi(concentration: 0.201) == nil)
        #expect(BreakpointTable.ozone1Hour2024.aqi(concentration: 0.124) == nil)
        let oneHour = try #require(BreakpointTable.ozone1Hour2024.aqi(concentration: 0.125))
        #expect(oneHour.aqi == 101 && oneHour.category == .usg)
    }

    @Test func negativeNoiseCountsAsZeroAndNonFiniteValuesGiveNothing() throws {
        let result = try #require(BreakpointTable.pm25Daily2024.aqi(concentration: -1.3))
        #expect(result.aqi == 0 && result.category == .good && result.truncatedConcentration == 0)
        #expect(BreakpointTable.pm25Daily2024.aqi(concentration: .nan) == nil)
        #expect(BreakpointTable.pm25Daily2024.aqi(concentration: .infinity) == nil)
    }

    @Test func theOverallAQIIsTheHighestSubIndexAndNamesTheCriticalPollutant() throws {
        let pm = try #require(BreakpointTable.pm25Daily2024.aqi(concentration: 20))
        let ozone = try #require(BreakpointTable.ozone8Hour2024.aqi(concentration: 0.080))
        let no2 = try #require(BreakpointTable.no2OneHour2024.aqi(concentration: 40))
        let overall = try #require(AQIResult.overall([pm, ozone, no2]))
        #expect(overall.pollutant == .o3)
        #expect(overall.aqi == max(pm.aqi, ozone.aqi, no2.aqi))
        #expect(AQIResult.overall([]) == nil)
    }

    @Test func categoriesCarryTheOfficialColoursNamesAndRanges() {
        // domain.md section 1.4 (TAD Table 2), in category order.
        let hex = ["#00E400", "#FFFF00", "#FF7E00", "#FF0000", "#8F3F97", "#7E0023"]
        let names = ["good", "moderate", "usg", "unhealthy", "very-unhealthy", "hazardous"]
        #expect(AQILevel.allCases.map(\.colourHex) == hex)
        // The hex strings are written out; they must say what `rgb` says.
        for level in AQILevel.allCases {
            let (r, g, b) = level.rgb
            let fromRGB = "#" + [r, g, b].map { ($0 < 16 ? "0" : "") + String($0, radix: 16, uppercase: true) }.joined()
            #expect(level.colourHex == fromRGB, "\(level)")
        }
        #expect(AQILevel.allCases.map(\.name) == names)
        #expect(AQILevel.allCases.map(\.rawValue) == [1, 2, 3, 4, 5, 6])
        #expect(AQILevel.usg.title == "Unhealthy for Sensitive Groups")
        for level in AQILevel.allCases {
            #expect(AQILevel(name: level.name) == level)
            #expect(AQILevel(aqi: level.aqiRange.lowerBound) == level)
            #expect(AQILevel(aqi: level.aqiRange.upperBound) == level)
        }
        #expect(AQILevel(aqi: 501) == .hazardous)
        #expect(AQILevel(aqi: -1) == nil)
        #expect(AQILevel.good < AQILevel.hazardous)
    }
}
