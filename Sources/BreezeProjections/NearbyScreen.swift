public import BreezeCore
import BreezeAirQuality

/// Nearby: the closest sensor first, then the others by distance, and the user's favourites as badges with
/// a trend arrow.
///
/// Listed sensors are those the map shows (enabled sources, with a location, not hidden after 7 days), by
/// haversine distance from `--at` (ties by source and id). Favourites are shown whatever their distance and
/// age (the user chose them; a hidden one has no AQI and is flagged stale), from enabled sources only.
public enum NearbyScreen: Screen {
    public static let name = "nearby"
    public static let summary = "sensors by distance from --at (closest first) and favourites with trend arrows"
    public static let userAspects: UserState.Aspects = [.favourites, .sources, .unit]

    /// A sensor in the distance list.
    public struct Entry: Codable, Equatable, Identifiable, Sendable {
        /// The sensor, `source:sensorId` (`Identifiable`: `ForEach`, `.sheet(item:)`, `Chart`).
        public var id: String { "\(source):\(sensorId)" }
        /// The sensor's id within its source.
        public var sensorId: String
        /// The data source.
        public var source: String
        /// The sensor's name.
        public var name: String
        /// Haversine distance from `--at`, km, rounded to 0.01.
        public var distanceKm: Double
        /// NowCast AQI of the last complete hour (nil without one).
        public var aqi: Int?
        /// Category name of `aqi`.
        public var category: String?
        /// EPA colour of `aqi`.
        public var colour: String?
        /// True when the newest reading is stale.
        public var isStale: Bool
    }

    /// A favourite as a badge with a trend arrow.
    public struct Favourite: Codable, Equatable, Identifiable, Sendable {
        /// The sensor, `source:sensorId` (`Identifiable`: `ForEach`, `.sheet(item:)`, `Chart`).
        public var id: String { "\(source):\(sensorId)" }
        /// The sensor's id within its source.
        public var sensorId: String
        /// The data source.
        public var source: String
        /// The sensor's name.
        public var name: String
        /// NowCast AQI now (nil without one).
        public var aqi: Int?
        /// Category name of `aqi`.
        public var category: String?
        /// EPA colour of `aqi`.
        public var colour: String?
        /// The NowCast AQI of the hour 3 hours before the last complete hour.
        public var aqiThreeHoursAgo: Int?
        /// `rising`, `falling` or `steady` (AQI now against 3 hours earlier; steady within 5 % and 0.5);
        /// nil when either is missing.
        public var trend: String?
        /// True when the newest reading is stale (or older than 7 days).
        public var isStale: Bool
        /// Haversine distance from `--at`, km, rounded to 0.01 (nil without a location).
        public var distanceKm: Double?
    }

    /// The read model.
    public struct Model: Codable, Equatable, Sendable {
        /// The closest sensor; nil when no sensor is listed.
        public var closest: Entry?
        /// The other sensors, nearest first.
        public var others: [Entry]
        /// The favourites, in the order of the user's favourites (sorted by their ids).
        public var favourites: [Favourite]
        /// False when the user's place is not known (`p.at` nil: location permission denied, no place chosen):
        /// the empty state, with no sensor by distance and the favourites without one (not an error).
        public var locationKnown: Bool
    }

    /// How many sensors the list shows at most (the closest and the nearest others): a city of thousands of
    /// sensors is a map, not a list.
    public static let maxEntries = 25

    /// Builds the list for `p.user` at `p.now` from `p.at`.
    public static func build(_ world: WorldReader, _ p: ScreenParameters) throws -> Model {
        typealias S = AirQualityScreenSupport
        let user = try world.userState(user: p.user)
        // Nearest first, within the limit the map's header uses (a sensor 6,000 km away is not nearby); none
        // without a place.
        let sorted = try p.at.map { at in try S.visible(near: at, withinKm: S.nearbyLimitKm, world, user, now: p.now, limit: maxEntries) } ?? []
        let entries = sorted.map { s, d in
            Entry(sensorId: s.sensor.sensor, source: s.sensor.source, name: s.sensor.name, distanceKm: S.rounded(d, 2),
                  aqi: s.current?.aqi, category: s.current?.category.name, colour: s.current?.colour, isStale: s.isStale)
        }
        let favourites = try S.favourites(try world.sensors(), user).map { f -> Favourite in
            let q = try world.airQuality(f, user: user, now: p.now, hours: 4)
            let t = S.aqiTrend(q)
            return Favourite(sensorId: f.sensor, source: f.source, name: f.name, aqi: t.now?.aqi,
                             category: t.now?.category.name, colour: t.now?.colour, aqiThreeHoursAgo: t.before?.aqi,
                             trend: t.trend?.rawValue, isStale: S.freshness(q) != .fresh,
                             distanceKm: p.at.flatMap { S.distanceKm(f, $0) }.map { S.rounded($0, 2) })
        }
        return Model(closest: entries.first, others: Array(entries.dropFirst()), favourites: favourites, locationKnown: p.at != nil)
    }

    /// The list as text: aligned rows of distance, AQI and name; favourites with an arrow.
    public static func render(_ m: Model) -> [String] {
        typealias S = AirQualityScreenSupport
        func row(_ e: Entry) -> String {
            S.right(S.fixed(e.distanceKm, 2), 8) + " km  " + S.right(e.aqi.map(String.init) ?? "-", 3) + "  "
                + S.left(S.title(e.category), 30) + " " + e.name + (e.isStale ? "  [stale]" : "")
        }
        var out: [String] = []
        if let c = m.closest { out.append("Closest"); out.append(row(c)) } else {
            out.append(m.locationKnown ? "No sensors nearby" : "Location unknown: no sensors by distance (give --at LAT,LON)")
        }
        if !m.others.isEmpty { out.append("Others") }
        out += m.others.map(row)
        out.append("Favourites" + (m.favourites.isEmpty ? ": none" : ""))
        for f in m.favourites {
            let arrow: String
            switch f.trend {
            case "rising": arrow = "↑"
            case "falling": arrow = "↓"
            case "steady": arrow = "→"
            default: arrow = " "
            }
            out.append("  " + S.right(f.aqi.map(String.init) ?? "-", 3) + " " + arrow + "  " + S.left(S.title(f.category), 30)
                       + " " + f.name + (f.isStale ? "  [stale]" : ""))
        }
        return out
    }
}
