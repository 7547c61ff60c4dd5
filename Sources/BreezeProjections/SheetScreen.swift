public import BreezeCore
import BreezeAirQuality

/// The selected-sensor sheet that rises over the map: the reading in a round badge, how fresh and how far,
/// the favourite star, and the legend of the EPA scale.
public enum SheetScreen: Screen {
    public static let name = "sheet"
    public static let summary = "the selected sensor's sheet: AQI badge, how fresh, how far (--at), favourite star, legend (--sensor)"
    public static let userAspects: UserState.Aspects = [.favourites, .sources]

    /// One legend row, with the badge's category marked.
    public struct LegendRow: Codable, Equatable, Identifiable, Sendable {
        /// The category (`Identifiable`: `ForEach`, `.sheet(item:)`, `Chart`).
        public var id: String { category }
        /// `good` ... `hazardous`.
        public var category: String
        /// The EPA wording.
        public var title: String
        /// Lowest AQI of the category.
        public var low: Int
        /// Highest AQI of the category (500 for Hazardous).
        public var high: Int
        /// The EPA colour `#RRGGBB`.
        public var colour: String
        /// True for the category of the badge.
        public var isCurrent: Bool
    }

    /// The read model.
    public struct Model: Codable, Equatable, Sendable {
        /// The sensor's id within its source.
        public var sensorId: String
        /// The data source.
        public var source: String
        /// The sensor's name.
        public var name: String
        /// The round badge: NowCast AQI, category name, EPA colour (empty without a NowCast).
        public var badge: AirQualityBadge
        /// How fresh; nil when the sensor has no reading at or before now.
        public var updated: Updated?
        /// True when the reading is stale (PurpleAir > 60 min, monitors > 3 h) or hidden.
        public var isStale: Bool
        /// Great-circle (haversine, R = 6371 km) distance from `--at`, km, rounded to 0.01; nil without a
        /// position or without a sensor location.
        public var distanceKm: Double?
        /// True when the sensor is among the user's favourites (as `source:id` or its id).
        public var isFavourite: Bool
        /// The six EPA categories with their AQI ranges and colours.
        public var legend: [LegendRow]
    }

    /// Builds the sheet of `p.sensor` for `p.user` at `p.now` (distance from `p.at` when given).
    public static func build(_ world: WorldReader, _ p: ScreenParameters) throws -> Model {
        typealias S = AirQualityScreenSupport
        let sensor = try S.sensor(world, p.sensor, screen: name)
        let user = try world.userState(user: p.user)
        let q = try world.airQuality(sensor, user: user, now: p.now, hours: 1)
        let badge = AirQualityBadge(q.current)
        return Model(
            sensorId: sensor.sensor, source: sensor.source, name: sensor.name, badge: badge,
            updated: S.updated(q),
            isStale: S.freshness(q) != .fresh,
            distanceKm: S.distanceKm(sensor, p.at).map { S.rounded($0, 2) },
            isFavourite: S.isFavourite(sensor, user),
            legend: AirQualityLegendEntry.all.map {
                LegendRow(category: $0.category, title: $0.title, low: $0.low, high: $0.high, colour: $0.colour,
                          isCurrent: $0.category == badge.category)
            })
    }

    /// The sheet as text: name and star, badge, freshness and distance, then the legend as aligned rows.
    public static func render(_ m: Model) -> [String] {
        typealias S = AirQualityScreenSupport
        var out = ["\(m.isFavourite ? "★" : "☆") \(m.name) (\(m.source):\(m.sensorId))"]
        out.append(S.badgeText(m.badge) + (m.badge.colour.map { "  \($0)" } ?? ""))
        let fresh = m.updated.map { "updated \($0.text) (\($0.seconds) s)" } ?? "no readings"
        let far = m.distanceKm.map { "\(S.fixed($0, 2)) km away" } ?? "distance unknown (give --at)"
        out.append("\(fresh)\(m.isStale ? " [stale]" : "")  ·  \(far)")
        for row in m.legend {
            out.append((row.isCurrent ? "> " : "  ") + S.right("\(row.low)-\(row.high)", 7) + "  " + row.colour + "  " + row.title)
        }
        return out
    }
}
