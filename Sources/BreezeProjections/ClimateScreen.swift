import BreezeCore
import BreezeAirQuality

/// The "Local Climate Trend" chart: the temperature on one calendar date at one station across decades
/// (`shared/docs/domain.md` sections 5, 8 and 9; the app's `ClimateChartView`).
///
/// - Station: `p.sensor` is the station id as imported (e.g. `GHCND:USC00381770`); without it, the station
///   nearest `p.at` among stations whose `temperature` facts carry coordinates (haversine; ties to the smaller
///   id). Neither given is an error, as is a station with no data for the date.
/// - Date: the calendar date (month and day) of `p.date`, else of the UTC date of `p.now`. Only days on or
///   before that reference day are used, so the chart shows the history as of then, never later data.
/// - Temperature: the day's maximum (`tmax`, `DailyTemperature.maxC`): the app shows "temperature on this
///   day", and a day's maximum is what a person remembers of it. A day with only a minimum has no value.
/// - Points: one per decade year (years divisible by 10) from the first decade year not before the station's
///   earliest data (1930, 1940, ... for Clemson) up to the latest year, plus the latest year that has a value
///   for the date when it is not a decade year itself. A decade year without a value for the date (day
///   missing, or only a minimum) is skipped and listed in `skippedYears`, so the chart never shows a hole as
///   zero.
/// - February 29 in a common year uses February 28 (domain.md sections 8 and 9); each point's `date` says
///   which day was used.
/// - `baselineYear` is the first point's year; `change` is the last point minus the first. Each bar's class
///   compares the point with the baseline **in degrees C**: `warming-strong` > +2, `warming` > +0.5,
///   `neutral` within +-0.5 inclusive, `cooling` < -0.5 (`AnomalyClass`), whatever unit is shown.
/// - Units: the app's `ClimateDataPoint.temperature` is in C and the view converts; the issue asks for values
///   in the user's unit (`UserState.effectiveUnit`), so `temperature` is in that unit (F = C x 1.8 + 32) and
///   `temperatureC` keeps the C value; differences (`difference`, `change`) convert as x1.8 with no +32.
///   Values are rounded to 0.01 for display; classes use the C difference rounded only to 1e-6 C (so a
///   difference of exactly 0.5 C stays `neutral` despite binary floating point).
public enum ClimateScreen: Screen {
    public static let name = "climate"
    public static let summary = "temperature on this calendar date across decades at a station (--sensor or --at)"

    /// The read model.
    public struct Model: Codable, Equatable, Sendable {
        /// The station's id, e.g. `GHCND:USC00381770`.
        public var station: String
        /// The station's location, when known.
        public var latitude: Double?
        public var longitude: Double?
        /// Distance from `p.at` to the station, km (rounded to 0.1), when the station was chosen by position.
        public var distanceKm: Double?
        /// The calendar date shown, `MM-DD`.
        public var date: String
        /// The reference day, `YYYY-MM-DD` (nothing after it is used).
        public var referenceDate: String
        /// What each point's temperature is: `tmax`, the day's maximum.
        public var measure: String
        /// `°C` or `°F`, the user's unit.
        public var unit: String
        /// The bars, oldest first.
        public var data: [ClimateDataPoint]
        /// The first point's year.
        public var baselineYear: Int
        /// The last point minus the first, in the user's unit (a difference: x1.8 for F, no +32).
        public var change: Double
        /// The change's class, in C (the colour of the change summary).
        public var changeClass: String
        /// Decade years in range that had no value for the date and were left out.
        public var skippedYears: [Int]
    }

    /// One bar, as the app's `ClimateDataPoint` plus its class.
    public struct ClimateDataPoint: Codable, Equatable, Sendable {
        /// The year.
        public var year: Int
        /// The day's maximum, in the user's unit.
        public var temperature: Double
        /// The same in C.
        public var temperatureC: Double
        /// The day used, `YYYY-MM-DD` (February 28 standing for 29 in common years).
        public var date: String
        /// This point minus the baseline, in the user's unit (x1.8 for F).
        public var difference: Double
        /// `warming-strong`, `warming`, `neutral` or `cooling`, classified in C against the baseline.
        public var barClass: String
    }

    public static func build(_ world: WorldReader, _ p: ScreenParameters) throws -> Model {
        let ref = try FactScreenCalendar.referenceDay(p)
        let refDate = FactScreenCalendar.iso(ref)
        guard let md = MonthDay(month: ref.month, day: ref.day) else { throw ScreenError("--date '\(refDate)' is not a calendar date") }
        let (station, distance) = try chooseStation(world, p)

        var maxByDate: [String: Double] = [:]
        var earliest: String?
        var location: (Double, Double)?
        for case .dailyTemperature(let t) in try world.facts(kind: "temperature", keyPrefix: station + "|")
        where t.station == station && t.date <= refDate {
            if earliest == nil || t.date < earliest! { earliest = t.date }
            if let v = t.maxC, v.isFinite { maxByDate[t.date] = v }
            if let la = t.latitude, let lo = t.longitude { location = (la, lo) }
        }
        guard let first = earliest, let firstYear = Int(first.prefix(4)) else {
            throw ScreenError("no daily temperatures for station '\(station)' on or before \(refDate)")
        }
        func value(_ year: Int) -> (date: String, c: Double)? {
            let d = md.resolved(inYear: year)
            let date = FactScreenCalendar.iso((year, d.month, d.day))
            return maxByDate[date].map { (date, $0) }
        }
        // The latest year with a value for the date.
        var latest: Int?
        var y = ref.year
        while y >= firstYear {
            if value(y) != nil { latest = y; break }
            y -= 1
        }
        guard let lastYear = latest else {
            throw ScreenError("station '\(station)' has no daily maximum for \(md) on or before \(refDate)")
        }
        var years: [Int] = []
        var skipped: [Int] = []
        var decade = (firstYear + 9) / 10 * 10
        while decade <= lastYear {
            if value(decade) != nil { years.append(decade) } else { skipped.append(decade) }
            decade += 10
        }
        if years.last != lastYear { years.append(lastYear) }

        let fahrenheit = try world.userState(user: p.user).effectiveUnit == .fahrenheit
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
        let baseline = value(years[0])!.c
        let points = years.map { year -> ClimateDataPoint in
            let v = value(year)!
            return ClimateDataPoint(year: year, temperature: shown(v.c), temperatureC: FactScreenCalendar.round(v.c, 2),
                                    date: v.date, difference: shownDifference(v.c - baseline), barClass: cls(v.c - baseline))
        }
        let change = value(years[years.count - 1])!.c - baseline
        return Model(station: station, latitude: location?.0, longitude: location?.1,
                     distanceKm: distance.map { FactScreenCalendar.round($0, 1) }, date: md.description,
                     referenceDate: refDate, measure: "tmax", unit: fahrenheit ? "°F" : "°C", data: points,
                     baselineYear: years[0], change: shownDifference(change), changeClass: cls(change),
                     skippedYears: skipped)
    }

    /// `p.sensor` as the station id, else the station nearest `p.at` among those with coordinates.
    static func chooseStation(_ world: WorldReader, _ p: ScreenParameters) throws -> (String, Double?) {
        if let s = p.sensor, !s.isEmpty { return (s, nil) }
        guard let at = p.at else {
            throw ScreenError("climate needs --sensor STATION (e.g. GHCND:USC00381770) or --at LAT,LON")
        }
        let here = GeoPoint(latitude: at.latitude, longitude: at.longitude)
        var places: [String: (Double, Double)] = [:]
        for case .dailyTemperature(let t) in try world.facts(kind: "temperature", keyPrefix: "") {
            if let la = t.latitude, let lo = t.longitude { places[t.station] = (la, lo) }
        }
        var best: (String, Double)?
        for station in places.keys.sorted() {
            let (la, lo) = places[station]!
            let km = here.distanceKm(to: GeoPoint(latitude: la, longitude: lo))
            if best == nil || km < best!.1 { best = (station, km) }
        }
        guard let (station, km) = best else { throw ScreenError("no temperature station with a location to match --at") }
        return (station, km)
    }

    public static func render(_ model: Model) -> [String] {
        var out = ["Local Climate Trend: temperature on \(model.date) across decades (daily maximum)",
                   "station \(model.station)" + (model.distanceKm.map { ", \(FactScreenCalendar.fixed($0, 1)) km away" } ?? "")]
        out.append("Change since \(model.baselineYear): \(FactScreenCalendar.fixed(model.change, 1, sign: true))\(model.unit) (\(model.changeClass))")
        out.append("")
        let lo = model.data.map(\.temperature).min() ?? 0, hi = model.data.map(\.temperature).max() ?? 0
        for d in model.data {
            let n = hi > lo ? 1 + Int(((d.temperature - lo) / (hi - lo) * 29).rounded()) : 15
            let mark: Character = d.barClass == "cooling" ? "-" : d.barClass == "neutral" ? "=" : d.barClass == "warming" ? "+" : "#"
            out.append("\(d.year)  " + FactScreenCalendar.pad(FactScreenCalendar.fixed(d.temperature, 1) + model.unit, 8)
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
