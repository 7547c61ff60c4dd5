import Testing
import BreezeCore
import BreezeImport
@testable import BreezeProjections

/// Expectations computed with python3 from the raw CSV (`csv.DictReader`, `tmax` in F, C = (F - 32) / 1.8,
/// Feb 29 -> Feb 28 in common years, decade years 1930.. plus the latest year with a value on or before the
/// reference day, classes on the C difference from the first point: > 2 strong, > 0.5 warming, >= -0.5
/// neutral, else cooling; F differences x1.8).
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

    @Test func julyFourthAcrossDecadesInCelsius() throws {
        let m = try FactScreenWorlds.deterministic(ClimateScreen.self, try FactScreenWorlds.clemson(), Self.params(date: nil))
        #expect(m.station == Self.station && m.date == "07-04" && m.referenceDate == "2025-07-04" && m.unit == "°C")
        #expect(m.measure == "tmax" && m.latitude == 34.68 && m.longitude == -82.82 && m.distanceKm == nil)
        #expect(m.data.map(\.year) == [1930, 1940, 1950, 1960, 1970, 1980, 1990, 2000, 2010, 2020])
        // tmax F 91.04, 75.92, 89.96, 91.94, 98.96, 91.94, 91.94, 89.96, 84.02, 91.94.
        #expect(Self.close(m.data.map(\.temperature), [32.8, 24.4, 32.2, 33.3, 37.2, 33.3, 33.3, 32.2, 28.9, 33.3]))
        #expect(Self.close(m.data.map(\.difference), [0, -8.4, -0.6, 0.5, 4.4, 0.5, 0.5, -0.6, -3.9, 0.5]))
        // +0.5 C exactly (1960, 1980, 1990, 2020) is neutral: the edge is inclusive.
        #expect(m.data.map(\.barClass) == ["neutral", "cooling", "cooling", "neutral", "warming-strong", "neutral", "neutral",
                                           "cooling", "cooling", "neutral"])
        #expect(m.baselineYear == 1930 && abs(m.change - 0.5) < 1e-9 && m.changeClass == "neutral")
        #expect(m.skippedYears.isEmpty && m.data.allSatisfy { $0.date.hasSuffix("-07-04") })
        #expect(ClimateScreen.render(m).contains { $0.hasPrefix("1970") && $0.hasSuffix("warming-strong") })
    }

    @Test func fahrenheitConvertsValuesAndDifferencesButClassifiesInCelsius() throws {
        let events = try FactScreenWorlds.clemson() + FactScreenWorlds.user("fan", [.unitSet(.fahrenheit)])
        let m = try FactScreenWorlds.deterministic(ClimateScreen.self, events, Self.params(date: nil, user: "fan"))
        #expect(m.unit == "°F")
        // The file's own F values come back (C x 1.8 + 32).
        #expect(Self.close(m.data.map(\.temperature), [91.04, 75.92, 89.96, 91.94, 98.96, 91.94, 91.94, 89.96, 84.02, 91.94]))
        // Differences x1.8, no +32: -8.4 C -> -15.12 F, +0.5 C -> +0.9 F (still neutral), +4.4 C -> +7.92 F.
        #expect(Self.close(m.data.map(\.difference), [0, -15.12, -1.08, 0.9, 7.92, 0.9, 0.9, -1.08, -7.02, 0.9]))
        #expect(abs(m.change - 0.9) < 1e-9)
        let celsius = try ClimateScreen.build(FactWorld(events: events), Self.params(date: nil, user: "me"))
        #expect(m.data.map(\.barClass) == celsius.data.map(\.barClass))
        #expect(m.data.map(\.temperatureC) == celsius.data.map(\.temperatureC))
    }

    @Test func theLatestYearIsAddedAndNothingAfterTheReferenceDayIsUsed() throws {
        let m = try ClimateScreen.build(FactWorld(events: try FactScreenWorlds.clemson()), Self.params(date: "2015-07-04"))
        #expect(m.data.map(\.year) == [1930, 1940, 1950, 1960, 1970, 1980, 1990, 2000, 2010, 2015])
        // 2015-07-04 tmax 82.94 F = 28.3 C: -4.5 C from 1930, cooling.
        #expect(abs(m.data.last!.temperature - 28.3) < 1e-9 && m.data.last!.barClass == "cooling")
        #expect(abs(m.change + 4.5) < 1e-9 && m.changeClass == "cooling")
    }

    @Test func february29UsesFebruary28InCommonYears() throws {
        let events = try FactScreenWorlds.clemson() + FactScreenWorlds.user("fan", [.unitSet(.fahrenheit)])
        let world = FactWorld(events: events)
        let m = try ClimateScreen.build(world, Self.params(date: "2020-02-29"))
        #expect(m.date == "02-29")
        #expect(m.data.map(\.date) == ["1930-02-28", "1940-02-29", "1950-02-28", "1960-02-29", "1970-02-28", "1980-02-29",
                                       "1990-02-28", "2000-02-29", "2010-02-28", "2020-02-29"])
        // tmax F 69.08, 66.02, 57.02, 60.98, 71.06, 75.02, 62.96, 66.92, 57.92, 50.0.
        #expect(Self.close(m.data.map(\.temperature), [20.6, 18.9, 13.9, 16.1, 21.7, 23.9, 17.2, 19.4, 14.4, 10.0]))
        #expect(m.data.map(\.barClass) == ["neutral", "cooling", "cooling", "cooling", "warming", "warming-strong", "cooling",
                                           "cooling", "cooling", "cooling"])
        #expect(abs(m.change + 10.6) < 1e-9)
        // Seen from 2016-02-29 the latest point is 2016 (68.00 F = 20.0 C): -0.6 C, cooling; -1.08 F.
        let f = try ClimateScreen.build(world, Self.params(date: "2016-02-29", user: "fan"))
        #expect(f.data.map(\.year).last == 2016 && f.data.count == 10 && f.data.last!.date == "2016-02-29")
        #expect(abs(f.data.last!.temperature - 68.0) < 1e-9 && abs(f.change + 1.08) < 1e-9 && f.changeClass == "cooling")
        // 1970 (+1.1 C) is warming in both units: +1.98 F.
        #expect(abs(f.data[4].difference - 1.98) < 1e-9 && f.data[4].barClass == "warming")
    }

    @Test func aDecadeYearWithoutAMaximumIsSkippedAndSaidSo() throws {
        // 1950-10-05 has tmin 53.96 F but tmax NA: no value, so 1950 is skipped, never shown as 0.
        let events = try FactScreenWorlds.clemson() + FactScreenWorlds.user("fan", [.unitSet(.fahrenheit)])
        let m = try FactScreenWorlds.deterministic(ClimateScreen.self, events, Self.params(date: "1995-10-05", user: "fan"))
        #expect(m.data.map(\.year) == [1930, 1940, 1960, 1970, 1980, 1990, 1995] && m.skippedYears == [1950])
        #expect(Self.close(m.data.map(\.temperature), [73.94, 84.92, 78.98, 75.92, 66.92, 77.0, 77.0]))
        #expect(Self.close(m.data.map(\.difference), [0, 10.98, 5.04, 1.98, -7.02, 3.06, 3.06]))
        #expect(m.data.map(\.barClass) == ["neutral", "warming-strong", "warming-strong", "warming", "cooling", "warming", "warming"])
        #expect(ClimateScreen.render(m).last == "no value for 10-05 in 1950 (skipped)")
    }

    @Test func theStationNearestThePositionIsUsedWhenNoneIsNamed() throws {
        let world = FactWorld(events: try FactScreenWorlds.clemson())
        var p = Self.params(date: "2020-07-04", sensor: nil)
        p.at = (34.7, -82.8)
        let m = try ClimateScreen.build(world, p)
        #expect(m.station == Self.station && m.distanceKm == 2.9)   // 2.879 km
        #expect(m.data.count == 10)
        p.at = nil
        #expect(throws: ScreenError.self) { try ClimateScreen.build(world, p) }
        #expect(throws: ScreenError.self) { try ClimateScreen.build(world, Self.params(date: nil, sensor: "GHCND:NOPE")) }
        // Before the station's first day there is nothing to show.
        #expect(throws: ScreenError.self) { try ClimateScreen.build(world, Self.params(date: "1929-07-04")) }
    }
}
