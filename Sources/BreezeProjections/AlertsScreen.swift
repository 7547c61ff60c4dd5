public import BreezeCore
import BreezeAirQuality

/// The Alerts screen: the category that warns the user, what happens when an alert clears, the sensors they
/// watch with their current reading, the alerts that fired and cleared, and the newest test alert (issue 5,
/// "Alerts"; the app's "Alerts sets the category that warns you, what happens when it clears and the sensors
/// you watch, with a test alert").
///
/// Alerts are derived from the log, not stored: every replica that has the same events computes the same
/// list. For each watched sensor the hourly NowCast AQI (`SensorAirQuality`, with this user's correction for
/// PurpleAir; domain.md sections 2 and 9) is walked over the 168 complete hours ending with the last hour that
/// ended at or before `p.now`:
/// - an alert **fires** at the first hour whose category is at or above the threshold after an hour below it.
///   The state the window starts in is the last NowCast of the `lookbackHours` before it, so an episode that
///   began before the window is not a new crossing at the window's edge (which moves every hour and would
///   notify again each time); with no NowCast in those hours, a window that starts above fires at its first
///   hour with a NowCast;
/// - it **clears** at the first later hour whose category is below the threshold. With `onClear` `notify` the
///   clear notifies (`notified` true); with `silent` it is still listed, with `notified` false;
/// - an hour without a valid NowCast (missing data) neither fires nor clears: the state carries over the gap.
/// Events are sorted by hour, then sensor id, then source. With alerts disabled there are no events, but the
/// settings and watched sensors are still listed. A watched sensor whose source the user disabled
/// (`UserState.isEnabled(source:)`) shows no reading and raises no alerts; a watched id that is not registered
/// (or is ambiguous across sources) is listed with `isKnown` false.
///
/// **Once per user, not once per device.** Every alert and test alert has a `key`; the device that shows
/// the notification records it (`Replica.markAlertDelivered(_:)`, an `alert.delivered` event in the user's
/// stream), and every replica that has that event marks the alert `delivered`: `shouldNotify` is true only
/// for an alert that notifies and no device delivered yet. Two devices offline at the same moment can both
/// notify (neither can know); once they sync, neither notifies for it again.
///
/// The test alert is the newest one requested at or before `p.now` (a screen computed for an earlier moment
/// never shows a later request), with the text a notification shows (`title`, `body`: the named sensor's
/// reading now, or the threshold when none is named).
public enum AlertsScreen: Screen {
    public static let name = "alerts"
    public static let summary = "alert settings, watched sensors, alerts fired and cleared in the last 7 days, test alert"
    public static let userAspects: UserState.Aspects = [.watched, .alertSettings, .testAlerts, .deliveredAlerts, .sources]

    /// Hours walked for the events: the last 7 days.
    public static let windowHours = 7 * 24
    /// Hours before the window read for the state it starts in.
    public static let lookbackHours = 24
    /// How long after its request a test alert still notifies (a device that syncs a week-old request lists it
    /// but does not pop it up).
    public static let testAlertNotifySeconds: Int64 = 15 * 60

    /// The Alerts read model.
    public struct Model: Codable, Equatable, Sendable {
        /// The category that triggers an alert.
        public var threshold: Threshold
        /// `notify` or `silent`: what happens when an alert clears.
        public var onClear: String
        /// Whether alerts are on.
        public var enabled: Bool
        /// The first hour walked for `events` (ISO 8601 UTC, hour start).
        public var windowStart: String
        /// The last hour walked (the last complete hour at `now`).
        public var windowEnd: String
        /// The watched sensors, sorted by sensor id, then source.
        public var watched: [Watched]
        /// Alerts fired and cleared in the window, sorted by hour, then sensor id, then source.
        public var events: [AlertEvent]
        /// The newest test alert requested, if any.
        public var testAlert: TestAlert?

        enum CodingKeys: String, CodingKey {
            case threshold, onClear, enabled, windowStart, windowEnd, watched, events, testAlert
        }

    }

    /// The alert threshold.
    public struct Threshold: Codable, Equatable, Sendable {
        /// The command-line name, e.g. `usg`.
        public var name: String
        /// The EPA title, e.g. `Unhealthy for Sensitive Groups`.
        public var title: String
        /// The lowest AQI of the category (an hour at or above it alerts), e.g. 101.
        public var aqi: Int
        /// The category's EPA colour.
        public var colour: String
    }

    /// A watched sensor and its reading now.
    public struct Watched: Codable, Equatable, Identifiable, Sendable {
        /// The watched sensor, `source:sensorId` (its id alone when its source is not known) (`Identifiable`: `ForEach`, `.sheet(item:)`, `Chart`).
        public var id: String { source.map { "\($0):\(sensorId)" } ?? sensorId }
        /// The sensor's id within its source (as watched when it is not registered).
        public var sensorId: String
        /// The source; nil when the sensor is not registered.
        public var source: String?
        /// The display name; nil when the sensor is not registered.
        public var name: String?
        /// False when the watched id names no registered sensor (or several).
        public var isKnown: Bool
        /// False when the user disabled the sensor's source.
        public var sourceEnabled: Bool
        /// The NowCast AQI of the last complete hour; nil when there is none.
        public var aqi: Int?
        /// Its EPA category name (`good`, `moderate`, `usg`, `unhealthy`, `very-unhealthy`, `hazardous`).
        public var category: String?
        /// Its EPA colour.
        public var colour: String?
        /// True when the newest reading is stale or hidden (domain.md section 7), or there is none.
        public var isStale: Bool

        enum CodingKeys: String, CodingKey {
            case sensorId, source, name, isKnown, sourceEnabled, aqi, category, colour, isStale
        }

    }

    /// An alert that fired or cleared.
    public struct AlertEvent: Codable, Equatable, Identifiable, Sendable {
        /// `key`, the event's own (`Identifiable`: `ForEach`, `.sheet(item:)`, `Chart`).
        public var id: String { key }
        /// The sensor's id within its source.
        public var sensorId: String
        /// The sensor's source.
        public var source: String
        /// `fired` or `cleared`.
        public var kind: String
        /// Start of the hour (ISO 8601 UTC) whose NowCast crossed the threshold.
        public var hour: String
        /// That hour's NowCast AQI.
        public var aqi: Int
        /// Its EPA category name (`good`, `moderate`, `usg`, `unhealthy`, `very-unhealthy`, `hazardous`).
        public var category: String
        /// Whether the user is notified: always for `fired`; for `cleared` only when `onClear` is `notify`.
        public var notified: Bool
        /// Identifies this crossing for delivery: `source:id|hour|kind`.
        public var key: String
        /// True when one of the user's devices has notified it already (`alert.delivered`).
        public var delivered: Bool
        /// True when this device should notify now: `notified` and not `delivered`.
        public var shouldNotify: Bool
    }

    /// A test alert request (`breeze alert test`, the app's "send a test alert").
    public struct TestAlert: Codable, Equatable, Sendable {
        /// The id of the request's event (`origin:counter`).
        public var id: String
        /// The sensor named in the request, if any.
        public var sensorId: String?
        /// When it was requested: the event's hybrid-logical-clock time, ISO 8601 UTC to the second.
        public var time: String
        /// Identifies this test alert for delivery: `test|<id>`.
        public var key: String
        /// True when one of the user's devices has shown it already.
        public var delivered: Bool
        /// True when this device should show it now: not delivered yet, and requested at most
        /// `testAlertNotifySeconds` before `now`.
        public var shouldNotify: Bool
        /// The notification's title, e.g. "Test alert: South Troy #2".
        public var title: String
        /// The notification's text, e.g. "AQI 37, Good. You are warned at Unhealthy for Sensitive Groups (AQI
        /// 101+)."
        public var body: String

        enum CodingKeys: String, CodingKey { case id, sensorId, time, key, delivered, shouldNotify, title, body }

    }

    /// Builds the model for `p.user` at `p.now`.
    public static func build(_ world: WorldReader, _ p: ScreenParameters) throws -> Model {
        let user = try world.userState(user: p.user)
        let threshold = user.effectiveAlertCategory
        let onClear = user.effectiveOnClear
        let enabled = user.effectiveAlertsEnabled
        let lastHour = LocalTime.hourStart(p.now) - 3600
        let windowStart = lastHour - Int64(windowHours - 1) * 3600
        let sensors = try world.sensors()

        var watched: [Watched] = []
        var events: [AlertEvent] = []
        var seen: Set<String> = []
        for key in user.watched.elements {
            guard let sensor = try? HistoryScreen.lookUp(key, in: sensors) else {
                watched.append(Watched(sensorId: key, source: nil, name: nil, isKnown: false, sourceEnabled: true,
                                       aqi: nil, category: nil, colour: nil, isStale: true))
                continue
            }
            // `87173` and `purpleair:87173` are the same sensor: list it once.
            guard seen.insert(sensor.source + ":" + sensor.sensor).inserted else { continue }
            guard user.isEnabled(source: sensor.source) else {
                watched.append(Watched(sensorId: sensor.sensor, source: sensor.source, name: sensor.name, isKnown: true,
                                       sourceEnabled: false, aqi: nil, category: nil, colour: nil, isStale: true))
                continue
            }
            let q = try world.airQuality(sensor, user: user, now: p.now, hours: windowHours + lookbackHours)
            let now = q.current
            watched.append(Watched(sensorId: sensor.sensor, source: sensor.source, name: sensor.name, isKnown: true,
                                   sourceEnabled: true, aqi: now?.aqi, category: now?.category.name,
                                   colour: now?.category.colourHex, isStale: q.freshness != .fresh))
            guard enabled else { continue }
            // The state the window starts in: the last NowCast before it, if any.
            var above = false
            if let r = q.hours.indices.lazy.reversed().filter({ q.hours[$0].hour < windowStart }).compactMap(q.nowCast(at:)).first {
                above = r.category >= threshold
            }
            for i in q.hours.indices where q.hours[i].hour >= windowStart {
                guard let r = q.nowCast(at: i) else { continue }   // a gap neither fires nor clears
                let isAbove = r.category >= threshold
                guard isAbove != above else { continue }
                above = isAbove
                let kind = isAbove ? "fired" : "cleared", hour = LocalTime.iso(q.hours[i].hour)
                let key = sensor.source + ":" + sensor.sensor + "|" + hour + "|" + kind
                let notified = isAbove || onClear == .notify, delivered = user.deliveredAlerts[key] != nil
                events.append(AlertEvent(sensorId: sensor.sensor, source: sensor.source, kind: kind, hour: hour, aqi: r.aqi,
                                         category: r.category.name, notified: notified, key: key, delivered: delivered,
                                         shouldNotify: notified && !delivered))
            }
        }
        watched.sort { ($0.sensorId, $0.source ?? "") < ($1.sensorId, $1.source ?? "") }
        // ISO hours of one width sort as text in time order.
        events.sort { ($0.hour, $0.sensorId, $0.source) < ($1.hour, $1.sensorId, $1.source) }

        var test: TestAlert?
        // The newest request made at or before now (its HLC time is when it was requested).
        if let newest = user.testAlerts.facts.values.filter({ Int64($0.stamp.hlc.physicalMillis / 1000) <= p.now })
            .max(by: { $0.stamp < $1.stamp }) {
            let key = "test|" + newest.stamp.id.description, delivered = user.deliveredAlerts[key] != nil
            let requested = Int64(newest.stamp.hlc.physicalMillis / 1000)
            let named = newest.value.isEmpty ? nil : newest.value
            var title = "Test alert", body = "You are warned when a watched sensor reaches \(threshold.title) (AQI \(threshold.aqiRange.lowerBound)+)."
            if let named, let sensor = try? HistoryScreen.lookUp(named, in: sensors) {
                title += ": " + sensor.name
                let r = user.isEnabled(source: sensor.source) ? try world.airQuality(sensor, user: user, now: p.now, hours: 4).current : nil
                body = (r.map { "AQI \($0.aqi), \($0.beyondIndex ? "Beyond the AQI" : $0.category.title). " } ?? "No current reading. ")
                    + "You are warned at \(threshold.title) (AQI \(threshold.aqiRange.lowerBound)+)."
            }
            test = TestAlert(id: newest.stamp.id.description, sensorId: named,
                             time: LocalTime.iso(Int64(newest.stamp.hlc.physicalMillis / 1000)), key: key,
                             delivered: delivered, shouldNotify: !delivered && p.now - requested <= testAlertNotifySeconds,
                             title: title, body: body)
        }
        return Model(threshold: Threshold(name: threshold.name, title: threshold.title,
                                          aqi: threshold.aqiRange.lowerBound, colour: threshold.colourHex),
                     onClear: onClear.name, enabled: enabled,
                     windowStart: LocalTime.iso(windowStart), windowEnd: LocalTime.iso(lastHour),
                     watched: watched, events: events, testAlert: test)
    }

    /// Text: the settings, the watched sensors in aligned columns, the events, the test alert.
    public static func render(_ m: Model) -> [String] {
        var out = ["Alerts: " + (m.enabled ? "on" : "off") + ", warn at \(m.threshold.title) (AQI \(m.threshold.aqi)+, "
                   + "\(m.threshold.name)), when it clears: \(m.onClear)",
                   "Watched sensors:"]
        if m.watched.isEmpty { out.append("  none") }
        for w in m.watched {
            let id = (w.source.map { $0 + ":" } ?? "") + w.sensorId
            var status: String
            if !w.isKnown { status = "not a registered sensor" }
            else if !w.sourceEnabled { status = "source disabled" }
            else if let aqi = w.aqi { status = HistoryScreen.pad(String(aqi), 3, right: true) + "  " + (w.category.flatMap { AQILevel(name: $0)?.title } ?? "") }
            else { status = "  -  no NowCast" }
            if w.isKnown && w.sourceEnabled && w.isStale { status += "  [stale]" }
            out.append("  " + HistoryScreen.pad(id, 18) + HistoryScreen.pad(w.name ?? "", 26) + status)
        }
        out.append("Alerts \(m.windowStart) .. \(m.windowEnd):")
        if !m.enabled { out.append("  alerts are off") } else if m.events.isEmpty { out.append("  none") }
        for e in m.events {
            out.append("  " + e.hour + "  " + HistoryScreen.pad(e.source + ":" + e.sensorId, 18) + HistoryScreen.pad(e.kind, 8)
                       + HistoryScreen.pad(String(e.aqi), 4, right: true) + "  " + HistoryScreen.pad(AQILevel(name: e.category)?.title ?? e.category, 31)
                       + (e.notified ? (e.delivered ? "notified (delivered)" : "notified") : "silent"))
        }
        if let t = m.testAlert {
            out.append("Test alert requested \(t.time)" + (t.sensorId.map { " for \($0)" } ?? "") + " (event \(t.id))"
                       + (t.delivered ? ", delivered" : ""))
            out.append("  \(t.title): \(t.body)")
        } else {
            out.append("No test alert requested")
        }
        return out
    }
}
