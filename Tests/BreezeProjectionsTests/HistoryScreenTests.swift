import Testing
import BreezeCore
import BreezeAirQuality
import BreezeImport
@testable import BreezeProjections

/// History on real data. Every expected number was computed independently with python3 from the raw CSV files
/// (the fixtures), following shared/docs/domain.md: PurpleAir A/B QA (3.3), hourly mean with the 90 % rule,
/// EPA 2021 correction (3.2), NowCast (2) on the 12 hours ending at each hour, truncation to 0.1 and the 2024
/// AQI table (1.1, 1.2), then the maximum per local day on the wall clock of the sensor's zone (python3's
/// `zoneinfo`, America/New_York: EDT, UTC-04:00, in these weeks). For the AirNow file the hourly value is
/// `Param_Value` (the raw hourly concentration; -999 is missing). The same script with the fixed zone
/// `Etc/GMT+5` reproduces the local-standard-time figures an earlier version of this screen showed.
struct HistoryScreenTests {
    /// 2023-10-29T18:20:00Z: 14:20 EDT in Troy; the last complete hour is 17:00-18:00 UTC.
    static let troyNow: Int64 = 1_698_602_400 + 1200
    /// 2023-10-30T02:00:00Z: after the Troy archive ends (its last reading is 00:10 UTC).
    static let troyLate: Int64 = 1_698_631_200
    /// 2019-08-23T17:30:00Z at Burdens Creek NC.
    static let airNowNow: Int64 = 1_566_581_400

    static func params(_ sensor: String?, _ now: Int64, user: String = "ana") -> ScreenParameters {
        var p = ScreenParameters(user: user, now: now)
        p.sensor = sensor
        return p
    }

    @Test func theTimesUsedAreTheIntendedOnes() {
        #expect(LocalTime.iso(Self.troyNow) == "2023-10-29T18:20:00Z")
        #expect(LocalTime.iso(Self.troyLate) == "2023-10-30T02:00:00Z")
        #expect(LocalTime.iso(Self.airNowNow) == "2019-08-23T17:30:00Z")
    }

    @Test func troyDailyHighsThisWeekAndLastWeek() throws {
        let world = FactWorld(events: try WorldSupport.troy())
        let m = try HistoryScreen.build(world, Self.params("87173", Self.troyNow))
        #expect(m.sensorId == "87173" && m.source == "purpleair" && m.name == "North Central Troy #1")
        #expect(m.timeZone == "America/New_York" && m.utcOffset == "-04:00" && m.timeZoneKnown)   // EDT
        #expect(m.correction == "epa-2021" && !m.isStale)
        // python3: local days 2023-10-23..29 and 2023-10-16..22.
        #expect(m.thisWeek.map(\.date) == ["2023-10-23", "2023-10-24", "2023-10-25", "2023-10-26", "2023-10-27",
                                           "2023-10-28", "2023-10-29"])
        #expect(m.thisWeek.map(\.weekday) == ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"])
        #expect(m.lastWeek.map(\.date).first == "2023-10-16" && m.lastWeek.map(\.weekday) == m.thisWeek.map(\.weekday))
        #expect(m.thisWeek.map(\.aqi) == [82, 26, 46, 54, 93, 53, 14])
        #expect(m.thisWeek.map(\.hours) == [24, 24, 24, 24, 24, 24, 14])   // today: 00:00..13:00 EDT complete
        // The archive starts 2023-10-21T18:40Z: no data before, and the first local day has 8 NowCast hours.
        #expect(m.lastWeek.map(\.aqi) == [nil, nil, nil, nil, nil, 12, 12])
        #expect(m.lastWeek.map(\.hours) == [0, 0, 0, 0, 0, 8, 24])
        #expect(m.thisWeek.map(\.category) == ["moderate", "good", "good", "moderate", "moderate", "moderate", "good"])
        #expect(m.thisWeek.map(\.colour) == ["#FFFF00", "#00E400", "#00E400", "#FFFF00", "#FFFF00", "#FFFF00", "#00E400"])
        #expect(m.lastWeek[0].category == nil && m.lastWeek[0].colour == nil)
        // Today's hourly PM2.5 (EPA-corrected hourly means, rounded to 0.1), 00:00..13:00 EDT = 04Z..17Z.
        #expect(m.today.map(\.localHour) == Array(0...13))
        #expect(m.today.first?.hour == "2023-10-29T04:00:00Z" && m.today.last?.hour == "2023-10-29T17:00:00Z")
        #expect(m.today.first?.localTime == "2023-10-29T00:00:00-04:00")
        let expected: [Double] = [2.4, 2.1, 2.1, 2.2, 2.2, 2.6, 2.2, 1.8, 1.9, 1.5, 1.4, 1.4, 2.7, 3.2]
        #expect(m.today.map { $0.pm25 ?? -1 } == expected)

        let other = try HistoryScreen.build(world, Self.params("purpleair:149970", Self.troyNow))
        #expect(other.thisWeek.map(\.aqi) == [28, 23, 41, 52, 57, 44, 14])
        #expect(other.lastWeek.map(\.aqi) == [nil, nil, nil, nil, nil, nil, 13])
        #expect(other.lastWeek.last?.hours == 11)
        #expect(other.today.map { $0.pm25 ?? -1 } == [2.2, 2.0, 2.9, 2.2, 2.0, 2.1, 2.8, 2.5, 2.7, 2.4, 1.6, 2.1, 1.4, 1.7])
    }

    @Test func anHourAt0400UTCBelongsToTheDayTheClockShows() throws {
        let world = FactWorld(events: try WorldSupport.troy())
        let m = try HistoryScreen.build(world, Self.params("87173", Self.troyNow))
        // 2023-10-27T04:00Z is 00:00 EDT on the 27th on New York clocks (23:00 the day before in local
        // standard time). Its NowCast (57, python3) belongs to Friday the 27th; Thursday the 26th's high is
        // then 54 (57 if days were cut at UTC-05:00).
        let sensor = try #require(try world.sensors().first { $0.sensor == "87173" })
        let q = try SensorAirQuality(world: world, sensor: sensor, user: UserState(), now: Self.troyNow, hours: 14 * 24)
        let h04 = try #require(q.hours.firstIndex { $0.hour == 1_698_379_200 })
        #expect(LocalTime.iso(q.hours[h04].hour) == "2023-10-27T04:00:00Z")
        #expect(q.nowCast(at: h04)?.aqi == 57)
        #expect(m.thisWeek[3].date == "2023-10-26" && m.thisWeek[3].aqi == 54)
        let ny = LocalTime(timeZone: "America/New_York")
        #expect(ny.date(of: 1_698_379_200 - 1) == "2023-10-26" && ny.date(of: 1_698_379_200) == "2023-10-27")
        #expect(ny.localHour(of: 1_698_379_200) == 0 && ny.offsetText(at: 1_698_379_200) == "-04:00")
    }

    @Test func aUsersCorrectionChangesTheHighs() throws {
        var events = try WorldSupport.troy()
        var bo = HistAlertsUser("bo", replica: 0xB0)
        events.append(bo.event(.sourceCorrect(source: "purpleair", correction: "none")))
        let world = FactWorld(events: events)
        let ana = try HistoryScreen.build(world, Self.params("87173", Self.troyNow, user: "ana"))
        let raw = try HistoryScreen.build(world, Self.params("87173", Self.troyNow, user: "bo"))
        #expect(raw.correction == "none" && ana.correction == "epa-2021")
        // python3 with the uncorrected CF=1 A/B mean:
        #expect(raw.thisWeek.map(\.aqi) == [128, 33, 59, 69, 150, 66, 23])
        #expect(raw.thisWeek[0].category == "usg" && raw.thisWeek[0].colour == "#FF7E00")
        #expect(ana.thisWeek.map(\.aqi) == [82, 26, 46, 54, 93, 53, 14])
    }

    @Test func missingHoursStayMissingAndAnEndedArchiveIsStale() throws {
        let world = FactWorld(events: try WorldSupport.troy())
        let m = try HistoryScreen.build(world, Self.params("87173", Self.troyLate))
        #expect(m.isStale)   // newest reading 00:10Z, 110 minutes before now: PurpleAir is stale after 60
        // Today (2023-10-29 EDT) runs 04Z..01Z; the 00Z hour has 2 of 6 readings and 01Z none: both missing.
        #expect(m.today.count == 22 && m.today.last?.hour == "2023-10-30T01:00:00Z" && m.today.last?.localHour == 21)
        #expect(m.today.suffix(2).allSatisfy { $0.pm25 == nil })
        #expect(m.today[14].pm25 == 8.3 && m.today[14].localHour == 14)
        // python3: high 30; an hour counts when it has its own value and a valid NowCast.
        #expect(m.thisWeek.last?.aqi == 30)
        // 22 hours today, the last two without readings: 20 hours carry the day (a gap is not filled by NowCast).
        #expect(m.thisWeek.last?.hours == 20)
        let json = try Screens.json(m)
        // A missing hour has no pm25 key.
        #expect(json.contains(#""hour":"2023-10-30T01:00:00Z","localHour":21,"localTime":"2023-10-29T21:00:00-04:00"}"#))
        #expect(json.contains(#"{"date":"2023-10-16","hours":0,"weekday":"#))     // a day without data: no aqi, category or colour
    }

    @Test func airNowMonitorInLocalStandardTimeOnceItsZoneIsRegistered() throws {
        let events = try Self.airNowEvents()
        // The AirNow file carries no zone: days fall back to UTC and the model says so.
        let utc = try HistoryScreen.build(FactWorld(events: events), Self.params("370630099", Self.airNowNow))
        #expect(utc.timeZone == "UTC" && !utc.timeZoneKnown && utc.utcOffset == "+00:00" && utc.correction == "none")
        #expect(utc.thisWeek.map(\.aqi) == [40, 44, 53, 47, 54, 54, 48])   // python3, UTC days
        // Hours with their own value and a valid NowCast (the 11 -999 hours of the file count as missing).
        #expect(utc.thisWeek.map(\.hours) == [24, 24, 19, 24, 23, 24, 13])
        #expect(utc.today.count == 17 && utc.today.map(\.localHour) == Array(0...16))

        let world = FactWorld(events: events + [try Self.newYorkRegistration(events)])
        let m = try HistoryScreen.build(world, Self.params("airnow:370630099", Self.airNowNow))
        #expect(m.timeZone == "America/New_York" && m.timeZoneKnown && m.name == "Burdens Creek" && !m.isStale)
        // python3, local (EDT) days 2019-08-17..23 and 2019-08-10..16.
        #expect(m.thisWeek.map(\.date) == ["2019-08-17", "2019-08-18", "2019-08-19", "2019-08-20", "2019-08-21",
                                           "2019-08-22", "2019-08-23"])
        #expect(m.thisWeek.map(\.weekday) == ["Sat", "Sun", "Mon", "Tue", "Wed", "Thu", "Fri"])
        #expect(m.thisWeek.map(\.aqi) == [40, 46, 53, 54, 51, 54, 48])
        #expect(m.lastWeek.map(\.aqi) == [57, 59, 53, 56, 52, 47, 55])
        // 2019-08-19 12-15Z have no value and 16Z no valid NowCast (2 of its 3 latest hours missing): 19 hours;
        // the 21st loses one -999 hour; the 23rd's 04-06Z are missing: 9 of its 13 complete hours.
        #expect(m.thisWeek.map(\.hours) == [24, 24, 19, 24, 23, 24, 9])
        #expect(m.today.map(\.hour).first == "2019-08-23T04:00:00Z" && m.today.count == 13)
        #expect(m.today.map(\.pm25) == [nil, nil, nil, 9.4, 8.3, 8.6, 8.9, 8.3, 8.2, 7.5, 5.7, 5.7, 6.4])
    }

    @Test func airNowLocalDayBoundary() throws {
        let events = try Self.airNowEvents()
        let world = FactWorld(events: events + [try Self.newYorkRegistration(events)])
        // 2019-09-01T12:00Z. The 2019-09-01T04:00Z hour (NowCast AQI 53, python3) is 00:00 EDT on Sunday the
        // 1st, so Saturday the 31st's high is 52 (53 with days cut at UTC-05:00), and today starts at 04Z.
        let m = try HistoryScreen.build(world, Self.params("370630099", 1_567_339_200))
        #expect(LocalTime.iso(1_567_339_200) == "2019-09-01T12:00:00Z")
        #expect(m.thisWeek[5].date == "2019-08-31" && m.thisWeek[5].weekday == "Sat" && m.thisWeek[5].aqi == 52)
        #expect(m.thisWeek[6].date == "2019-09-01" && m.thisWeek[6].aqi == 55 && m.thisWeek[6].hours == 8)
        #expect(m.today.first?.hour == "2019-09-01T04:00:00Z" && m.today.map(\.localHour) == Array(0...7))
    }

    @Test func missingOrUnknownSensorIsAClearError() throws {
        let world = FactWorld(events: try WorldSupport.troy())
        let e = #expect(throws: ScreenError.self) { try HistoryScreen.build(world, Self.params(nil, Self.troyNow)) }
        #expect(e?.description.contains("--sensor") == true)
        #expect(throws: ScreenError.self) { try HistoryScreen.build(world, Self.params("nosuch", Self.troyNow)) }
        #expect(throws: ScreenError.self) { try HistoryScreen.build(world, Self.params("airnow:87173", Self.troyNow)) }
    }

    @Test func renderingShowsBothWeeksSideBySide() throws {
        let world = FactWorld(events: try WorldSupport.troy())
        let lines = HistoryScreen.render(try HistoryScreen.build(world, Self.params("87173", Self.troyNow)))
        let fri = try #require(lines.first { $0.hasPrefix("Fri 2023-10-27") })
        #expect(fri.contains("  93 ██████████ ") && fri.contains("Fri 2023-10-20   -  no data"))
        #expect(lines.contains { $0.contains("13     3.2") })   // 13:00 EDT
        #expect(lines.allSatisfy { $0.last != " " })
    }

    @Test func buildsAreByteIdenticalWhateverTheEventOrder() throws {
        var events = try WorldSupport.troy()
        var bo = HistAlertsUser("bo", replica: 0xB0)
        events.append(bo.event(.sourceCorrect(source: "purpleair", correction: "lrapa")))
        let userFirst = events.filter { $0.stream != .public } + events.filter { $0.stream == .public }
        for user in ["ana", "bo"] {
            let a = try Screens.json(HistoryScreen.build(FactWorld(events: events), Self.params("87173", Self.troyNow, user: user)))
            let b = try Screens.json(HistoryScreen.build(FactWorld(events: userFirst), Self.params("87173", Self.troyNow, user: user)))
            let c = try Screens.json(HistoryScreen.build(FactWorld(events: events.reversed()), Self.params("87173", Self.troyNow, user: user)))
            #expect(a == b && a == c)
        }
    }

    @Test func localTimeFollowsTheZoneDatabaseWithDaylightSaving() {
        // Offsets, days and hours checked against python3's zoneinfo (the same tzdata).
        let ny = LocalTime(timeZone: "America/New_York")
        #expect(ny.isKnown && ny.offsetText(at: 1_698_602_400) == "-04:00" && ny.abbreviation(at: 1_698_602_400) == "EDT")
        #expect(ny.offsetText(at: 1_700_000_000) == "-05:00" && ny.abbreviation(at: 1_700_000_000) == "EST")   // 2023-11-14
        // 2023-11-05 (DST ends at 06:00Z) has 25 hours; 2023-03-12 (DST starts at 07:00Z) has 23.
        let nov5 = ny.day(of: 1_699_189_200)
        #expect(LocalTime.date(ofDay: nov5) == "2023-11-05" && ny.start(ofDay: nov5) == 1_699_156_800)
        #expect(ny.start(ofDay: nov5 + 1) - ny.start(ofDay: nov5) == 25 * 3600)
        #expect(ny.localHour(of: 1_699_160_400) == 1 && ny.localHour(of: 1_699_164_000) == 1)   // 01:00 twice
        let mar12 = ny.day(of: 1_678_615_200)
        #expect(LocalTime.date(ofDay: mar12) == "2023-03-12" && ny.start(ofDay: mar12 + 1) - ny.start(ofDay: mar12) == 23 * 3600)
        // Years past the file's last transition come from its footer rule: 2040-07-01T00:00Z is EDT, 2040-01-01
        // 05:00Z EST.
        #expect(ny.offsetText(at: 2_224_713_600) == "-04:00" && ny.offsetText(at: 2_209_006_800) == "-05:00")
        // Berlin: 2025-03-30 01:00Z to CEST; 2023-07-01T23:30Z is 01:30 on 2 July.
        let berlin = LocalTime(timeZone: "Europe/Berlin")
        #expect(berlin.offsetText(at: 1_743_296_399) == "+01:00" && berlin.offsetText(at: 1_743_296_400) == "+02:00")
        #expect(berlin.date(of: 1_688_254_200) == "2023-07-02" && berlin.localHour(of: 1_688_254_200) == 1)
        #expect(berlin.localISO(1_688_254_200) == "2023-07-02T01:30:00+02:00")
        // Half-hour and southern-hemisphere zones: Kolkata +05:30; Sydney daylight saving in January.
        #expect(LocalTime(timeZone: "Asia/Kolkata").offsetText(at: 1_700_000_000) == "+05:30")
        #expect(LocalTime(timeZone: "Australia/Sydney").offsetText(at: 1_704_067_200) == "+11:00")
        #expect(LocalTime(timeZone: "Australia/Sydney").offsetText(at: 1_688_169_600) == "+10:00")
        // A fixed offset as an IANA name (what an AirNow-Tech file's offset becomes): Etc/GMT+5 is UTC-5.
        #expect(LocalTime(timeZone: "Etc/GMT+5").offsetText(at: 1_688_169_600) == "-05:00")
        // Unknown or malformed names fall back to UTC and say so.
        let unknown = LocalTime(timeZone: "Mars/Olympus_Mons")
        #expect(!unknown.isKnown && unknown.offset(at: 0) == 0 && unknown.zone == "Mars/Olympus_Mons")
        #expect(!LocalTime(timeZone: "../../etc/passwd").isKnown && !LocalTime(timeZone: "/etc/localtime").isKnown)
        // Not zones of the database's names: the host's own zone, the leap-second tree, a lower-case spelling.
        #expect(!LocalTime(timeZone: "localtime").isKnown && !LocalTime(timeZone: "right/America/New_York").isKnown)
        #expect(!LocalTime(timeZone: "america/new_york").isKnown && !LocalTime(timeZone: "posixrules").isKnown)
        #expect(LocalTime(timeZone: nil).zone == "UTC" && LocalTime(timeZone: "UTC").isKnown)
        #expect(LocalTime.weekday(ofDay: 0) == "Thu")   // 1970-01-01
        #expect(LocalTime.iso(-1) == "1969-12-31T23:59:59Z")
    }

    // MARK: Support

    /// The Burdens Creek AirNow API file through the real importer.
    static func airNowEvents() throws -> [Event] {
        let parsed = try AirNowAPIImporter.parse(
            WorldSupport.bytes("sensortoolkit_AirNow_raw_370630099_PM25_B190801_E190902", "csv"),
            file: "airnow.csv", options: ImportOptions())
        return WorldSupport.events(parsed.records)
    }

    /// The monitor's registration again, with its zone, written later by another replica (LWW: it wins).
    static func newYorkRegistration(_ events: [Event]) throws -> Event {
        var reg = try #require(FactWorld(events: events).sensors().first { $0.sensor == "370630099" })
        #expect(reg.timeZone == nil)
        reg.timeZone = "America/New_York"
        return Event(stream: .public, id: EventID(origin: Origin(replica: ReplicaID(rawValue: 0x7E57), epoch: 1), counter: 1),
                     hlc: HLC(physicalMillis: 50_000_000, logical: 0), body: .sensorRegistered(reg))
    }
}

/// Writes a user's events as one replica would: per-stream counters, increasing clock.
struct HistAlertsUser {
    let user: String
    let origin: Origin
    var counter: UInt64 = 0
    var millis: UInt64

    init(_ user: String, replica: UInt64, millis: UInt64 = 100_000_000) {
        self.user = user
        self.origin = Origin(replica: ReplicaID(rawValue: replica), epoch: 1)
        self.millis = millis
    }

    mutating func event(_ body: EventBody) -> Event {
        counter += 1
        millis += 1000
        return Event(stream: .user(user), id: EventID(origin: origin, counter: counter),
                     hlc: HLC(physicalMillis: millis, logical: 0), body: body)
    }
}
