public import BreezeCore
import BreezeAirQuality

/// The "Local Climate Trend" chart: the temperature around one calendar date at one station across decades
/// (`shared/docs/domain.md` sections 5, 8 and 9; the app's `ClimateChartView`).
///
/// - Station: `p.sensor` is the station id as imported (e.g. `GHCND:USC00381770`); without it, the station
///   nearest `p.at` among stations whose `temperature` facts carry coordinates (haversine; ties to the smaller
///   id), within `stationLimitKm`: beyond it the model says `no-station` (a station 6,000 km away describes
///   another climate). Neither given is an error (a question the screen cannot ask).
/// - Date: the calendar date (month and day) of `p.date`, else of `p.now` on the user's calendar
///   (`p.timeZone`, named in `timeZone`). Only days on or
///   before that reference day are used, so the chart shows the history as of then, never later data.
/// - Temperature: a single day's maximum is weather, not climate, so each point is the mean of the daily
///   maxima (`tmax`, `DailyTemperature.maxC`) over a window of `windowDaysEachSide` days either side of the date
///   (15 days), when at least `minimumDays` of them have a maximum (a majority; fewer and the year is
///   skipped). In the latest year the window stops at the reference day (nothing later is used), so it has 8
///   days at most and needs all of them: a station whose data lag the reference day by more than a day
///   shows the previous year as its latest. Each point says its centre day (`date`) and how many days it
///   averaged (`days`).
/// - Points: one per decade year (years divisible by 10) from the first decade year not before the station's
///   earliest data (1930, 1940, ... for Clemson) up to the latest year, plus the latest year that has a value
///   for the date when it is not a decade year itself. A decade year without a value is skipped and listed in
///   `skippedYears`, so the chart never shows a hole as zero.
/// - February 29 in a common year is centred on February 28 (domain.md sections 8 and 9).
/// - `status`: `ok`; `not-enough-history` when the points span fewer than `minimumSpanYears` years (30, the
///   length of a WMO climate normal: four years of a new station are not a trend), with the points there are
///   and no `change`; `no-data` (no value for the date on or before the reference day); `no-station`; and
///   `source-off` when the user turned the station's source off (`open-meteo` for `open-meteo:` stations,
///   else `noaa`). Empty states are models, never errors: the app shows `message`.
/// - `baselineYear` is the first point's year; `change` is the last point minus the first. Each bar's class
///   compares the point with the baseline **in degrees C**: `warming-strong` > +2, `warming` > +0.5,
///   `neutral` within +-0.5 inclusive, `cooling` < -0.5 (`AnomalyClass`), whatever unit is shown.
/// - Units: `ClimateDataPoint.temperature` is in C, as the design's `ClimateDataPoint` (its view converts
///   with `displayTemperature`); `displayTemperature`, `difference` and `change` are in the user's unit
///   (`UserState.effectiveUnit`; F = C x 1.8 + 32, differences x1.8 with no +32), `unit` names it. Values are
///   rounded to 0.01; classes use the C difference rounded only to 1e-6 C (so a difference of exactly 0.5 C
///   stays `neutral` despite binary floating point).
public enum ClimateScreen: Screen {
    public static let name = "climate"
    public static let summary = "temperature around this calendar date across decades at a station (--sensor or --at)"
    public static let userAspects: UserState.Aspects = [.unit, .sources]

    /// Days either side of the date averaged for a point.
    public static let windowDaysEachSide = 7
    /// Days of the window that must have a maximum.
    public static let minimumDays = 8
    /// The span of years, first point to last, below which there is not enough history for a trend.
    public static let minimumSpanYears = 30
    /// How far a station chosen by position may be.
    public static let stationLimitKm = 100.0

    /// The read model.
    public struct Model: Codable, Equatable, Sendable {
        /// `ok`, `not-enough-history`, `no-data`, `no-station` or `source-off`.
        public var status: String
        /// What the app shows instead of (or under) the chart when `status` is not `ok`.
        public var message: String?
        /// The station's id, e.g. `GHCND:USC00381770` (nil for `no-station`).
        public var station: String?
        /// The station's location, when known.
        public var latitude: Double?
        public var longitude: Double?
        /// Distance from `p.at` to the station, km (rounded to 0.1), when the station was chosen by position.
        public var distanceKm: Double?
        /// The calendar date shown, `MM-DD`.
        public var date: String
        /// The reference day, `YYYY-MM-DD` (nothing after it is used).
        public var referenceDate: String
        /// The IANA zone whose calendar gave the reference day (`UTC` without one).
        public var timeZone: String
        /// What each point's temperature is: `tmax-window`, the mean daily maximum around the date.
        public var measure: String
        /// Days either side of the date in each point's window.
        public var windowDaysEachSide: Int
        /// `°C` or `°F`, the user's unit (of `displayTemperature`, `difference` and `change`).
        public var unit: String
        /// The bars, oldest first.
        public var data: [ClimateDataPoint]
        /// The first point's year (nil without points).
        public var baselineYear: Int?
        /// The last point minus the first, in the user's unit (a difference: x1.8 for F, no +32); nil unless
        /// `status` is `ok`.
        public var change: Double?
        /// The change's class, in C (the colour of the change summary); nil with `change`.
        public var changeClass: String?
        /// Decade years in range that had no value for the date and were left out.
        public var skippedYears: [Int]
    }

    /// One bar, as the app's `ClimateDataPoint` plus what it averaged and its class.
    public struct ClimateDataPoint: Codable, Equatable, Identifiable, Sendable {
        /// The year (one bar each) (`Identifiable`: `ForEach`, `.sheet(item:)`, `Chart`).
        public var id: Int { year }
        /// The year.
        public var year: Int
        /// The mean daily maximum around the date, in C (the design's unit for this field).
        public var temperature: Double
        /// The same in the user's unit.
        public var displayTemperature: Double
        /// The window's centre day, `YYYY-MM-DD` (February 28 standing for 29 in common years).
        public var date: String
        /// Days of the window with a maximum (at least `minimumDays`).
        public var days: Int
        /// This point minus the baseline, in the user's unit (x1.8 for F).
        public var difference: Double
        /// `warming-strong`, `warming`, `neutral` or `cooling`, classified in C against the baseline.
        public var barClass: String
    }

    /// The source of a station's facts, for the user's source switch.
    public static func source(ofStation station: String) -> String {
        station.hasPrefix("open-meteo:") ? "open-meteo" : "noaa"
    }

    public static func build(_ world: WorldReader, _ p: ScreenParameters) throws -> Model {
        let ref = try FactScreenCalendar.referenceDay(p)
        let refDate = FactScreenCalendar.iso(ref)
        let zone = FactScreenCalendar.userZone(p).zone
        guard let md = MonthDay(month: ref.month, day: ref.day) else { throw ScreenError("--date '\(refDate)' is not a calendar date") }
        let user = try world.userState(user: p.user)
        let fahrenheit = user.effectiveUnit == .fahrenheit
        func empty(_ status: String, _ message: String, station: String? = nil, distance: Double? = nil) -> Model {
            Model(status: status, message: message, station: station, latitude: nil, longitude: nil,
                  distanceKm: distance.map { FactScreenCalendar.round($0, 1) }, date: md.description, referenceDate: refDate, timeZone: zone,
                  measure: "tmax-window", windowDaysEachSide: windowDaysEachSide, unit: fahrenheit ? "°F" : "°C", data: [], baselineYear: nil,
                  change: nil, changeClass: nil, skippedYears: [])
        }
        let station: String, distance: Double?
        if let s = p.sensor, !s.isEmpty {
            (station, distance) = (s, nil)
        } else if let at = p.at {
            guard let near = try nearestStation(world, to: at) else {
                return empty("no-station", "No temperature station within \(Int(stationLimitKm)) km")
            }
            (station, distance) = (near.station, near.km)
        } else {
            // Without a station or a place (location permission denied): the no-station state, not an error.
            return empty("no-station", "Location unknown: allow location access or choose a place to see its climate trend")
        }
        if !user.isEnabled(source: source(ofStation: station)) {
            return empty("source-off", "\(DataSource.named(source(ofStation: station))?.name ?? "This source") is turned off",
                         station: station, distance: distance)
        }

        let refDay = ISOTime.days(year: Int64(ref.year), month: Int64(ref.month), day: Int64(ref.day))
        // The station's days are read a window at a time (its keys are `<station>|<YYYY-MM-DD>`, in date order),
        // never all of them: a point costs one range of 15 days, so the screen costs the same for a station
        // with a year of data as for one with ninety.
        let stationKey = EventBody.factKeyComponent(station) + "|"
        let stationEnd = stationKey + "\u{10FFFF}"
        func day(_ t: DailyTemperature) -> Int64? {
            guard let d = FactScreenCalendar.parse(t.date) else { return nil }
            return ISOTime.days(year: Int64(d.year), month: Int64(d.month), day: Int64(d.day))
        }
        func key(_ t: DailyTemperature) -> String { stationKey + EventBody.factKeyComponent(t.date) }
        /// The station's days in key (date) order from one end, `batch` at a time, until `take` says stop.
        func scan(descending: Bool, to: String = stationEnd, _ take: (DailyTemperature) -> Bool) throws {
            let batch = 64
            var (from, upTo) = (stationKey, to)
            while true {
                let rows = try world.facts(kind: "temperature", keyFrom: from, keyTo: upTo, limit: batch, descending: descending)
                for case .dailyTemperature(let t) in rows where !take(t) { return }
                guard rows.count == batch, case .dailyTemperature(let last)? = rows.last else { return }
                let (oldFrom, oldUpTo) = (from, upTo)
                if descending { upTo = key(last) } else { from = key(last) + "\u{1}" }
                // Every batch moves on (a key rebuilt from its fact is the key it is stored under); if not, stop.
                guard from.utf8.lexicographicallyPrecedes(upTo.utf8), (from, upTo) != (oldFrom, oldUpTo) else { return }
            }
        }
        // The earliest day held (the first in date order that is a date); none on or before the reference day
        // is no data.
        var earliest: Int64?
        try scan(descending: false) { t in
            guard let d = day(t) else { return true }
            earliest = d
            return false
        }
        // The station's location: the latest day on or before the reference day that carries one.
        var location: (Double, Double)?
        try scan(descending: true, to: stationKey + FactScreenCalendar.iso(ref) + "\u{1}") { t in
            guard let d = day(t), d <= refDay, let la = t.latitude, let lo = t.longitude else { return true }
            location = (la, lo)
            return false
        }
        guard let first = earliest, first <= refDay else {
            return empty("no-data", "No temperatures for this station on or before \(refDate)", station: station, distance: distance)
        }
        let firstYear = Int(ISOTime.civil(days: first).year)
        var memo: [Int: (date: String, c: Double, days: Int)?] = [:]
        /// The window's mean maximum in `year`, with its centre day and the days it averaged.
        func value(_ year: Int) throws -> (date: String, c: Double, days: Int)? {
            if let v = memo[year] { return v }
            let d = md.resolved(inYear: year)
            let centre = ISOTime.days(year: Int64(year), month: Int64(d.month), day: Int64(d.day))
            let lo = centre - Int64(windowDaysEachSide), hi = min(centre + Int64(windowDaysEachSide), refDay)
            var maxByDay: [Int64: Double] = [:]
            if lo <= hi {
                func iso(_ n: Int64) -> String {
                    let c = ISOTime.civil(days: n)
                    return FactScreenCalendar.iso((Int(c.year), Int(c.month), Int(c.day)))
                }
                for case .dailyTemperature(let t) in try world.facts(kind: "temperature", keyFrom: stationKey + iso(lo),
                                                                     keyTo: stationKey + iso(hi) + "\u{1}", limit: nil, descending: false) {
                    if let n = day(t), n >= lo, n <= hi, let v = t.maxC, v.isFinite { maxByDay[n] = v }
                }
            }
            let n = maxByDay.count
            let result: (date: String, c: Double, days: Int)?
            if n >= minimumDays {
                // Summed in date order, as one pass over the days did.
                let sum = maxByDay.keys.sorted().reduce(0.0) { $0 + maxByDay[$1]! }
                result = (FactScreenCalendar.iso((year, d.month, d.day)), sum / Double(n), n)
            } else {
                result = nil
            }
            memo[year] = result
            return result
        }
        // The latest year with a value for the date.
        var latest: Int?
        var y = ref.year
        while y >= firstYear {
            if try value(y) != nil { latest = y; break }
            y -= 1
        }
        guard let lastYear = latest else {
            return empty("no-data", "Not enough days around \(md) on or before \(refDate)", station: station, distance: distance)
        }
        var years: [Int] = []
        var skipped: [Int] = []
        var decade = (firstYear + 9) / 10 * 10
        while decade <= lastYear {
            if try value(decade) != nil { years.append(decade) } else { skipped.append(decade) }
            decade += 10
        }
        if years.last != lastYear { years.append(lastYear) }

        func shown(_ c: Double) -> Double {
            FactScreenCalendar.round(fahrenheit ? TemperatureConversion.fahrenheit(fromCelsius: c) : c, 2)
        }
        func shownDifference(_ dc: Double) -> Double {
            FactScreenCalendar.round(fahrenheit ? TemperatureConversion.fahrenheitDifference(fromCelsius: dc) : dc, 2)
        }
        // Classified on the C difference rounded to 1e-6 C: the sources give tenths (of C, or F converted from
        // C tenths), so a true +-0.5 C edge that floating point turns into 0.5000000000000036 stays neutral.
        func cls(_ dc: Double) -> String {
            (AnomalyClass(anomalyCelsius: FactScreenCalendar.round(dc, 6)) ?? .neutral).rawValue
        }
        let values = try years.map { try value($0)! }
        let baseline = values[0].c
        let points = zip(years, values).map { year, v -> ClimateDataPoint in
            ClimateDataPoint(year: year, temperature: FactScreenCalendar.round(v.c, 2), displayTemperature: shown(v.c), date: v.date,
                             days: v.days, difference: shownDifference(v.c - baseline), barClass: cls(v.c - baseline))
        }
        let enough = years.count >= 2 && years[years.count - 1] - years[0] >= minimumSpanYears
        let change = values[values.count - 1].c - baseline
        return Model(status: enough ? "ok" : "not-enough-history",
                     message: enough ? nil : "Not enough history: \(years[0])-\(years[years.count - 1]) is under \(minimumSpanYears) years",
                     station: station, latitude: location?.0, longitude: location?.1,
                     distanceKm: distance.map { FactScreenCalendar.round($0, 1) }, date: md.description,
                     referenceDate: refDate, timeZone: zone, measure: "tmax-window", windowDaysEachSide: windowDaysEachSide, unit: fahrenheit ? "°F" : "°C",
                     data: points, baselineYear: years[0], change: enough ? shownDifference(change) : nil,
                     changeClass: enough ? cls(change) : nil, skippedYears: skipped)
    }

    /// The station nearest `at` among those with coordinates, if one is within `stationLimitKm`.
    static func nearestStation(_ world: WorldReader, to at: (latitude: Double, longitude: Double)) throws -> (station: String, km: Double)? {
        let here = GeoPoint(latitude: at.latitude, longitude: at.longitude)
        // Each station's location is that of its latest day that carries one: one seek per station (its keys
        // are in date order), not a read of every day of every station.
        var places: [String: (Double, Double)] = [:]
        for group in try world.factGroups(kind: "temperature", keyPrefix: "") {
            var upTo = group + "|\u{10FFFF}"
            search: while true {
                let rows = try world.facts(kind: "temperature", keyFrom: group + "|", keyTo: upTo, limit: 64, descending: true)
                for case .dailyTemperature(let t) in rows {
                    if let la = t.latitude, let lo = t.longitude { places[t.station] = (la, lo); break search }
                }
                guard rows.count == 64, case .dailyTemperature(let last)? = rows.last else { break }
                upTo = group + "|" + EventBody.factKeyComponent(last.date)
            }
        }
        var best: (String, Double)?
        for station in places.keys.sorted() {
            let (la, lo) = places[station]!
            let km = here.distanceKm(to: GeoPoint(latitude: la, longitude: lo))
            if best == nil || km < best!.1 { best = (station, km) }
        }
        guard let (station, km) = best, km <= stationLimitKm else { return nil }
        return (station, km)
    }

    public static func render(_ model: Model) -> [String] {
        var out = ["Local Climate Trend: temperature around \(model.date) across decades (mean daily maximum, +-\(model.windowDaysEachSide) days)"]
        if let station = model.station {
            out.append("station \(station)" + (model.distanceKm.map { ", \(FactScreenCalendar.fixed($0, 1)) km away" } ?? ""))
        }
        if let message = model.message { out.append(message) }
        if let change = model.change, let year = model.baselineYear {
            out.append("Change since \(year): \(FactScreenCalendar.fixed(change, 1, sign: true))\(model.unit) (\(model.changeClass ?? ""))")
        }
        out.append("")
        let lo = model.data.map(\.displayTemperature).min() ?? 0, hi = model.data.map(\.displayTemperature).max() ?? 0
        for d in model.data {
            let f = (d.displayTemperature - lo) / (hi - lo)   // not finite for hostile extremes: a middle bar
            let n = hi > lo && f.isFinite ? 1 + Int((f * 29).rounded()) : 15
            let mark: Character = d.barClass == "cooling" ? "-" : d.barClass == "neutral" ? "=" : d.barClass == "warming" ? "+" : "#"
            out.append("\(d.year)  " + FactScreenCalendar.pad(FactScreenCalendar.fixed(d.displayTemperature, 1) + model.unit, 8)
                       + FactScreenCalendar.pad(String(repeating: mark, count: n), 31)
                       + FactScreenCalendar.pad(FactScreenCalendar.fixed(d.difference, 1, sign: true), 7) + d.barClass)
        }
        if !model.skippedYears.isEmpty {
            out.append("")
            out.append("no value for \(model.date) in " + model.skippedYears.map(String.init).joined(separator: ", ") + " (skipped)")
        }
        return out
    }
}
