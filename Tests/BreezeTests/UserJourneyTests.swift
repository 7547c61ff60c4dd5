import Testing
import Breeze
import BreezeTestSupport

/// The user journeys of the Air Quality design document (`shared/docs/app-screens/002_...txt`), walked through
/// the `Breeze` API as the app would: a replica of ana's phone with the real Troy archive imported, each step
/// a screen read and, where the journey edits, an intent written and the screen read again.
///
/// The numbers come from the screens' own real-data tests (computed there with python3 from the raw CSV):
/// at 2023-10-27T22:27:30Z, South Troy #2 (149970) is AQI 37 Good and North Central Troy #1 (87173) AQI 93
/// Moderate under the EPA 2021 correction; from (42.73, -73.69) 87173 is 1.45 km away, 149970 2.38 km.
struct UserJourneyTests {
    static let now: Int64 = 1_698_445_650
    static let here = (latitude: 42.7300, longitude: -73.6900)

    static func phone(_ dir: TempDir) throws -> Replica {
        let r = try Replica(path: dir.file("phone.db"), options: .init(user: "ana"))
        let registry = Array("""
            id,name,latitude,longitude,timezone
            149970,South Troy #2,42.7087,-73.6925,America/New_York
            87173,North Central Troy #1,42.7412,-73.6810,America/New_York

            """.utf8)
        _ = try r.importData(registry, name: "troy.csv", format: "sensors-csv")
        _ = try r.importFile(Fixtures.root + "/purpleair/ajl_troy_ny_10min_merged_2023-10-22_to_29.csv", format: "purpleair-csv")
        return r
    }

    @Test func tapAPinThenSaveTheSensorWithTheStar() throws {
        let dir = TempDir()
        let r = try Self.phone(dir)
        defer { r.close() }
        let map = try r.screen(MapScreen.self, r.parameters(now: Self.now, at: Self.here))
        #expect(map.header.title == "The air is moderate" && map.header.sensor == "purpleair:87173")
        let pin = try #require(map.pins.first { $0.name == "South Troy #2" })
        #expect(pin.label == "37" && pin.colour == "#00E400")
        // The tap raises the sheet of that pin.
        let p = r.parameters(now: Self.now, at: Self.here, sensor: pin.source + ":" + pin.sensorId)
        let sheet = try r.screen(SheetScreen.self, p)
        #expect(sheet.badge.aqi == 37 && sheet.badge.category == "good" && sheet.distanceKm == 2.38 && !sheet.isFavourite)
        #expect(sheet.updated?.text == "7 min ago" && sheet.legend.filter(\.isCurrent).map(\.category) == ["good"])
        // The star: the sheet shows it at once, and the favourite is the sensor's canonical id.
        try r.addFavourite(pin.sensorId)
        #expect(try r.screen(SheetScreen.self, p).isFavourite)
        #expect(try r.state().favourites.elements == ["purpleair:149970"])
    }

    @Test func openSensorDetailsAndDragAcrossThe24HourBars() throws {
        let dir = TempDir()
        let r = try Self.phone(dir)
        defer { r.close() }
        let d = try r.screen(DetailScreen.self, r.parameters(now: Self.now, sensor: "149970"))
        #expect(d.aqi == 37 && d.category == "good" && d.advice?.everyone == "It's a great day to be active outside.")
        // Dragging reads each bar: 24 consecutive hours, each with its AQI, category and colour, or an
        // estimate flagged; the last bar is the headline.
        #expect(d.hourly.count == 24)
        for (a, b) in zip(d.hourly, d.hourly.dropFirst()) {
            #expect((DateParsing.isoDateTime(b.hour) ?? 0) - (DateParsing.isoDateTime(a.hour) ?? 0) == 3600)
        }
        #expect(d.hourly.allSatisfy { $0.missing == ($0.aqi == nil) && ($0.aqi == nil || $0.colour != nil) })
        #expect(d.hourly.last?.aqi == d.aqi && d.hourly.last?.hour == "2023-10-27T21:00:00Z")
        #expect(d.hourly.filter { !$0.hasOwnValue }.map(\.hour) == ["2023-10-27T19:00:00Z"])   // the 30-minute gap
    }

    @Test func openHistoryAndDragThroughTodaysPM25() throws {
        let dir = TempDir()
        let r = try Self.phone(dir)
        defer { r.close() }
        let h = try r.screen(HistoryScreen.self, r.parameters(now: Self.now, sensor: "149970"))
        #expect(h.timeZone == "America/New_York" && h.utcOffset == "-04:00")
        // Today on the phone's clock: 00:00 EDT (04:00Z) to the last complete hour, 17:00 EDT (21:00Z).
        #expect(h.today.map(\.localHour) == Array(0...17))
        #expect(h.today.first?.localTime == "2023-10-27T00:00:00-04:00" && h.today.last?.hour == "2023-10-27T21:00:00Z")
        #expect(h.thisWeek.last?.date == "2023-10-27" && h.thisWeek.last?.weekday == "Fri" && h.thisWeek.count == 7)
        // The gap hour (15:00 EDT) has no PM2.5 of its own; every other hour does.
        #expect(h.today.filter { $0.pm25 == nil }.map(\.localHour) == [15])
    }

    @Test func switchToNearbyAndOpenTheClosestSensor() throws {
        let dir = TempDir()
        let r = try Self.phone(dir)
        defer { r.close() }
        let n = try r.screen(NearbyScreen.self, r.parameters(now: Self.now, at: Self.here))
        let closest = try #require(n.closest)
        #expect(closest.sensorId == "87173" && closest.distanceKm == 1.45 && closest.aqi == 93)
        #expect(n.others.map(\.sensorId) == ["149970"])
        let d = try r.screen(DetailScreen.self, r.parameters(now: Self.now, sensor: closest.source + ":" + closest.sensorId))
        #expect(d.aqi == closest.aqi && d.category == "moderate" && d.name == "North Central Troy #1")
    }

    @Test func onAlertsPickUnhealthyAndSendATestAlert() throws {
        let dir = TempDir()
        let r = try Self.phone(dir)
        defer { r.close() }
        try r.addWatch("149970")
        try r.setAlerts(category: .unhealthy)
        // The request is stamped with the replica's clock (now); the screen asked for a moment before it has
        // no test alert, one after it has.
        let request = try r.requestTestAlert(sensor: "149970")
        let asked = Int64(request.hlc.physicalMillis / 1000)
        #expect(try r.screen(AlertsScreen.self, r.parameters(now: asked - 1)).testAlert == nil)
        let m = try r.screen(AlertsScreen.self, r.parameters(now: asked + 1))
        #expect(m.threshold.name == "unhealthy" && m.threshold.aqi == 151 && m.enabled)
        let t = try #require(m.testAlert)
        #expect(t.title == "Test alert: South Troy #2" && t.shouldNotify)
        // The archive ended in 2023: the sensor has no current reading now.
        #expect(t.body == "No current reading. You are warned at Unhealthy (AQI 151+).")
        try r.markAlertDelivered(t.key)
        #expect(try r.screen(AlertsScreen.self, r.parameters(now: asked + 1)).testAlert?.shouldNotify == false)
    }

    @Test func theDevicesTimeZoneIsTheUsersToday() throws {
        // A phone in New York at 2010-03-26T02:00Z (22:00 EDT on the 25th) with one reading logged by hand at
        // 23:30Z on the 25th: today is still the 25th and counts it; a UTC replica is on the 26th already.
        let dir = TempDir()
        var o = Replica.Options(user: "ana")
        o.timeZone = "America/New_York"
        let r = try Replica(path: dir.file("ny.db"), options: o)
        defer { r.close() }
        try r.logBiomarkerReading(BiomarkerReading(readingType: "Blood Glucose", time: 1_269_559_800, value: 104, unit: "mg/dL"))
        let m = try r.screen(BiomarkerScreen.self, r.parameters(now: 1_269_568_800))
        #expect(m.date == "2010-03-25" && m.timeZone == "America/New_York" && m.biomarkers.first?.readingCount == 1)
        var utc = r.parameters(now: 1_269_568_800)
        utc.timeZone = nil
        let u = try r.screen(BiomarkerScreen.self, utc)
        #expect(u.date == "2010-03-26" && u.biomarkers.first?.readingCount == 0)
    }

    @Test func tiltTheGoodWidget() throws {
        let dir = TempDir()
        let r = try Self.phone(dir)
        defer { r.close() }
        // Before any favourite, away from every sensor: the placeholder.
        #expect(try r.screen(WidgetsScreen.self, r.parameters(now: Self.now)) == WidgetsScreen.placeholder)
        try r.addFavourite("149970")
        let w = try r.screen(WidgetsScreen.self, r.parameters(now: Self.now))
        #expect(w.lockScreen.name == "South Troy #2" && w.lockScreen.aqi == 37 && w.lockScreen.basis == "favourite")
        #expect(w.tile.value == 37 && w.tile.label == "37" && w.tile.title == "Good")
        #expect(w.tile.background == "#00E400" && w.tile.foreground == "#000000")
        #expect(w.liveActivity.recent.count == 4 && w.liveActivity.recent.last == 37)
    }
}
