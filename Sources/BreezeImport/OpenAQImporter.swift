import BreezeCore

/// OpenAQ v3 JSON responses (https://docs.openaq.org, `shared/docs/domain.md` section 5): the envelope
/// `{meta:{name,website,page,limit,found}, results:[...]}` (`found` may be a number or a string such as
/// `">1000"`; it is not used).
///
/// - **Measurements** (`/v3/sensors/{id}/measurements`, `/hours`): results
///   `{value, parameter:{id,name,units}, period:{label,interval,datetimeFrom:{utc},datetimeTo:{utc}}, ...}`
///   become one reading each, source `openaq`. The response does not name its sensor, so the sensor id is
///   a result's `sensorsId` when present, else `--sensor` (`options.sensor`); without either the file is
///   refused. **Time = `period.datetimeFrom.utc`**, the start of the period, to match AirNow and AQS,
///   which stamp an hour by its beginning (OpenAQ's 12:00-13:00 hour is stored at 12:00). Periods longer
///   than one hour (`/days`, `/months`) are skipped: readings are hourly or finer. A null `value` is
///   missing ("no values").
/// - **Sensors** (`/v3/sensors/{id}`, `/v3/locations/{id}/sensors`): results `{id, name, parameter,
///   latest?:{coordinates:{latitude,longitude}}}` become one `sensor.register` each (sensor = `id`,
///   name = `name`, kind `monitor`, coordinates from `latest` when given). The `latest` value itself is
///   not imported: its time is the end of the averaging period and the period is not given.
/// - Parameters: `pm25` -> `pm25`, `pm10` -> `pm10` (ug/m3); `o3`, `no2` -> ppb (ppm x1000);
///   `temperature` (C, F converted), `relativehumidity` -> `humidity`, `pressure` (hPa). Other parameters
///   (so2, co, no, nox, ...) and gases in ug/m3 are reported (unknown parameters once each) and skipped.
/// - An error response (`{"detail": ...}`, `{"message": ...}`) or JSON without `results` is an `ImportError`.
public enum OpenAQImporter: Importer {
    /// The format name on the command line: `breeze import openaq FILE...`.
    public static let format = "openaq"
    /// One line for `breeze import --help`.
    public static let summary = "OpenAQ v3 measurements/hours (readings, with --sensor) or sensors (registrations) JSON"

    /// Parses a whole file (gzip-compressed or not) into registrations and readings for the `public`
    /// stream; throws `ImportError` when it is not in this format, reports skipped rows as issues.
    public static func parse(_ bytes: [UInt8], file: String, options: ImportOptions) throws(ImportError) -> ParseResult {
        let data = try Gzip.maybeInflate(bytes, file: file)
        guard MonitorJSON.looksLikeJSON(data), let root = try MonitorJSON.parse(data, file: file) as? [String: Any] else {
            throw ImportError(file: file, "not an OpenAQ v3 response: expected a JSON object {meta, results}")
        }
        guard let results = root["results"] as? [Any] else {
            if let message = MonitorJSON.errorMessage(root) {
                throw ImportError(file: file, "OpenAQ error response: \(message)")
            }
            throw ImportError(file: file, "not an OpenAQ v3 response: no results array")
        }
        let objects = results.compactMap { $0 as? [String: Any] }
        let measurements = objects.filter { $0["period"] != nil }
        let sensors = objects.filter { $0["period"] == nil && $0["id"] != nil && $0["parameter"] != nil }
        if !results.isEmpty && measurements.isEmpty && sensors.isEmpty {
            throw ImportError(file: file, "not an OpenAQ measurements or sensors response: results have neither period nor id+parameter")
        }
        if options.sensor == nil, measurements.contains(where: { MonitorJSON.string($0["sensorsId"]) == nil }) {
            throw ImportError(file: file, "OpenAQ measurements do not name their sensor: give --sensor ID")
        }

        var out = MonitorCollector(file: file, source: "openaq")
        for (i, element) in results.enumerated() {
            let line = i + 1
            out.rowsRead += 1
            guard let o = element as? [String: Any] else { out.skip(line: line, "element is not an object"); continue }
            let parameter = o["parameter"] as? [String: Any]
            if o["period"] != nil {
                addMeasurement(o, parameter: parameter, line: line, options: options, into: &out)
            } else if let id = MonitorJSON.string(o["id"]), parameter != nil {
                let coordinates = (o["latest"] as? [String: Any])?["coordinates"] as? [String: Any]
                let lat: Double? = (try? MonitorJSON.number(coordinates?["latitude"], "latitude")) ?? nil
                let lon: Double? = (try? MonitorJSON.number(coordinates?["longitude"], "longitude")) ?? nil
                out.register(SensorRegistration(sensor: id, name: MonitorJSON.string(o["name"]) ?? id, source: "openaq",
                                                kind: "monitor", latitude: lat, longitude: lon,
                                                timeZone: nil), line: line)
            } else {
                out.skip(line: line, "neither a measurement nor a sensor")
            }
        }
        return out.finish()
    }

    /// OpenAQ parameter names -> quantities.
    static let quantities: [String: String] = [
        "pm25": "pm25", "pm10": "pm10", "o3": "o3", "no2": "no2",
        "temperature": "temperature", "relativehumidity": "humidity", "pressure": "pressure",
    ]

    static func addMeasurement(_ o: [String: Any], parameter: [String: Any]?, line: Int, options: ImportOptions,
                               into out: inout MonitorCollector) {
        guard let sensor = MonitorJSON.string(o["sensorsId"]) ?? options.sensor else { return }
        guard let name = MonitorJSON.string(parameter?["name"]) else { out.skip(line: line, "missing parameter name"); return }
        guard let quantity = quantities[name.lowercased()] else {
            out.skipOnce(key: name.lowercased(), line: line, "unknown parameter '\(name)' skipped"); return
        }
        let period = o["period"] as? [String: Any]
        func utc(_ key: String) -> Int64? {
            MonitorJSON.string((period?[key] as? [String: Any])?["utc"]).flatMap { DateParsing.isoDateTime($0) }
        }
        guard let from = utc("datetimeFrom") else { out.skip(line: line, "missing or bad period.datetimeFrom.utc"); return }
        if let to = utc("datetimeTo"), to - from > 3600 {
            let label = MonitorJSON.string(period?["label"]) ?? "\(to - from) s"
            out.skip(line: line, "period '\(label)' is longer than an hour"); return
        }
        let raw: Double?
        do { raw = try MonitorJSON.number(o["value"], "value") } catch { out.skip(line: line, error.reason); return }
        guard let raw else { out.skip(line: line, "no values"); return }
        let units = MonitorJSON.string(parameter?["units"]) ?? ""
        guard let value = MonitorUnits.convert(raw, to: quantity, from: units) else {
            out.skip(line: line, "units '\(units)' not supported for \(name)"); return
        }
        out.add(sensor: sensor, time: from, line: line, [(quantity, value)])
    }
}
