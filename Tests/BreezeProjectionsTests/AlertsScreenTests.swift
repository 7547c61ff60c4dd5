import Testing
import BreezeCore
import BreezeAirQuality
@testable import BreezeProjections

/// Alerts on real data. The expected fired/cleared lists were computed independently with python3 from the
/// raw CSV files (see HistoryScreenTests for the pipeline: domain.md 3.3, 3.2, 2, 1.1-1.2), walking each
/// sensor's hourly NowCast AQI over the 168 complete hours before `now`: fire at the first hour at or above
/// the threshold after one below it (or at the window's first NowCast hour), clear at the first later hour
/// below it; hours without a NowCast change nothing.
struct AlertsScreenTests {
    /// 2023-10-29T18:40:00Z: the window is 2023-10-22T18:00Z .. 2023-10-29T17:00Z.
    static let troyNow: Int64 = 1_698_604_800

    typealias E = (hour: String, sensor: String, kind: String, aqi: Int, category: String)

    /// python3, threshold Moderate, EPA 2021 correction.
    static let troyModerate: [E] = [
        ("2023-10-23T12:00:00Z", "87173", "fired", 82, "moderate"),
        ("2023-10-23T14:00:00Z", "87173", "cleared", 44, "good"),
        ("2023-10-27T00:00:00Z", "87173", "fired", 51, "moderate"),
        ("2023-10-27T03:00:00Z", "149970", "fired", 52, "moderate"),
        ("2023-10-27T15:00:00Z", "149970", "cleared", 47, "good"),
        ("2023-10-27T16:00:00Z", "87173", "cleared", 49, "good"),
        ("2023-10-27T21:00:00Z", "87173", "fired", 93, "moderate"),
        ("2023-10-28T05:00:00Z", "87173", "cleared", 49, "good"),
    ]

    static func check(_ events: [AlertsScreen.AlertEvent], _ expected: [E], notifyClears: Bool = true) {
        #expect(events.count == expected.count)
        for (e, x) in zip(events, expected) {
            #expect(e.hour == x.hour && e.sensorId == x.sensor && e.kind == x.kind && e.aqi == x.aqi && e.category == x.category,
                    "\(e) vs \(x)")
            #expect(e.notified == (e.kind == "fired" || notifyClears))
        }
    }

    static func build(_ events: [Event], user: String = "ana", now: Int64 = troyNow) throws -> AlertsScreen.Model {
        try AlertsScreen.build(FactWorld(events: events), ScreenParameters(user: user, now: now))
    }

    /// Troy data with `ana` watching both sensors (as `breeze watch add` would write it).
    static func troyWatched() throws -> (events: [Event], ana: HistAlertsUser) {
        var ana = HistAlertsUser("ana", replica: 0xA1)
        let events = try WorldSupport.troy() + [ana.event(.watchAdd(sensor: "87173")), ana.event(.watchAdd(sensor: "purpleair:149970"))]
        return (events, ana)
    }

    @Test func defaultsAndWatchedSensorsNow() throws {
        let (events, _) = try Self.troyWatched()
        let m = try Self.build(events)
        #expect(m.threshold == AlertsScreen.Threshold(name: "usg", title: "Unhealthy for Sensitive Groups", aqi: 101, colour: "#FF7E00"))
        #expect(m.onClear == "notify" && m.enabled && m.testAlert == nil)
        #expect(m.windowStart == "2023-10-22T18:00:00Z" && m.windowEnd == "2023-10-29T17:00:00Z")
        // NowCast AQI of 17:00-18:00Z (python3): 149970 9, 87173 14; both fresh.
        #expect(m.watched.map(\.sensorId) == ["149970", "87173"])
        #expect(m.watched.map(\.aqi) == [9, 14] && m.watched.allSatisfy { $0.category == "good" && $0.colour == "#00E400" })
        #expect(m.watched.allSatisfy { !$0.isStale && $0.isKnown && $0.sourceEnabled && $0.source == "purpleair" })
        #expect(m.watched.map(\.name) == ["South Troy #2", "North Central Troy #1"])
        // Under EPA-corrected values nothing in the week reached USG (weekly max 93, python3).
        #expect(m.events.isEmpty)
    }

    @Test func thresholdModerateFiresAndClears() throws {
        var (events, ana) = try Self.troyWatched()
        events.append(ana.event(.alertSet(AlertChange(category: .moderate))))
        let m = try Self.build(events)
        #expect(m.threshold.name == "moderate" && m.threshold.aqi == 51 && m.threshold.colour == "#FFFF00")
        Self.check(m.events, Self.troyModerate)
    }

    @Test func aThresholdChangeChangesTheList() throws {
        var (events, ana) = try Self.troyWatched()
        let moderate = ana.event(.alertSet(AlertChange(category: .moderate)))
        let usg = ana.event(.alertSet(AlertChange(category: .usg)))   // later clock: wins
        let m1 = try Self.build(events + [moderate])
        let m2 = try Self.build(events + [usg, moderate])   // arrival order does not matter
        #expect(m1.events.count == 8 && m2.threshold.name == "usg" && m2.events.isEmpty)
        events.append(ana.event(.alertSet(AlertChange(category: .moderate))))
        #expect(try Self.build(events + [usg]).events.count == 8)
    }

    @Test func silentClearsAreListedButNotNotified() throws {
        var (events, ana) = try Self.troyWatched()
        events.append(ana.event(.alertSet(AlertChange(category: .moderate, onClear: .silent))))
        let m = try Self.build(events)
        #expect(m.onClear == "silent")
        Self.check(m.events, Self.troyModerate, notifyClears: false)
        #expect(m.events.filter { !$0.notified }.map(\.kind) == ["cleared", "cleared", "cleared", "cleared"])
    }

    @Test func aCorrectionSwitchMakesUSGAlerts() throws {
        var (events, ana) = try Self.troyWatched()
        events.append(ana.event(.sourceCorrect(source: "purpleair", correction: "none")))
        let m = try Self.build(events)
        // python3 with the uncorrected CF=1 A/B mean, threshold USG.
        Self.check(m.events, [
            ("2023-10-23T12:00:00Z", "87173", "fired", 128, "usg"),
            ("2023-10-23T13:00:00Z", "87173", "cleared", 79, "moderate"),
            ("2023-10-27T21:00:00Z", "87173", "fired", 150, "usg"),
            ("2023-10-27T23:00:00Z", "87173", "cleared", 81, "moderate"),
        ])
    }

    @Test func disabledAlertsKeepSettingsButHaveNoEvents() throws {
        var (events, ana) = try Self.troyWatched()
        events.append(ana.event(.alertSet(AlertChange(category: .moderate, enabled: false))))
        let m = try Self.build(events)
        #expect(!m.enabled && m.events.isEmpty && m.threshold.name == "moderate" && m.watched.count == 2)
        #expect(m.watched.map(\.aqi) == [9, 14])
        #expect(AlertsScreen.render(m).contains("  alerts are off"))
    }

    @Test func watchedSensorsAddedAndRemovedWithTheCLISemantics() throws {
        var (events, ana) = try Self.troyWatched()
        events.append(ana.event(.alertSet(AlertChange(category: .moderate))))
        // `breeze watch remove 149970`: the remove carries the add dots this replica has seen.
        let seen = try FactWorld(events: events).userState(user: "ana").watched
        #expect(seen.liveDots(of: "149970").isEmpty)   // it was added as purpleair:149970
        let dots = seen.liveDots(of: "purpleair:149970")
        #expect(dots.count == 1)
        events.append(ana.event(.watchRemove(sensor: "purpleair:149970", observed: dots)))
        let m = try Self.build(events)
        #expect(m.watched.map(\.sensorId) == ["87173"])
        Self.check(m.events, Self.troyModerate.filter { $0.sensor == "87173" })

        // A concurrent add on another replica (not seen by the remove) wins: the sensor is watched again.
        var phone = HistAlertsUser("ana", replica: 0xA2)
        let concurrent = phone.event(.watchAdd(sensor: "149970"))
        let m2 = try Self.build(events + [concurrent])
        #expect(m2.watched.map(\.sensorId) == ["149970", "87173"])
        Self.check(m2.events, Self.troyModerate)

        // Watching the same sensor under two keys lists it once; an unregistered id is listed as unknown.
        let m3 = try Self.build(events + [concurrent, ana.event(.watchAdd(sensor: "purpleair:87173")),
                                          ana.event(.watchAdd(sensor: "999999"))])
        #expect(m3.watched.map(\.sensorId) == ["149970", "87173", "999999"])
        #expect(m3.watched[2].isKnown == false && m3.watched[2].source == nil && m3.watched[2].aqi == nil)
        Self.check(m3.events, Self.troyModerate)
    }

    @Test func aDisabledSourceRaisesNoAlerts() throws {
        var (events, ana) = try Self.troyWatched()
        events.append(ana.event(.alertSet(AlertChange(category: .moderate))))
        events.append(ana.event(.sourceDisable(source: "purpleair")))
        let m = try Self.build(events)
        #expect(m.events.isEmpty && m.watched.count == 2 && m.watched.allSatisfy { !$0.sourceEnabled && $0.aqi == nil })
    }

    @Test func staleWatchedSensorsAfterTheArchiveEnds() throws {
        let (events, _) = try Self.troyWatched()
        // 2023-10-30T02:00Z: newest readings at 00:10Z, 110 minutes old (PurpleAir stale after 60).
        let m = try Self.build(events, now: 1_698_631_200)
        #expect(m.watched.allSatisfy { $0.isStale })
        // The last complete hour (01Z) and the one before it have no data: no NowCast now.
        #expect(m.watched.allSatisfy { $0.aqi == nil && $0.category == nil })
        for w in m.watched {                                        // missing values are left out, as on every screen
            #expect(try Screens.json(w).hasPrefix(#"{"isKnown":true,"isStale":true,"#), "\(w)")
        }
    }

    @Test func theNewestTestAlertIsShown() throws {
        var (events, ana) = try Self.troyWatched()
        let first = ana.event(.testAlert(sensor: nil))
        let second = ana.event(.testAlert(sensor: "87173"))
        let m = try Self.build(events + [second, first])
        let t = try #require(m.testAlert)
        #expect(t.sensorId == "87173" && t.id == second.id.description)
        #expect(t.time == "1970-01-02T03:46:44Z")   // the HLC time to the second (Swift's .iso8601 decodes it)
        #expect(try Self.build(events + [first]).testAlert?.sensorId == nil)
        events.append(ana.event(.alertSet(AlertChange(enabled: false))))
        #expect(try Self.build(events + [first]).testAlert?.id == first.id.description)   // also when disabled
    }

    @Test func airNowMonitorAlertsCarryOverAGap() throws {
        let monitor = try HistoryScreenTests.airNowEvents()
        var ana = HistAlertsUser("ana", replica: 0xA1)
        let events = monitor + [ana.event(.watchAdd(sensor: "370630099")), ana.event(.alertSet(AlertChange(category: .moderate)))]
        let m = try Self.build(events, now: HistoryScreenTests.airNowNow)
        #expect(m.watched.first?.aqi == 36 && m.watched.first?.isStale == false && m.watched.first?.source == "airnow")
        // python3. On 2019-08-19 the hours 12-15Z are missing (no NowCast 13-16Z) inside a Moderate spell: the
        // alert fired at 07Z stays up over the gap and clears at 20Z, with no second firing.
        let moderate = "moderate", good = "good"
        Self.check(m.events, [
            ("2019-08-19T07:00:00Z", "370630099", "fired", 51, moderate),
            ("2019-08-19T20:00:00Z", "370630099", "cleared", 46, good),
            ("2019-08-21T01:00:00Z", "370630099", "fired", 52, moderate),
            ("2019-08-21T04:00:00Z", "370630099", "cleared", 48, good),
            ("2019-08-21T22:00:00Z", "370630099", "fired", 51, moderate),
            ("2019-08-21T23:00:00Z", "370630099", "cleared", 45, good),
            ("2019-08-22T11:00:00Z", "370630099", "fired", 51, moderate),
            ("2019-08-22T21:00:00Z", "370630099", "cleared", 45, good),
        ])
        let usg = try Self.build(events + [ana.event(.alertSet(AlertChange(category: .usg)))], now: HistoryScreenTests.airNowNow)
        #expect(usg.events.isEmpty)
    }

    @Test func renderingListsSettingsSensorsAndEvents() throws {
        var (events, ana) = try Self.troyWatched()
        events.append(ana.event(.alertSet(AlertChange(category: .moderate, onClear: .silent))))
        let lines = AlertsScreen.render(try Self.build(events))
        #expect(lines.first == "Alerts: on, warn at Moderate (AQI 51+, moderate), when it clears: silent")
        #expect(lines.contains { $0.hasPrefix("  purpleair:87173") && $0.hasSuffix(" 14  Good") })
        #expect(lines.contains("  2023-10-27T21:00:00Z  purpleair:87173   fired     93  Moderate                       notified"))
        #expect(lines.last == "No test alert requested")
    }

    @Test func buildsAreByteIdenticalWhateverTheEventOrder() throws {
        var (events, ana) = try Self.troyWatched()
        events.append(ana.event(.alertSet(AlertChange(category: .moderate, onClear: .silent))))
        events.append(ana.event(.testAlert(sensor: "149970")))
        var phone = HistAlertsUser("ana", replica: 0xA2, millis: 100_000_500)
        events.append(phone.event(.alertSet(AlertChange(onClear: .notify))))   // concurrent edit, decided by stamp
        let userFirst = events.filter { $0.stream != .public } + events.filter { $0.stream == .public }
        let a = try Screens.json(Self.build(events))
        #expect(a == (try Screens.json(Self.build(userFirst))))
        #expect(a == (try Screens.json(Self.build(events.reversed()))))
        #expect(try Self.build(events).events.count == 8)
    }

    @Test func anAlertOneDeviceNotifiedIsDeliveredOnEveryDeviceOfTheUser() throws {
        var (events, phone) = try Self.troyWatched()
        events.append(phone.event(.alertSet(AlertChange(category: .moderate))))
        let before = try Self.build(events)
        Self.check(before.events, Self.troyModerate)
        #expect(before.events.allSatisfy { !$0.delivered && $0.shouldNotify == $0.notified })
        #expect(before.events[0].key == "purpleair:87173|2023-10-23T12:00:00Z|fired")
        // The phone shows the first two notifications and records them; the tablet (another replica of ana)
        // receives those events: it shows them delivered and does not notify them again.
        var tablet = HistAlertsUser("ana", replica: 0xA2, millis: 200_000_000)
        let delivered = [phone.event(.alertDelivered(key: before.events[0].key)), phone.event(.alertDelivered(key: before.events[1].key))]
        let after = try Self.build(events + delivered + [tablet.event(.unitSet(.celsius))])
        #expect(after.events.map(\.delivered) == [true, true] + Array(repeating: false, count: 6))
        #expect(after.events.map(\.shouldNotify) == [false, false] + Array(repeating: true, count: 6))
        // Any order of arrival gives the same model (the set of deliveries is grow-only); a duplicate changes nothing.
        let shuffled = try Self.build((events + delivered + delivered).reversed())
        #expect(shuffled == (try Self.build(events + delivered)))
        #expect(AlertsScreen.render(after).contains { $0.contains("notified (delivered)") })
    }

    @Test func aTestAlertAppearsOnlyFromWhenItWasRequestedWithWhatToShow() throws {
        let (events, _) = try Self.troyWatched()
        // Requested at 18:30Z, ten minutes before troyNow.
        var ana = HistAlertsUser("ana", replica: 0xA1, millis: UInt64(Self.troyNow - 600 - 1) * 1000)
        let request = ana.event(.testAlert(sensor: "87173"))
        let all = events + [request]
        #expect(try Self.build(all, now: Self.troyNow - 601).testAlert == nil, "a screen of a moment before the request")
        let t = try #require(try Self.build(all).testAlert)
        #expect(t.time == "2023-10-29T18:30:00Z" && t.key == "test|" + request.id.description && !t.delivered && t.shouldNotify)
        // The sensor's reading now (87173: AQI 14, Good at 17:00-18:00Z, python3) and the user's threshold.
        #expect(t.title == "Test alert: North Central Troy #1")
        #expect(t.body == "AQI 14, Good. You are warned at Unhealthy for Sensitive Groups (AQI 101+).")
        let shown = try #require(try Self.build(all + [ana.event(.alertDelivered(key: t.key))]).testAlert)
        #expect(shown.delivered && !shown.shouldNotify)
        // Without a sensor: the threshold alone.
        let plain = try #require(try Self.build(events + [ana.event(.testAlert(sensor: nil))]).testAlert)
        #expect(plain.title == "Test alert" && plain.body == "You are warned when a watched sensor reaches Unhealthy for Sensitive Groups (AQI 101+).")
    }

    @Test func anEpisodeThatBeganBeforeTheWindowIsNotANewCrossing() throws {
        // At threshold Good every hour is at or above it: the state before the window (the archive starts a day
        // before it) is already above, so no alert fires at the window's edge; the edge moves every hour and a
        // fire there would notify again each time.
        var (events, ana) = try Self.troyWatched()
        events.append(ana.event(.alertSet(AlertChange(category: .good))))
        for hour in 0..<3 {
            #expect(try Self.build(events, now: Self.troyNow + Int64(hour) * 3600).events.isEmpty)
        }
    }

    @Test func aTestAlertRequestedLongAgoIsListedButDoesNotNotify() throws {
        let (events, _) = try Self.troyWatched()
        var ana = HistAlertsUser("ana", replica: 0xA1, millis: UInt64(Self.troyNow - 3600) * 1000)
        let t = try #require(try Self.build(events + [ana.event(.testAlert(sensor: nil))]).testAlert)
        #expect(!t.delivered && !t.shouldNotify)   // an hour old: more than 15 minutes
    }
}
