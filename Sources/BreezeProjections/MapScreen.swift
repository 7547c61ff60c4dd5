public import BreezeCore
import BreezeAirQuality

/// The map: a two-weight header saying how the air is where the user is, the selected metric, and the
/// sensors in the bounding box as numbered pins in their colour.
///
/// Which sensors: from enabled sources (`UserState.isEnabled(source:)`), with a location, not hidden (newest
/// reading at most 7 days old, domain.md section 9), inside `--bbox` (all when there is none; a box whose
/// west edge is east of its east edge crosses the antimeridian). Stale ones are shown and flagged.
///
/// The header: with `--at`, the nearest such sensor (anywhere, not only in the box) that has a NowCast AQI;
/// without `--at`, the MEDIAN AQI of the fresh pins with an AQI (for an even count the higher of the two
/// middle values, erring towards caution). The median describes the typical air in view without one odd
/// sensor deciding it; the worst pin is still visible as a pin.
public enum MapScreen: Screen {
    public static let name = "map"
    public static let summary = "the map: header in words, pins in a box (--bbox S,W,N,E) for --metric aqi|temperature|humidity|pm25"
    public static let userAspects: UserState.Aspects = [.unit, .sources]

    /// The metrics the segment switches between.
    public static let metrics = ["aqi", "temperature", "humidity", "pm25"]

    /// The header over the map.
    public struct Header: Codable, Equatable, Sendable {
        /// The heavy line, e.g. "The air is good" (or "No current readings").
        public var title: String
        /// The light line: where the number comes from, e.g. "AQI 23 at South Troy #2, 1.4 km away".
        public var subtitle: String
        /// `nearest` (with `--at`), `median` (without), or `none` when no sensor has an AQI.
        public var basis: String
        /// The AQI the header speaks of, with category and colour.
        public var badge: AirQualityBadge
        /// The sensor used (`nearest` only), as `source:id`.
        public var sensor: String?
        /// Distance to that sensor, km, rounded to 0.01 (`nearest` only).
        public var distanceKm: Double?
        /// How many sensors the median was taken over (`median` only).
        public var sensorCount: Int?
    }

    /// One pin.
    public struct Pin: Codable, Equatable, Identifiable, Sendable {
        /// The sensor, `source:sensorId` (`Identifiable`: `ForEach`, `.sheet(item:)`, `Chart`).
        public var id: String { "\(source):\(sensorId)" }
        /// The sensor's id within its source.
        public var sensorId: String
        /// The data source.
        public var source: String
        /// The sensor's name.
        public var name: String
        /// Degrees north.
        public var latitude: Double
        /// Degrees east.
        public var longitude: Double
        /// The value in the selected metric: NowCast AQI; temperature in the user's unit; humidity %;
        /// hourly PM2.5 µg/m³ (after the user's correction) - the newest hourly value, rounded to 0.1. Nil
        /// when the sensor has none (drawn grey, with a dash).
        public var value: Double?
        /// The number on the pin: the AQI, or the value rounded to a whole number (PM2.5 to 0.1); "-"
        /// without a value.
        public var label: String
        /// The class of the value: the EPA category name for `aqi` and `pm25`, the band name of the
        /// temperature or humidity scale (see `MapScreen.temperatureBands`, `humidityBands`).
        public var category: String?
        /// The colour `#RRGGBB` for the class; nil without a value.
        public var colour: String?
        /// True when the sensor's newest reading is stale.
        public var isStale: Bool
    }

    /// The read model.
    public struct Model: Codable, Equatable, Sendable {
        /// How the air is where the user is.
        public var header: Header
        /// The selected metric: `aqi`, `temperature`, `humidity` or `pm25`.
        public var metric: String
        /// The unit of the pins' values: `AQI`, `°C`/`°F`, `%`, `µg/m³`.
        public var unit: String
        /// The pins, by source then id.
        public var pins: [Pin]
    }

    /// A colour band of a non-EPA metric: values from `from` (inclusive) up to the next band's `from`.
    public struct Band: Sendable {
        /// The lowest value of the band (degrees C for temperature, % for humidity).
        public let from: Double
        /// The band's name, used as the pin's `category`.
        public let name: String
        /// The band's colour `#RRGGBB`.
        public let colour: String
    }

    /// Temperature bands, judged in degrees C whatever the display unit (this project's scale; the EPA has
    /// none): freezing below 0, cold 0-10, cool 10-18, mild 18-24, warm 24-30, hot 30-35, very hot from 35,
    /// blue through green to dark red.
    public static let temperatureBands: [Band] = [
        Band(from: -.infinity, name: "freezing", colour: "#1E3A8A"), Band(from: 0, name: "cold", colour: "#3B82F6"),
        Band(from: 10, name: "cool", colour: "#22D3EE"), Band(from: 18, name: "mild", colour: "#22C55E"),
        Band(from: 24, name: "warm", colour: "#F59E0B"), Band(from: 30, name: "hot", colour: "#EF4444"),
        Band(from: 35, name: "very-hot", colour: "#7F1D1D"),
    ]

    /// Relative humidity bands after the EPA's indoor guidance ("below 60 percent, ideally between 30 and 50",
    /// https://www.epa.gov/mold/brief-guide-mold-moisture-and-your-home): dry below 30, comfortable 30-50,
    /// damp 50-60, humid from 60.
    public static let humidityBands: [Band] = [
        Band(from: -.infinity, name: "dry", colour: "#E9C46A"), Band(from: 30, name: "comfortable", colour: "#2A9D8F"),
        Band(from: 50, name: "damp", colour: "#457B9D"), Band(from: 60, name: "humid", colour: "#1D3557"),
    ]

    static func band(_ value: Double, _ bands: [Band]) -> Band {
        bands.last { value >= $0.from } ?? bands[0]
    }

    /// Builds the map for `p.user` at `p.now`.
    public static func build(_ world: WorldReader, _ p: ScreenParameters) throws -> Model {
        typealias S = AirQualityScreenSupport
        guard metrics.contains(p.metric) else {
            throw ScreenError("map: --metric '\(p.metric)': expected aqi, temperature, humidity or pm25")
        }
        let user = try world.userState(user: p.user)
        let unit = user.effectiveUnit
        // Only what is in view runs the pipeline (the library's world finds it with a spatial index).
        let inBox = try p.bbox.map { try S.visible(in: $0, world, user, now: p.now) } ?? S.visible(world, user, now: p.now)
        let pins = inBox.map { s -> Pin in
            var value: Double?, label = "-", category: String?, colour: String?
            switch p.metric {
            case "aqi":
                if let r = s.current {
                    value = Double(r.aqi); label = String(r.aqi); category = r.category.name; colour = r.colour
                }
            case "pm25":
                if let c = s.quality.latestAndThreeHoursBefore(\.pm25).now {
                    // Shown truncated to 0.1 as the EPA truncates before the AQI (domain.md 1.1), so the value
                    // and its colour agree (9.06 shows 9.0, green; rounding would show 9.1, a Moderate value).
                    let shown = BreakpointTable.pm25Daily2024.truncate(c)
                    value = shown; label = S.fixed(shown, 1)
                    let r = BreakpointTable.pm25Daily2024.aqi(concentration: c)
                    category = r?.category.name; colour = r?.colour
                }
            case "temperature":
                if let c = s.quality.latestAndThreeHoursBefore(\.temperatureC).now {
                    let v = S.temperature(c, unit)
                    value = S.rounded(v, 1); label = S.fixed(v, 0)
                    let b = band(c, temperatureBands)
                    category = b.name; colour = b.colour
                }
            default:
                if let h = s.quality.latestAndThreeHoursBefore(\.humidity).now {
                    value = S.rounded(h, 1); label = S.fixed(h, 0)
                    let b = band(h, humidityBands)
                    category = b.name; colour = b.colour
                }
            }
            return Pin(sensorId: s.sensor.sensor, source: s.sensor.source, name: s.sensor.name,
                       latitude: s.sensor.latitude!, longitude: s.sensor.longitude!, value: value, label: label,
                       category: category, colour: colour, isStale: s.isStale)
        }
        let unitName: String
        switch p.metric {
        case "aqi": unitName = "AQI"
        case "pm25": unitName = "µg/m³"
        case "temperature": unitName = S.symbol(unit)
        default: unitName = "%"
        }
        return Model(header: try header(world, user, inBox: inBox, p), metric: p.metric, unit: unitName, pins: pins)
    }

    static func header(_ world: WorldReader, _ user: UserState, inBox: [AirQualityScreenSupport.SensorNow],
                       _ p: ScreenParameters) throws -> Header {
        typealias S = AirQualityScreenSupport
        if let at = p.at {
            // The nearest sensor within the limit that has a current AQI (ties: the first in sensor order).
            let near = try S.visible(near: at, withinKm: S.nearbyLimitKm, world, user, now: p.now) { $0.current != nil }
            guard let (s, d, r) = near.lazy.compactMap({ n in n.now.current.map { (n.now, n.km, $0) } }).first else {
                return Header(title: "No current readings", subtitle: "No sensor within \(Int(S.nearbyLimitKm)) km has a current AQI",
                              basis: "none", badge: AirQualityBadge(nil), sensor: nil, distanceKm: nil, sensorCount: nil)
            }
            return Header(title: words(r), subtitle: "AQI \(r.aqi) at \(s.sensor.name), \(S.fixed(d, 1)) km away"
                            + (s.isStale ? " (stale)" : ""),
                          basis: "nearest", badge: AirQualityBadge(r), sensor: "\(s.sensor.source):\(s.sensor.sensor)",
                          distanceKm: S.rounded(d, 2), sensorCount: nil)
        }
        let results = inBox.filter { !$0.isStale }.compactMap(\.current).sorted { $0.aqi < $1.aqi }
        guard !results.isEmpty else {
            return Header(title: "No current readings", subtitle: "No fresh sensor in view has a current AQI",
                          basis: "none", badge: AirQualityBadge(nil), sensor: nil, distanceKm: nil, sensorCount: 0)
        }
        let r = results[results.count / 2]
        return Header(title: words(r),
                      subtitle: "Median AQI \(r.aqi) of \(results.count) sensor\(results.count == 1 ? "" : "s") in view",
                      basis: "median", badge: AirQualityBadge(r), sensor: nil, distanceKm: nil, sensorCount: results.count)
    }

    /// "The air is good", "The air is unhealthy for sensitive groups", "The air is beyond the AQI".
    static func words(_ r: AQIResult) -> String {
        r.beyondIndex ? "The air is beyond the AQI" : "The air is \(r.category.title.lowercased())"
    }

    /// The map as text: the header's two lines, then one aligned row per pin.
    public static func render(_ m: Model) -> [String] {
        typealias S = AirQualityScreenSupport
        var out = [m.header.title, m.header.subtitle, "metric \(m.metric) (\(m.unit)), \(m.pins.count) pin\(m.pins.count == 1 ? "" : "s")"]
        let nameWidth = min(32, m.pins.map(\.name.count).max() ?? 0)
        for pin in m.pins {
            out.append(S.right(pin.label, 6) + "  " + S.left(pin.name, nameWidth) + "  "
                       + S.right(S.fixed(pin.latitude, 4), 9) + " " + S.right(S.fixed(pin.longitude, 4), 10) + "  "
                       + S.left(pin.category ?? "-", 15) + " " + (pin.colour ?? "-      ") + (pin.isStale ? "  stale" : ""))
        }
        return out
    }
}
