import BreezeCore

/// EPA AQS API hourly sample data (`/data/api/sampleData/...`, https://aqs.epa.gov/aqsweb/documents/data_api.html),
/// as the API's JSON (`{"Header":[{"status":..}],"Data":[{..}]}`) or as CSV with the same field names.
/// The CSV also accepts EPA AirData's hourly-file column names (`State Code`, `County Code`, `Site Num`,
/// `Parameter Code`, `Date GMT`, `Time GMT`, `Sample Measurement`, `Units of Measure`, ...).
///
/// Fields used: `state_code`, `county_code`, `site_number`, `parameter_code`, `poc`, `latitude`,
/// `longitude`, `date_gmt` (`YYYY-MM-DD`), `time_gmt` (`HH:MM`, hour-beginning), `sample_measurement`,
/// `units_of_measure`, and when present `sample_duration`, `local_site_name`, `county`, `state`,
/// `parameter`, and `qualifier`: a present value is kept whatever its qualifier; a null/empty
/// `sample_measurement` (AQS writes a null-data qualifier instead, e.g. `AN - Machine Malfunction`) is
/// missing, never zero, and the skipped row keeps the file's reason: "no value (qualifier 'AN - Machine
/// Malfunction')". Others (`method`, `detection_limit`, ...) are ignored.
///
/// - Sensor = state + county + site, zero-padded 2+3+4 (9 digits, the same id AirNow uses); source `aqs`.
/// - Parameter codes: 88101 and 88502 -> `pm25` (ug/m3); 81102 and 85101 -> `pm10`; 44201 ozone -> `o3`
///   (ppm x1000 = ppb); 42602 -> `no2` (ppb); 62101 -> `temperature` (F converted to C); 62201 ->
///   `humidity`; 64101 -> `pressure` (mbar = hPa). Other codes are reported once each, as skipped.
/// - One reading per (site, GMT hour). When several monitors give the same quantity for a site-hour, the
///   preferred is kept (88101 before 88502, 81102 before 85101, then the lowest POC) and the others are
///   reported. Rows whose `sample_duration` is not `1 HOUR` (24-hour filters, 5-minute data) are skipped.
/// - One registration per site: `local_site_name`, else "county, state (id)", with its coordinates, and the
///   time zone its `date_local`/`time_local` imply against GMT (AQS local times are standard time all year:
///   -05:00 gives `Etc/GMT+5`; a region zone held already is kept over it, `FactImport`).
/// - A JSON `Header` whose status is `Failed` (the API's error response) is an `ImportError`.
public enum AQSImporter: MonitorFileImporter {
    /// The format name on the command line: `breeze import aqs FILE...`.
    public static let format = "aqs"
    /// One line for `breeze import --help`.
    public static let summary = "EPA AQS API hourly sample data (sampleData, JSON or CSV) -> monitor readings"

    /// The source its readings and registrations are filed under.
    static let source = "aqs"

    /// One sample, whichever form it came in.
    struct Row {
        var state: String?, county: String?, site: String?
        var code: String?, poc: Int?
        var latitude: Double?, longitude: Double?
        var date: String?, time: String?
        var sample: Double?, units: String?, duration: String?
        var siteName: String?, countyName: String?, stateName: String?, parameterName: String?
        var qualifier: String?
        var dateLocal: String?, timeLocal: String?

        /// The fixed zone of the local standard time the row's local and GMT times imply, if whole hours.
        var zone: String? {
            guard let d = date.flatMap(DateParsing.date), let t = time.flatMap(DateParsing.timeOfDay),
                  let ld = dateLocal.flatMap(DateParsing.date), let lt = timeLocal.flatMap(DateParsing.timeOfDay) else { return nil }
            let gmt = DateParsing.days(year: d.year, month: d.month, day: d.day) * 86_400 + t
            let local = DateParsing.days(year: ld.year, month: ld.month, day: ld.day) * 86_400 + lt
            let offset = local - gmt
            guard offset % 3600 == 0 else { return nil }
            return AirNowTechCSVImporter.fixedZone(hours: Int(offset / 3600))
        }
    }

    /// Parameter code -> (quantity, preference rank; lower wins).
    static let parameters: [String: (quantity: String, rank: Int)] = [
        "88101": ("pm25", 0), "88502": ("pm25", 1), "81102": ("pm10", 0), "85101": ("pm10", 1),
        "44201": ("o3", 0), "42602": ("no2", 0), "62101": ("temperature", 0), "62201": ("humidity", 0),
        "64101": ("pressure", 0),
    ]

    static func add(_ row: Row, line: Int, options: ImportOptions, into out: inout MonitorCollector) {
        guard let sensor = MonitorIDs.site(state: row.state ?? "", county: row.county ?? "", site: row.site ?? "") else {
            out.skip(line: line, "missing or bad state_code/county_code/site_number"); return
        }
        guard let code = row.code else { out.skip(line: line, "missing parameter_code"); return }
        guard let p = parameters[code] else {
            let name = row.parameterName.map { " (\($0))" } ?? ""
            out.skipOnce(key: code, line: line, "unknown parameter \(code)\(name) skipped"); return
        }
        let name: String
        if let n = row.siteName { name = n }
        else if let c = row.countyName, let s = row.stateName { name = "\(c), \(s) (\(sensor))" }
        else { name = sensor }
        out.register(SensorRegistration(sensor: sensor, name: name, source: "aqs", kind: "monitor",
                                        latitude: row.latitude ?? options.at?.latitude,
                                        longitude: row.longitude ?? options.at?.longitude, timeZone: row.zone), line: line)
        if let d = row.duration, d.uppercased() != "1 HOUR" {
            out.skip(line: line, "sample_duration '\(d)' is not hourly"); return
        }
        guard let dateText = row.date, dateText.utf8.contains(0x2D), let date = DateParsing.date(dateText),
              let timeText = row.time, let tod = DateParsing.timeOfDay(timeText) else {
            out.skip(line: line, "bad date_gmt/time_gmt '\(row.date ?? "")' '\(row.time ?? "")'"); return
        }
        guard let sample = row.sample else {
            out.skip(line: line, row.qualifier.map { "no value (qualifier '\($0)')" } ?? "no values"); return
        }
        let units = row.units ?? ""
        guard let value = MonitorUnits.convert(sample, to: p.quantity, from: units) else {
            out.skip(line: line, "units '\(units)' not supported for parameter \(code)"); return
        }
        let time = DateParsing.days(year: date.year, month: date.month, day: date.day) * 86_400 + tod
        out.add(sensor: sensor, time: time, line: line, [(p.quantity, value)], rank: (p.rank, row.poc ?? 0))
    }

    // MARK: CSV

    static func parseCSV(_ data: [UInt8], file: String, options: ImportOptions, into out: inout MonitorCollector) throws(ImportError) {
        let table = try CSVTable(data, file: file)
        var missing: [String] = []
        func need(_ names: String...) -> Int {
            if let i = table.column(names) { return i }
            missing.append(names[0]); return -1
        }
        let cState = need("state_code", "State Code"), cCounty = need("county_code", "County Code")
        let cSite = need("site_number", "Site Num", "Site Number"), cCode = need("parameter_code", "Parameter Code")
        let cDate = need("date_gmt", "Date GMT"), cTime = need("time_gmt", "Time GMT")
        let cSample = need("sample_measurement", "Sample Measurement"), cUnits = need("units_of_measure", "Units of Measure")
        guard missing.isEmpty else {
            throw ImportError(file: file, "not AQS sample data: missing column(s) \(missing.joined(separator: ", "))")
        }
        let cPOC = table.column("poc"), cLat = table.column("latitude"), cLon = table.column("longitude")
        let cDuration = table.column("sample_duration"), cName = table.column("local_site_name", "Local Site Name")
        let cCountyName = table.column("county", "County Name"), cStateName = table.column("state", "State Name")
        let cParamName = table.column("parameter", "Parameter Name"), cQualifier = table.column("qualifier", "Qualifier")
        let cDateLocal = table.column("date_local", "Date Local"), cTimeLocal = table.column("time_local", "Time Local")
        for (line, fields) in table.rows {
            out.rowsRead += 1
            let r = CSVRow(fields)
            var row = Row(state: r[cState], county: r[cCounty], site: r[cSite], code: r[cCode],
                          poc: r[cPOC].flatMap { Int($0) }, date: r[cDate], time: r[cTime], units: r[cUnits],
                          duration: r[cDuration], siteName: r[cName], countyName: r[cCountyName],
                          stateName: r[cStateName], parameterName: r[cParamName], qualifier: r[cQualifier],
                          dateLocal: r[cDateLocal], timeLocal: r[cTimeLocal])
            do {
                row.sample = try r.number(cSample, "sample_measurement")
                row.latitude = try r.number(cLat, "latitude")
                row.longitude = try r.number(cLon, "longitude")
            } catch {
                out.skip(line: line, error.reason); continue
            }
            add(row, line: line, options: options, into: &out)
        }
    }

    // MARK: JSON

    static func parseJSON(_ data: [UInt8], file: String, options: ImportOptions, into out: inout MonitorCollector) throws(ImportError) {
        guard let root = try MonitorJSON.parse(data, file: file) as? [String: Any] else {
            throw ImportError(file: file, "not an AQS API response: expected a JSON object with Header and Data")
        }
        let header = (root["Header"] as? [Any])?.first as? [String: Any]
        let status = MonitorJSON.string(header?["status"]) ?? ""
        if status.lowercased().contains("fail") {
            let message = header?["error"].map(MonitorJSON.describe) ?? status
            throw ImportError(file: file, "AQS API error response: \(message)")
        }
        guard let rows = root["Data"] as? [Any] else {
            throw ImportError(file: file, "not an AQS API response: no Data array")
        }
        let objects = rows.compactMap { $0 as? [String: Any] }
        if !rows.isEmpty && !objects.contains(where: { $0["sample_measurement"] != nil && $0["parameter_code"] != nil }) {
            throw ImportError(file: file, "not AQS sample data: no row has parameter_code and sample_measurement")
        }
        for (i, element) in rows.enumerated() {
            let line = i + 1
            out.rowsRead += 1
            guard let o = element as? [String: Any] else { out.skip(line: line, "element is not an object"); continue }
            func s(_ key: String) -> String? { MonitorJSON.string(o[key]) }
            var row = Row(state: s("state_code"), county: s("county_code"), site: s("site_number"),
                          code: s("parameter_code"), poc: s("poc").flatMap { Int($0) }, date: s("date_gmt"),
                          time: s("time_gmt"), units: s("units_of_measure"), duration: s("sample_duration"),
                          siteName: s("local_site_name"), countyName: s("county"), stateName: s("state"),
                          parameterName: s("parameter"), qualifier: s("qualifier"), dateLocal: s("date_local"),
                          timeLocal: s("time_local"))
            do {
                row.sample = try MonitorJSON.number(o["sample_measurement"], "sample_measurement")
                row.latitude = try MonitorJSON.number(o["latitude"], "latitude")
                row.longitude = try MonitorJSON.number(o["longitude"], "longitude")
            } catch {
                out.skip(line: line, error.reason); continue
            }
            add(row, line: line, options: options, into: &out)
        }
    }
}
