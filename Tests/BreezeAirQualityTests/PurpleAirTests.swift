import Testing
import BreezeAirQuality

struct PurpleAirTests {
    // MARK: A/B channel check (domain.md section 3.3)

    @Test func agreeingChannelsAverage() {
        #expect(PurpleAirChannels(a: 10, b: 12).verdict == .valid(11))
        #expect(PurpleAirChannels(a: 10, b: 12).average == 11)
        #expect(PurpleAirChannels(a: 0, b: 0).average == 0)
        #expect(PurpleAirChannels(a: 500, b: 500).average == 500)
    }

    @Test func channelsAreRejectedOnlyWhenBothTheAbsoluteAndRelativeLimitsAreExceeded() {
        // |A-B| = 20 and 2·20/40 = 100 %: both exceeded.
        #expect(PurpleAirChannels(a: 10, b: 30).verdict == .disagree)
        #expect(PurpleAirChannels(a: 30, b: 10).average == nil)
        // |A-B| = 20 but 2·20/220 ≈ 18 %: only the absolute limit.
        #expect(PurpleAirChannels(a: 100, b: 120).average == 110)
        // |A-B| = 3, 2·3/5 = 120 %: only the relative limit.
        #expect(PurpleAirChannels(a: 1, b: 4).average == 2.5)
        // |A-B| = 5 exactly is not "more than 5".
        #expect(PurpleAirChannels(a: 0.5, b: 5.5).average == 3)
        #expect(PurpleAirChannels(a: 0.5, b: 5.6).verdict == .disagree)
    }

    @Test func aMissingChannelInvalidatesTheReading() {
        #expect(PurpleAirChannels(a: nil, b: 5).verdict == .missingChannel)
        #expect(PurpleAirChannels(a: 5, b: nil).verdict == .missingChannel)
        #expect(PurpleAirChannels(a: .nan, b: 5).verdict == .missingChannel)
        #expect(PurpleAirChannels(a: nil, b: nil).average == nil)
    }

    @Test func channelsAboveThePlantowerRangeAreDropped() {
        #expect(PurpleAirChannels(a: 501, b: 499).verdict == .outOfRange)
        #expect(PurpleAirChannels(a: 400, b: 600).verdict == .outOfRange)
        #expect(PurpleAirChannels(a: -1, b: 2).verdict == .outOfRange)
        #expect(PurpleAirChannels(a: .infinity, b: 2).verdict == .outOfRange)
    }

    @Test func aPeriodMeanNeedsNinetyPercentOfItsReadings() {
        let good = PurpleAirChannels(a: 10, b: 10), bad = PurpleAirChannels(a: 10, b: 40)
        let twentySeven = Array(repeating: good, count: 27) + Array(repeating: bad, count: 3)
        #expect(PurpleAirChannels.mean(of: twentySeven, expectedCount: 30) == 10)
        let twentySix = Array(repeating: good, count: 26) + Array(repeating: bad, count: 4)
        #expect(PurpleAirChannels.mean(of: twentySix, expectedCount: 30) == nil)
        #expect(PurpleAirChannels.mean(of: [], expectedCount: 0) == nil)
    }

    // MARK: Housing offsets (domain.md section 3.1)

    @Test func housingReadingsAreOffsetToAmbient() throws {
        let housing = PurpleAirHousing(temperatureF: 80, humidity: 40)
        #expect(housing.ambientTemperatureF == 72)  // 80 − 8
        #expect(housing.ambientHumidity == 44)  // 40 + 4
        let c = try #require(housing.ambientTemperatureC)
        #expect(abs(c - TemperatureConversion.celsius(fromFahrenheit: 72)) < 1e-12)
        #expect(PurpleAirHousing(temperatureF: nil, humidity: 98).ambientHumidity == 100)
        #expect(PurpleAirHousing(temperatureF: 160, humidity: 101).ambientTemperatureF == nil)
        #expect(PurpleAirHousing(temperatureF: 160, humidity: 101).ambientHumidity == nil)
        #expect(PurpleAirHousing(temperatureF: 70, humidity: nil).ambientHumidity == nil)
    }

    // MARK: Corrections (domain.md section 3.2)

    @Test func correctionIdsMatchTheDataSourceCatalog() {
        let ids = Set(PurpleAirCorrection.allCases.map(\.id))
        #expect(ids == ["none", "epa-2021", "epa-2021-smoke", "lrapa", "aqandu"])
        for correction in PurpleAirCorrection.allCases { #expect(PurpleAirCorrection(id: correction.id) == correction) }
        #expect(PurpleAirCorrection(id: "epa") == nil)
    }

    @Test func theSmokeExtensionMatchesTheDocumentedValuesAtRH50() throws {
        let vectors: [(pa: Double, expected: Double)] = [(20, 11.92), (40, 27.64), (100, 80.04), (235, 200.04),
                                                         (300, 289.53)]
        for (pa, expected) in vectors {
            let value = try #require(PurpleAirCorrection.epa2021Smoke.apply(pa: pa, humidity: 50))
            #expect((value * 100).rounded() / 100 == expected, "PA \(pa): \(value)")
        }
    }

    @Test func theSmokeExtensionIsContinuousAtEveryBoundary() throws {
        for boundary in [30.0, 50, 210, 260] {
            for rh in [0.0, 35, 50, 90] {
                let below = try #require(PurpleAirCorrection.epa2021Smoke.apply(pa: boundary.nextDown, humidity: rh))
                let at = try #require(PurpleAirCorrection.epa2021Smoke.apply(pa: boundary, humidity: rh))
                #expect(abs(at - below) < 1e-9, "PA \(boundary), RH \(rh): \(below) vs \(at)")
            }
        }
    }

    @Test func theSmokeExtensionIsTheUSWideLineBelow30AndIgnoresHumidityFrom260() throws {
        for pa in [0.0, 5, 12.5, 29.9] {
            #expect(PurpleAirCorrection.epa2021Smoke.apply(pa: pa, humidity: 60)
                    == PurpleAirCorrection.epa2021.apply(pa: pa, humidity: 60))
        }
        #expect(PurpleAirCorrection.epa2021Smoke.apply(pa: 300, humidity: nil)
                == PurpleAirCorrection.epa2021Smoke.apply(pa: 300, humidity: 10))
        #expect(PurpleAirCorrection.epa2021Smoke.apply(pa: 100, humidity: nil) == nil)
    }

    @Test func theUSWideCorrectionNeedsHumidityAndFallsWithIt() throws {
        // domain.md's RH 50 value for PA 20 (below 30 the smoke extension is the US-wide line).
        let value = try #require(PurpleAirCorrection.epa2021.apply(pa: 20, humidity: 50))
        #expect((value * 100).rounded() / 100 == 11.92)
        let drier = try #require(PurpleAirCorrection.epa2021.apply(pa: 20, humidity: 40))
        #expect(abs((drier - value) - 0.0862 * 10) < 1e-12)
        #expect(PurpleAirCorrection.epa2021.apply(pa: 20, humidity: nil) == nil)
    }

    @Test func negativeResultsAreClampedToZero() {
        // 0.524·0 − 0.0862·100 + 5.75 < 0; 0.5·1 − 0.66 < 0.
        #expect(PurpleAirCorrection.epa2021.apply(pa: 0, humidity: 100) == 0)
        #expect(PurpleAirCorrection.epa2021Smoke.apply(pa: 0, humidity: 100) == 0)
        #expect(PurpleAirCorrection.lrapa.apply(pa: 1, humidity: nil) == 0)
        for correction in PurpleAirCorrection.allCases {
            for pa in stride(from: 0.0, through: 500, by: 2.5) {
                #expect((correction.apply(pa: pa, humidity: 100) ?? 0) >= 0, "\(correction) \(pa)")
            }
        }
    }

    @Test func lrapaAndAQandUAreStraightLinesWithTheirSlopes() throws {
        let lrapa10 = try #require(PurpleAirCorrection.lrapa.apply(pa: 10, humidity: nil))
        let lrapa20 = try #require(PurpleAirCorrection.lrapa.apply(pa: 20, humidity: nil))
        #expect(abs((lrapa20 - lrapa10) / 10 - 0.5) < 1e-12)
        #expect(abs(lrapa10 - (0.5 * 10 - 0.66)) < 1e-12)
        let aqandu0 = try #require(PurpleAirCorrection.aqandu.apply(pa: 0, humidity: 70))
        let aqandu100 = try #require(PurpleAirCorrection.aqandu.apply(pa: 100, humidity: 10))
        #expect(abs(aqandu0 - 2.65) < 1e-12)
        #expect(abs((aqandu100 - aqandu0) / 100 - 0.778) < 1e-12)
        #expect(PurpleAirCorrection.uncorrected.apply(pa: 42.5, humidity: nil) == 42.5)
        #expect(PurpleAirCorrection.uncorrected.apply(pa: -1, humidity: nil) == nil)
    }

    @Test func thePipelineRunsQACorrectionNowCastAndAQIInOrder() throws {
        // domain.md section 9: A/B QA, hourly mean, correction, NowCast, AQI.
        let hourly: [Double?] = (0..<12).map { hour in
            let readings = (0..<6).map { i in PurpleAirChannels(a: 20 + Double(hour + i), b: 22 + Double(hour)) }
            return PurpleAirChannels.mean(of: readings, expectedCount: 6)
                .flatMap { PurpleAirCorrection.epa2021.apply(pa: $0, humidity: 45) }
        }
        let result = try #require(NowCast.aqi(hourlyNewestFirst: hourly))
        let corrected = hourly.compactMap { $0 }
        #expect(corrected.count == 12)
        let low = try #require(BreakpointTable.pm25Daily2024.aqi(concentration: corrected.min()!))
        let high = try #require(BreakpointTable.pm25Daily2024.aqi(concentration: corrected.max()!))
        #expect(result.aqi >= low.aqi && result.aqi <= high.aqi)
    }
}
