import Foundation
import Testing
import BreezeCore
@testable import BreezeImport

/// Loading and unpacking helpers shared by the PurpleAir and sensor-registry tests.
enum PurpleAirFixtures {
    static func url(_ name: String, _ ext: String, _ sub: String = "") -> URL {
        let dir = sub.isEmpty ? "Fixtures/purpleair" : "Fixtures/purpleair/\(sub)"
        guard let url = Bundle.module.url(forResource: name, withExtension: ext, subdirectory: dir) else {
            fatalError("missing fixture \(dir)/\(name).\(ext)")
        }
        return url
    }

    static func bytes(_ name: String, _ ext: String, _ sub: String = "") throws -> [UInt8] {
        [UInt8](try Data(contentsOf: url(name, ext, sub)))
    }

    /// The 29 batch files, by name.
    static func batchFiles() throws -> [URL] {
        let dir = url("sensor-149970-1698016800-1698068400", "csv", "ajl_troy_ny_10min_batches").deletingLastPathComponent()
        return try FileManager.default.contentsOfDirectory(at: dir, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "csv" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    static func readings(_ r: ParseResult) -> [(line: Int, reading: Reading)] {
        r.records.compactMap { if case .reading(let x) = $0.body { return ($0.line, x) } else { return nil } }
    }

    static func registrations(_ r: ParseResult) -> [(line: Int, registration: SensorRegistration)] {
        r.records.compactMap { if case .sensorRegistered(let x) = $0.body { return ($0.line, x) } else { return nil } }
    }

    static func value(_ r: Reading, _ quantity: String) -> Double? {
        r.values.first { $0.quantity == quantity }?.value
    }
}

struct PurpleAirCSVTests {
    typealias F = PurpleAirFixtures

    static func options(sensor: String? = nil, at: (Double, Double)? = nil) -> ImportOptions {
        var o = ImportOptions()
        o.sensor = sensor
        o.at = at.map { (latitude: $0.0, longitude: $0.1) }
        return o
    }

    @Test func everyBatchFileParsesWithOneSensorAndNoIssues() throws {
        let files = try F.batchFiles()
        #expect(files.count == 29)
        var rows = 0
        var records = 0
        var keys = Set<String>()
        for url in files {
            let r = try PurpleAirCSVImporter.parse([UInt8](try Data(contentsOf: url)), file: url.lastPathComponent,
                                                   options: ImportOptions())
            #expect(r.issues.isEmpty, "\(url.lastPathComponent): \(r.issues)")
            #expect(r.records.count == r.rowsRead)
            // File names are sensor-<id>-<start>-<end>.csv; every row carries that id.
            let id = url.lastPathComponent.split(separator: "-")[1]
            #expect(Set(F.readings(r).map(\.reading.sensor)) == [String(id)])
            #expect(F.readings(r).allSatisfy { $0.reading.source == "purpleair" && $0.reading.values.count == 9 })
            #expect(r.records.allSatisfy { $0.stream == .public })
            rows += r.rowsRead
            records += r.records.count
            for (_, x) in F.readings(r) { keys.insert("\(x.sensor)/\(x.time)") }
        }
        // Counted with python3 csv over the 29 files: 7,741 data rows, 4,465 distinct (id, time_stamp).
        #expect(rows == 7_741)
        #expect(records == 7_741)
        #expect(keys.count == 4_465)
    }

    @Test func batchRowsBecomeReadingsWithHousingTemperatureInCelsiusAndRawHumidity() throws {
        let r = try PurpleAirCSVImporter.parse(try F.bytes("sensor-149970-1698016800-1698068400", "csv",
                                                           "ajl_troy_ny_10min_batches"),
                                               file: "b.csv", options: ImportOptions())
        // 198 lines = header + 197 rows (python3).
        #expect(r.rowsRead == 197)
        #expect(r.issues.isEmpty)
        let readings = F.readings(r)
        #expect(readings.count == 197)
        // Line 2: 149970,1698016800,1.60,1.20,1.79,1.29,1.79,1.29,55.6,47,1008.902
        let first = readings[0]
        #expect(first.line == 2)
        #expect(first.reading.sensor == "149970")
        #expect(first.reading.time == 1_698_016_800)
        #expect(first.reading.values.map(\.quantity) == ["pm25_cf1_a", "pm25_cf1_b", "pm25_atm_a", "pm25_atm_b",
                                                          "pm25_alt_a", "pm25_alt_b", "temperature_housing",
                                                          "humidity_housing", "pressure"])
        let expected: [Double] = [1.79, 1.29, 1.79, 1.29, 1.60, 1.20, (55.6 - 32) * 5 / 9, 47, 1008.902]
        let got: [Double] = first.reading.values.map(\.value)
        #expect(got.count == expected.count)
        for (g, e) in zip(got, expected) { #expect(abs(g - e) < 1e-9) }
        #expect(abs(F.value(first.reading, "temperature_housing")! - 13.111_111_111) < 1e-6)   // 55.6 F, no -8 F
        // Last line 198: 149970,1698068400,2.00,1.60,2.36,1.95,2.36,1.95,57,47.8,1022.04
        let last = readings[196]
        #expect(last.line == 198)
        #expect(last.reading.time == 1_698_068_400)
        #expect(F.value(last.reading, "pm25_cf1_a") == 2.36)
        #expect(F.value(last.reading, "pm25_alt_b") == 1.60)
        #expect(abs(F.value(last.reading, "temperature_housing")! - 13.888_888_889) < 1e-6)
        #expect(F.value(last.reading, "humidity_housing") == 47.8)
        #expect(F.value(last.reading, "pressure") == 1022.04)
    }

    @Test func outOfOrderRowsAreKeptInFileOrder() throws {
        let r = try PurpleAirCSVImporter.parse(try F.bytes("sensor-149970-1698016800-1698068400", "csv",
                                                           "ajl_troy_ny_10min_batches"),
                                               file: "b.csv", options: ImportOptions())
        let times = F.readings(r).map(\.reading.time)
        // Line 3 (1697988600) is earlier than line 2 (1698016800); python3 counts 118 descending steps,
        // 197 distinct times from 1697988600 to 1698106200.
        #expect(times[0] == 1_698_016_800 && times[1] == 1_697_988_600)
        #expect(zip(times, times.dropFirst()).filter { $0.1 < $0.0 }.count == 118)
        #expect(Set(times).count == 197)
        #expect(times.min() == 1_697_988_600 && times.max() == 1_698_106_200)
    }

    @Test func theHighestSmokeRowKeepsItsValues() throws {
        // python3: the largest pm2.5_cf_1 over all batches is 354.45 (channel B), line 265 of this file:
        // 87173,1698442800,182.10,190.00,217.25,235.50,326.94,354.45,82.8,40,1014.04
        let r = try PurpleAirCSVImporter.parse(try F.bytes("sensor-87173-1698302400-1698381600", "csv",
                                                           "ajl_troy_ny_10min_batches"),
                                               file: "s.csv", options: ImportOptions())
        let row = try #require(F.readings(r).first { $0.line == 265 })
        #expect(row.reading.sensor == "87173" && row.reading.time == 1_698_442_800)
        #expect(F.value(row.reading, "pm25_cf1_a") == 326.94)
        #expect(F.value(row.reading, "pm25_cf1_b") == 354.45)
        #expect(F.value(row.reading, "pm25_atm_b") == 235.50)
        #expect(F.value(row.reading, "pm25_alt_a") == 182.10)
        #expect(abs(F.value(row.reading, "temperature_housing")! - 28.222_222_222) < 1e-6)
        #expect(F.value(row.reading, "humidity_housing") == 40)
    }

    @Test func theMergedFileHasOneReadingPerDistinctSensorAndTime() throws {
        let r = try PurpleAirCSVImporter.parse(try F.bytes("ajl_troy_ny_10min_merged_2023-10-22_to_29", "csv"),
                                               file: "m.csv", options: ImportOptions())
        #expect(r.rowsRead == 4_465)
        #expect(r.issues.isEmpty)
        let readings = F.readings(r)
        #expect(readings.count == 4_465)
        #expect(Set(readings.map { "\($0.reading.sensor)/\($0.reading.time)" }).count == 4_465)
        // python3: rows per id 87173 1186, 166653 1135, 156171 1085, 149970 1059.
        var perSensor: [String: Int] = [:]
        for x in readings { perSensor[x.reading.sensor, default: 0] += 1 }
        #expect(perSensor == ["87173": 1_186, "166653": 1_135, "156171": 1_085, "149970": 1_059])
        // First row: 87173,1697913600,4.00,3.50,5.96,6.22,5.96,6.22,65,63,989.066
        let first = readings[0].reading
        #expect(first.sensor == "87173" && first.time == 1_697_913_600)
        #expect(F.value(first, "pm25_alt_a") == 4.0 && F.value(first, "pm25_cf1_b") == 6.22)
        #expect(abs(F.value(first, "temperature_housing")! - 18.333_333_333) < 1e-6)
        #expect(F.value(first, "pressure") == 989.066)
        // Last row: 166653,1698624600,11.50,11.80,22.87,24.59,24.49,26.32,52,69,980.354
        let last = readings[4_464].reading
        #expect(last.sensor == "166653" && last.time == 1_698_624_600)
        #expect(F.value(last, "pm25_atm_a") == 22.87 && F.value(last, "pm25_cf1_a") == 24.49)
        #expect(F.value(last, "pm25_cf1_b") == 26.32)
        #expect(abs(F.value(last, "temperature_housing")! - 11.111_111_111) < 1e-6)
        #expect(F.value(last, "humidity_housing") == 69)
    }

    @Test func atRegistersTheFilesOneSensorBeforeItsReadings() throws {
        let r = try PurpleAirCSVImporter.parse(try F.bytes("sensor-149970-1698016800-1698068400", "csv",
                                                           "ajl_troy_ny_10min_batches"),
                                               file: "b.csv", options: Self.options(at: (42.7, -73.69)))
        #expect(r.records.count == 198)
        guard case .sensorRegistered(let reg) = r.records[0].body else { Issue.record("no registration first"); return }
        #expect(reg == SensorRegistration(sensor: "149970", name: "PurpleAir 149970", source: "purpleair",
                                          kind: "purpleair", latitude: 42.7, longitude: -73.69, timeZone: nil))
        #expect(r.records[0].line == 2)
        #expect(F.registrations(r).count == 1)
    }

    @Test func withoutAtNoSensorIsRegistered() throws {
        let r = try PurpleAirCSVImporter.parse(try F.bytes("ajl_troy_ny_10min_merged_2023-10-22_to_29", "csv"),
                                               file: "m.csv", options: ImportOptions())
        #expect(F.registrations(r).isEmpty)
    }

    @Test func atWithSeveralSensorsInOneFileIsRefused() throws {
        let bytes = try F.bytes("ajl_troy_ny_10min_merged_2023-10-22_to_29", "csv")
        #expect(throws: ImportError.self) {
            try PurpleAirCSVImporter.parse(bytes, file: "m.csv", options: Self.options(at: (42.7, -73.69)))
        }
    }

    @Test func aFileWithoutAnIdColumnTakesTheSensorOptionAndIsoTimes() throws {
        let csv = """
            datetime,pm2.5_cf_1_a,pm2.5_cf_1_b,humidity,temperature
            2023-10-22T23:20:00Z,1.79,1.29,47,55.6
            2023-10-22 18:30:00-05:00,2.5,NA,,
            1698017400,3,3.5,48,212

            """
        let r = try PurpleAirCSVImporter.parse(Array(csv.utf8), file: "x.csv",
                                               options: Self.options(sensor: "149970", at: (42.7, -73.69)))
        #expect(r.rowsRead == 3 && r.issues.isEmpty)
        let readings = F.readings(r)
        #expect(readings.map(\.reading.sensor) == ["149970", "149970", "149970"])
        #expect(readings.map(\.reading.time) == [1_698_016_800, 1_698_017_400, 1_698_017_400])
        #expect(readings.map(\.line) == [2, 3, 4])
        // Missing values are left out, never zero.
        #expect(readings[1].reading.values == [Measurement("pm25_cf1_a", 2.5)])
        #expect(F.value(readings[2].reading, "temperature_housing") == 100)   // 212 F
        #expect(F.registrations(r).map(\.registration.sensor) == ["149970"])
    }

    @Test func theSensorOptionIsRequiredWithoutAnIdColumn() {
        let csv = "time_stamp,pm2.5_cf_1_a\n1698016800,1.79\n"
        #expect(throws: ImportError.self) {
            try PurpleAirCSVImporter.parse(Array(csv.utf8), file: "x.csv", options: ImportOptions())
        }
    }

    @Test func badRowsAreSkippedWithReasons() throws {
        let csv = """
            id,time_stamp,pm2.5_cf_1_a,pm2.5_cf_1_b,temperature,humidity,pressure
            87173,1697913600,5.96,6.22,65,63,989.066
            87173,1697914200,-999,NA,,null,
            87173,,5.58,5.97,65,63,988.97
            87173,yesterday,5.58,5.97,65,63,988.97
            87173,1697914800,abc,5.97,65,63,988.97
            87173,1697915400,5.1
            ,1697916000,5.2,5.3,65,63,988.9
            87173,1697916600,-999,4.4,,63,-999

            """
        let r = try PurpleAirCSVImporter.parse(Array(csv.utf8), file: "bad.csv", options: ImportOptions())
        #expect(r.rowsRead == 8)
        #expect(r.issues.map(\.line) == [3, 4, 5, 6, 7, 8])
        #expect(r.issues.map(\.reason) == [
            "no values", "missing time_stamp", "time_stamp 'yesterday' is neither Unix seconds nor ISO 8601",
            "pm2.5_cf_1_a 'abc' is not a number", "row has 3 fields, the header has 7", "missing sensor id",
        ])
        #expect(r.issues[0].description == "bad.csv:3: no values")
        let readings = F.readings(r)
        #expect(readings.map(\.line) == [2, 9])
        #expect(readings[1].reading.values == [Measurement("pm25_cf1_b", 4.4), Measurement("humidity_housing", 63)])
    }

    @Test func theAverageCF1IsKeptOnlyWithoutChannels() throws {
        let csv = "id,time_stamp,pm2.5_cf_1,pm2.5_atm_a\n1,1698016800,7.5,6\n"
        let r = try PurpleAirCSVImporter.parse(Array(csv.utf8), file: "x.csv", options: ImportOptions())
        #expect(F.readings(r)[0].reading.values == [Measurement("pm25_atm_a", 6), Measurement("pm25_cf1", 7.5)])
        let both = "id,time_stamp,pm2.5_cf_1,pm2.5_cf_1_b\n1,1698016800,7.5,6\n"
        let r2 = try PurpleAirCSVImporter.parse(Array(both.utf8), file: "x.csv", options: ImportOptions())
        #expect(F.readings(r2)[0].reading.values == [Measurement("pm25_cf1_b", 6)])
    }

    @Test func filesOfOtherFormatsAreRefused() throws {
        let json = try F.bytes("get_sensor_response", "json", "api_v1_responses_aiopurpleair")
        let registry = try F.bytes("ajl_sensors", "csv")
        let cases: [(String, [UInt8], String)] = [
            ("json", json, "no pm2.5 columns"),
            ("sensor registry", registry, "no pm2.5 columns"),
            ("no time column", Array("id,pm2.5_cf_1_a\n1,2\n".utf8), "no time_stamp"),
            ("empty", [], "empty file"),
        ]
        for (what, bytes, message) in cases {
            do {
                _ = try PurpleAirCSVImporter.parse(bytes, file: "x", options: ImportOptions())
                Issue.record("\(what) was accepted")
            } catch {
                #expect(error.message.contains(message), "\(what): \(error.message)")
            }
        }
    }
}

struct PurpleAirJSONTests {
    typealias F = PurpleAirFixtures

    static func parse(_ name: String) throws -> ParseResult {
        try PurpleAirJSONImporter.parse(try F.bytes(name, "json", "api_v1_responses_aiopurpleair"),
                                        file: name + ".json", options: ImportOptions())
    }

    @Test func theColumnarSensorsResponseRegistersFiveSensors() throws {
        let r = try Self.parse("get_sensors_response")
        #expect(r.rowsRead == 5 && r.issues.isEmpty)
        // fields are sensor_index, name, latitude, longitude: no measurement, so no readings.
        #expect(F.readings(r).isEmpty)
        let regs = F.registrations(r)
        #expect(regs.map(\.line) == [1, 2, 3, 4, 5])
        #expect(regs.map(\.registration.sensor) == ["131075", "131079", "131077", "131083", "30303"])
        #expect(regs[0].registration == SensorRegistration(sensor: "131075", name: "Mariners Bluff", source: "purpleair",
                                                           kind: "purpleair", latitude: 33.51511,
                                                           longitude: -117.67972, timeZone: nil))
        #expect(regs[3].registration.name == "Test Sensor" && regs[3].registration.latitude == 38.287594)
        // "\uC544\uAC00\uD398_\uC2E4\uB0B4" with null latitude and longitude.
        let korean = regs[4].registration
        #expect(korean.name == "\u{C544}\u{AC00}\u{D398}_\u{C2E4}\u{B0B4}")
        #expect(korean.name == "아가페_실내")
        #expect(korean.latitude == nil && korean.longitude == nil)
    }

    @Test func theSingleSensorResponseGivesARegistrationAndAReadingAtLastSeen() throws {
        let r = try Self.parse("get_sensor_response")
        #expect(r.rowsRead == 1 && r.issues.isEmpty && r.records.count == 2)
        #expect(F.registrations(r).map(\.registration) == [SensorRegistration(
            sensor: "131075", name: "Mariners Bluff", source: "purpleair", kind: "purpleair",
            latitude: 33.51511, longitude: -117.67972, timeZone: nil)])
        let reading = try #require(F.readings(r).first).reading
        #expect(reading.source == "purpleair" && reading.sensor == "131075")
        #expect(reading.time == 1_667_666_162)   // last_seen, not data_time_stamp 1667666181
        // Raw: pm2.5_cf_1_a/_b 0.0, pm2.5_atm_a/_b 0.0, pm2.5_alt_a 0.3, _b 0.4, temperature 69 F, humidity 33,
        // pressure 1001.66. The average pm2.5_cf_1 is not kept because the channels are present.
        #expect(reading.values.map(\.quantity) == ["pm25_cf1_a", "pm25_cf1_b", "pm25_atm_a", "pm25_atm_b",
                                                   "pm25_alt_a", "pm25_alt_b", "temperature_housing",
                                                   "humidity_housing", "pressure"])
        #expect(F.value(reading, "pm25_cf1_a") == 0 && F.value(reading, "pm25_atm_b") == 0)
        #expect(F.value(reading, "pm25_alt_a") == 0.3 && F.value(reading, "pm25_alt_b") == 0.4)
        #expect(abs(F.value(reading, "temperature_housing")! - 20.555_555_556) < 1e-6)
        #expect(F.value(reading, "humidity_housing") == 33 && F.value(reading, "pressure") == 1001.66)
    }

    @Test func errorResponsesThrowWithTheAPIsErrorTypeAndDescription() throws {
        let expected = [
            ("error_invalid_api_key_response", "ApiKeyInvalidError", "The provided api_key was not valid."),
            ("error_missing_api_key_response", "ApiKeyMissingError", "No API key was found in the request."),
            ("error_not_found_response", "NotFoundError", "Cannot find a sensor with the provided parameters."),
        ]
        for (name, type, description) in expected {
            let bytes = try F.bytes(name, "json", "api_v1_responses_aiopurpleair")
            do {
                _ = try PurpleAirJSONImporter.parse(bytes, file: name + ".json", options: ImportOptions())
                Issue.record("\(name) was accepted")
            } catch {
                #expect(error.message.contains(type) && error.message.contains(description), "\(error.message)")
                #expect(error.file == name + ".json")
            }
        }
    }

    @Test func measurementFieldsInTheColumnarFormBecomeReadings() throws {
        let json = """
            {"data_time_stamp": 1700000100,
             "fields": ["sensor_index", "last_seen", "name", "pm2.5_cf_1", "humidity", "temperature", "pm2.5_atm"],
             "data": [[1, 1700000000, "One", 5.5, 40, 68, 9],
                      [2, null, "Two", null, null, null, 9],
                      [3, null, null, 1.5, null, null, null],
                      [4, 1700000000, "Four", "x", 1, 1, 1],
                      [5],
                      "six",
                      [null, 1700000000, "Seven", 1, 1, 1, 1]]}
            """
        let r = try PurpleAirJSONImporter.parse(Array(json.utf8), file: "x.json", options: ImportOptions())
        #expect(r.rowsRead == 7)
        let readings = F.readings(r)
        #expect(readings.map(\.line) == [1, 3])
        // pm2.5_cf_1 (the average) is kept as pm25_cf1 when there are no CF=1 channels; pm2.5_atm is not kept.
        #expect(readings[0].reading.values == [Measurement("pm25_cf1", 5.5), Measurement("temperature_housing", 20),
                                               Measurement("humidity_housing", 40)])
        #expect(readings[0].reading.time == 1_700_000_000)
        #expect(readings[1].reading.time == 1_700_000_100)   // null last_seen: the response's data_time_stamp
        #expect(F.registrations(r).map(\.registration.sensor) == ["1", "2", "3"])
        #expect(F.registrations(r)[2].registration.name == "PurpleAir 3")
        #expect(r.issues.map(\.line) == [2, 4, 5, 6, 7])
        #expect(r.issues.map(\.reason) == ["no values", "pm2.5_cf_1 'x' is not a number",
                                           "data element has 1 values, fields has 7", "data element is not an array",
                                           "missing sensor_index"])
    }

    @Test func otherJSONAndTruncatedJSONAreRefused() throws {
        let whole = try F.bytes("get_sensors_response", "json", "api_v1_responses_aiopurpleair")
        let csv = try F.bytes("ajl_sensors", "csv")
        let cases: [(String, [UInt8], String)] = [
            ("truncated", Array(whole.prefix(whole.count / 2)), "not JSON"),
            ("csv", csv, "not JSON"),
            ("array", Array("[1, 2]".utf8), "not a JSON object"),
            ("other object", Array(#"{"results": []}"#.utf8), "no `sensor` object"),
            ("fields without sensor_index", Array(#"{"fields": ["name"], "data": [["a"]]}"#.utf8), "no sensor_index"),
        ]
        for (what, bytes, message) in cases {
            do {
                _ = try PurpleAirJSONImporter.parse(bytes, file: "x", options: ImportOptions())
                Issue.record("\(what) was accepted")
            } catch {
                #expect(error.message.contains(message), "\(what): \(error.message)")
            }
        }
    }
}
