import BreezeCore
import Foundation

/// PurpleAir API v1 responses (format `purpleair-json`), `shared/docs/domain.md` section 3.1:
/// - `GET /v1/sensors`: columnar, `{"fields": ["sensor_index", "name", ...], "data": [[131075, "...", ...], ...]}`;
///   each `data` element is one sensor (issue lines are 1-based `data` indexes);
/// - `GET /v1/sensors/{sensor_index}`: `{"sensor": {"sensor_index": ..., ...}}` (line 1);
/// - an error response `{"error": "ApiKeyInvalidError", "description": "..."}` throws `ImportError` quoting both.
///
/// Per sensor: one `sensor.register` (source and kind `purpleair`; `name`, or `PurpleAir <id>` when absent;
/// latitude and longitude only when both are present; no time zone, the API gives none), then one `reading`
/// at the sensor's `last_seen` (else the response's `data_time_stamp`) with the measurement fields present,
/// mapped as `PurpleAirFields` describes (per-channel PM2.5; `pm2.5_cf_1` only without CF=1 channels;
/// housing temperature F -> `temperature_housing` C; `humidity` -> `humidity_housing`; `pressure` hPa).
/// A response whose fields include no measurement (e.g. `fields=sensor_index,name,latitude,longitude`) gives
/// registrations only; a sensor whose measurement fields are all null gives its registration and an issue
/// "no values".
public enum PurpleAirJSONImporter: Importer {
    public static let format = "purpleair-json"
    public static let summary = "PurpleAir API v1 /v1/sensors (fields + data) or /v1/sensors/{id} (sensor) JSON"

    public static func parse(_ bytes: [UInt8], file: String, options: ImportOptions) throws(ImportError) -> ParseResult {
        let data = try Gzip.maybeInflate(bytes, file: file)
        let json: Any
        do { json = try JSONSerialization.jsonObject(with: Data(data), options: [.fragmentsAllowed]) }
        catch { throw ImportError(file: file, "not JSON: the PurpleAir API response cannot be parsed") }
        guard let top = json as? [String: Any] else {
            throw ImportError(file: file, "not a PurpleAir API v1 response: the top level is not a JSON object")
        }
        if let error = top["error"], !(error is NSNull) {
            let type = (error as? String) ?? String(describing: error)
            let description = (top["description"] as? String).map { ": \($0)" } ?? ""
            throw ImportError(file: file, "PurpleAir API error response \(type)\(description)")
        }
        let responseTime = integer(top["data_time_stamp"])

        var result = ParseResult()
        if let sensor = top["sensor"] {
            guard let object = sensor as? [String: Any] else {
                throw ImportError(file: file, "not a PurpleAir API v1 response: `sensor` is not an object")
            }
            let fields = PurpleAirFields.select { object[$0] != nil }
            result.rowsRead = 1
            emit(lookup: { object[$0] }, fields: fields, responseTime: responseTime, line: 1, file: file, into: &result)
            return result
        }
        guard let names = top["fields"] as? [Any], let rows = top["data"] as? [Any] else {
            throw ImportError(file: file, "not a PurpleAir API v1 response: no `sensor` object and no `fields` + `data` arrays")
        }
        var index: [String: Int] = [:]
        for (i, name) in names.enumerated() {
            guard let name = name as? String else {
                throw ImportError(file: file, "not a PurpleAir API v1 response: `fields` element \(i + 1) is not a string")
            }
            if index[name] == nil { index[name] = i }
        }
        guard index["sensor_index"] != nil else {
            throw ImportError(file: file, "not a PurpleAir API v1 /v1/sensors response: `fields` has no sensor_index")
        }
        let fields = PurpleAirFields.select { index[$0] != nil }
        result.records.reserveCapacity(rows.count * (fields.isEmpty ? 1 : 2))
        for (i, element) in rows.enumerated() {
            result.rowsRead += 1
            guard let row = element as? [Any] else {
                result.issues.append(ImportIssue(file: file, line: i + 1, reason: "data element is not an array"))
                continue
            }
            guard row.count == names.count else {
                result.issues.append(ImportIssue(file: file, line: i + 1,
                                                 reason: "data element has \(row.count) values, fields has \(names.count)"))
                continue
            }
            emit(lookup: { index[$0].map { row[$0] } }, fields: fields, responseTime: responseTime,
                 line: i + 1, file: file, into: &result)
        }
        return result
    }

    /// One sensor: its registration, then its reading when the response has measurement fields.
    private static func emit(lookup: (String) -> Any?, fields: [PurpleAirFields.Field], responseTime: Int64?,
                             line: Int, file: String, into result: inout ParseResult) {
        do throws(ImportRowError) {
            guard let sensor = try id(lookup("sensor_index")) else { throw ImportRowError("missing sensor_index") }
            var name = "PurpleAir \(sensor)"
            if let n = lookup("name"), !(n is NSNull) {
                guard let s = n as? String else { throw ImportRowError("name is not a string") }
                if !s.trimmingSpaces.isEmpty { name = s }
            }
            let latitude = try number(lookup("latitude"), "latitude")
            let longitude = try number(lookup("longitude"), "longitude")
            var location: (Double, Double)?
            if let latitude, let longitude {
                guard abs(latitude) <= 90, abs(longitude) <= 180 else {
                    throw ImportRowError("location \(latitude),\(longitude) is out of range")
                }
                location = (latitude, longitude)
            }
            var values: [BreezeCore.Measurement] = []
            for field in fields {
                if let v = try number(lookup(field.key), field.key) { values.append(field.measurement(v)) }
            }
            var time: Int64?
            if !fields.isEmpty {
                time = integer(lookup("last_seen")) ?? responseTime
                if !values.isEmpty && time == nil { throw ImportRowError("no last_seen and no data_time_stamp") }
            }
            result.records.append(ImportRecord(stream: .public, body: .sensorRegistered(SensorRegistration(
                sensor: sensor, name: name, source: "purpleair", kind: "purpleair",
                latitude: location?.0, longitude: location?.1, timeZone: nil)), line: line))
            guard !fields.isEmpty else { return }
            guard let time, !values.isEmpty else { throw ImportRowError("no values") }
            result.records.append(ImportRecord(stream: .public, body: .reading(Reading(
                source: "purpleair", sensor: sensor, time: time, values: values)), line: line))
        } catch {
            result.issues.append(ImportIssue(file: file, line: line, reason: error.reason))
        }
    }

    /// A JSON number as a finite Double; nil for absent or null; a reason for anything else.
    private static func number(_ value: Any?, _ name: String) throws(ImportRowError) -> Double? {
        guard let value, !(value is NSNull) else { return nil }
        if let n = value as? NSNumber, !isBoolean(n) {
            let d = n.doubleValue
            guard d.isFinite else { throw ImportRowError("\(name) is not finite") }
            return d
        }
        throw ImportRowError("\(name) '\(value)' is not a number")
    }

    /// True for JSON `true`/`false`. (`value is Bool` is no test: an NSNumber 0 or 1 casts to Bool.)
    private static func isBoolean(_ n: NSNumber) -> Bool { type(of: n) == type(of: NSNumber(value: true)) }

    /// A whole JSON number (Unix seconds), or nil.
    private static func integer(_ value: Any?) -> Int64? {
        guard let n = value as? NSNumber, !isBoolean(n) else { return nil }
        let d = n.doubleValue
        guard d.isFinite, d == d.rounded(), abs(d) < 1e15 else { return nil }
        return Int64(d)
    }

    /// A sensor id from a JSON number or string; nil when absent or null.
    private static func id(_ value: Any?) throws(ImportRowError) -> String? {
        guard let value, !(value is NSNull) else { return nil }
        if let s = value as? String {
            let t = PurpleAirFields.normalizeID(s)
            return t.isEmpty ? nil : t
        }
        if let i = integer(value) { return String(i) }
        throw ImportRowError("sensor_index '\(value)' is not an integer")
    }
}
