import Testing
import BreezeCore
import BreezeImport
@testable import BreezeProjections

/// Expectations computed with python3 from the raw export (`csv.DictReader` over the gunzipped file, naive
/// times read as UTC as the importer does by default, one reading per timestamp, counted from 00:00 UTC up
/// to and including `now`).
struct BiomarkerScreenTests {
    static func params(now: String, date: String? = nil, user: String = "me") -> ScreenParameters {
        var p = ScreenParameters(user: user, now: FactScreenWorlds.time(now))
        p.date = date
        return p
    }

    @Test func readingsTodayAgainstTheAppsDefaultTarget() throws {
        let events = try FactScreenWorlds.glucose()
        let m = try FactScreenWorlds.deterministic(BiomarkerScreen.self, events, Self.params(now: "2010-03-25T23:59:59Z"))
        #expect(m.user == "me" && m.date == "2010-03-25" && m.biomarkers.count == 1)
        let g = m.biomarkers[0]
        // 288 readings (every 5 minutes); no target: the app's default 0...3 and `drop`, progress capped at 1.
        #expect(g.readingType == "Blood Glucose" && g.readingCount == 288 && !g.hasTarget)
        #expect(g.minReading == 0 && g.maxReading == 3 && g.icon == "drop" && g.progress == 1)
        #expect(g.latestValue == 72 && g.unit == "mg/dL" && g.latestTime == "2010-03-25T23:56:00Z")
        #expect(BiomarkerScreen.render(m).contains { $0.contains("288/3") && $0.contains("(default)") })
    }

    @Test func onlyReadingsUpToNowCount() throws {
        let world = FactWorld(events: try FactScreenWorlds.glucose())
        let noon = try BiomarkerScreen.build(world, Self.params(now: "2010-03-25T12:00:00Z"))
        #expect(noon.biomarkers[0].readingCount == 144 && noon.biomarkers[0].latestValue == 122)
        #expect(noon.biomarkers[0].latestTime == "2010-03-25T11:56:00Z")
        // The first day of the export starts at 09:51: 170 readings, the last at 23:56 (128 mg/dL).
        let first = try BiomarkerScreen.build(world, Self.params(now: "2010-04-01T00:00:00Z", date: "2010-03-24"))
        #expect(first.date == "2010-03-24" && first.biomarkers[0].readingCount == 170 && first.biomarkers[0].latestValue == 128)
        // A repeated timestamp (2010-05-20 03:21, glucose 122 and 124) is one reading: 257 that day.
        let may20 = try BiomarkerScreen.build(world, Self.params(now: "2010-05-20T23:59:59Z"))
        #expect(may20.biomarkers[0].readingCount == 257 && may20.biomarkers[0].latestValue == 62)
    }

    @Test func aTargetSetsTheGaugeAndProgress() throws {
        let target = BiomarkerTarget(readingType: "Blood Glucose", minReading: 0, maxReading: 300, icon: "drop.circle")
        let pressure = BiomarkerTarget(readingType: "Blood Pressure", minReading: 0, maxReading: 2, icon: "heart")
        let events = try FactScreenWorlds.glucose() + FactScreenWorlds.user("me", [.biomarkerTarget(target), .biomarkerTarget(pressure)])
        let m = try FactScreenWorlds.deterministic(BiomarkerScreen.self, events, Self.params(now: "2010-03-25T23:59:59Z"))
        #expect(m.biomarkers.map(\.readingType) == ["Blood Glucose", "Blood Pressure"])
        let g = m.biomarkers[0], bp = m.biomarkers[1]
        #expect(g.hasTarget && g.maxReading == 300 && g.icon == "drop.circle" && g.readingCount == 288)
        #expect(abs(g.progress - 288.0 / 300.0) < 1e-12)
        // A target without readings today: 0 of 2, no latest value.
        #expect(bp.hasTarget && bp.readingCount == 0 && bp.progress == 0 && bp.latestValue == nil && bp.unit == nil && bp.icon == "heart")
        // A day with no glucose readings still shows both targets at 0.
        let empty = try BiomarkerScreen.build(FactWorld(events: events), Self.params(now: "2011-01-01T12:00:00Z"))
        #expect(empty.biomarkers.map(\.readingCount) == [0, 0] && empty.biomarkers.allSatisfy { $0.progress == 0 })
    }

    @Test func readingsArePerUserAndANewUserSeesTheDefaultEmptyGauge() throws {
        let world = FactWorld(events: try FactScreenWorlds.glucose())
        let empty = BiomarkerScreen.Biomarker(readingType: "Blood Glucose", readingCount: 0, minReading: 0, maxReading: 3, icon: "drop",
                                              hasTarget: false, progress: 0, latestValue: nil, unit: nil, latestTime: nil)
        // "bo" has no readings and no target: a 0/3 Blood Glucose gauge, the design's default.
        let bo = try BiomarkerScreen.build(world, Self.params(now: "2010-03-25T23:59:59Z", user: "bo"))
        #expect(bo.user == "bo" && bo.date == "2010-03-25" && bo.biomarkers == [empty])
        // "me" on a day without readings and without targets.
        let me = try BiomarkerScreen.build(world, Self.params(now: "2011-01-01T12:00:00Z"))
        #expect(me.date == "2011-01-01" && me.biomarkers == [empty])
        #expect(BiomarkerScreen.render(me).contains { $0.contains("0/3") && $0.contains("(default)") })
    }

    @Test func turningTheGlucoseMonitorOffHidesItsReadings() throws {
        let on = try BiomarkerScreen.build(FactWorld(events: try FactScreenWorlds.glucose()), Self.params(now: "2010-03-25T23:59:59Z"))
        #expect(on.message == nil && on.biomarkers.contains { $0.readingCount > 0 })
        let events = try FactScreenWorlds.glucose() + FactScreenWorlds.user("me", [.sourceDisable(source: "cgm")])
        let off = try BiomarkerScreen.build(FactWorld(events: events), Self.params(now: "2010-03-25T23:59:59Z"))
        #expect(off.message == "Glucose monitor is turned off")
        #expect(off.biomarkers.allSatisfy { $0.readingCount == 0 && $0.latestValue == nil && $0.progress == 0 })
        #expect(BiomarkerScreen.render(off)[1] == "Glucose monitor is turned off")
    }

    @Test func todayIsTheUsersLocalDayNotUTCs() throws {
        let world = FactWorld(events: try FactScreenWorlds.glucose())
        // 2010-03-26T02:00Z is 22:00 EDT on the 25th in New York: the gauge still counts the 25th, from local
        // midnight (04:00Z): 264 readings, the last at 01:56Z (python3, zoneinfo). In UTC it is already the
        // 26th, with 24 readings so far; that reset at 20:00 New York time was the bug.
        var p = Self.params(now: "2010-03-26T02:00:00Z")
        p.timeZone = "America/New_York"
        let ny = try BiomarkerScreen.build(world, p)
        #expect(ny.date == "2010-03-25" && ny.timeZone == "America/New_York")
        #expect(ny.biomarkers[0].readingCount == 264 && ny.biomarkers[0].latestTime == "2010-03-26T01:56:00Z")
        let utc = try BiomarkerScreen.build(world, Self.params(now: "2010-03-26T02:00:00Z"))
        #expect(utc.date == "2010-03-26" && utc.timeZone == "UTC" && utc.biomarkers[0].readingCount == 24)
        #expect(BiomarkerScreen.render(ny)[0] == "Biomarkers for me on 2010-03-25 (America/New_York)")
        // A zone the database does not have is UTC, and the model says so (not an error: an empty screen
        // never is; `breeze screen --tz` refuses the name itself).
        p.timeZone = "America/Nowhere"
        let unknown = try BiomarkerScreen.build(world, p)
        #expect(unknown.timeZone == "UTC" && unknown.date == "2010-03-26")
    }
}
