import BreezeCore
import Foundation

/// Daily maximum and minimum temperatures at one station, as `temperature.daily` events in the `public`
/// stream, always in degrees C (degrees F become `(F - 32) / 1.8`, kept at full precision). Two forms, told
/// apart by the first non-blank byte (`{` is JSON):
///
/// - **CSV**: a date column (`date`, `day` or `time`; `YYYY-MM-DD` or `YYYY/MM/DD`) and a maximum and/or minimum
///   column (`tmax`/`tmin`, `temp_max`/`temp_min`, `max`/`min`, `temperature_max`/`temperature_min`,
///   `temperature_2m_max`/`temperature_2m_min`), in any order; other columns are ignored. The file does not say
///   its unit or station, so `--unit celsius|fahrenheit` (`ImportOptions.unit`) and `--station ID`
///   (`ImportOptions.station`) are required; `--at LAT,LON` (`ImportOptions.at`) is optional and gives the
///   station's location. Dates whose year is not first (`M/D/YYYY`) are refused per row, being ambiguous.
/// - **Open-Meteo archive JSON** (`shared/docs/domain.md` section 5, "Historical temperature"):
///   `{latitude, longitude, daily_units: {temperature_2m_max: "°C"|"°F", ...}, daily: {time: [...],
///   temperature_2m_max: [...], temperature_2m_min: [...]}}`, parallel arrays with `null` for missing. The
///   unit comes from `daily_units`; the station id is `open-meteo:<latitude>,<longitude>` (the grid cell the
///   API answered with) unless `--station` names one; the location is the response's.
///
/// Missing values (empty, `NA`, `null`, -999) are missing, never zero: a day with neither value is skipped as
/// "no values", a day with one keeps that one. `rowsRead` counts CSV data rows or JSON `time` elements; issue
/// lines are 1-based CSV file lines or 1-based indexes into `daily.time`. Days absent from the file are simply
/// absent (no event).
public enum DailyTemperatureImporter: Importer {
    public static let format = "daily-temperature"
    public static let summary = "daily max/min temperature: CSV (needs --unit and --station) or Open-Meteo archive JSON"

    static let dateColumns = ["date", "day", "time"]
    static let maxColumns = ["tmax", "temp_max", "max", "temperature_max", "temperature_2m_max"]
    static let minColumns = ["tmin", "temp_min", "min", "temperature_min", "temperature_2m_min"]

    public static func parse(_ bytes: [UInt8], file: String, options: ImportOptions) throws(ImportError) -> ParseResult {
        var i = 0
        if bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF { i = 3 }
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x09 || bytes[i] == 0x0A || bytes[i] == 0x0D { i += 1 }
        if i < bytes.count && bytes[i] == 0x7B { return try parseOpenMeteo(bytes, file: file, options: options) }
        return try parseCSV(bytes, file: file, options: options)
    }

    // MARK: CSV

    private static func parseCSV(_ bytes: [UInt8], file: String, options: ImportOptions) throws(ImportError) -> ParseResult {
        let table = try CSVTable(bytes, file: file)
        guard let dateColumn = table.column(dateColumns) else {
            throw ImportError(file: file, "not a daily temperature CSV: no date column (one of \(dateColumns.joined(separator: ", ")))")
        }
        let maxColumn = table.column(maxColumns), minColumn = table.column(minColumns)
        guard maxColumn != nil || minColumn != nil else {
            throw ImportError(file: file, "not a daily temperature CSV: no maximum or minimum column "
                              + "(tmax/tmin, temp_max/temp_min or max/min)")
        }
        guard let unit = options.unit else {
            throw ImportError(file: file, "daily-temperature CSV needs --unit celsius|fahrenheit (the file does not say)")
        }
        guard let station = options.station, !station.isEmpty else {
            throw ImportError(file: file, "daily-temperature CSV needs --station ID (the file does not say)")
        }
        var result = ParseResult()
        result.records.reserveCapacity(table.rows.count)
        for (line, fields) in table.rows {
            result.rowsRead += 1
            let row = CSVRow(fields)
            do throws(ImportRowError) {
                guard let text = row[dateColumn] else { throw ImportRowError("no date") }
                let date = try yearFirstDate(text)
                let max = try row.number(maxColumn, "maximum")
                let min = try row.number(minColumn, "minimum")
                let day = try temperature(station: station, date: date, max: max, min: min, unit: unit,
                                          latitude: options.at?.latitude, longitude: options.at?.longitude)
                result.records.append(ImportRecord(stream: .public, body: .dailyTemperature(day), line: line))
            } catch {
                result.issues.append(ImportIssue(file: file, line: line, reason: error.reason))
            }
        }
        return result
    }

    /// `YYYY-MM-DD` or `YYYY/MM/DD` (year first) as `YYYY-MM-DD`. Read from the bytes; no allocation but the
    /// result (the common `YYYY-MM-DD` is returned as it is).
    private static func yearFirstDate(_ text: String) throws(ImportRowError) -> String {
        func read(_ b: UnsafeBufferPointer<UInt8>) -> (Int, Int, Int)? {
            guard b.count == 10, b[4] == 0x2D || b[4] == 0x2F, b[7] == b[4] else { return nil }
            func num(_ from: Int, _ count: Int) -> Int? { DateParsing.digits(b, from, count) }
            guard let y = num(0, 4), let m = num(5, 2), let d = num(8, 2), DateParsing.isValid(year: y, month: m, day: d)
            else { return nil }
            return (y, m, d)
        }
        let parsed = text.utf8.withContiguousStorageIfAvailable(read) ?? Array(text.utf8).withUnsafeBufferPointer(read)
        guard let (y, m, d) = parsed else { throw ImportRowError("date '\(text)' is not YYYY-MM-DD or YYYY/MM/DD") }
        let u = text.utf8
        return u[u.index(u.startIndex, offsetBy: 4)] == 0x2D ? text : DateParsing.isoDate((y, m, d))
    }

    /// One day in degrees C; throws "no values" when both are missing.
    private static func temperature(station: String, date: String, max: Double?, min: Double?, unit: TemperatureUnit,
                                    latitude: Double?, longitude: Double?) throws(ImportRowError) -> DailyTemperature {
        guard max != nil || min != nil else { throw ImportRowError("no values") }
        func celsius(_ v: Double?) -> Double? {
            guard let v else { return nil }
            return unit == .fahrenheit ? (v - 32) / 1.8 : v
        }
        return DailyTemperature(station: station, date: date, maxC: celsius(max), minC: celsius(min),
                                latitude: latitude, longitude: longitude)
    }

    // MARK: Open-Meteo JSON

    private static func parseOpenMeteo(_ bytes: [UInt8], file: String, options: ImportOptions) throws(ImportError) -> ParseResult {
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: Data(bytes), options: [])
        } catch {
            throw ImportError(file: file, "not valid JSON, so not an Open-Meteo archive response")
        }
        guard let object = root as? [String: Any] else {
            throw ImportError(file: file, "not an Open-Meteo archive response: the top level is not an object")
        }
        if (object["error"] as? Bool) == true {
            throw ImportError(file: file, "an Open-Meteo error response: \((object["reason"] as? String) ?? "no reason")")
        }
        guard let latitude = number(object["latitude"]), let longitude = number(object["longitude"]),
              abs(latitude) <= 90, abs(longitude) <= 180 else {
            throw ImportError(file: file, "not an Open-Meteo archive response: no latitude/longitude")
        }
        guard let daily = object["daily"] as? [String: Any], let times = daily["time"] as? [Any] else {
            throw ImportError(file: file, "not an Open-Meteo archive response: no daily.time array")
        }
        let maxes = daily["temperature_2m_max"].flatMap { $0 is NSNull ? nil : $0 }
        let mins = daily["temperature_2m_min"].flatMap { $0 is NSNull ? nil : $0 }
        guard maxes != nil || mins != nil else {
            throw ImportError(file: file, "Open-Meteo response has neither daily.temperature_2m_max nor daily.temperature_2m_min")
        }
        let units = object["daily_units"] as? [String: Any]
        func column(_ value: Any?, _ name: String) throws(ImportError) -> (values: [Any], unit: TemperatureUnit)? {
            guard let value else { return nil }
            guard let values = value as? [Any], values.count == times.count else {
                throw ImportError(file: file, "Open-Meteo daily.\(name) is not an array as long as daily.time (\(times.count))")
            }
            guard let text = units?[name] as? String else {
                throw ImportError(file: file, "Open-Meteo response has no daily_units.\(name)")
            }
            switch text.trimmingSpaces.lowercased() {
            case "°c", "c", "celsius": return (values, .celsius)
            case "°f", "f", "fahrenheit": return (values, .fahrenheit)
            default: throw ImportError(file: file, "Open-Meteo daily_units.\(name) '\(text)' is not °C or °F")
            }
        }
        let maxColumn = try column(maxes, "temperature_2m_max")
        let minColumn = try column(mins, "temperature_2m_min")
        let station = options.station.flatMap { $0.isEmpty ? nil : $0 } ?? "open-meteo:\(latitude),\(longitude)"

        var result = ParseResult()
        for (i, time) in times.enumerated() {
            let line = i + 1
            result.rowsRead += 1
            do throws(ImportRowError) {
                guard let text = time as? String else { throw ImportRowError("time \(time) is not a date") }
                let date = try yearFirstDate(text)
                func value(_ c: (values: [Any], unit: TemperatureUnit)?, _ name: String) throws(ImportRowError) -> Double? {
                    guard let c else { return nil }
                    let v = c.values[i]
                    if v is NSNull { return nil }
                    guard let d = number(v) else { throw ImportRowError("\(name) \(v) is not a number") }
                    return c.unit == .fahrenheit ? (d - 32) / 1.8 : d
                }
                let max = try value(maxColumn, "temperature_2m_max")
                let min = try value(minColumn, "temperature_2m_min")
                let day = try temperature(station: station, date: date, max: max, min: min, unit: .celsius,
                                          latitude: latitude, longitude: longitude)
                result.records.append(ImportRecord(stream: .public, body: .dailyTemperature(day), line: line))
            } catch {
                result.issues.append(ImportIssue(file: file, line: line, reason: error.reason))
            }
        }
        return result
    }

    /// A finite JSON number.
    private static func number(_ value: Any?) -> Double? {
        guard let n = value as? NSNumber else { return nil }
        let d = n.doubleValue
        return d.isFinite ? d : nil
    }
}
