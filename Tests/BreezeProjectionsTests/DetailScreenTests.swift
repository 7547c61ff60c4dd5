import Testing
import BreezeCore
import BreezeAirQuality
import BreezeImport
@testable import BreezeProjections

/// Worlds for the air-quality screen tests (detail, sheet, map, nearby, widgets), built from the real files
/// through the real importers.
///
/// Expected values in these tests were computed with python3 straight from the raw CSV files, following
/// `shared/docs/domain.md`: A/B QA (3.3), hourly means with 90 % completeness, EPA 2021 correction
/// `0.524 PA - 0.0862 RH + 5.75` with PA and RH the hourly means (3.2), NowCast (2), truncation to 0.1 and the
/// 2024 AQI table (1.1, 1.2), housing temperature - 8 F and humidity + 4 % (3.1), haversine with R = 6371 km
/// (7). They are not read back from the code under test.
enum AQScreenFixtures {
    /// 2023-10-27T22:27:30Z: the last complete hour is 21:00-22:00; the newest Troy readings are at 22:20
    /// (450 s old).
    static let troyNow: Int64 = 1_698_445_650
    /// The last Troy readings (both registered sensors): 2023-10-30T00:10:00Z.
    static let troyLastReading: Int64 = 1_698_624_600
    /// 2023-10-27T19:00Z, the hour of sensor 149970 with the 30-minute gap: readings at 19:00, 19:30, 19:40,
    /// 19:50 only, 4 of 6 expected (< 90 %), so the hour has no value of its own (its NowCast, carried by
    /// 18:00 and 17:00, is valid: AQI 39).
    static let gapHour = "2023-10-27T19:00:00Z"
    /// A place in Troy: 1.45 km from 87173 (North Central Troy #1), 2.38 km from 149970 (South Troy #2).
    static let troyUser = (latitude: 42.7300, longitude: -73.6900)

    /// The Troy PurpleAir sensors (87173, 149970 registered with locations; 156171 and 166653 have readings
    /// but no registration) plus one extra registration of 166653 WITHOUT a location.
    static func troy() throws -> [Event] {
        let unlocated = Event(stream: .public, id: EventID(origin: Origin(replica: ReplicaID(rawValue: 0xA11), epoch: 1), counter: 1),
                              hlc: HLC(physicalMillis: 500, logical: 0),
                              body: .sensorRegistered(SensorRegistration(sensor: "166653", name: "PurpleAir 166653", source: "purpleair",
                                                                         kind: "purpleair", latitude: nil, longitude: nil, timeZone: nil)))
        return try WorldSupport.troy() + [unlocated]
    }

    /// The AirNow API file of the Burdens Creek monitor (370630099), August-September 2019, through
    /// `AirNowAPIImporter` (11 hours with -999 raw values: 2019-08-12 07:00, 08-19 12:00-15:00, ...).
    static func monitor() throws -> [Event] {
        let parsed = try AirNowAPIImporter.parse(
            WorldSupport.bytes("sensortoolkit_AirNow_raw_370630099_PM25_B190801_E190902", "csv"),
            file: "airnow.csv", options: ImportOptions())
        return WorldSupport.events(parsed.records, origin: Origin(replica: ReplicaID(rawValue: 0xA12), epoch: 1))
    }

    /// Events of one user's stream, in order.
    static func user(_ id: String, replica: UInt64, _ bodies: [EventBody]) -> [Event] {
        bodies.enumerated().map { i, b in
            Event(stream: .user(id), id: EventID(origin: Origin(replica: ReplicaID(rawValue: replica), epoch: 1), counter: UInt64(i + 1)),
                  hlc: HLC(physicalMillis: 5_000_000 + UInt64(i), logical: 0), body: b)
        }
    }

    /// The users of these tests: `ana` (defaults: EPA 2021 correction, Celsius), `bo` (no correction,
    /// Fahrenheit, favourites 87173 and 149970), `cy` (PurpleAir disabled, favourite airnow:370630099).
    static func users() -> [Event] {
        user("bo", replica: 0xB0, [.sourceCorrect(source: "purpleair", correction: "none"), .unitSet(.fahrenheit),
                                   .favouriteAdd(sensor: "87173"), .favouriteAdd(sensor: "149970")])
            + user("cy", replica: 0xC0, [.sourceDisable(source: "purpleair"), .favouriteAdd(sensor: "airnow:370630099")])
    }

    /// Troy, the monitor and the users.
    static func events() throws -> [Event] { try troy() + monitor() + users() }

    /// The world of `events()`, built once for all tests (read-only afterwards).
    static func world() throws -> FactWorld {
        guard let w = worlds?.inOrder else { throw ScreenError("AQScreenFixtures: fixtures did not load") }
        return w
    }

    /// The same events in another order: user events first, then the public events reversed.
    static func shuffledWorld() throws -> FactWorld {
        guard let w = worlds?.shuffled else { throw ScreenError("AQScreenFixtures: fixtures did not load") }
        return w
    }

    /// Both worlds, built on first use; nil if a fixture fails to load (every test then throws).
    nonisolated(unsafe) private static let worlds: (inOrder: FactWorld, shuffled: FactWorld)? = {
        guard let all = try? events() else { return nil }
        let users = all.filter { $0.stream.userID != nil }, rest = all.filter { $0.stream.userID == nil }
        return (FactWorld(events: all), FactWorld(events: users + rest.reversed()))
    }()

    static func params(_ user: String, _ now: Int64, sensor: String? = nil,
                       at: (latitude: Double, longitude: Double)? = nil) -> ScreenParameters {
        var p = ScreenParameters(user: user, now: now)
        p.sensor = sensor
        p.at = at
        return p
    }

    /// Unix seconds of an ISO UTC time `YYYY-MM-DDTHH:MM`.
    static func t(_ s: String) -> Int64 {
        let p = s.split(whereSeparator: { "-T:".contains($0) }).map { Int64($0)! }
        var days: Int64 = 0
        for y in 1970..<p[0] { days += (y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)) ? 366 : 365 }
        let leap = p[0] % 4 == 0 && (p[0] % 100 != 0 || p[0] % 400 == 0)
        let months: [Int64] = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        for m in 0..<Int(p[1] - 1) { days += months[m] }
        days += p[2] - 1
        return days * 86400 + p[3] * 3600 + p[4] * 60
    }
}

struct DetailScreenTests {
    typealias F = AQScreenFixtures

    @Test func troyDetailFollowsTheEPAPipelineWithAMissingHour() throws {
        let m = try DetailScreen.build(try F.world(), F.params("ana", F.troyNow, sensor: "149970"))
        #expect(m.sensorId == "149970" && m.source == "purpleair" && m.name == "South Troy #2" && m.correction == "epa-2021")
        // NowCast at 21:00 (python3): 6.68 ug/m3 -> truncated 6.6 -> AQI 37, Good.
        #expect(m.aqi == 37 && m.category == "good" && m.colour == "#00E400" && !m.beyondIndex)
        #expect(m.scalePosition == 37.0 / 500)
        #expect(!m.isStale && m.freshness == "fresh" && m.updated?.time == "2023-10-27T22:20:00Z" && m.updated?.seconds == 450)
        // 24 complete hours, 2023-10-26T22:00 ... 2023-10-27T21:00, NowCast AQI per hour (python3).
        #expect(m.hourly.count == 24)
        #expect(m.hourly.first?.hour == "2023-10-26T22:00:00Z" && m.hourly.last?.hour == "2023-10-27T21:00:00Z")
        let expected: [Int?] = [44, 46, 47, 48, 50, 52, 57, 56, 55, 55, 54, 53, 54, 53, 52, 53, 51, 47, 46, 42, 39, 39, 37, 37]
        #expect(m.hourly.map(\.aqi) == expected)
        let gap = try #require(m.hourly.first { $0.hour == F.gapHour })
        // The gap hour shows its NowCast (python3: 39) and says it has no value of its own, never 0.
        #expect(!gap.missing && !gap.hasOwnValue && gap.aqi == 39 && gap.category == "good" && gap.colour == "#00E400")
        #expect(m.hourly.filter { !$0.hasOwnValue }.map(\.hour) == [F.gapHour] && !m.hourly.contains(where: \.missing))
        #expect(m.hourly.last?.aqi == m.aqi)   // the headline and the last bar agree
        #expect(m.hourly[5].category == "moderate" && m.hourly[5].colour == "#FFFF00")
        // Advice for Good (domain.md 1.5).
        #expect(m.advice?.sensitiveGroups == "It's a great day to be active outside.")
        #expect(m.advice?.everyone == "It's a great day to be active outside.")
        // Measures at 21:00 against 18:00 (python3): temperature 24.72 C vs 27.56 falling; humidity
        // 40.73 % vs 35.97 rising; PM2.5 6.5586 vs 6.6411 steady.
        #expect(m.temperature == DetailScreen.Measure(value: 24.7, unit: "°C", trend: "falling"))
        #expect(m.humidity == DetailScreen.Measure(value: 40.7, unit: "%", trend: "rising"))
        #expect(m.pm25 == DetailScreen.Measure(value: 6.6, unit: "µg/m³", trend: "steady"))
    }

    @Test func aSmokeSpikeShowsModerateAdviceAndTheCorrectionSwitchChangesTheAQI() throws {
        let world = try F.world()
        let epa = try DetailScreen.build(world, F.params("ana", F.troyNow, sensor: "purpleair:87173"))
        let raw = try DetailScreen.build(world, F.params("bo", F.troyNow, sensor: "purpleair:87173"))
        // 87173 at 21:00 (python3): hourly PA 102.62, RH 39.53 -> EPA 56.12; NowCast 31.57 -> AQI 93
        // Moderate; uncorrected NowCast 55.38 -> AQI 150 Unhealthy for Sensitive Groups.
        #expect(epa.aqi == 93 && epa.category == "moderate" && epa.correction == "epa-2021")
        #expect(raw.aqi == 150 && raw.category == "usg" && raw.colour == "#FF7E00" && raw.correction == "none")
        #expect(epa.pm25.value == 56.1 && raw.pm25.value == 102.6)
        #expect(epa.advice?.sensitiveAudience == "Unusually sensitive people")
        #expect(epa.advice?.everyone == "It's a good day to be active outside.")
        #expect(raw.advice?.everyone == nil && raw.advice?.notes.count == 2)
        #expect(raw.advice?.levelOfConcern == "Members of sensitive groups may experience health effects. The general public is not likely to be affected.")
    }

    @Test func aFahrenheitUserSeesFahrenheitWithTheSameTrend() throws {
        let world = try F.world()
        let c = try DetailScreen.build(world, F.params("ana", F.troyNow, sensor: "87173"))
        let f = try DetailScreen.build(world, F.params("bo", F.troyNow, sensor: "87173"))
        // 24.0556 C (python3) -> 75.3 F.
        #expect(c.temperature == DetailScreen.Measure(value: 24.1, unit: "°C", trend: "falling"))
        #expect(f.temperature == DetailScreen.Measure(value: 75.3, unit: "°F", trend: "falling"))
        #expect(f.humidity == c.humidity)
    }

    @Test func staleAfterSixtyMinutesForPurpleAir() throws {
        let world = try F.world()
        let fresh = try DetailScreen.build(world, F.params("ana", F.troyLastReading + 3600, sensor: "149970"))
        let stale = try DetailScreen.build(world, F.params("ana", F.troyLastReading + 3601, sensor: "149970"))
        #expect(!fresh.isStale && stale.isStale && stale.freshness == "stale")
        #expect(stale.updated?.time == "2023-10-30T00:10:00Z")
        let hidden = try DetailScreen.build(world, F.params("ana", F.troyLastReading + 7 * 86400 + 1, sensor: "149970"))
        #expect(hidden.isStale && hidden.freshness == "hidden" && hidden.aqi == nil && hidden.advice == nil)
        #expect(hidden.hourly.allSatisfy { $0.missing && $0.aqi == nil })
    }

    @Test func monitorMissingHoursAndAnInvalidNowCast() throws {
        let world = try F.world()
        // Burdens Creek at 2019-08-19T16:30Z: raw values of 12:00-15:00 are -999 (missing). The hours have no
        // value and the NowCast of 15:00 is invalid (none of 13-15 valid), so there is no AQI now.
        let m = try DetailScreen.build(world, F.params("ana", F.t("2019-08-19T16:30"), sensor: "370630099"))
        #expect(m.name == "Burdens Creek" && m.source == "airnow" && m.correction == "none")
        #expect(m.aqi == nil && m.category == nil && m.scalePosition == nil && m.advice == nil)
        // 12:00 has no value of its own but 11:00 and 10:00 carry its NowCast (52, python3): the bar shows it as
        // an estimate; 13-15:00 have fewer than 2 of their 3 latest hours: missing.
        #expect(m.hourly.suffix(3).allSatisfy { $0.missing && $0.aqi == nil && !$0.hasOwnValue })
        #expect(m.hourly[m.hourly.count - 4] == DetailScreen.HourBar(hour: "2019-08-19T12:00:00Z", aqi: 52, category: "moderate",
                                                                     colour: "#FFFF00", hasOwnValue: false, missing: false))
        // 11:00 (python3): NowCast of the raw hourly values 9.95 -> 9.9 -> AQI 52.
        #expect(m.hourly[m.hourly.count - 5] == DetailScreen.HourBar(hour: "2019-08-19T11:00:00Z", aqi: 52, category: "moderate",
                                                                     colour: "#FFFF00", hasOwnValue: true, missing: false))
        #expect(m.hourly.first?.aqi == 36)
        // PM2.5: newest hourly value 10.0 (11:00) against 10.4 (08:00): steady. No temperature or humidity.
        #expect(m.pm25 == DetailScreen.Measure(value: 10.0, unit: "µg/m³", trend: "steady"))
        #expect(m.temperature.value == nil && m.temperature.trend == nil && m.humidity.value == nil)
        // At 20:30 the 16:00 hour has a value but only 1 of 16, 15, 14 is valid: still no NowCast, missing.
        let later = try DetailScreen.build(world, F.params("ana", F.t("2019-08-19T20:30"), sensor: "370630099"))
        #expect(later.hourly.suffix(4).map(\.aqi) == [nil, 53, 53, 52])
        #expect(later.hourly[later.hourly.count - 4].missing && later.hourly[later.hourly.count - 4].hasOwnValue && later.aqi == 52)
        // The headline and the last bar agree.
        #expect(later.hourly.last?.aqi == later.aqi)
        #expect(later.pm25 == DetailScreen.Measure(value: 8.2, unit: "µg/m³", trend: "falling"))
    }

    @Test func monitorsAreStaleThreeHoursAfterTheirHourEnds() throws {
        let world = try F.world()
        // The last hour is 2019-09-30T23:00 (hour-beginning), so it ends at 2019-10-01T00:00.
        let fresh = try DetailScreen.build(world, F.params("ana", F.t("2019-10-01T03:00"), sensor: "370630099"))
        let stale = try DetailScreen.build(world, F.params("ana", F.t("2019-10-01T03:00") + 1, sensor: "370630099"))
        #expect(!fresh.isStale && stale.isStale)
        #expect(stale.updated?.time == "2019-10-01T00:00:00Z")   // the hour 23:00-24:00 ended at midnight
        // At 23:30 that hour is still in progress: `updated` names the last complete hour's end, 23:00, with its
        // age (not 24:00, "just now"), on the sheet and the detail alike.
        let during = try DetailScreen.build(world, F.params("ana", F.t("2019-09-30T23:30"), sensor: "370630099"))
        #expect(during.updated == Updated(time: "2019-09-30T23:00:00Z", seconds: 1800, text: "30 min ago"))
        let sheet = try SheetScreen.build(world, F.params("ana", F.t("2019-09-30T23:30"), sensor: "370630099"))
        #expect(sheet.updated == during.updated)
        // Once it has ended, the hour's own end.
        let after = try DetailScreen.build(world, F.params("ana", F.t("2019-10-01T00:10"), sensor: "370630099"))
        #expect(after.updated == Updated(time: "2019-10-01T00:00:00Z", seconds: 600, text: "10 min ago"))
    }

    @Test func parametersAreChecked() throws {
        let world = try F.world()
        #expect(throws: ScreenError.self) { try DetailScreen.build(world, F.params("ana", F.troyNow)) }
        #expect(throws: ScreenError.self) { try DetailScreen.build(world, F.params("ana", F.troyNow, sensor: "nope")) }
    }

    @Test func rebuildingFromEventsInAnotherOrderIsByteIdentical() throws {
        let a = try F.world(), b = try F.shuffledWorld()
        for (user, sensor) in [("ana", "149970"), ("bo", "87173"), ("cy", "370630099")] {
            let p = F.params(user, F.troyNow, sensor: sensor)
            #expect(try Screens.json(DetailScreen.build(a, p)) == Screens.json(DetailScreen.build(b, p)))
        }
        let lines = DetailScreen.render(try DetailScreen.build(a, F.params("ana", F.troyNow, sensor: "149970")))
        #expect(lines.contains { $0.hasPrefix("10-27 19:00  39 ░") && $0.hasSuffix("(no value of its own: NowCast)") })
        #expect(lines.contains { $0.hasPrefix("10-27 21:00  37 ██████████████") })
    }
}
