import BreezeCore

/// PurpleAir history/archive CSV (format `purpleair-csv`): one row per sensor and time, as written by the
/// PurpleAir history API and by projects that archive it (e.g. the Air Justice Lab 10-minute batches).
///
/// Columns (matched by name, any order, extra columns ignored; `shared/docs/domain.md` section 3.1):
/// - time: `time_stamp`, `timestamp` or `datetime`; each value is Unix seconds (UTC) or ISO 8601
///   (`2023-10-22T00:00:00Z`; without an offset it is taken as UTC).
/// - sensor: `id` or `sensor_index`; without either column, `--sensor ID` (`ImportOptions.sensor`) is required.
///   With an id column, `--sensor` only fills rows whose id is missing.
/// - PM2.5 in ug/m3, at least one required: `pm2.5_cf_1_a`/`_b` -> `pm25_cf1_a`/`_b`, `pm2.5_atm_a`/`_b` ->
///   `pm25_atm_a`/`_b`, `pm2.5_alt_a`/`_b` -> `pm25_alt_a`/`_b`; the A/B average `pm2.5_cf_1` -> `pm25_cf1`
///   only when neither CF=1 channel column exists (see `PurpleAirFields`).
/// - `temperature` (sensor housing, degrees F) -> `temperature_housing` in degrees C, with NO 8 F offset;
///   `humidity` (housing, %) -> `humidity_housing` as is; `pressure` (hPa = mbar) -> `pressure`. The offsets
///   of domain.md 3.1 are applied later by the projections.
///
/// One `reading` (source `purpleair`) per kept row, in file order: rows are not sorted and repeats are kept
/// (the store de-duplicates on (source, sensor, time)). With `--at LAT,LON` and exactly one sensor id known,
/// one `sensor.register` (name `PurpleAir <id>`, kind `purpleair`, no time zone) comes first.
public enum PurpleAirCSVImporter: Importer {
    public static let format = "purpleair-csv"
    public static let summary = "PurpleAir history/archive CSV (time_stamp, id, pm2.5_cf_1_a/_b, ... per row)"

    public static func parse(_ bytes: [UInt8], file: String, options: ImportOptions) throws(ImportError) -> ParseResult {
        let table = try CSVTable(try Gzip.maybeInflate(bytes, file: file), file: file)
        let fields = PurpleAirFields.select { table.column($0) != nil }
        guard fields.contains(where: { $0.isPM }) else {
            throw ImportError(file: file, "not a PurpleAir CSV: no pm2.5 columns (pm2.5_cf_1_a, pm2.5_cf_1_b, pm2.5_atm_a, "
                              + "pm2.5_atm_b, pm2.5_alt_a, pm2.5_alt_b or pm2.5_cf_1)")
        }
        guard let timeColumn = table.column("time_stamp", "timestamp", "datetime") else {
            throw ImportError(file: file, "not a PurpleAir CSV: no time_stamp, timestamp or datetime column")
        }
        let idColumn = table.column("id", "sensor_index")
        if idColumn == nil && options.sensor == nil {
            throw ImportError(file: file, "no sensor id: the file has no id or sensor_index column; give --sensor ID")
        }
        let columns = fields.map { table.column($0.key)! }
        let fallbackSensor = options.sensor.map { PurpleAirFields.normalizeID($0) }

        var result = ParseResult()
        result.records.reserveCapacity(table.rows.count + 1)
        var sensorsSeen: [String] = []       // distinct ids of kept rows, first-seen order (usually one)
        var firstLine: [String: Int] = [:]
        for (line, raw) in table.rows {
            result.rowsRead += 1
            do throws(ImportRowError) {
                if raw.count != table.header.count {
                    throw ImportRowError("row has \(raw.count) fields, the header has \(table.header.count)")
                }
                let row = CSVRow(raw)
                let sensor: String
                if let id = row[idColumn] { sensor = PurpleAirFields.normalizeID(id) }
                else if let fallback = fallbackSensor { sensor = fallback }
                else { throw ImportRowError("missing sensor id") }
                guard let t = row[timeColumn] else { throw ImportRowError("missing \(table.header[timeColumn])") }
                guard let time = PurpleAirFields.time(t) else {
                    throw ImportRowError("\(table.header[timeColumn]) '\(t)' is neither Unix seconds nor ISO 8601")
                }
                var values: [Measurement] = []
                values.reserveCapacity(fields.count)
                for (k, field) in fields.enumerated() {
                    if let v = try row.number(columns[k], field.key) { values.append(field.measurement(v)) }
                }
                if values.isEmpty { throw ImportRowError("no values") }
                if firstLine[sensor] == nil { firstLine[sensor] = line; sensorsSeen.append(sensor) }
                result.records.append(ImportRecord(
                    stream: .public,
                    body: .reading(Reading(source: "purpleair", sensor: sensor, time: time, values: values)),
                    line: line))
            } catch {
                result.issues.append(ImportIssue(file: file, line: line, reason: error.reason))
            }
        }

        if let at = options.at {
            let sensor: String?
            if sensorsSeen.count > 1 {
                throw ImportError(file: file, "--at gives one location but the file has \(sensorsSeen.count) sensors ("
                                  + sensorsSeen.joined(separator: ", ") + ")")
            } else {
                sensor = sensorsSeen.first ?? fallbackSensor
            }
            if let sensor {
                let registration = SensorRegistration(sensor: sensor, name: "PurpleAir \(sensor)", source: "purpleair",
                                                      kind: "purpleair", latitude: at.latitude,
                                                      longitude: at.longitude, timeZone: nil)
                result.records.insert(ImportRecord(stream: .public, body: .sensorRegistered(registration),
                                                   line: firstLine[sensor] ?? 1), at: 0)
            }
        }
        return result
    }
}

/// The PurpleAir field names shared by the CSV and API importers, and the quantities they become
/// (`Protocol/encoding.md` section 5; `shared/docs/domain.md` section 3.1).
///
/// Mapping:
/// - per-channel PM2.5: `pm2.5_cf_1_a` -> `pm25_cf1_a`, `pm2.5_cf_1_b` -> `pm25_cf1_b`, `pm2.5_atm_a` ->
///   `pm25_atm_a`, `pm2.5_atm_b` -> `pm25_atm_b`, `pm2.5_alt_a` -> `pm25_alt_a`, `pm2.5_alt_b` -> `pm25_alt_b`;
/// - the A/B average `pm2.5_cf_1` -> `pm25_cf1`, only when neither `pm2.5_cf_1_a` nor `pm2.5_cf_1_b` is
///   present (the channels are what the A/B QA of domain.md 3.3 needs; the average is a last resort);
/// - other averages (`pm2.5`, `pm2.5_atm`, `pm2.5_alt`, the `stats` windows) and PM1/PM10 are not kept;
/// - `temperature` (or `temperature_a` when there is no `temperature`), degrees F inside the housing ->
///   `temperature_housing` in degrees C, `(F - 32) * 5 / 9`, no 8 F offset;
/// - `humidity` (or `humidity_a`), % inside the housing -> `humidity_housing`, no 4 % offset;
/// - `pressure` (or `pressure_a`), mbar = hPa -> `pressure`.
enum PurpleAirFields {
    struct Field: Sendable {
        /// The PurpleAir name (CSV column or API field).
        let key: String
        let quantity: String
        let fahrenheit: Bool
        let isPM: Bool

        func measurement(_ value: Double) -> Measurement {
            Measurement(quantity, fahrenheit ? (value - 32) * 5 / 9 : value)
        }
    }

    private static let channels: [(String, String)] = [
        ("pm2.5_cf_1_a", "pm25_cf1_a"), ("pm2.5_cf_1_b", "pm25_cf1_b"),
        ("pm2.5_atm_a", "pm25_atm_a"), ("pm2.5_atm_b", "pm25_atm_b"),
        ("pm2.5_alt_a", "pm25_alt_a"), ("pm2.5_alt_b", "pm25_alt_b"),
    ]

    /// The fields to read, given which names the file has.
    static func select(_ has: (String) -> Bool) -> [Field] {
        var out: [Field] = []
        for (key, quantity) in channels where has(key) {
            out.append(Field(key: key, quantity: quantity, fahrenheit: false, isPM: true))
        }
        if !has("pm2.5_cf_1_a") && !has("pm2.5_cf_1_b") && has("pm2.5_cf_1") {
            out.append(Field(key: "pm2.5_cf_1", quantity: "pm25_cf1", fahrenheit: false, isPM: true))
        }
        for (base, quantity, f) in [("temperature", "temperature_housing", true),
                                    ("humidity", "humidity_housing", false),
                                    ("pressure", "pressure", false)] {
            if has(base) { out.append(Field(key: base, quantity: quantity, fahrenheit: f, isPM: false)) }
            else if has(base + "_a") { out.append(Field(key: base + "_a", quantity: quantity, fahrenheit: f, isPM: false)) }
        }
        return out
    }

    /// A time as Unix seconds (integer, or a number with no fraction) or ISO 8601 (UTC unless an offset is given).
    static func time(_ s: String) -> Int64? {
        if let t = Int64(s) {
            // Unix seconds between 1970 and 2200; a larger number is milliseconds or garbage: refused.
            return t >= 0 && t < 7_258_118_400 ? t : nil
        }
        if let d = Double(s), d.isFinite, d == d.rounded(), abs(d) < 1e15 { return Int64(d) }
        return DateParsing.isoDateTime(s)
    }

    /// A sensor id as text: `87173.0` (as a float-typed writer such as pandas may give it) becomes `87173`.
    static func normalizeID(_ s: String) -> String {
        let t = s.trimmingSpaces
        if t.hasSuffix(".0"), t.count > 2, t.dropLast(2).allSatisfy({ $0.isASCII && $0.isNumber }) {
            return String(t.dropLast(2))
        }
        return t
    }
}
