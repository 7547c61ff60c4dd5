import Testing
import BreezeCore
import BreezeImport
@testable import BreezeProjections

/// Expectations computed with python3 from the raw CSV (`csv.DictReader`, `tmax` in F, C = (F - 32) / 1.8;
/// each point the mean of the maxima of the 15 days centred on the date, at least 8 of them, days after the
/// reference day left out; Feb 29 -> Feb 28 in common years; decade years 1930.. plus the latest year with a
/// value on or before the reference day; classes on the C difference from the first point: > 2 strong, > 0.5
/// warming, >= -0.5 neutral, else cooling; F differences x1.8; values rounded half up to 0.01).
struct ClimateScreenTests {
    static let station = "GHCND:USC00381770"

    static func params(date: String?, now: String = "2025-07-04T12:00:00Z", user: String = "me", sensor: String? = station) -> ScreenParameters {
        var p = ScreenParameters(user: user, now: FactScreenWorlds.time(now))
        p.date = date
        p.sensor = sensor
        return p
    }

    static func close(_ a: [Double], _ b: [Double]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { abs($0 - $1) < 1e-9 }
    }

    /// The Clemson events whose date `keep` accepts (a station with a shorter record, or an outage).
    static func clemson(keeping keep: (String) -> Bool) throws -> [Event] {
        var out: [Event] = []
        for e in try FactScreenWorlds.clemson() {
            if case .dailyTemperature(let t) = try e.body(), !keep(t.date) { continue }
            out.append(e)
        }
        return out
    }

    @Test func julyFourthAcrossDecadesInCelsius() throws {
        let m = try FactScreenWorlds.deterministic(ClimateScreen.self, try FactScreenWorlds.clemson(), Self.params(date: nil))
        #expect(m.status == "ok" && m.message == nil)
        #expect(m.station == Self.station && m.date == "07-04" && m.referenceDate == "2025-07-04" && m.unit == "°C")
        #expect(m.measure == "tmax-window" && m.windowDaysEachSide == 7 && m.latitude == 34.68 && m.longitude == -82.82 && m.distanceKm == nil)
        #expect(m.data.map(\.year) == [1930, 1940, 1950, 1960, 1970, 1980, 1990, 2000, 2010, 2020])
        // Mean maxima of June 27 - July 11 (15 days each year), C.
        let celsius = [34.57, 28.73, 31.23, 31.85, 33.07, 33.59, 35.19, 32.74, 33.35, 31.77]
        #expect(Self.close(m.data.map(\.temperature), celsius) && Self.close(m.data.map(\.displayTemperature), celsius))
        #expect(m.data.allSatisfy { $0.days == 15 && $0.date.hasSuffix("-07-04") })
        #expect(Self.close(m.data.map(\.difference), [0, -5.83, -3.34, -2.71, -1.5, -0.98, 0.63, -1.83, -1.22, -2.8]))
        #expect(m.data.map(\.barClass) == ["neutral", "cooling", "cooling", "cooling", "cooling", "cooling", "warming", "cooling",
                                           "cooling", "cooling"])
        #expect(m.baselineYear == 1930 && abs(m.change! + 2.8) < 1e-9 && m.changeClass == "cooling")
        #expect(m.skippedYears.isEmpty)
        #expect(ClimateScreen.render(m).contains { $0.hasPrefix("1990") && $0.hasSuffix("warming") })
    }

    @Test func fahrenheitShowsFahrenheitButTheDesignsTemperatureStaysCelsius() throws {
        let events = try FactScreenWorlds.clemson() + FactScreenWorlds.user("fan", [.unitSet(.fahrenheit)])
        let m = try FactScreenWorlds.deterministic(ClimateScreen.self, events, Self.params(date: nil, user: "fan"))
        #expect(m.unit == "°F")
        #expect(Self.close(m.data.map(\.displayTemperature), [94.22, 83.72, 88.21, 89.34, 91.52, 92.46, 95.35, 90.93, 92.02, 89.18]))
        // Differences x1.8, no +32.
        #expect(Self.close(m.data.map(\.difference), [0, -10.5, -6.01, -4.88, -2.7, -1.76, 1.13, -3.29, -2.2, -5.04]))
        #expect(abs(m.change! + 5.04) < 1e-9)
        let celsius = try ClimateScreen.build(FactWorld(events: events), Self.params(date: nil, user: "me"))
        #expect(m.data.map(\.barClass) == celsius.data.map(\.barClass))
        // `temperature` is C whatever the user's unit (the app's ClimateDataPoint converts it itself).
        #expect(m.data.map(\.temperature) == celsius.data.map(\.temperature))
    }

    @Test func theLatestYearIsAddedAndNothingAfterTheReferenceDayIsUsed() throws {
        let m = try ClimateScreen.build(FactWorld(events: try FactScreenWorlds.clemson()), Self.params(date: "2015-07-04"))
        #expect(m.data.map(\.year) == [1930, 1940, 1950, 1960, 1970, 1980, 1990, 2000, 2010, 2015])
        // 2015: only June 27 - July 4 (8 days) are on or before the reference day: 30.55 C, -4.02 C, cooling.
        #expect(m.data.last!.days == 8 && abs(m.data.last!.temperature - 30.55) < 1e-9 && m.data.last!.barClass == "cooling")
        #expect(abs(m.change! + 4.02) < 1e-9 && m.changeClass == "cooling")
    }

    @Test func february29IsCentredOnFebruary28InCommonYears() throws {
        let events = try FactScreenWorlds.clemson() + FactScreenWorlds.user("fan", [.unitSet(.fahrenheit)])
        let world = FactWorld(events: events)
        let m = try ClimateScreen.build(world, Self.params(date: "2020-02-29"))
        #expect(m.date == "02-29")
        #expect(m.data.map(\.date) == ["1930-02-28", "1940-02-29", "1950-02-28", "1960-02-29", "1970-02-28", "1980-02-29",
                                       "1990-02-28", "2000-02-29", "2010-02-28", "2020-02-29"])
        #expect(Self.close(m.data.map(\.temperature), [18.27, 15.15, 13.63, 9.08, 18.3, 14.77, 15.9, 19.44, 12.47, 12.64]))
        #expect(m.data.map(\.barClass) == ["neutral", "cooling", "cooling", "cooling", "neutral", "cooling", "cooling",
                                           "warming", "cooling", "cooling"])
        #expect(abs(m.change! + 5.63) < 1e-9)
        // Seen from 2016-02-29 the latest point is 2016 (62.51 F): -1.32 C, cooling; -2.37 F.
        let f = try ClimateScreen.build(world, Self.params(date: "2016-02-29", user: "fan"))
        #expect(f.data.map(\.year).last == 2016 && f.data.count == 10 && f.data.last!.date == "2016-02-29")
        #expect(abs(f.data.last!.displayTemperature - 62.51) < 1e-9 && abs(f.change! + 2.37) < 1e-9 && f.changeClass == "cooling")
        // 2000 (+1.17 C) is warming in both units: +2.11 F.
        #expect(abs(f.data[7].difference - 2.11) < 1e-9 && f.data[7].barClass == "warming")
    }

    @Test func aDecadeYearWithTooFewDaysIsSkippedAndSaidSo() throws {
        // A station outage from 1950-09-27 to 1950-10-08: 1950's window around October 5 has 4 days left
        // (Sept 28 - Oct 12 minus 11 days), fewer than 8, so 1950 is skipped, never shown as 0.
        let events = try Self.clemson(keeping: { !($0 >= "1950-09-27" && $0 <= "1950-10-08") })
            + FactScreenWorlds.user("fan", [.unitSet(.fahrenheit)])
        let m = try FactScreenWorlds.deterministic(ClimateScreen.self, events, Self.params(date: "1995-10-05", user: "fan"))
        #expect(m.data.map(\.year) == [1930, 1940, 1960, 1970, 1980, 1990, 1995] && m.skippedYears == [1950])
        #expect(Self.close(m.data.map(\.displayTemperature), [78.4, 80.98, 77.92, 79.88, 71.6, 79.69, 79.14]))
        #expect(Self.close(m.data.map(\.difference), [0, 2.58, -0.48, 1.48, -6.8, 1.28, 0.73]))
        #expect(m.data.map(\.barClass) == ["neutral", "warming", "neutral", "warming", "cooling", "warming", "neutral"])
        #expect(ClimateScreen.render(m).last == "no value for 10-05 in 1950 (skipped)")
        // Without the outage 1950 is there (14 of 15 days: 1950-10-05 itself has no maximum).
        let whole = try ClimateScreen.build(FactWorld(events: try FactScreenWorlds.clemson()), Self.params(date: "1995-10-05"))
        #expect(whole.skippedYears.isEmpty && whole.data[2].year == 1950 && whole.data[2].days == 14)
    }

    @Test func aShortRecordIsNotEnoughHistoryNotATrend() throws {
        // The last four years only (2017-2020): one point (June 27 - July 4 2020, 8 days: 31.7875 C), no
        // change, the app says why.
        let four = FactWorld(events: try Self.clemson(keeping: { $0 >= "2017-01-01" }))
        let m = try ClimateScreen.build(four, Self.params(date: "2020-07-04"))
        #expect(m.status == "not-enough-history" && m.message != nil)
        #expect(m.data.map(\.year) == [2020] && abs(m.data[0].temperature - 31.79) < 0.006 && m.data[0].days == 8)
        #expect(m.change == nil && m.changeClass == nil && m.baselineYear == 2020)
        #expect(!ClimateScreen.render(m).contains { $0.hasPrefix("Change since") })
        // 2005-2020: two points ten years apart, still under 30 years.
        let sixteen = FactWorld(events: try Self.clemson(keeping: { $0 >= "2005-01-01" }))
        let s = try ClimateScreen.build(sixteen, Self.params(date: "2020-07-04"))
        #expect(s.status == "not-enough-history" && s.data.map(\.year) == [2010, 2020] && s.change == nil)
        // 1990-2020 spans 30 years: a trend.
        let thirty = try ClimateScreen.build(FactWorld(events: try Self.clemson(keeping: { $0 >= "1990-01-01" })), Self.params(date: "2020-07-04"))
        #expect(thirty.status == "ok" && thirty.data.map(\.year) == [1990, 2000, 2010, 2020] && thirty.change != nil)
    }

    @Test func theStationNearestThePositionIsUsedWithinTheRadius() throws {
        let world = FactWorld(events: try FactScreenWorlds.clemson())
        var p = Self.params(date: "2020-07-04", sensor: nil)
        p.at = (34.7, -82.8)
        let m = try ClimateScreen.build(world, p)
        #expect(m.station == Self.station && m.distanceKm == 2.9)   // 2.879 km
        #expect(m.data.count == 10)
        // Berlin is 7,400 km away: no station, an empty model rather than Clemson's climate.
        p.at = (52.52, 13.405)
        let berlin = try ClimateScreen.build(world, p)
        #expect(berlin.status == "no-station" && berlin.station == nil && berlin.data.isEmpty && berlin.change == nil)
        p.at = nil
        let nowhere = try ClimateScreen.build(world, p)      // no place known: an empty state, not an error
        #expect(nowhere.status == "no-station" && nowhere.station == nil && nowhere.message?.contains("Location unknown") == true)
        let nope = try ClimateScreen.build(world, Self.params(date: nil, sensor: "GHCND:NOPE"))
        #expect(nope.status == "no-data" && nope.station == "GHCND:NOPE" && nope.data.isEmpty)
        // Before the station's first day there is nothing to show.
        #expect(try ClimateScreen.build(world, Self.params(date: "1929-07-04")).status == "no-data")
    }

    @Test func turningTheSourceOffHidesTheChart() throws {
        let events = try FactScreenWorlds.clemson() + FactScreenWorlds.user("me", [.sourceDisable(source: "noaa")])
        let m = try ClimateScreen.build(FactWorld(events: events), Self.params(date: nil))
        #expect(m.status == "source-off" && m.data.isEmpty && m.message == "NOAA daily temperatures is turned off")
        #expect(ClimateScreen.source(ofStation: "open-meteo:34.7,-82.8") == "open-meteo" && ClimateScreen.source(ofStation: Self.station) == "noaa")
    }
}
