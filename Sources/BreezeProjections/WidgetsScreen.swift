public import BreezeCore
import BreezeAirQuality
import Foundation

/// The widgets: the Lock Screen widget, a Live Activity and a tile coloured by its reading, all for one
/// sensor: with `--at`, the nearest shown sensor (enabled source, located, not hidden) that has a NowCast AQI
/// (a widget needs a number), else the nearest shown sensor; without `--at` or with no sensor shown, the
/// first of the user's favourites (in sorted order) from an enabled source. With no sensor at all (a new user
/// away from every sensor) the model is the widget's placeholder, not an error: `basis` `placeholder`, no
/// sensor id or source, the name "No sensor nearby", no AQI, the grey "No data" tile.
public enum WidgetsScreen: Screen {
    public static let name = "widgets"
    public static let summary = "lock-screen widget, live activity and tile for the nearest sensor (--at) or the first favourite"
    public static let userAspects: UserState.Aspects = [.favourites, .sources, .unit]

    /// The Lock Screen widget.
    public struct LockScreen: Codable, Equatable, Sendable {
        /// The sensor's id within its source (nil on the placeholder).
        public var sensorId: String?
        /// The data source (nil on the placeholder).
        public var source: String?
        /// The sensor's name (the placeholder's text on the placeholder).
        public var name: String
        /// NowCast AQI now (nil without one).
        public var aqi: Int?
        /// Category name of `aqi`.
        public var category: String?
        /// EPA colour of `aqi`.
        public var colour: String?
        /// True when the newest reading is stale.
        public var isStale: Bool
        /// Why this sensor: `nearest`, `favourite`, or `placeholder` when there is no sensor to show.
        public var basis: String
        /// Distance from `--at`, km, rounded to 0.01 (nil without `--at`).
        public var distanceKm: Double?
    }

    /// The Live Activity: AQI now and where it is heading.
    public struct LiveActivity: Codable, Equatable, Sendable {
        /// The sensor's name.
        public var name: String
        /// NowCast AQI now.
        public var aqi: Int?
        /// Category name of `aqi`.
        public var category: String?
        /// EPA colour of `aqi`.
        public var colour: String?
        /// `rising`, `falling` or `steady`: the AQI now against 3 hours earlier (steady within 5 % and 0.5);
        /// nil when either is missing.
        public var trend: String?
        /// The last 4 hourly bars, oldest first (3 hours ago ... now): NowCast AQI as the detail chart's bars
        /// show it, nil for an hour without a valid NowCast.
        public var recent: [Int?]
    }

    /// The tile, coloured by its reading.
    public struct Tile: Codable, Equatable, Sendable {
        /// NowCast AQI now (nil without one).
        public var value: Int?
        /// The number as shown: the AQI or "-".
        public var label: String
        /// The category's EPA wording, or "No data".
        public var title: String
        /// Background: the EPA colour of the category; iOS system grey `#8E8E93` without a reading.
        public var background: String
        /// Text colour, black `#000000` or white `#FFFFFF`, whichever contrasts more with the background
        /// (WCAG 2 contrast ratio): black on green, yellow, orange and red, white on purple and maroon.
        public var foreground: String
    }

    /// The read model.
    public struct Model: Codable, Equatable, Sendable {
        /// The Lock Screen widget.
        public var lockScreen: LockScreen
        /// The Live Activity.
        public var liveActivity: LiveActivity
        /// The tile.
        public var tile: Tile
    }

    /// Builds the widgets for `p.user` at `p.now`.
    public static func build(_ world: WorldReader, _ p: ScreenParameters) throws -> Model {
        typealias S = AirQualityScreenSupport
        let user = try world.userState(user: p.user)
        var chosen: (sensor: SensorRegistration, basis: String)?
        if let at = p.at {
            let ranked = try S.visible(near: at, withinKm: S.nearbyLimitKm, world, user, now: p.now) { $0.current != nil }.map(\.now)
            if let s = ranked.first(where: { $0.current != nil }) ?? ranked.first { chosen = (s.sensor, "nearest") }
        }
        if chosen == nil, let f = S.favourites(try world.sensors(), user).first { chosen = (f, "favourite") }
        guard let (sensor, basis) = chosen else { return placeholder }
        let q = try world.airQuality(sensor, user: user, now: p.now, hours: 4)
        let t = S.aqiTrend(q)
        let r = t.now
        let recent = (max(0, q.hours.count - 4)..<q.hours.count).map { S.barAQI(q, $0)?.aqi }
        let background = r?.category.colourHex ?? "#8E8E93"
        return Model(
            lockScreen: LockScreen(sensorId: sensor.sensor, source: sensor.source, name: sensor.name, aqi: r?.aqi,
                                   category: r?.category.name, colour: r?.colour, isStale: S.freshness(q) != .fresh,
                                   basis: basis, distanceKm: S.distanceKm(sensor, p.at).map { S.rounded($0, 2) }),
            liveActivity: LiveActivity(name: sensor.name, aqi: r?.aqi, category: r?.category.name, colour: r?.colour,
                                       trend: t.trend?.rawValue, recent: recent),
            tile: Tile(value: r?.aqi, label: r.map { String($0.aqi) } ?? "-",
                       title: r.map { $0.beyondIndex ? "Beyond the AQI" : $0.category.title } ?? "No data",
                       background: background, foreground: textColour(on: background)))
    }

    /// The text of the placeholder widget.
    public static let placeholderName = "No sensor nearby"

    /// The widgets with no sensor to show: what a widget draws before the user has a favourite or a sensor
    /// within the nearby radius.
    public static var placeholder: Model {
        let grey = "#8E8E93"
        return Model(lockScreen: LockScreen(sensorId: nil, source: nil, name: placeholderName, aqi: nil, category: nil, colour: nil,
                                            isStale: false, basis: "placeholder", distanceKm: nil),
                     liveActivity: LiveActivity(name: placeholderName, aqi: nil, category: nil, colour: nil, trend: nil,
                                                recent: [nil, nil, nil, nil]),
                     tile: Tile(value: nil, label: "-", title: "No data", background: grey, foreground: textColour(on: grey)))
    }

    /// Black or white, whichever has the higher WCAG 2 contrast ratio with `hex` (`#RRGGBB`): relative
    /// luminance L from linearised sRGB; black wins when (L + 0.05) / 0.05 >= 1.05 / (L + 0.05).
    static func textColour(on hex: String) -> String {
        let digits = Array(hex.dropFirst())
        guard digits.count == 6 else { return "#000000" }
        func channel(_ i: Int) -> Double {
            let c = Double(Int(String(digits[i..<i + 2]), radix: 16) ?? 0) / 255
            return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
        }
        let l = 0.2126 * channel(0) + 0.7152 * channel(2) + 0.0722 * channel(4)
        return (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) ? "#000000" : "#FFFFFF"
    }

    /// The widgets as text: three small aligned blocks.
    public static func render(_ m: Model) -> [String] {
        typealias S = AirQualityScreenSupport
        let l = m.lockScreen, a = m.liveActivity, t = m.tile
        let arrow = ["rising": "↑ rising", "falling": "↓ falling", "steady": "→ steady"][a.trend ?? ""] ?? "? unknown"
        return [
            "Lock Screen    " + S.right(l.aqi.map(String.init) ?? "-", 3) + "  " + S.title(l.category) + "  " + l.name
                + " (\(l.basis)\(l.distanceKm.map { ", \(S.fixed($0, 2)) km" } ?? ""))" + (l.isStale ? "  [stale]" : ""),
            "Live Activity  " + S.right(a.aqi.map(String.init) ?? "-", 3) + "  " + arrow + "  last 4 h: "
                + a.recent.map { S.right($0.map(String.init) ?? "-", 3) }.joined(separator: " "),
            "Tile           " + S.right(t.label, 3) + "  " + t.title + "  on " + t.background + ", text " + t.foreground,
        ]
    }
}
