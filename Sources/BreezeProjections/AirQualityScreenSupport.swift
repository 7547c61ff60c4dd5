import BreezeCore
public import BreezeAirQuality

/// How fresh a sensor's newest reading is, the same object on every screen that says it (sheet, detail).
public struct Updated: Codable, Equatable, Sendable {
    /// When the newest reading's measurement ended, ISO 8601 UTC to the second: a PurpleAir reading's time; a
    /// monitor's hour that ended (a reading for 21:00-22:00 says 22:00), or, while that hour is still in
    /// progress, the end of the last complete hour (at 21:30 it says 21:00, 30 min ago).
    public var time: String
    /// Age, seconds (domain.md section 7: now − last reading for PurpleAir, now − end of the observation hour
    /// for monitors; 0 when that end is still ahead of now).
    public var seconds: Int64
    /// "just now", "12 min ago", "3 h ago", "9 days ago".
    public var text: String

    /// Makes the object (the screens do; tests and previews may).
    public init(time: String, seconds: Int64, text: String) {
        self.time = time; self.seconds = seconds; self.text = text
    }
}

/// An AQI reading as the app draws it in a round badge, a pin or a widget: the NowCast AQI, its EPA
/// category and the category's official colour (`shared/docs/domain.md` sections 1.4 and 9). All nil when the
/// sensor has no NowCast for the last complete hour (fewer than 2 of the 3 latest hours have data,
/// domain.md section 2): the app shows a dash, never 0.
public struct AirQualityBadge: Codable, Equatable, Sendable {
    /// The NowCast AQI, 0...500 (500 when `beyondIndex`).
    public var aqi: Int?
    /// The category name: `good`, `moderate`, `usg`, `unhealthy`, `very-unhealthy`, `hazardous`.
    public var category: String?
    /// The EPA colour `#RRGGBB` of the category (TAD Table 2; Very Unhealthy is #8F3F97).
    public var colour: String?
    /// True above the top breakpoint (PM2.5 > 325.4): "Beyond the AQI; follow Hazardous recommendations"
    /// (domain.md section 9).
    public var beyondIndex: Bool

    /// A badge from its parts.
    public init(aqi: Int?, category: String?, colour: String?, beyondIndex: Bool) {
        self.aqi = aqi
        self.category = category
        self.colour = colour
        self.beyondIndex = beyondIndex
    }

    /// A badge for a NowCast result (empty for nil).
    public init(_ r: AQIResult?) {
        aqi = r?.aqi
        category = r?.category.name
        colour = r?.category.colourHex
        beyondIndex = r?.beyondIndex ?? false
    }
}

/// One row of the legend of the EPA AQI scale (domain.md sections 1.2 and 1.4).
public struct AirQualityLegendEntry: Codable, Equatable, Sendable {
    /// The category name (`good` ... `hazardous`).
    public var category: String
    /// The EPA wording, e.g. "Unhealthy for Sensitive Groups".
    public var title: String
    /// The lowest AQI of the category.
    public var low: Int
    /// The highest AQI of the category (500 for Hazardous, which also covers "beyond the AQI").
    public var high: Int
    /// The EPA colour `#RRGGBB`.
    public var colour: String

    /// The six categories in order, 0-50 Good to 301-500 Hazardous.
    public static let all: [AirQualityLegendEntry] = AQILevel.allCases.map {
        AirQualityLegendEntry(category: $0.name, title: $0.title, low: $0.aqiRange.lowerBound,
                              high: $0.aqiRange.upperBound, colour: $0.colourHex)
    }
}

/// Helpers shared by the air-quality screens (detail, sheet, map, nearby, widgets). Internal: the screens'
/// models are the public surface.
enum AirQualityScreenSupport {
    /// How far a sensor may be to say how the air is "where you are" (map header, lock-screen widget); the
    /// pollen screen uses the same 50 km.
    static let nearbyLimitKm = 50.0

    /// One sensor as a list screen sees it: its registration and its pipeline for the user.
    struct SensorNow {
        let sensor: SensorRegistration
        let quality: SensorAirQuality

        /// The NowCast AQI for the last complete hour.
        var current: AQIResult? { quality.current }
        /// Fresh, stale or hidden (see `freshness(_:)`).
        var freshness: Freshness { AirQualityScreenSupport.freshness(quality) }
        var isStale: Bool { freshness != .fresh }
        var point: GeoPoint? {
            guard let lat = sensor.latitude, let lon = sensor.longitude else { return nil }
            return GeoPoint(latitude: lat, longitude: lon)
        }
    }

    // MARK: Finding sensors

    /// The sensor `--sensor` names: `source:id`, or an id that is unique across sources.
    static func sensor(_ world: WorldReader, _ given: String?, screen: String) throws -> SensorRegistration {
        guard let given, !given.isEmpty else {
            throw ScreenError("\(screen): --sensor is required ([SOURCE:]ID, e.g. purpleair:149970)")
        }
        let all = try world.sensors()
        let matches = matching(given, in: all)
        guard let first = matches.first else { throw ScreenError("\(screen): no sensor '\(given)' (--sensor)", awaitsData: true) }
        guard matches.count == 1 else {
            let names = matches.map { "\($0.source):\($0.sensor)" }.joined(separator: ", ")
            throw ScreenError("\(screen): --sensor '\(given)' is ambiguous (\(names)); give SOURCE:ID")
        }
        return first
    }

    /// The sensors a reference names: exactly `source:id` when it has that form and such a sensor exists,
    /// else every sensor whose id is the whole reference (favourites are stored as plain ids, e.g. "131075").
    static func matching(_ ref: String, in sensors: [SensorRegistration]) -> [SensorRegistration] {
        if let colon = ref.firstIndex(of: ":") {
            let source = String(ref[..<colon]), id = String(ref[ref.index(after: colon)...])
            let exact = sensors.filter { $0.source == source && $0.sensor == id }
            if !exact.isEmpty { return exact }
        }
        return sensors.filter { $0.sensor == ref }
    }

    /// True when the user's favourites name this sensor (as `source:id` or as its id).
    static func isFavourite(_ s: SensorRegistration, _ user: UserState) -> Bool {
        user.favourites.contains(s.sensor) || user.favourites.contains("\(s.source):\(s.sensor)")
    }

    /// The user's favourite sensors from enabled sources, in the order of `favourites.elements` (sorted), each
    /// once; favourites naming no known sensor are skipped.
    static func favourites(_ sensors: [SensorRegistration], _ user: UserState) -> [SensorRegistration] {
        var seen: Set<String> = [], out: [SensorRegistration] = []
        for ref in user.favourites.elements {
            for s in matching(ref, in: sensors) where user.isEnabled(source: s.source) {
                if seen.insert("\(s.source)\u{0}\(s.sensor)").inserted { out.append(s) }
            }
        }
        return out
    }

    /// The sensors a map or list shows: from enabled sources (`UserState.isEnabled(source:)`), with a
    /// location, and not hidden (newest reading at most 7 days old, domain.md sections 7 and 9); in the
    /// world's order (source, id). `hours` is how many complete hours each pipeline keeps (4 is enough for
    /// "now" and "3 hours earlier").
    static func visible(_ world: WorldReader, _ user: UserState, now: Int64, hours: Int = 4) throws -> [SensorNow] {
        try visible(try world.sensors(), world, user, now: now, hours: hours)
    }

    /// `visible` of the sensors inside `box` (what the map shows: it costs what is in view).
    static func visible(in box: GeoBox, _ world: WorldReader, _ user: UserState, now: Int64, hours: Int = 4) throws -> [SensorNow] {
        try visible(try world.sensors(in: box), world, user, now: now, hours: hours)
    }

    /// `visible` of the sensors within `km` of `point`, nearest first, with their distances.
    static func visible(near point: (latitude: Double, longitude: Double), withinKm km: Double, _ world: WorldReader,
                        _ user: UserState, now: Int64, hours: Int = 4, limit: Int = .max,
                        until done: ((SensorNow) -> Bool)? = nil) throws -> [(now: SensorNow, km: Double)] {
        // Nearest first, and only as far as needed: `limit` shown, or the first that `done` accepts. The radius
        // grows from 1 km, doubling, up to `km`: what lies within a radius is nearer than anything beyond it, so
        // the first radius that yields enough gives the same list as `km` would, at the cost of what is near.
        var radius = min(km, 1)
        while true {
            var out: [(now: SensorNow, km: Double)] = []
            var finished = false
            for n in try world.sensors(near: point, withinKm: radius) where out.count < limit {
                guard let s = try visible([n.sensor], world, user, now: now, hours: hours).first else { continue }
                out.append((s, n.km))
                if let done, done(s) { finished = true; break }
            }
            if finished || out.count >= limit || radius >= km { return out }
            radius = min(km, radius * 2)
        }
    }

    private static func visible(_ sensors: [SensorRegistration], _ world: WorldReader, _ user: UserState, now: Int64,
                                hours: Int) throws -> [SensorNow] {
        var out: [SensorNow] = []
        for s in sensors where user.isEnabled(source: s.source) && s.latitude != nil && s.longitude != nil {
            // The pipeline says when the newest reading was (from the hours it read, without a query of its own
            // for a sensor that is reporting); a sensor hidden for 7 days is left out.
            let q = try world.airQuality(s, user: user, now: now, hours: hours)
            guard let last = q.lastReading, freshness(lastReading: last, source: s.source, now: now) != .hidden else { continue }
            out.append(SensorNow(sensor: s, quality: q))
        }
        return out
    }

    // MARK: Freshness

    /// The age of the newest reading, seconds, as domain.md section 7 defines it: now − last reading for
    /// PurpleAir; now − END of the observation hour for monitors, whose readings are stamped at the
    /// beginning of their hour (so a monitor reading is `now - time - 3600` old). Nil without readings.
    ///
    /// Note: `SensorAirQuality.freshness` measures monitors from the hour's beginning, which makes them
    /// stale an hour early; the screens here follow domain.md.
    static func ageSeconds(lastReading: Int64?, source: String, now: Int64) -> Int64? {
        guard let t = lastReading else { return nil }
        return now - measuredUntil(t, source: source, now: now)
    }

    /// When the newest reading's measurement ended: a PurpleAir reading's own time; for a monitor, the end of
    /// its hour, or the end of the last complete hour when its hour is still in progress (a reading for
    /// 12:00-13:00 seen at 12:30 says 12:00, 30 min ago: nothing after 12:00 is measured in full yet, and after
    /// an outage the screen must not call such a reading "just now").
    static func measuredUntil(_ t: Int64, source: String, now: Int64) -> Int64 {
        source == "purpleair" ? t : max(t, min(t + 3600, LocalTime.hourStart(now)))
    }

    static func ageSeconds(_ q: SensorAirQuality) -> Int64? {
        ageSeconds(lastReading: q.lastReading, source: q.sensor.source, now: q.now)
    }

    /// The `Updated` of a sensor's newest reading at `q.now`, nil without one.
    static func updated(_ q: SensorAirQuality) -> Updated? {
        guard let t = q.lastReading, let age = ageSeconds(q) else { return nil }
        return Updated(time: iso(measuredUntil(t, source: q.sensor.source, now: q.now)), seconds: max(0, age), text: agoText(age))
    }

    /// Fresh, stale (PurpleAir > 60 min, monitors > 3 h) or hidden (> 7 days, or no reading at all).
    static func freshness(lastReading: Int64?, source: String, now: Int64) -> Freshness {
        guard let age = ageSeconds(lastReading: lastReading, source: source, now: now) else { return .hidden }
        return Freshness(ageSeconds: age, kind: source == "purpleair" ? .purpleAir : .monitor)
    }

    static func freshness(_ q: SensorAirQuality) -> Freshness {
        freshness(lastReading: q.lastReading, source: q.sensor.source, now: q.now)
    }

    /// "just now" (under a minute), "12 min ago", "3 h ago" (under 2 days), "9 days ago"; whole units,
    /// rounded down.
    static func agoText(_ seconds: Int64) -> String {
        let s = max(0, seconds)
        if s < 60 { return "just now" }
        if s < 3600 { return "\(s / 60) min ago" }
        if s < 48 * 3600 { return "\(s / 3600) h ago" }
        return "\(s / 86400) days ago"
    }

    // MARK: Trends

    /// The AQI a bar of hour `i` shows: the hour's NowCast, whenever it is valid, so the last bar shows what
    /// the headline shows; `DetailScreen.HourBar.hasOwnValue` says whether the hour had a value of its own.
    static func barAQI(_ q: SensorAirQuality, _ i: Int) -> AQIResult? { q.nowCast(at: i) }

    /// The NowCast AQI of the last complete hour and of the hour 3 hours before it, and the trend between
    /// them (`Trend`: steady within 5 % and 0.5).
    static func aqiTrend(_ q: SensorAirQuality) -> (now: AQIResult?, before: AQIResult?, trend: Trend?) {
        let last = q.hours.count - 1
        let now = q.nowCast(at: last), before = q.nowCast(at: last - 3)
        return (now, before, Trend(now: now.map { Double($0.aqi) }, before: before.map { Double($0.aqi) }))
    }

    // MARK: Units, numbers, text

    /// A temperature in degrees C in the user's unit (F = C x 1.8 + 32).
    static func temperature(_ c: Double, _ unit: TemperatureUnit) -> Double {
        unit == .fahrenheit ? TemperatureConversion.fahrenheit(fromCelsius: c) : c
    }

    /// "°C" or "°F".
    static func symbol(_ unit: TemperatureUnit) -> String { unit == .fahrenheit ? "°F" : "°C" }

    /// Rounded half away from zero to `places` decimals.
    static func rounded(_ x: Double, _ places: Int) -> Double {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        return (x * scale).rounded(.toNearestOrAwayFromZero) / scale
    }

    /// Haversine distance in km from the user (domain.md section 7), nil without a position or a location.
    static func distanceKm(_ s: SensorRegistration, _ at: (latitude: Double, longitude: Double)?) -> Double? {
        guard let at, let lat = s.latitude, let lon = s.longitude else { return nil }
        return GeoPoint(latitude: at.latitude, longitude: at.longitude)
            .distanceKm(to: GeoPoint(latitude: lat, longitude: lon))
    }

    /// Unix seconds as `2023-10-27T19:00:00Z`.
    static func iso(_ t: Int64) -> String {
        let days = t >= 0 ? t / 86400 : (t - 86399) / 86400
        let rem = t - days * 86400
        let (y, m, d) = ISOTime.civil(days: days)
        return "\(pad(y, 4))-\(pad(Int64(m), 2))-\(pad(Int64(d), 2))T\(pad(rem / 3600, 2)):\(pad(rem % 3600 / 60, 2)):\(pad(rem % 60, 2))Z"
    }

    static func pad(_ v: Int64, _ width: Int) -> String {
        let s = String(v)
        return String(repeating: "0", count: max(0, width - s.count)) + s
    }

    /// Left-aligned in `width` columns.
    static func left(_ s: String, _ width: Int) -> String {
        s.count >= width ? s : s + String(repeating: " ", count: width - s.count)
    }

    /// Right-aligned in `width` columns.
    static func right(_ s: String, _ width: Int) -> String {
        s.count >= width ? s : String(repeating: " ", count: width - s.count) + s
    }

    /// A number with a fixed count of decimals, e.g. `fixed(5.95, 1)` = "6.0" (half away from zero).
    static func fixed(_ x: Double, _ places: Int) -> String {
        // A value too large for whole units of 10^-places in an Int64 (a hostile 1e300) as Swift writes it,
        // never a trap.
        guard x.isFinite, abs(x) < 1e15 else { return String(x) }
        let r = rounded(x, places)
        let negative = r < 0
        var scale: Int64 = 1
        for _ in 0..<places { scale *= 10 }
        let units = Int64((abs(r) * Double(scale)).rounded())
        let whole = String(units / scale)
        let frac = places == 0 ? "" : "." + pad(units % scale, places)
        return (negative && units != 0 ? "-" : "") + whole + frac
    }

    /// The title of a category name (`usg` -> "Unhealthy for Sensitive Groups"), or a dash.
    static func title(_ category: String?) -> String {
        category.flatMap(AQICategory.init(name:))?.title ?? "-"
    }

    /// A badge as text: "AQI  42 Good" or "AQI   - no current reading".
    static func badgeText(_ b: AirQualityBadge) -> String {
        guard let aqi = b.aqi else { return "AQI   - (no current reading)" }
        return "AQI \(right(String(aqi), 3)) \(title(b.category))\(b.beyondIndex ? " (Beyond the AQI)" : "")"
    }
}
