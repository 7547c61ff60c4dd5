public import BreezeCore
public import BreezeAirQuality

/// The pollen card ("Allergy Tracker", powered by Google) and its detail sheets: the Google Pollen API
/// forecast stored for the place nearest the user on one day (`shared/docs/domain.md` sections 4 and 9).
///
/// - Place: among the `pollen` facts for the day (`p.date`, else the date of `p.now` on the user's calendar,
///   `p.timeZone`: just after midnight in Berlin it is already the new day), the one nearest
///   `p.at` by haversine distance, if within `maxDistanceKm` (50 km); ties go to the smaller latitude, then
///   longitude. No forecast within 50 km for that day gives the explicit empty state (`isEmpty`, `message`),
///   as the app's `PollenView` has one; without `p.at` (no place known) it is the empty state too.
/// - Items: every pollen type (GRASS, TREE, WEED) then every plant, in the source's order.
/// - Out of season: an entry without `indexInfo` has `value` nil and `inSeason` false, never 0
///   (domain.md section 9). An entry with an index keeps Google's own `inSeason` flag when Google gives one
///   (the 2025-08-03 German forecast has GRASS at UPI 2 "Low" with `inSeason: false`: the tail of the grass
///   season), else counts as in season.
/// - Scale: the six UPI levels 0-5 (None, Very Low, Low, Moderate, High, Very High). The app's design shows
///   a five-row scale (None 0, Low 1, Moderate 2-3, High 4, Very High 5) that predates the six UPI levels;
///   domain.md section 4 wins, so this model carries the six levels and the category text from the data,
///   and each row says which design row it falls in (`designLevel`: UPI 1 Very Low is the design's Low, UPI 2
///   and 3 its Moderate). Every row has a colour: the one a stored forecast gives for that level (any day,
///   any place: Google's colours are per level), else the level's named swatch (`colourSource`).
/// - The card's scale marks the day's highest level; each item's own `scale` (what its detail sheet shows)
///   marks that item's level, none for an item out of season.
/// - Turning the `google-pollen` source off gives the empty state ("Google Pollen is turned off").
public enum PollenScreen: Screen {
    public static let name = "pollen"
    public static let summary = "pollen forecast near --at for the day: types and plants with UPI 0-5"
    public static let userAspects: UserState.Aspects = [.sources]

    /// The farthest a stored forecast's place may be from the user, km.
    public static let maxDistanceKm = 50.0
    /// The app's empty-state text.
    public static let emptyMessage = "No pollen data available"
    /// The attribution the card's header shows.
    public static let attribution = "Powered by Google"

    /// The read model.
    public struct Model: Codable, Equatable, Sendable {
        /// The day, `YYYY-MM-DD`: `p.date`, else today on the user's calendar (`timeZone`).
        public var date: String
        /// The IANA zone whose calendar gave `date` (`UTC` without one).
        public var timeZone: String
        /// True when no forecast for the place and day exists (the empty state); `items` is then empty.
        public var isEmpty: Bool
        /// The empty state's text (nil when there are items).
        public var message: String?
        /// Where the forecast was requested for (nil in the empty state).
        public var latitude: Double?
        public var longitude: Double?
        /// The forecast's region code, e.g. `DE`.
        public var regionCode: String?
        /// Distance from the user to the forecast's place, km (rounded to 0.1; nil in the empty state).
        public var distanceKm: Double?
        /// The header's attribution, "Powered by Google".
        public var attribution: String
        /// The cards: pollen types, then plants.
        public var items: [PollenItem]
        /// The six UPI levels; the day's highest index among the items is marked active.
        public var scale: [PollenScaleRow]
        /// The day's highest UPI value among the items (nil when none has an index).
        public var activeLevel: Int?
    }

    /// The words Google's Pollen API writes in `specialColors`/`specialShapes` when a plant has nothing to
    /// say, lower-cased: "None" in the real English response, and the same word in the languages the API's
    /// `languageCode` serves most (German, French, Spanish, Italian, Portuguese, Dutch, Nordic, Polish, Czech,
    /// Russian, Turkish, Japanese, Chinese, Korean). Only the English one is in the project's real data.
    public static let placeholders: Set<String> = [
        "none", "keine", "keiner", "aucun", "aucune", "ninguno", "ninguna", "nessuno", "nessuna", "nenhum", "nenhuma",
        "geen", "ingen", "inga", "ei mitään", "brak", "žádné", "нет", "yok", "なし", "无", "無", "없음", "-", "—",
    ]

    /// One card, as the app's `PollenItem` (plus `colour`, `inSeason` and two texts of the source).
    public struct PollenItem: Codable, Equatable, Identifiable, Sendable {
        /// The source's code, e.g. `GRASS`, `GRAMINALES`.
        public var id: String
        /// Display name, e.g. "Grass", "Grasses".
        public var name: String
        /// Universal Pollen Index 0-5; nil when out of season (no index), never 0 for that.
        public var value: Int?
        /// The row of the design's five-row scale `value` falls in (`PollenLevel.designLevel`: UPI 1 Very Low
        /// is the design's "Low", UPI 2 and 3 its "Moderate"); nil without an index.
        public var designLevel: String?
        /// The source's category text for the index, e.g. "Very Low" (nil without an index).
        public var category: String?
        /// True for a plant (`plantInfo`), false for a pollen type (`pollenTypeInfo`).
        public var isPlant: Bool
        /// The plant's picture (`plantDescription.picture`).
        public var imageUrl: String?
        /// Plant family, e.g. "Poaceae".
        public var family: String?
        /// Peak season, e.g. "Late spring, summer".
        public var season: String?
        /// `specialColors` and `specialShapes` joined with a space; Google's placeholder for nothing ("None",
        /// or the same word in the response's language: `placeholders`) and empty parts are left out (nil when nothing remains).
        public var appearance: String?
        /// Health tips (Google gives them on pollen types only; plants have none).
        public var healthRecommendations: [String]
        /// `#RRGGBB` from the source's index colour (nil without an index).
        public var colour: String?
        /// The UPI level of `value` (nil without an index): the design's `item.level` (its `title`, and
        /// `swatchColour` where the forecast gives no `colour`).
        public var level: PollenLevel? { value.flatMap(PollenLevel.init(upi:)) }
        /// False without an index; otherwise Google's `inSeason`, true when Google does not say.
        public var inSeason: Bool
        /// The source's description of the index level.
        public var indexDescription: String?
        /// Plants with cross reactions (plants only).
        public var crossReaction: String?
        /// The index scale of this item's detail sheet: the six rows with this item's level active.
        public var scale: [PollenScaleRow]
    }

    /// One row of the index scale.
    public struct PollenScaleRow: Codable, Equatable, Identifiable, Sendable {
        /// The UPI value of the row (`Identifiable`: `ForEach`, `.sheet(item:)`, `Chart`).
        public var id: Int { value }
        /// UPI value 0-5.
        public var value: Int
        /// Google's level name ("None", "Very Low", ... "Very High").
        public var level: String
        /// The range text the row shows, e.g. "3".
        public var range: String
        /// The row of the design's five-row scale this level falls in ("None", "Low", "Moderate", "High",
        /// "Very High"; `PollenLevel.designLevel`).
        public var designLevel: String
        /// `#RRGGBB`: the colour stored forecasts give this level, else its named swatch.
        public var colour: String
        /// `data` (a forecast gave it) or `swatch` (`PollenLevel.swatchColour`).
        public var colourSource: String
        /// True for the active level (the day's highest on the card, the item's own on its sheet).
        public var isActive: Bool
    }

    /// The Google Pollen source, which the user can turn off.
    public static let source = "google-pollen"

    public static func build(_ world: WorldReader, _ p: ScreenParameters) throws -> Model {
        let day = try FactScreenCalendar.referenceDay(p)
        let date = FactScreenCalendar.iso(day)
        let zone = FactScreenCalendar.userZone(p).zone
        func empty(_ message: String, colours: [Int: String] = [:]) -> Model {
            Model(date: date, timeZone: zone, isEmpty: true, message: message, latitude: nil, longitude: nil, regionCode: nil, distanceKm: nil,
                  attribution: attribution, items: [], scale: scale(colours: colours, active: nil), activeLevel: nil)
        }
        // Without a place (location permission denied, none chosen): the empty state, not an error.
        guard let at = p.at else { return empty("Location unknown: allow location access or choose a place to see the pollen forecast") }
        let here = GeoPoint(latitude: at.latitude, longitude: at.longitude)
        if try !world.userState(user: p.user).isEnabled(source: source) {
            return empty("\(DataSource.named(source)?.name ?? source) is turned off")
        }
        var best: (forecast: PollenForecast, km: Double)?
        var colours: [Int: String] = [:]   // level -> the first colour a stored forecast gives it (key order)
        for case .pollenForecast(let f) in try world.facts(kind: "pollen", keyPrefix: "") {
            for e in f.entries {
                if let v = e.indexValue.map(Int.init), let c = e.colour, colours[v] == nil { colours[v] = c }
            }
            guard f.date == date else { continue }
            let km = here.distanceKm(to: GeoPoint(latitude: f.latitude, longitude: f.longitude))
            guard km <= maxDistanceKm else { continue }
            if let b = best, (b.km, b.forecast.latitude, b.forecast.longitude) <= (km, f.latitude, f.longitude) { continue }
            best = (f, km)
        }
        guard let (forecast, km) = best else {
            return empty("\(emptyMessage) for \(date) within \(Int(maxDistanceKm)) km of \(at.latitude),\(at.longitude)", colours: colours)
        }
        let items = forecast.entries.map { item($0, colours: colours) }
        let active = items.compactMap(\.value).max()
        return Model(date: date, timeZone: zone, isEmpty: items.isEmpty, message: items.isEmpty ? emptyMessage : nil,
                     latitude: forecast.latitude, longitude: forecast.longitude, regionCode: forecast.regionCode,
                     distanceKm: (km * 10).rounded() / 10, attribution: attribution,
                     items: items, scale: scale(colours: colours, active: active), activeLevel: active)
    }

    /// One entry as a card.
    static func item(_ e: PollenEntry, colours: [Int: String]) -> PollenItem {
        let value = e.indexValue.map(Int.init)
        let parts = [e.specialColors, e.specialShapes].compactMap { $0.map(FactScreenCalendar.trim) }
            .filter { !$0.isEmpty && !placeholders.contains($0.lowercased()) }
        return PollenItem(id: e.code, name: e.displayName, value: value,
                          designLevel: value.flatMap { PollenLevel(rawValue: $0)?.designLevel },
                          category: value == nil ? nil : e.category,
                          isPlant: e.isPlant, imageUrl: e.picture, family: e.family, season: e.season,
                          appearance: parts.isEmpty ? nil : parts.joined(separator: " "),
                          healthRecommendations: e.healthRecommendations, colour: value == nil ? nil : e.colour,
                          inSeason: value == nil ? false : (e.inSeason ?? true),
                          indexDescription: value == nil ? nil : e.indexDescription, crossReaction: e.crossReaction,
                          scale: scale(colours: colours, active: value))
    }

    /// The six UPI rows, each with its design row, its colour (`colours` from the data, else the swatch) and
    /// the active mark.
    static func scale(colours: [Int: String], active: Int?) -> [PollenScaleRow] {
        PollenLevel.allCases.map { level in
            let data = colours[level.rawValue]
            return PollenScaleRow(value: level.rawValue, level: level.title, range: String(level.rawValue), designLevel: level.designLevel,
                                  colour: data ?? level.swatchColour, colourSource: data == nil ? "swatch" : "data",
                                  isActive: level.rawValue == active)
        }
    }

    public static func render(_ model: Model) -> [String] {
        var out = ["Allergy Tracker (\(model.attribution))  \(model.date)"]
        if model.isEmpty {
            out.append("")
            out.append(model.message ?? emptyMessage)
            return out
        }
        if let lat = model.latitude, let lon = model.longitude {
            out.append("forecast for \(lat),\(lon)" + (model.regionCode.map { " (\($0))" } ?? "")
                       + (model.distanceKm.map { ", \(FactScreenCalendar.fixed($0, 1)) km away" } ?? ""))
        }
        out.append("")
        let width = max(8, model.items.map(\.name.count).max() ?? 0) + 2
        for i in model.items {
            let bar: String
            let text: String
            if let v = i.value {
                bar = String(repeating: "#", count: v) + String(repeating: ".", count: 5 - v)
                text = "\(v)/5  \(i.category ?? "")" + (i.inSeason ? "" : " (not in season)")
            } else {
                bar = "     "
                text = "-    out of season"
            }
            out.append(FactScreenCalendar.pad(i.name, width) + FactScreenCalendar.pad(i.isPlant ? "plant" : "type", 7)
                       + "[\(bar)] " + text)
        }
        out.append("")
        out.append("Universal Pollen Index")
        for r in model.scale {
            out.append((r.isActive ? "> " : "  ") + FactScreenCalendar.pad(r.level, 11) + r.range + "  " + r.colour
                       + (r.colourSource == "data" ? "" : " (swatch)"))
        }
        return out
    }
}

/// Calendar helpers shared by the pollen, climate and biomarker screens (days in the user's zone,
/// `ScreenParameters.timeZone`, through `LocalTime`; strict `YYYY-MM-DD`), never the machine's own zone.
enum FactScreenCalendar {
    typealias Day = (year: Int, month: Int, day: Int)

    /// The UTC calendar day of a Unix time.
    static func utcDay(_ t: Int64) -> Day {
        let days = t >= 0 ? t / 86_400 : (t - 86_399) / 86_400
        let c = ISOTime.civil(days: days)
        return (Int(c.year), c.month, c.day)
    }

    /// Unix seconds of 00:00 UTC on a day.
    static func startOfDay(_ d: Day) -> Int64 {
        ISOTime.days(year: Int64(d.year), month: Int64(d.month), day: Int64(d.day)) * 86_400
    }

    /// A strict `YYYY-MM-DD` that exists in the Gregorian calendar, or nil.
    static func parse(_ s: String) -> Day? {
        let u = Array(s.utf8)
        guard u.count == 10, u[4] == 0x2D, u[7] == 0x2D else { return nil }
        func num(_ r: Range<Int>) -> Int? {
            var v = 0
            for i in r {
                let d = Int(u[i]) - 0x30
                guard d >= 0 && d <= 9 else { return nil }
                v = v * 10 + d
            }
            return v
        }
        guard let y = num(0..<4), let m = num(5..<7), let d = num(8..<10), (1...12).contains(m), d >= 1,
              d <= MonthDay.daysIn(month: m, leapYear: MonthDay.isLeapYear(y)) else { return nil }
        return (y, m, d)
    }

    /// The user's zone (`p.timeZone`); UTC when nil or not in the time-zone database (a screen is never an
    /// error for it; the model names the zone used, and `breeze screen --tz` refuses an unknown name itself).
    static func userZone(_ p: ScreenParameters) -> LocalTime {
        guard let name = p.timeZone else { return .utc }
        let z = LocalTime(timeZone: name)
        return z.isKnown ? z : .utc
    }

    /// `p.date` when given (it must be a real `YYYY-MM-DD`), else the local day of `p.now` in the user's zone.
    static func referenceDay(_ p: ScreenParameters) throws -> Day {
        guard let text = p.date else {
            let c = ISOTime.civil(days: userZone(p).day(of: p.now))
            return (Int(c.year), c.month, c.day)
        }
        guard let d = parse(text) else { throw ScreenError("--date '\(text)' is not a calendar date YYYY-MM-DD") }
        return d
    }

    /// `YYYY-MM-DD`.
    static func iso(_ d: Day) -> String {
        func p(_ v: Int, _ w: Int) -> String { let s = String(v); return String(repeating: "0", count: max(0, w - s.count)) + s }
        return "\(p(d.year, 4))-\(p(d.month, 2))-\(p(d.day, 2))"
    }

    /// `x` rounded half away from zero to `digits` decimals, as a Double (for stable, readable JSON).
    static func round(_ x: Double, _ digits: Int) -> Double {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        return (x * scale).rounded() / scale
    }

    /// `x` with exactly `digits` decimals, without Foundation's `String(format:)`.
    static func fixed(_ x: Double, _ digits: Int, sign: Bool = false) -> String {
        // Too large for whole units in an Int64 (a hostile 1e300): as Swift writes it, never a trap.
        guard x.isFinite, abs(x) < 1e15 else { return (sign && x > 0 ? "+" : "") + String(x) }
        var scale: Int64 = 1
        for _ in 0..<digits { scale *= 10 }
        let n = Int64((abs(x) * Double(scale)).rounded())
        let whole = n / scale, frac = n % scale
        var s = String(whole)
        if digits > 0 {
            let f = String(frac)
            s += "." + String(repeating: "0", count: digits - f.count) + f
        }
        if x < 0 && n != 0 { return "-" + s }
        return (sign ? "+" : "") + s
    }

    /// `s` without leading and trailing spaces, tabs and newlines.
    static func trim(_ s: String) -> String {
        let ws: Set<Character> = [" ", "\t", "\n", "\r"]
        guard let a = s.firstIndex(where: { !ws.contains($0) }), let b = s.lastIndex(where: { !ws.contains($0) }) else { return "" }
        return String(s[a...b])
    }

    /// `s` padded with spaces to `n` characters.
    static func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
}

