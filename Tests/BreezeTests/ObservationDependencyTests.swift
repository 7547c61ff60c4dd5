import Testing
import Foundation
import Breeze
import BreezeTestSupport
import BreezeStore
@preconcurrency import Glibc

/// Issue 30, "one slow screen delays every other": an observed value is recomputed only when a commit can
/// change it. Each screen declares the parts of the user's state it reads (`Screen.userAspects`); the rest of
/// what it reads (sensors, a station's days, a user's readings) is recorded as it reads.
struct ObservationDependencyTests {
    /// Every screen's declaration holds on the real fixtures: an edit of a part of the user's state that a
    /// screen does not declare leaves its model exactly as it was (and the edits do change the screens that
    /// read them, so the check is not empty).
    @Test(.timeLimit(.minutes(10)))
    func aScreenDoesNotChangeWithAnEditOfAPartItDoesNotDeclare() throws {
        let dir = TempDir()
        // The clock at Troy's week, so a test alert requested now is one the alerts screen shows.
        var o = Replica.Options()
        o.wallClock = { UInt64(AppFixture.troyNow - 600) * 1000 }
        let f = try AppFixture(dir, options: o)
        defer { f.replica.close() }
        let r = f.replica
        let screens = f.screens()
        let edits: [(UserState.Aspects, String, () throws -> Void)] = [
            (.favourites, "star", { _ = try r.addFavourite("87173") }),
            (.watched, "watch", { _ = try r.addWatch("87173") }),
            (.alertSettings, "alert settings", { _ = try r.setAlerts(category: .unhealthy, onClear: .silent, enabled: false) }),
            (.unit, "unit", { _ = try r.setUnit(.fahrenheit) }),
            (.biomarkerTargets, "target", { _ = try r.setBiomarkerTarget(BiomarkerTarget(readingType: "Blood Glucose", minReading: 1, maxReading: 3, icon: "drop")) }),
            (.testAlerts, "test alert", { _ = try r.requestTestAlert(sensor: "87173") }),
            (.deliveredAlerts, "delivered", { _ = try r.markAlertDelivered("purpleair:87173|2023-10-25T12:00:00Z|fired") }),
            (.sources, "source off", { _ = try r.setSource("purpleair", enabled: false) }),
        ]
        var changedSomewhere: Set<String> = []
        for (aspect, what, edit) in edits {
            let before = try screens.map { try $0.build(r) }
            try edit()
            for (i, s) in screens.enumerated() {
                let after = try s.build(r)
                if s.aspects.isDisjoint(with: aspect) {
                    #expect(after == before[i], "screen \(s.name) changed with a \(what) edit it does not declare")
                } else if after != before[i] {
                    changedSomewhere.insert(what)
                }
            }
        }
        // Each edit changed some screen that declares it (what makes the declarations worth checking).
        #expect(changedSomewhere == ["star", "watch", "alert settings", "unit", "target", "test alert", "source off"],
                "\(changedSomewhere.sorted())")
    }

    /// With the climate, biomarker and sheet observed, a star recomputes the sheet and not the other two;
    /// a change of unit recomputes the climate chart; a station's new day recomputes it; another station's
    /// day, and a reading of another sensor, do not.
    @Test(.timeLimit(.minutes(10)))
    func aCommitRecomputesOnlyTheValuesItCanChange() throws {
        let dir = TempDir()
        let f = try AppFixture(dir)
        defer { f.replica.close() }
        let r = f.replica
        let climateRuns = Counter(), biomarkerRuns = Counter(), sheetRuns = Counter()
        // By station: a chart chosen by position reads every station (a new one may be nearer), so any
        // temperature recomputes it.
        let climateP = r.parameters(now: 1_593_864_000, sensor: AppFixture.clemson)
        let glucoseP = { var p = r.parameters(now: 1_269_518_400); p.timeZone = "America/New_York"; return p }()
        let sheetP = r.parameters(now: AppFixture.troyNow, sensor: "87173")
        let climate = Collected(r.observe { s -> ClimateScreen.Model in climateRuns.add(); return try s.screen(ClimateScreen.self, climateP) })
        let biomarker = Collected(r.observe { s -> BiomarkerScreen.Model in biomarkerRuns.add(); return try s.screen(BiomarkerScreen.self, glucoseP) })
        let sheet = Collected(r.observe { s -> SheetScreen.Model in sheetRuns.add(); return try s.screen(SheetScreen.self, sheetP) })
        defer { climate.cancel(); biomarker.cancel(); sheet.cancel() }
        #expect(climate.wait(count: 1).first?.status == "ok")
        #expect(biomarker.wait(count: 1).first?.biomarkers.first?.readingCount ?? 0 > 0)
        #expect(sheet.wait(count: 1).first?.isFavourite == false)
        let (c0, b0) = (climateRuns.value, biomarkerRuns.value)

        _ = try r.addFavourite("87173")
        #expect(sheet.wait { $0.isFavourite })
        _ = try r.removeFavourite("87173")
        #expect(sheet.wait(count: 3).last?.isFavourite == false)
        #expect(climateRuns.value == c0 && biomarkerRuns.value == b0, "a star recomputed the climate or biomarker screen")

        // A unit change can change the climate chart (and not the biomarker gauges).
        _ = try r.setUnit(.fahrenheit)
        #expect(climate.wait { $0.unit == "°F" })
        #expect(biomarkerRuns.value == b0)

        // A day of another station: not recomputed; a day of Clemson's (July 4, 2020, the reference day): recomputed.
        let s0 = sheetRuns.value, c1 = climateRuns.value
        var other = ImportOptions()
        other.station = "GHCND:ELSEWHERE"
        other.unit = .celsius
        other.at = (40.0, -100.0)
        _ = try r.importData(Array("date,tmax,tmin\n2020-07-04,30.0,20.0\n".utf8), name: "elsewhere.csv", format: "daily-temperature", options: other)
        // A reading of sensor 149970 does not recompute the sheet of 87173.
        _ = try r.importData(Array("id,time_stamp,pm2.5_atm_a,pm2.5_atm_b\n149970,1698235000,80.0,80.0\n".utf8), name: "other-sensor.csv", format: "purpleair-csv")
        var clemson = ImportOptions()
        clemson.station = AppFixture.clemson
        clemson.unit = .celsius
        clemson.at = (34.68, -82.82)
        let before = climate.all.count
        _ = try r.importData(Array("date,tmax,tmin\n2020-07-04,45.0,20.0\n".utf8), name: "clemson-hot.csv", format: "daily-temperature", options: clemson)
        #expect(climate.wait(count: before + 1).count == before + 1, "Clemson's new day did not recompute the chart")
        #expect(climateRuns.value == c1 + 1, "climate computed \(climateRuns.value - c1) times for one relevant commit among three")
        #expect(sheetRuns.value == s0, "the sheet of 87173 was recomputed for another sensor's reading or a temperature")
        #expect(biomarkerRuns.value == b0)
    }

    /// Names holding the key separator (`|`) stay apart: a reading type `a|b` beside `a`, a station
    /// `X|Y` beside `X`, each counted and charted on its own.
    @Test func namesHoldingTheKeySeparatorStayApart() throws {
        let dir = TempDir()
        let r = try Replica(path: dir.file("a.db"))
        defer { r.close() }
        let day: Int64 = 1_700_000_000
        _ = try r.logBiomarkerReading(BiomarkerReading(readingType: "a", time: day, value: 1, unit: "u"))
        _ = try r.logBiomarkerReading(BiomarkerReading(readingType: "a|b", time: day + 60, value: 2, unit: "u"))
        _ = try r.logBiomarkerReading(BiomarkerReading(readingType: "a|b", time: day + 120, value: 3, unit: "u"))
        // A `|` followed by a combining mark is one character that is not `|`: escaped all the same.
        _ = try r.logBiomarkerReading(BiomarkerReading(readingType: "a|\u{301}", time: day + 180, value: 4, unit: "u"))
        let m = try r.screen(BiomarkerScreen.self, r.parameters(now: day + 3600))
        let counts = Dictionary(uniqueKeysWithValues: m.biomarkers.map { ($0.readingType, $0.readingCount) })
        #expect(counts == ["a": 1, "a|b": 2, "a|\u{301}": 1], "\(counts)")
        #expect(m.biomarkers.first { $0.readingType == "a|b" }?.latestValue == 3)

        for (station, c) in [("X", 10.0), ("X|Y", 30.0)] {
            var o = ImportOptions()
            o.station = station
            o.unit = .celsius
            o.at = (10, 10)
            var rows = "date,tmax,tmin\n"
            for year in stride(from: 1980, through: 2020, by: 10) {
                for d in 1...14 { rows += "\(year)-07-\(d < 10 ? "0" : "")\(d),\(c),1\n" }
            }
            _ = try r.importData(Array(rows.utf8), name: "\(station).csv", format: "daily-temperature", options: o)
        }
        for (station, c) in [("X", 10.0), ("X|Y", 30.0)] {
            var p = r.parameters(now: 1_594_400_000, sensor: station)
            p.date = "2020-07-10"
            let chart = try r.screen(ClimateScreen.self, p)
            #expect(chart.status == "ok" && chart.data.map(\.temperature).allSatisfy { $0 == c } && chart.data.count == 5,
                    "\(station): \(chart.status) \(chart.data.map(\.temperature))")
        }
        // A hostile day whose date sorts after every real one (U+10FFFF) and many unparseable ones: the stations
        // are still listed once each and the charts still end (no search of the keys goes round for ever).
        let log = try EventLog.open(at: dir.file("a.db"))
        for i in 0..<70 {
            _ = try log.append(.dailyTemperature(DailyTemperature(station: "X", date: "\u{10FFFF}\(i)", maxC: 99, minC: 1, latitude: 10, longitude: 10)),
                               to: .public)
        }
        log.close()
        var byPosition = r.parameters(now: 1_594_400_000, at: (10, 10))
        byPosition.date = "2020-07-10"
        let near = try r.screen(ClimateScreen.self, byPosition)
        #expect(near.station == "X" && near.status == "ok", "\(near.station ?? "none") \(near.status)")
        var x = r.parameters(now: 1_594_400_000, sensor: "X")
        x.date = "2020-07-10"
        #expect(try r.screen(ClimateScreen.self, x).data.map(\.temperature).allSatisfy { $0 == 10 })
    }
}

/// A thread-safe count.
final class Counter: @unchecked Sendable {
    // `@unchecked Sendable`: `n` is guarded by `lock`.
    private let lock = TestLock()
    private var n = 0
    func add() { lock.run { n += 1 } }
    var value: Int { lock.run { n } }
}
