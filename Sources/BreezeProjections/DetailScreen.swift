public import BreezeCore
import BreezeAirQuality

/// The sensor detail screen: one glowing NowCast AQI and where it sits on the 0-500 scale, the last 24 hours
/// as bars, the EPA's advice for the category, and temperature, humidity and PM2.5 with their trends.
///
/// Per user: the PurpleAir correction the user chose changes the PM2.5 and so the AQI (domain.md section 9),
/// and temperatures are in the user's unit.
public enum DetailScreen: Screen {
    public static let name = "detail"
    public static let summary = "one sensor: NowCast AQI, 24 hourly bars, EPA advice, temperature/humidity/PM2.5 trends (--sensor)"
    public static let userAspects: UserState.Aspects = [.unit, .sources]

    /// One hour of the 24-hour chart.
    public struct HourBar: Codable, Equatable, Identifiable, Sendable {
        /// The hour (`Identifiable`: `ForEach`, `.sheet(item:)`, `Chart`).
        public var id: String { hour }
        /// Start of the hour, ISO 8601 UTC (`2023-10-27T19:00:00Z`); the bar covers the hour after it.
        public var hour: String
        /// The hour's NowCast AQI (domain.md section 2), the number the headline shows for the last hour, so
        /// the headline and the last bar always agree; nil when `missing`.
        public var aqi: Int?
        /// The category name of `aqi`.
        public var category: String?
        /// The EPA colour of `aqi`.
        public var colour: String?
        /// What the bar shows: true when the hour has a complete value of its own; false when it has none (no
        /// readings, or for PurpleAir fewer than 90 % of the expected valid readings, domain.md section 3.3)
        /// and `aqi` is the NowCast carried by the hours before it (at least 2 of the 3 latest: the app draws
        /// it as an estimate, hatched).
        public var hasOwnValue: Bool
        /// True when the hour has no valid NowCast (fewer than 2 of the 3 latest hours with a value): no AQI,
        /// never 0, nothing drawn.
        public var missing: Bool
    }

    /// The EPA advice for the current category (domain.md section 1.5; EPA-456/F-15-005).
    public struct Advice: Codable, Equatable, Sendable {
        /// Who `sensitiveGroups` is for: "Unusually sensitive people" at Moderate, "Sensitive groups" otherwise
        /// (people with heart or lung disease, older adults, children and teenagers).
        public var sensitiveAudience: String
        /// The advice for sensitive groups.
        public var sensitiveGroups: String
        /// The advice for everyone else; nil where the guide gives none (Unhealthy for Sensitive Groups: the
        /// app shows `levelOfConcern`, "The general public is not likely to be affected.").
        public var everyone: String?
        /// Extra lines for people with asthma or heart disease (Unhealthy for Sensitive Groups).
        public var notes: [String]
        /// AirNow's "level of health concern" sentence for the category.
        public var levelOfConcern: String
    }

    /// A value with its unit and its trend against 3 hours earlier.
    public struct Measure: Codable, Equatable, Sendable {
        /// The newest hourly value (rounded to 0.1), nil when the sensor has none.
        public var value: Double?
        /// `°C`/`°F` (the user's unit), `%` or `µg/m³`.
        public var unit: String
        /// `rising`, `falling` or `steady` (`Trend`: steady within 5 % and 0.5) comparing the newest hourly
        /// value with the hour 3 hours before it; nil when either is missing. Temperature trends are judged
        /// in degrees C whatever the display unit, so that a unit switch never changes an arrow.
        public var trend: String?
    }

    /// The read model.
    public struct Model: Codable, Equatable, Sendable {
        /// The sensor's id within its source (e.g. `149970`).
        public var sensorId: String
        /// The data source (`purpleair`, `airnow`, ...).
        public var source: String
        /// The sensor's name.
        public var name: String
        /// The PurpleAir correction applied (`epa-2021`, `none`, ...); `none` for monitors.
        public var correction: String
        /// True when the newest reading is older than 60 min (PurpleAir) or 3 h after its hour (monitors).
        public var isStale: Bool
        /// `fresh`, `stale` or `hidden` (older than 7 days, or no reading at all).
        public var freshness: String
        /// How fresh the newest reading at or before now is (the sheet's object); nil when there is none.
        public var updated: Updated?
        /// The NowCast AQI for the last complete hour; nil when fewer than 2 of the 3 latest hours have data.
        public var aqi: Int?
        /// The category name of `aqi`.
        public var category: String?
        /// The EPA colour of `aqi`.
        public var colour: String?
        /// "Beyond the AQI" (PM2.5 above 325.4; `aqi` is then 500).
        public var beyondIndex: Bool
        /// Where `aqi` sits on the 0-500 scale, 0...1 (`aqi / 500`); nil without an AQI.
        public var scalePosition: Double?
        /// The last 24 complete hours, oldest first, the last one ending at or before now.
        public var hourly: [HourBar]
        /// Advice for the category of `aqi`; nil without an AQI.
        public var advice: Advice?
        /// Ambient temperature (PurpleAir housing less 8 F, domain.md section 3.1) in the user's unit.
        public var temperature: Measure
        /// Ambient relative humidity (PurpleAir housing plus 4 %).
        public var humidity: Measure
        /// The hourly PM2.5 behind the AQI (for PurpleAir after the user's correction), µg/m³.
        public var pm25: Measure
    }

    /// Builds the detail of `p.sensor` for `p.user` at `p.now`.
    public static func build(_ world: WorldReader, _ p: ScreenParameters) throws -> Model {
        typealias S = AirQualityScreenSupport
        let sensor = try S.sensor(world, p.sensor, screen: name)
        let user = try world.userState(user: p.user)
        let q = try world.airQuality(sensor, user: user, now: p.now, hours: 24)
        let current = q.current
        let start = max(0, q.hours.count - 24)
        let hourly: [HourBar] = (start..<q.hours.count).map { i in
            let h = q.hours[i]
            let r = S.barAQI(q, i)
            return HourBar(hour: S.iso(h.hour), aqi: r?.aqi, category: r?.category.name, colour: r?.category.colourHex,
                           hasOwnValue: h.pm25 != nil, missing: r == nil)
        }
        let unit = user.effectiveUnit
        let t = q.latestAndThreeHoursBefore(\.temperatureC)
        let rh = q.latestAndThreeHoursBefore(\.humidity)
        let pm = q.latestAndThreeHoursBefore(\.pm25)
        let advice = current.map { r -> Advice in
            let a = r.category.particleAdvice
            return Advice(sensitiveAudience: a.sensitiveAudience, sensitiveGroups: a.sensitiveGroups,
                          everyone: a.everyoneElse, notes: a.notes, levelOfConcern: r.category.levelOfConcern)
        }
        let freshness = S.freshness(q)
        return Model(
            sensorId: sensor.sensor, source: sensor.source, name: sensor.name, correction: q.correction.id,
            isStale: freshness != .fresh, freshness: freshness.rawValue, updated: S.updated(q),
            aqi: current?.aqi, category: current?.category.name, colour: current?.category.colourHex,
            beyondIndex: current?.beyondIndex ?? false,
            scalePosition: current.map { min(1, max(0, Double($0.aqi) / 500)) },
            hourly: hourly, advice: advice,
            temperature: Measure(value: t.now.map { S.rounded(S.temperature($0, unit), 1) }, unit: S.symbol(unit),
                                 trend: Trend(now: t.now, before: t.before)?.rawValue),
            humidity: Measure(value: rh.now.map { S.rounded($0, 1) }, unit: "%",
                              trend: Trend(now: rh.now, before: rh.before)?.rawValue),
            pm25: Measure(value: pm.now.map { S.rounded($0, 1) }, unit: "µg/m³",
                          trend: Trend(now: pm.now, before: pm.before)?.rawValue))
    }

    /// The detail as text: the headline, the scale, the measures, the advice, then one row per hour with
    /// its AQI right-aligned and a bar of `█` scaled so that 40 characters is the chart's top (the highest
    /// hour rounded up to a multiple of 50, at least 100); a missing hour shows a dash and no bar.
    public static func render(_ m: Model) -> [String] {
        typealias S = AirQualityScreenSupport
        var out: [String] = []
        out.append("\(m.name) (\(m.source):\(m.sensorId))  correction \(m.correction)")
        out.append("updated \(m.updated.map { "\($0.time) (\($0.text))" } ?? "never")\(m.isStale ? "  [stale]" : "")")
        if let aqi = m.aqi {
            out.append("AQI \(aqi)  \(S.title(m.category))\(m.beyondIndex ? "  Beyond the AQI" : "")  \(m.colour ?? "")")
            let width = 50, filled = Int(((m.scalePosition ?? 0) * Double(width)).rounded())
            out.append("0 [" + String(repeating: "=", count: max(0, filled - 1)) + "|"
                       + String(repeating: "-", count: width - max(1, filled)) + "] 500")
        } else {
            out.append("AQI -  (no NowCast: fewer than 2 of the 3 latest hours have data)")
        }
        for (label, measure) in [("Temperature", m.temperature), ("Humidity", m.humidity), ("PM2.5", m.pm25)] {
            let value = measure.value.map { S.fixed($0, 1) } ?? "-"
            out.append(S.left(label, 12) + S.right(value, 7) + " " + S.left(measure.unit, 6) + (measure.trend ?? "-"))
        }
        if let a = m.advice {
            out.append("\(a.sensitiveAudience): \(a.sensitiveGroups)")
            out.append("Everyone else: \(a.everyone ?? a.levelOfConcern)")
            for n in a.notes { out.append("  \(n)") }
        }
        let top = max(100, ((m.hourly.compactMap(\.aqi).max() ?? 0) + 49) / 50 * 50)
        out.append("Last 24 hours (UTC, NowCast AQI; a full bar of 40 █ is AQI \(top))")
        for h in m.hourly {
            let label = String(h.hour.dropFirst(5).prefix(11)).replacingOccurrences(of: "T", with: " ")
            guard let aqi = h.aqi else {
                out.append("\(label) " + S.right("-", 3) + " " + S.left("", 40) + " missing")
                continue
            }
            let n = min(40, Int((Double(aqi) / Double(top) * 40).rounded()))
            let mark: Character = h.hasOwnValue ? "█" : "░"   // an hour without its own value: the NowCast, as an estimate
            out.append("\(label) " + S.right(String(aqi), 3) + " " + S.left(String(repeating: mark, count: max(aqi > 0 ? 1 : 0, n)), 40)
                       + " " + S.title(h.category) + (h.hasOwnValue ? "" : " (no value of its own: NowCast)"))
        }
        return out
    }
}
