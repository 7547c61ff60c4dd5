import BreezeCore

/// A sensor registry CSV (format `sensors-csv`): one sensor per row, one `sensor.register` per kept row.
///
/// Columns (matched by name, case-insensitively, any order; extra columns such as `start`, `end`, `model`
/// are ignored):
/// - id, required: `id`, `sensor_index` or `sensor` (the first present, in that order). A float-typed id such
///   as `6416.0` is written `6416`.
/// - name, required: `name`, else `locationName`. PurpleAir's `name` is the sensor's own name as the API
///   returns it (`shared/docs/domain.md` section 3.1); `locationName` is what MazamaScience's AirSensor2 derives
///   for its location, so `name` wins when a file has both (in the AirSensor2 Okanogan registry they are equal
///   on every row). A row whose name is missing falls back to `locationName`, then to `PurpleAir <id>` (source
///   `purpleair`) or the id itself.
/// - `latitude`/`lat` and `longitude`/`lon`/`lng`, optional: degrees; kept only when both are present;
///   one without the other, a non-number or a value out of range skips the row with a reason.
/// - `source`, optional: `purpleair`, `airnow`, `aqs`, `openaq` (lower-cased); `purpleair` when absent.
/// - `kind`, optional: else `purpleair` for source `purpleair` and `monitor` for any other source.
/// - time zone, optional: `timezone`, `time_zone` or `tz` (IANA name, kept as written).
///
/// `--at LAT,LON` gives the location of a single sensor: it is only accepted for a file with exactly one data
/// row, and it overrides any location in that row. A file without latitude/longitude (e.g. the Air Justice
/// Lab `sensors.csv`) gives registrations without location.
public enum SensorsCSVImporter: Importer {
    public static let format = "sensors-csv"
    public static let summary = "sensor registry CSV (id/sensor_index, name, latitude, longitude, source, timezone)"

    public static func parse(_ bytes: [UInt8], file: String, options: ImportOptions) throws(ImportError) -> ParseResult {
        let table = try CSVTable(try Gzip.maybeInflate(bytes, file: file), file: file)
        guard let idColumn = table.column("id", "sensor_index", "sensor") else {
            throw ImportError(file: file, "not a sensor registry CSV: no id, sensor_index or sensor column")
        }
        let nameColumn = table.column("name")
        let locationNameColumn = table.column("locationName")
        guard nameColumn != nil || locationNameColumn != nil else {
            throw ImportError(file: file, "not a sensor registry CSV: no name or locationName column")
        }
        let latitudeColumn = table.column("latitude", "lat")
        let longitudeColumn = table.column("longitude", "lon", "lng")
        let sourceColumn = table.column("source")
        let kindColumn = table.column("kind")
        let zoneColumn = table.column("timezone", "time_zone", "tz")
        if options.at != nil && table.rows.count != 1 {
            throw ImportError(file: file, "--at gives the location of one sensor but the file has \(table.rows.count) rows")
        }

        var result = ParseResult()
        result.records.reserveCapacity(table.rows.count)
        for (line, raw) in table.rows {
            result.rowsRead += 1
            do throws(ImportRowError) {
                if raw.count != table.header.count {
                    throw ImportRowError("row has \(raw.count) fields, the header has \(table.header.count)")
                }
                let row = CSVRow(raw)
                if raw.indices.allSatisfy({ row[$0] == nil }) { throw ImportRowError("no values") }
                guard let rawID = row[idColumn] else { throw ImportRowError("missing sensor id") }
                let sensor = PurpleAirFields.normalizeID(rawID)
                let source = row[sourceColumn]?.lowercased() ?? "purpleair"
                let kind = row[kindColumn] ?? (source == "purpleair" ? "purpleair" : "monitor")
                let name = row[nameColumn] ?? row[locationNameColumn] ?? (source == "purpleair" ? "PurpleAir \(sensor)" : sensor)
                var latitude = try row.number(latitudeColumn, table.header[latitudeColumn ?? 0])
                var longitude = try row.number(longitudeColumn, table.header[longitudeColumn ?? 0])
                if let at = options.at { latitude = at.latitude; longitude = at.longitude }
                switch (latitude, longitude) {
                case (nil, nil): break
                case (let lat?, let lon?):
                    guard abs(lat) <= 90 else { throw ImportRowError("latitude \(lat) is out of range") }
                    guard abs(lon) <= 180 else { throw ImportRowError("longitude \(lon) is out of range") }
                case (_?, nil): throw ImportRowError("latitude without longitude")
                case (nil, _?): throw ImportRowError("longitude without latitude")
                }
                result.records.append(ImportRecord(stream: .public, body: .sensorRegistered(SensorRegistration(
                    sensor: sensor, name: name, source: source, kind: kind,
                    latitude: latitude, longitude: longitude, timeZone: row[zoneColumn])), line: line))
            } catch {
                result.issues.append(ImportIssue(file: file, line: line, reason: error.reason))
            }
        }
        return result
    }
}
