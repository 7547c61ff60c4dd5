public import BreezeCore
import BreezeAirQuality

/// The History screen: this week's daily highs beside last week's, and today's hourly PM2.5 to scrub through
/// (the app's "History compares the week's daily highs with last week and lets you drag through today's
/// PM2.5"; issue 5, "History").
///
/// - A day is a calendar day on the sensor's wall clock (`LocalTime`: its IANA zone, daylight saving
///   included), so "Tuesday" and "today" are the days the phone's calendar shows, and today's hours are the
///   hours its clock shows (a summer day in New York starts at 04:00 UTC). An hour belongs to the day its start
///   (hour-beginning) falls in. domain.md sections 1.3 and 9 name local *standard* time: that is the EPA's rule
///   for a regulatory daily mean (`DailyAverage`); these bars are the highs a person sees on their calendar, so
///   they follow the clock (issue 16).
/// - The daily high is the **maximum of the hourly NowCast AQI** over the hours of that day (domain.md section
///   9, "daily highs (History) use the daily maximum of hourly NowCast AQI"), not the EPA's daily 24-hour-mean
///   AQI: the app's bars are highs. Hours come from `SensorAirQuality`, so a PurpleAir sensor's values carry
///   the user's correction. Only complete hours count (the hour in progress has no value yet); a day where no
///   hour has a valid NowCast has no high (`aqi` nil), never 0.
/// - `thisWeek` is the 7 days ending with the local day of `p.now` (today so far), oldest first; `lastWeek` the
///   7 days before them, so `thisWeek[i]` and `lastWeek[i]` are the same weekday.
/// - `today` is today's hourly PM2.5 from local midnight to the last complete hour, oldest first, in µg/m³
///   rounded to 0.1 (a missing hour has `pm25` nil, JSON null), each with its local hour and local time; a day
///   of a daylight-saving change has 23 or 25 hours.
public enum HistoryScreen: Screen {
    public static let name = "history"
    public static let summary = "daily highs of NowCast AQI this week and last (the sensor's local days), today's PM2.5"
    public static let userAspects: UserState.Aspects = [.sources]

    /// The History read model.
    public struct Model: Codable, Equatable, Sendable {
        /// The sensor's id within its source.
        public var sensorId: String
        /// The source, e.g. `purpleair`, `airnow`.
        public var source: String
        /// The sensor's display name.
        public var name: String
        /// The IANA zone whose wall clock defines the days (`UTC` when the sensor has none).
        public var timeZone: String
        /// Its offset from UTC at `now`, e.g. `-04:00` in summer in New York.
        public var utcOffset: String
        /// False when the zone was missing or not in the time-zone database (UTC was used).
        public var timeZoneKnown: Bool
        /// The PurpleAir correction applied for this user (`none` for monitors).
        public var correction: String
        /// True when the newest reading is stale (or hidden) at `now` (domain.md section 7).
        public var isStale: Bool
        /// The 7 days ending today, oldest first.
        public var thisWeek: [Day]
        /// The 7 days before `thisWeek`, oldest first.
        public var lastWeek: [Day]
        /// Today's hourly PM2.5, local midnight to the last complete hour.
        public var today: [HourPM25]
    }

    /// One day's high.
    public struct Day: Codable, Equatable, Identifiable, Sendable {
        /// The local day, `YYYY-MM-DD` (`Identifiable`: `ForEach`, `.sheet(item:)`, `Chart`).
        public var id: String { date }
        /// `YYYY-MM-DD` on the local calendar.
        public var date: String
        /// `Mon` ... `Sun`.
        public var weekday: String
        /// The highest hourly NowCast AQI of the day; nil when no hour has a NowCast.
        public var aqi: Int?
        /// The EPA category name of `aqi` (e.g. `moderate`), as on every screen; nil with `aqi`.
        public var category: String?
        /// The category's EPA colour, `#RRGGBB`; nil with `aqi`.
        public var colour: String?
        /// How many hours of the day have a value of their own (`DetailScreen.HourBar.hasOwnValue`): the hours
        /// `aqi` is the highest of. Hours the detail draws as estimates (a NowCast carried by the hours before,
        /// `hasOwnValue` false) are neither counted nor part of `aqi`.
        public var hours: Int

        enum CodingKeys: String, CodingKey { case date, weekday, aqi, category, colour, hours }

    }

    /// One hour of today's PM2.5 series.
    public struct HourPM25: Codable, Equatable, Identifiable, Sendable {
        /// The hour (`Identifiable`: `ForEach`, `Chart`).
        public var id: String { hour }
        /// Start of the hour, ISO 8601 UTC.
        public var hour: String
        /// The same instant on the local clock with its offset, e.g. `2023-10-27T00:00:00-04:00`.
        public var localTime: String
        /// The hour the local clock shows, 0-23 (a repeated hour of a daylight-saving end appears twice).
        public var localHour: Int
        /// PM2.5 in µg/m³ (the pipeline's hourly value, corrected for PurpleAir), rounded to 0.1; nil when
        /// the hour is missing.
        public var pm25: Double?

        enum CodingKeys: String, CodingKey { case hour, localTime, localHour, pm25 }

    }

    /// Builds the model for `p.sensor` as seen by `p.user` at `p.now`.
    public static func build(_ world: WorldReader, _ p: ScreenParameters) throws -> Model {
        guard let key = p.sensor else { throw ScreenError("history needs a sensor: --sensor [SOURCE:]ID") }
        let sensor = try lookUp(key, in: try world.sensors())
        let user = try world.userState(user: p.user)
        let local = LocalTime(timeZone: sensor.timeZone)
        let today = local.day(of: p.now)
        let firstDayStart = local.start(ofDay: today - 13)
        let lastHour = LocalTime.hourStart(p.now) - 3600
        let count = max(1, Int((lastHour - firstDayStart) / 3600) + 1)
        let q = try world.airQuality(sensor, user: user, now: p.now, hours: count)

        // Hourly NowCast AQI per local day.
        var highs: [Int64: (aqi: Int, hours: Int)] = [:]
        for i in q.hours.indices where q.hours[i].hour >= firstDayStart {
            guard let r = q.hourAQI(at: i) else { continue }     // an hour needs its own value, as a detail bar does
            let d = local.day(of: q.hours[i].hour)
            let old = highs[d]
            highs[d] = (max(old?.aqi ?? r.aqi, r.aqi), (old?.hours ?? 0) + 1)
        }
        func day(_ d: Int64) -> Day {
            let h = highs[d]
            let cat = h.flatMap { AQILevel(aqi: $0.aqi) }
            return Day(date: LocalTime.date(ofDay: d), weekday: LocalTime.weekday(ofDay: d),
                       aqi: h?.aqi, category: cat?.name, colour: cat?.colourHex, hours: h?.hours ?? 0)
        }
        let todayStart = local.start(ofDay: today)
        let series = q.hours.filter { $0.hour >= todayStart }.map {
            HourPM25(hour: LocalTime.iso($0.hour), localTime: local.localISO($0.hour), localHour: local.localHour(of: $0.hour),
                     pm25: $0.pm25.map { ($0 * 10).rounded() / 10 })
        }
        return Model(sensorId: sensor.sensor, source: sensor.source, name: sensor.name, timeZone: local.zone,
                     utcOffset: local.offsetText(at: p.now), timeZoneKnown: local.isKnown, correction: q.correction.id,
                     isStale: q.freshness != .fresh,
                     thisWeek: (0..<7).map { day(today - 6 + Int64($0)) },
                     lastWeek: (0..<7).map { day(today - 13 + Int64($0)) },
                     today: series)
    }

    /// The registered sensor a key names: `source:id`, or an id that only one source uses.
    static func lookUp(_ key: String, in sensors: [SensorRegistration]) throws -> SensorRegistration {
        // One rule for naming sensors across screens (`source:id`, or an id unique across sources).
        let matches = AirQualityScreenSupport.matching(key, in: sensors)
        guard let first = matches.first else { throw ScreenError("sensor '\(key)' is not registered") }
        guard matches.count == 1 else {
            throw ScreenError("sensor '\(key)' is ambiguous: give one of "
                              + matches.map { "\($0.source):\($0.sensor)" }.sorted().joined(separator: ", "))
        }
        return first
    }

    /// Text: per weekday, this week's high and last week's side by side as bars (one character per 10 AQI,
    /// at most 30), then today's PM2.5 series.
    public static func render(_ m: Model) -> [String] {
        var out = ["History: \(m.name) (\(m.source):\(m.sensorId))" + (m.isStale ? "  [stale]" : ""),
                   "Days in \(m.timeZone) (UTC\(m.utcOffset) now)"
                       + (m.timeZoneKnown ? "" : ", zone unknown: UTC used")
                       + (m.source == "purpleair" ? ", correction \(m.correction)" : ""),
                   "Daily high NowCast AQI",
                   pad("this week", 50) + "last week"]
        func cell(_ d: Day) -> String {
            let head = "\(d.weekday) \(d.date) "
            guard let aqi = d.aqi else { return pad(head + "  -  no data", 50) }
            let bar = String(repeating: "█", count: min(30, (aqi + 9) / 10))
            return pad(head + pad(String(aqi), 4, right: true) + " " + pad(bar, 31), 50)
        }
        for i in 0..<min(m.thisWeek.count, m.lastWeek.count) {
            out.append((cell(m.thisWeek[i]) + cell(m.lastWeek[i])).historyTrimmedRight)
        }
        let categories = (m.thisWeek + m.lastWeek).compactMap(\.category)
        if let worst = AQILevel.allCases.last(where: { categories.contains($0.name) }) {
            out.append("Highest category of the two weeks: \(worst.title)")
        }
        out.append("Today's PM2.5 (ug/m3, local hour):")
        if m.today.isEmpty { out.append("  no complete hour yet") }
        var line = ""
        for (i, h) in m.today.enumerated() {
            line += pad(String(h.localHour), 2, right: true) + " " + pad(h.pm25.map { String($0) } ?? "-", 7, right: true) + "  "
            if i % 6 == 5 || i == m.today.count - 1 {
                out.append("  " + line.historyTrimmedRight)
                line = ""
            }
        }
        return out
    }

    static func pad(_ s: String, _ width: Int, right: Bool = false) -> String {
        let fill = String(repeating: " ", count: max(0, width - s.count))
        return right ? fill + s : s + fill
    }
}

extension String {
    fileprivate var historyTrimmedRight: String {
        var s = self
        while s.last == " " { s.removeLast() }
        return s
    }
}
