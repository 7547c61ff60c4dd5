import BreezeCore

/// AirNow-Tech "unpivoted" (long) CSV export: one row per site, parameter and hour
/// (`shared/docs/domain.md` section 5; `shared/data/README.md`, monitors/).
///
/// Columns (by name, any order; extra columns ignored): `Site AQS`, `Param`, `Date (UTC)`, `Time (UTC)`,
/// `Value`, `Unit` are required; `Site`, `POC`, `Param AQS`, `QC Code` are used when present. Dates are
/// `M/D/YYYY`, times `H:MM`, both UTC; the hour is hour-beginning (AirNow convention).
///
/// - Rows are grouped by (`Site AQS`, UTC hour) into ONE reading per site-hour holding every parameter of
///   that hour: `NO2` -> `no2` (ppb), `O3` -> `o3` (ppb; ppm x1000), `PM2.5-88101`/`PM2.5-88502` -> `pm25`
///   (ug/m3), `PM10-81102`/`PM10-85101` -> `pm10`, `RHUM` -> `humidity` (%), `TEMP` -> `temperature`
///   (degrees C; F converted). Other parameters are reported once each, as skipped, with their name.
/// - Source `airnow`, sensor = `Site AQS` (9 digits, zero-padded when a spreadsheet dropped the leading
///   zero). One `sensor.register` per site, named by `Site`, located at `--at` when given (the export
///   carries no coordinates). Its time zone is the file's `Offset (LST)` as the IANA fixed-offset zone of
///   that standard time (`-05:00` -> `Etc/GMT+5`: POSIX signs are inverted), so the site's days are at least
///   local standard days; a region zone held already (`America/New_York`, with daylight saving) is kept
///   over it (`FactImport`). An offset that is not whole hours gives no zone.
/// - **QC codes.** A non-zero `QC Code` marks a value AirNow flagged; such a value is NOT used (the row is
///   reported as skipped, `QC code N: value V not used`). Evidence in the real Burdens Creek file: the only
///   non-zero code is 9, on 6 rows: NO2 and O3 at -3 ppb, and PM2.5 stuck at 10.1 ug/m3 for 2019-08-19
///   12:00-15:00 UTC, exactly the four hours the AirNow API file for the same site reports as -999
///   (missing). EPA's sensortoolkit likewise offers "only keep data where the QC code is zero".
/// - Two rows giving the same quantity for one site-hour: the preferred one is kept (PM2.5 88101 before
///   88502, then the lowest POC, then the first in the file); the other is reported.
public enum AirNowTechCSVImporter: Importer {
    /// The format name on the command line: `breeze import airnow-tech-csv FILE...`.
    public static let format = "airnow-tech-csv"
    /// One line for `breeze import --help`.
    public static let summary = "AirNow-Tech long CSV export (one row per site, parameter, hour) -> hourly monitor readings"

    /// Parses a whole file (gzip-compressed or not) into registrations and readings for the `public`
    /// stream; throws `ImportError` when it is not in this format, reports skipped rows as issues.
    public static func parse(_ bytes: [UInt8], file: String, options: ImportOptions) throws(ImportError) -> ParseResult {
        let table = try CSVTable(try Gzip.maybeInflate(bytes, file: file), file: file)
        var missing: [String] = []
        func need(_ names: String...) -> Int {
            if let i = table.column(names) { return i }
            missing.append(names[0]); return -1
        }
        let cSite = need("Site AQS"), cParam = need("Param"), cDate = need("Date (UTC)"), cTime = need("Time (UTC)")
        let cValue = need("Value"), cUnit = need("Unit")
        guard missing.isEmpty else {
            throw ImportError(file: file, "not an AirNow-Tech long CSV: missing column(s) \(missing.joined(separator: ", "))")
        }
        let cName = table.column("Site"), cPOC = table.column("POC"), cParamCode = table.column("Param AQS")
        let cQC = table.column("QC Code"), cOffset = table.column("Offset (LST)")

        var out = MonitorCollector(file: file, source: "airnow")
        for (line, fields) in table.rows {
            out.rowsRead += 1
            let row = CSVRow(fields)
            guard let rawSite = row[cSite], let sensor = MonitorIDs.site(rawSite) else {
                out.skip(line: line, "missing or bad Site AQS"); continue
            }
            guard let param = row[cParam] else { out.skip(line: line, "missing Param"); continue }
            let upper = param.uppercased()
            let code = row[cParamCode] ?? String(upper.split(separator: "-").last ?? "")
            guard let mapping = paramMap[upper] ?? paramMap[String(upper.split(separator: "-").first ?? "")] else {
                out.skipOnce(key: "param:" + upper, line: line, "unknown parameter '\(param)' skipped")
                continue
            }
            out.register(SensorRegistration(sensor: sensor, name: row[cName] ?? sensor, source: "airnow", kind: "monitor",
                                            latitude: options.at?.latitude, longitude: options.at?.longitude,
                                            timeZone: row[cOffset].flatMap(fixedZone)), line: line)
            guard let dateText = row[cDate], let date = DateParsing.date(dateText),
                  let timeText = row[cTime], let tod = DateParsing.timeOfDay(timeText) else {
                out.skip(line: line, "bad date/time '\(row[cDate] ?? "")' '\(row[cTime] ?? "")'"); continue
            }
            let time = DateParsing.days(year: date.year, month: date.month, day: date.day) * 86_400 + tod
            let raw: Double?
            do { raw = try row.number(cValue, "Value") } catch { out.skip(line: line, error.reason); continue }
            guard let raw else { out.skip(line: line, "no values"); continue }
            if let qc = row[cQC], Double(qc) != 0 {
                out.skip(line: line, "QC code \(qc): value \(row[cValue] ?? "") not used"); continue
            }
            let unit = row[cUnit] ?? ""
            guard let value = MonitorUnits.convert(raw, to: mapping.quantity, from: unit) else {
                out.skip(line: line, "unit '\(unit)' not supported for \(param)"); continue
            }
            let poc = row[cPOC].flatMap { Int($0) } ?? 0
            let rank = (mapping.preferredCodes.firstIndex(of: code) ?? mapping.preferredCodes.count, poc)
            out.add(sensor: sensor, time: time, line: line, [(mapping.quantity, value)], rank: rank)
        }
        return out.finish()
    }

    /// The IANA zone of a fixed standard offset `±HH:MM` with whole hours: `-05:00` -> `Etc/GMT+5`,
    /// `+01:00` -> `Etc/GMT-1`, `+00:00` -> `Etc/GMT`; nil otherwise.
    static func fixedZone(_ offset: String) -> String? {
        let u = Array(offset.utf8)
        guard u.count == 6, u[0] == 0x2B || u[0] == 0x2D, u[3] == 0x3A, u[4] == 0x30, u[5] == 0x30,
              let h = Int(String(decoding: u[1..<3], as: UTF8.self)) else { return nil }
        return fixedZone(hours: u[0] == 0x2D ? -h : h)
    }

    /// The `Etc/` zone of a whole-hour offset east of UTC: the database has `Etc/GMT+12` (UTC-12) to
    /// `Etc/GMT-14` (UTC+14); nil outside.
    static func fixedZone(hours h: Int) -> String? {
        guard h >= -12 && h <= 14 else { return nil }
        if h == 0 { return "Etc/GMT" }
        return "Etc/GMT" + (h < 0 ? "+" : "-") + String(abs(h))
    }

    /// AirNow-Tech `Param` names (or their prefix before `-`) to quantities; `preferredCodes` ranks AQS
    /// parameter codes when two give the same quantity.
    static let paramMap: [String: (quantity: String, preferredCodes: [String])] = [
        "NO2": ("no2", []), "O3": ("o3", []), "RHUM": ("humidity", []), "TEMP": ("temperature", []),
        "PM2.5": ("pm25", ["88101", "88502"]), "PM10": ("pm10", ["81102", "85101"]),
    ]
}

// MARK: - Support shared by the monitor importers (AirNow-Tech, AirNow API, AQS, OpenAQ)

/// Collects the records of one monitor file: one `sensor.register` per sensor (at its first row), and one
/// reading per (sensor, time) holding every quantity of that hour, in order of first appearance.
struct MonitorCollector {
    let file: String
    let source: String
    var rowsRead = 0

    private enum Item { case registration(SensorRegistration, line: Int), group(Int) }
    private struct Key: Hashable { let sensor: String; let time: Int64 }
    private struct Value { var quantity: String; var value: Double; var rank: (Int, Int); var line: Int }
    private struct Group { let sensor: String; let time: Int64; let line: Int; var values: [Value] }

    private var items: [Item] = []
    private var groups: [Group] = []
    private var index: [Key: Int] = [:]
    private var registered: Set<String> = []
    private var once: Set<String> = []
    private var issues: [ImportIssue] = []
    private var issueLines: Set<Int> = []

    init(file: String, source: String) { self.file = file; self.source = source }

    /// Registers a sensor the first time it is seen; later calls for the same sensor do nothing.
    mutating func register(_ registration: SensorRegistration, line: Int) {
        guard registered.insert(registration.sensor).inserted else { return }
        items.append(.registration(registration, line: line))
    }

    /// Reports a skipped row (the first reason given for a line is kept).
    mutating func skip(line: Int, _ reason: String) {
        guard issueLines.insert(line).inserted else { return }
        issues.append(ImportIssue(file: file, line: line, reason: reason))
    }

    /// Reports a row skipped for a reason shared by many rows (an unknown parameter): every row counts in
    /// the summary; `breeze import` groups them under one reason.
    mutating func skipOnce(key: String, line: Int, _ reason: String) {
        skip(line: line, reason)
    }

    /// Adds one row's quantities to the reading of (sensor, time). When a quantity is already there, the
    /// value with the lower `rank` wins (ties: the earlier row); the losing row is reported.
    mutating func add(sensor: String, time: Int64, line: Int, _ values: [(String, Double)], rank: (Int, Int) = (0, 0)) {
        let key = Key(sensor: sensor, time: time)
        let g: Int
        if let i = index[key] { g = i } else {
            g = groups.count
            groups.append(Group(sensor: sensor, time: time, line: line, values: []))
            index[key] = g
            items.append(.group(g))
        }
        for (quantity, value) in values {
            if let j = groups[g].values.firstIndex(where: { $0.quantity == quantity }) {
                let old = groups[g].values[j]
                if rank < old.rank {
                    groups[g].values[j] = Value(quantity: quantity, value: value, rank: rank, line: line)
                    skip(line: old.line, "duplicate \(quantity) for this sensor and hour: line \(line) preferred")
                } else {
                    skip(line: line, "duplicate \(quantity) for this sensor and hour: line \(old.line) kept")
                }
            } else {
                groups[g].values.append(Value(quantity: quantity, value: value, rank: rank, line: line))
            }
        }
    }

    /// The records (registrations and readings in order of first appearance) and the issues by line.
    func finish() -> ParseResult {
        var result = ParseResult(rowsRead: rowsRead)
        for item in items {
            switch item {
            case .registration(let r, let line):
                result.records.append(ImportRecord(stream: .public, body: .sensorRegistered(r), line: line))
            case .group(let g):
                let group = groups[g]
                let reading = Reading(source: source, sensor: group.sensor, time: group.time,
                                      values: group.values.map { Measurement($0.quantity, $0.value) })
                result.records.append(ImportRecord(stream: .public, body: .reading(reading), line: group.line))
            }
        }
        result.issues = issues.enumerated().sorted { ($0.element.line, $0.offset) < ($1.element.line, $1.offset) }.map(\.element)
        return result
    }
}

/// AQS site identifiers.
enum MonitorIDs {
    /// A 9-digit AQS site id (2-digit state, 3-digit county, 4-digit site) from text such as `370630099`,
    /// `37-063-0099` or `60371103` (a leading zero lost in a spreadsheet): digits only, left-padded to 9.
    /// Other non-empty ids (e.g. non-US AirNow codes with letters) are kept as written.
    static func site(_ text: String) -> String? {
        let t = text.trimmingSpaces
        guard !t.isEmpty else { return nil }
        let digits = t.filter { $0 != "-" && $0 != " " }
        guard digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return t }
        if digits.count >= 9 { return digits }
        return String(repeating: "0", count: 9 - digits.count) + digits
    }

    /// The 9-digit site id from state, county and site number, zero-padded 2+3+4.
    static func site(state: String, county: String, site: String) -> String? {
        func pad(_ s: String, _ w: Int) -> String? {
            let t = s.trimmingSpaces
            guard !t.isEmpty, t.count <= w else { return nil }
            return String(repeating: "0", count: w - t.count) + t
        }
        guard let s = pad(state, 2), let c = pad(county, 3), let n = pad(site, 4) else { return nil }
        return s + c + n
    }

    /// The 9-digit site id inside a 12-digit international AQS code (`840` + 9 digits).
    static func fromInternational(_ text: String) -> String? {
        let t = text.trimmingSpaces
        guard t.count == 12, t.allSatisfy({ $0.isASCII && $0.isNumber }) else { return site(t) }
        return String(t.suffix(9))
    }
}

/// Conversion of monitor values to the canonical units of `Protocol/encoding.md` section 5.
enum MonitorUnits {
    /// The value in the canonical unit of `quantity`, or nil when `unit` is not one this quantity can be
    /// converted from. Gases: ppb, or ppm x 1000 (rounded to 1e-6 ppb so 0.035 ppm is exactly 35 ppb).
    /// Particles: ug/m3 in any spelling. Temperature: degrees C, or F converted. Humidity: %. Pressure: hPa.
    static func convert(_ value: Double, to quantity: String, from unit: String) -> Double? {
        let u = normalized(unit)
        switch quantity {
        case "pm25", "pm10", "pm25_nowcast", "pm10_nowcast":
            let ok = ["ug/m3", "µg/m3", "μg/m3", "ug/m³", "µg/m³", "μg/m³", "ugm-3"].contains(u)
                || u.hasPrefix("micrograms/cubicmeter")
            return ok ? value : nil
        case "o3", "no2", "o3_nowcast":
            if u == "ppb" || u == "partsperbillion" { return value }
            if u == "ppm" || u == "partspermillion" { return (value * 1_000_000).rounded() / 1_000 }
            return nil
        case "temperature":
            if ["c", "degc", "°c", "degreescentigrade", "degreescelsius", "celsius"].contains(u) { return value }
            if ["f", "degf", "°f", "degreesfahrenheit", "fahrenheit"].contains(u) { return (value - 32) * 5 / 9 }
            return nil
        case "humidity":
            return ["%", "percent", "percentrelativehumidity", "%rh", "rh"].contains(u) ? value : nil
        case "pressure":
            return ["hpa", "mb", "mbar", "millibars", "millibar"].contains(u) ? value : nil
        default:
            return value
        }
    }

    static func normalized(_ unit: String) -> String {
        String(unit.lowercased().filter { $0 != " " && $0 != "\t" })
    }
}
