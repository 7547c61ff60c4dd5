import BreezeCore
import Foundation

/// AirNow API monitor-level hourly data (`/aq/data/`, `shared/docs/domain.md` section 5), as CSV or JSON.
///
/// **JSON** (`format=application/json&verbose=1`): an array of rows
/// `{"Latitude","Longitude","UTC":"2026-06-09T19:00","Parameter":"PM2.5","Unit":"UG/M3","Value":3.3,
/// "RawConcentration":3.2,"AQI":18,"Category":1,"SiteName","AgencyName","FullAQSCode","IntlAQSCode"}`.
/// `Value` is the NowCast concentration, `RawConcentration` the hourly value. Sensor = `FullAQSCode`
/// (9 digits), else the last 9 digits of `IntlAQSCode`.
///
/// **CSV**: the API's `text/csv` output (verbose, raw concentrations) has no header and the columns
/// `latitude, longitude, UTC, parameter, NowCast value, unit, raw value, site name, agency, site AQS,
/// full AQS`; EPA sensortoolkit saves it with the header `Site_Lat, Site_Lon, DateTime_UTC, Param_Name,
/// Param_NowCast_Value, Param_Unit, Param_Value, Site_Name, Agency, Site_AQS, Site_Full_AQS` plus a
/// leading pandas row index that is ALSO named `DateTime_UTC`: of the columns with that name, the one
/// whose values are ISO times is used. Both forms are read. Sensor = `Site_AQS`, else the last 9 digits
/// of `Site_Full_AQS`.
///
/// Quantities: `PM2.5` -> `pm25` (raw), `pm25_nowcast`, `aqi`; `OZONE` (ppb, or ppm x1000) -> `o3`,
/// `o3_nowcast`, `o3_aqi`; `PM10` -> `pm10`, `pm10_nowcast`, `pm10_aqi`. Other parameters are reported
/// once each, as skipped. -999 is missing, never zero: a row keeps the values it has (the real file's 11
/// rows with a -999 raw value keep their NowCast) and is skipped as "no values" only when all are missing.
/// Rows are grouped into one reading per (site, UTC hour), hour-beginning. Source `airnow`; one
/// registration per site with its name and coordinates.
public enum AirNowAPIImporter: MonitorFileImporter {
    /// The format name on the command line: `breeze import airnow-api FILE...`.
    public static let format = "airnow-api"
    /// One line for `breeze import --help`.
    public static let summary = "AirNow API hourly monitor data (/aq/data, CSV or JSON) -> readings with raw, NowCast and AQI"

    /// The source its readings and registrations are filed under.
    static let source = "airnow"

    /// One data row, whichever form it came in.
    struct Row {
        var time: String?
        var parameter: String?
        var unit: String?
        var nowcast: Double?
        var raw: Double?
        var aqi: Double?
        var sensor: String?
        var latitude: Double?
        var longitude: Double?
        var name: String?
    }

    /// Quantities of each AirNow parameter: raw, NowCast, AQI.
    static let parameters: [String: (raw: String, nowcast: String, aqi: String)] = [
        "PM2.5": ("pm25", "pm25_nowcast", "aqi"), "PM25": ("pm25", "pm25_nowcast", "aqi"),
        "OZONE": ("o3", "o3_nowcast", "o3_aqi"), "O3": ("o3", "o3_nowcast", "o3_aqi"),
        "PM10": ("pm10", "pm10_nowcast", "pm10_aqi"),
    ]

    static func add(_ row: Row, line: Int, options: ImportOptions, into out: inout MonitorCollector) {
        guard let sensor = row.sensor else { out.skip(line: line, "missing site AQS code"); return }
        guard let parameter = row.parameter else { out.skip(line: line, "missing parameter"); return }
        guard let q = parameters[parameter.uppercased()] else {
            out.skipOnce(key: parameter.uppercased(), line: line, "unknown parameter '\(parameter)' skipped")
            return
        }
        let lat = row.latitude ?? options.at?.latitude, lon = row.longitude ?? options.at?.longitude
        out.register(SensorRegistration(sensor: sensor, name: row.name ?? sensor, source: "airnow", kind: "monitor",
                                        latitude: lat, longitude: lon, timeZone: nil), line: line)
        guard let text = row.time, let time = DateParsing.isoDateTime(text) else {
            out.skip(line: line, "bad UTC time '\(row.time ?? "")'"); return
        }
        guard row.raw != nil || row.nowcast != nil || row.aqi != nil else { out.skip(line: line, "no values"); return }
        var values: [(String, Double)] = []
        let unit = row.unit ?? ""
        for (given, quantity) in [(row.raw, q.raw), (row.nowcast, q.nowcast)] {
            guard let given else { continue }
            guard let v = MonitorUnits.convert(given, to: q.raw, from: unit) else {
                out.skip(line: line, "unit '\(unit)' not supported for \(parameter)"); return
            }
            values.append((quantity, v))
        }
        if let a = row.aqi { values.append((q.aqi, a)) }
        out.add(sensor: sensor, time: time, line: line, values)
    }

    // MARK: CSV

    static func parseCSV(_ data: [UInt8], file: String, options: ImportOptions, into out: inout MonitorCollector) throws(ImportError) {
        let table = try CSVTable(data, file: file)
        let rows: [(line: Int, fields: [String])]
        var cLat: Int?, cLon: Int?, cTime: Int?, cParam: Int?, cNow: Int?, cUnit: Int?, cRaw: Int?, cName: Int?
        var cSite: Int?, cFull: Int?, cAQI: Int?
        let lower = table.header.map { $0.lowercased() }
        let timeColumns = lower.indices.filter { ["datetime_utc", "utc"].contains(lower[$0]) }
        if !timeColumns.isEmpty || table.column("Param_Name", "Parameter") != nil {
            // Named columns. Of several time columns (sensortoolkit's row index shares the name), use
            // the first whose value in the first data row is an ISO time.
            rows = table.rows
            let first = table.rows.first?.fields ?? []
            cTime = timeColumns.first { $0 < first.count && DateParsing.isoDateTime(first[$0]) != nil } ?? timeColumns.last
            cLat = table.column("Site_Lat", "Latitude"); cLon = table.column("Site_Lon", "Longitude")
            cParam = table.column("Param_Name", "Parameter"); cNow = table.column("Param_NowCast_Value", "Value")
            cUnit = table.column("Param_Unit", "Unit"); cRaw = table.column("Param_Value", "RawConcentration")
            cName = table.column("Site_Name", "SiteName"); cSite = table.column("Site_AQS", "FullAQSCode")
            cFull = table.column("Site_Full_AQS", "IntlAQSCode"); cAQI = table.column("Param_AQI", "AQI")
            var missing: [String] = []
            if cTime == nil { missing.append("DateTime_UTC") }
            if cParam == nil { missing.append("Param_Name") }
            if cUnit == nil { missing.append("Param_Unit") }
            if cSite == nil && cFull == nil { missing.append("Site_AQS") }
            if cNow == nil && cRaw == nil && cAQI == nil { missing.append("Param_Value") }
            guard missing.isEmpty else {
                throw ImportError(file: file, "not an AirNow API CSV: missing column(s) \(missing.joined(separator: ", "))")
            }
        } else if table.header.count == 11, DateParsing.isoDateTime(table.header[2]) != nil, Double(table.header[0]) != nil {
            // The API's own header-less text/csv output; the first line is data.
            rows = [(1, table.header)] + table.rows
            (cLat, cLon, cTime, cParam, cNow, cUnit, cRaw, cName, cSite, cFull) = (0, 1, 2, 3, 4, 5, 6, 7, 9, 10)
        } else {
            throw ImportError(file: file, "not an AirNow API CSV: no DateTime_UTC/Param_Name header and not the API's 11-column header-less form")
        }
        for (line, fields) in rows {
            out.rowsRead += 1
            let r = CSVRow(fields)
            var row = Row()
            do {
                row.time = r[cTime]; row.parameter = r[cParam]; row.unit = r[cUnit]; row.name = r[cName]
                row.nowcast = try r.number(cNow, "NowCast value")
                row.raw = try r.number(cRaw, "raw value")
                row.aqi = try r.number(cAQI, "AQI")
                row.latitude = try r.number(cLat, "latitude")
                row.longitude = try r.number(cLon, "longitude")
            } catch {
                out.skip(line: line, error.reason); continue
            }
            row.sensor = r[cSite].flatMap(MonitorIDs.site) ?? r[cFull].flatMap(MonitorIDs.fromInternational)
            add(row, line: line, options: options, into: &out)
        }
    }

    // MARK: JSON

    static func parseJSON(_ data: [UInt8], file: String, options: ImportOptions, into out: inout MonitorCollector) throws(ImportError) {
        let root = try MonitorJSON.parse(data, file: file)
        guard let array = root as? [Any] else {
            if let object = root as? [String: Any], let message = MonitorJSON.errorMessage(object) {
                throw ImportError(file: file, "AirNow API error response: \(message)")
            }
            throw ImportError(file: file, "not AirNow API monitor data: expected a JSON array of rows")
        }
        let objects = array.compactMap { $0 as? [String: Any] }
        if !array.isEmpty && !objects.contains(where: { $0["UTC"] != nil && $0["Parameter"] != nil }) {
            throw ImportError(file: file, "not AirNow API monitor data: no row has UTC and Parameter (reporting-area observations are not monitor data)")
        }
        for (i, element) in array.enumerated() {
            let line = i + 1
            out.rowsRead += 1
            guard let o = element as? [String: Any] else { out.skip(line: line, "element is not an object"); continue }
            var row = Row()
            do {
                row.time = MonitorJSON.string(o["UTC"]); row.parameter = MonitorJSON.string(o["Parameter"])
                row.unit = MonitorJSON.string(o["Unit"]); row.name = MonitorJSON.string(o["SiteName"])
                row.nowcast = try MonitorJSON.number(o["Value"], "Value")
                row.raw = try MonitorJSON.number(o["RawConcentration"], "RawConcentration")
                row.aqi = try MonitorJSON.number(o["AQI"], "AQI")
                row.latitude = try MonitorJSON.number(o["Latitude"], "Latitude")
                row.longitude = try MonitorJSON.number(o["Longitude"], "Longitude")
            } catch {
                out.skip(line: line, error.reason); continue
            }
            row.sensor = MonitorJSON.string(o["FullAQSCode"]).flatMap(MonitorIDs.site)
                ?? MonitorJSON.string(o["IntlAQSCode"]).flatMap(MonitorIDs.fromInternational)
            add(row, line: line, options: options, into: &out)
        }
    }
}

/// JSON access shared by the monitor importers (Foundation's `JSONSerialization`).
/// A monitor format that comes as CSV or JSON (AQS, the AirNow API): one `parse` for both, which inflates
/// gzip, picks the form from the first byte and collects rows in a `MonitorCollector`.
protocol MonitorFileImporter: Importer {
    /// The source its readings and registrations are filed under.
    static var source: String { get }
    static func parseCSV(_ data: [UInt8], file: String, options: ImportOptions, into out: inout MonitorCollector) throws(ImportError)
    static func parseJSON(_ data: [UInt8], file: String, options: ImportOptions, into out: inout MonitorCollector) throws(ImportError)
}

extension MonitorFileImporter {
    /// Parses a whole file (gzip-compressed or not) into registrations and readings for the `public`
    /// stream; throws `ImportError` when it is not in this format, reports skipped rows as issues.
    public static func parse(_ bytes: [UInt8], file: String, options: ImportOptions) throws(ImportError) -> ParseResult {
        let data = try Gzip.maybeInflate(bytes, file: file)
        var out = MonitorCollector(file: file, source: source)
        if MonitorJSON.looksLikeJSON(data) {
            try parseJSON(data, file: file, options: options, into: &out)
        } else {
            try parseCSV(data, file: file, options: options, into: &out)
        }
        return out.finish()
    }
}

enum MonitorJSON {
    /// True when the first byte after spaces (and a UTF-8 BOM) is `[` or `{`.
    static func looksLikeJSON(_ bytes: [UInt8]) -> Bool {
        var i = 0
        if bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF { i = 3 }
        while i < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[i]) { i += 1 }
        return i < bytes.count && (bytes[i] == 0x5B || bytes[i] == 0x7B)
    }

    /// Parses a whole JSON document; truncated or invalid JSON is an `ImportError`.
    static func parse(_ bytes: [UInt8], file: String) throws(ImportError) -> Any {
        var data = Data(bytes)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { data = Data(bytes.dropFirst(3)) }
        do {
            return try JSONSerialization.jsonObject(with: data, options: [])
        } catch {
            throw ImportError(file: file, "not valid JSON (truncated or malformed)")
        }
    }

    /// A number: JSON numbers or numeric strings. Nil for absent, `null`, empty or missing-value markers
    /// (-999, NA, ...). Throws a reason for text that is not a number.
    static func number(_ value: Any?, _ name: String) throws(ImportRowError) -> Double? {
        guard let value, !(value is NSNull) else { return nil }
        if let s = value as? String { return try CSVRow([s]).number(0, name) }
        guard let d = (value as? NSNumber)?.doubleValue ?? (value as? Double) ?? (value as? Int).map(Double.init), d.isFinite else {
            throw ImportRowError("\(name) is not a number")
        }
        return d == -999 ? nil : d
    }

    /// Text: JSON strings (trimmed, nil when empty or a missing-value marker) or integers written as text.
    static func string(_ value: Any?) -> String? {
        guard let value, !(value is NSNull) else { return nil }
        if let s = value as? String { return CSVRow([s])[0] }
        if let n = value as? NSNumber {
            let d = n.doubleValue
            if d.isFinite && d == d.rounded() && abs(d) < 1e15 { return String(Int64(d)) }
            return String(d)
        }
        return nil
    }

    /// The message of an API error object (`{"WebServiceError":[{"Message":..}]}`, `{"detail":..}`,
    /// `{"message":..}`, `{"error":..}`), or nil when the object does not look like one.
    static func errorMessage(_ object: [String: Any]) -> String? {
        for key in ["WebServiceError", "detail", "message", "Message", "error", "errors"] {
            guard let v = object[key] else { continue }
            return describe(v)
        }
        return nil
    }

    static func describe(_ v: Any) -> String {
        if let s = v as? String { return s }
        if let a = v as? [Any] { return a.map(describe).joined(separator: "; ") }
        if let o = v as? [String: Any] {
            for key in ["Message", "message", "msg", "detail", "error"] { if let m = o[key] { return describe(m) } }
            return o.keys.sorted().joined(separator: ",")
        }
        return "\(v)"
    }
}
