import Testing
import BreezeAirQuality

struct ClimateTests {
    @Test func anomaliesAreClassifiedWithTheHalfDegreeEdgesNeutralAndTwoDegreesWarming() {
        #expect(AnomalyClass(anomalyCelsius: 2.0.nextUp) == .warmingStrong)
        #expect(AnomalyClass(anomalyCelsius: 3) == .warmingStrong)
        #expect(AnomalyClass(anomalyCelsius: 2.0) == .warming)
        #expect(AnomalyClass(anomalyCelsius: 0.5.nextUp) == .warming)
        #expect(AnomalyClass(anomalyCelsius: 0.5) == .neutral)
        #expect(AnomalyClass(anomalyCelsius: 0) == .neutral)
        #expect(AnomalyClass(anomalyCelsius: -0.5) == .neutral)
        #expect(AnomalyClass(anomalyCelsius: (-0.5).nextDown) == .cooling)
        #expect(AnomalyClass(anomalyCelsius: -4) == .cooling)
        #expect(AnomalyClass(anomalyCelsius: .nan) == nil)
        #expect(AnomalyClass.allCases.map(\.colourName) == ["red", "orange", "grey", "blue"])
    }

    @Test func temperaturesConvertWithThe32OffsetButDifferencesDoNot() {
        #expect(TemperatureConversion.fahrenheit(fromCelsius: 0) == 32)
        #expect(TemperatureConversion.fahrenheit(fromCelsius: 100) == 212)
        #expect(TemperatureConversion.fahrenheit(fromCelsius: -40) == -40)
        #expect(TemperatureConversion.celsius(fromFahrenheit: 212) == 100)
        // domain.md section 8: the thresholds become 0.9 °F and 3.6 °F.
        #expect(TemperatureConversion.fahrenheitDifference(fromCelsius: 0.5) == 0.9)
        #expect(TemperatureConversion.fahrenheitDifference(fromCelsius: 2) == 3.6)
        #expect(TemperatureConversion.celsiusDifference(fromFahrenheit: 0.9) == 0.5)
        // A difference of two converted values equals the converted difference.
        let warm = 24.3, normal = 21.1
        let viaValues = TemperatureConversion.fahrenheit(fromCelsius: warm)
            - TemperatureConversion.fahrenheit(fromCelsius: normal)
        #expect(abs(viaValues - TemperatureConversion.fahrenheitDifference(fromCelsius: warm - normal)) < 1e-9)
        #expect(abs(TemperatureConversion.fahrenheitDifference(fromCelsius: warm - normal) - viaValues) < 1e-9)
        #expect(TemperatureConversion.fahrenheitDifference(fromCelsius: 0) == 0)
    }

    @Test func february29UsesFebruary28InCommonYears() throws {
        let leapDay = try #require(MonthDay(month: 2, day: 29))
        let feb28 = try #require(MonthDay(month: 2, day: 28))
        #expect(leapDay.resolved(inYear: 2023) == feb28)
        #expect(leapDay.resolved(inYear: 1900) == feb28)
        #expect(leapDay.resolved(inYear: 2024) == leapDay)
        #expect(leapDay.resolved(inYear: 2000) == leapDay)
        let july4 = try #require(MonthDay(month: 7, day: 4))
        #expect(july4.resolved(inYear: 2023) == july4)
        #expect(leapDay.description == "02-29")
    }

    @Test func daysThatNeverExistAreRejected() {
        #expect(MonthDay(month: 2, day: 30) == nil)
        #expect(MonthDay(month: 4, day: 31) == nil)
        #expect(MonthDay(month: 13, day: 1) == nil)
        #expect(MonthDay(month: 1, day: 0) == nil)
        #expect(MonthDay(month: 12, day: 31) != nil)
    }

    @Test func leapYearsFollowTheGregorianRule() {
        #expect(MonthDay.isLeapYear(2024) && MonthDay.isLeapYear(2000) && MonthDay.isLeapYear(1600))
        #expect(!MonthDay.isLeapYear(2023) && !MonthDay.isLeapYear(1900) && !MonthDay.isLeapYear(2100))
    }
}
