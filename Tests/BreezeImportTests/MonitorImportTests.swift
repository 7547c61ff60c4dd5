import Foundation
import Testing
import BreezeCore
@testable import BreezeImport

// Regulatory-monitor importers: AirNow-Tech CSV, AirNow API (CSV and JSON), EPA AQS, OpenAQ v3.
// Real files are in Fixtures/monitors/ (see PROVENANCE.md). Every expected count and value below was
// checked against the raw files with python3 (csv/json modules and calendar.timegm for the Unix times).

private func monFixture(_ name: String, _ ext: String, _ sub: String = "monitors") throws -> [UInt8] {
    let url = try #require(Bundle.module.url(forResource: name, withExtension: ext, subdirectory: "Fixtures/\(sub)"))
    return [UInt8](try Data(contentsOf: url))
}

private func monReadings(_ r: ParseResult) -> [Reading] {
    r.records.compactMap { if case .reading(let x) = $0.body { return x } else { return nil } }
}

private func monRegistrations(_ r: ParseResult) -> [SensorRegistration] {
    r.records.compactMap { if case .sensorRegistered(let x) = $0.body { return x } else { return nil } }
}

private func monValues(_ reading: Reading?) -> [String: Double] {
    Dictionary((reading?.values ?? []).map { ($0.quantity, $0.value) }, uniquingKeysWith: { a, _ in a })
}

private func monReading(_ r: ParseResult, sensor: String, at time: Int64) -> Reading? {
    monReadings(r).first { $0.sensor == sensor && $0.time == time }
}

private func monBytes(_ s: String) -> [UInt8] { Array(s.utf8) }

private func monThrows<I: Importer>(_ importer: I.Type, _ data: [UInt8], options: ImportOptions = ImportOptions()) -> Bool {
    do { _ = try importer.parse(data, file: "bad", options: options); return false } catch { return true }
}

struct AirNowTechCSVImporterTests {
    let file = "airnowtech_burdens_creek_370630099_2019-08.csv"

    @Test func realBurdensCreekExportGroupsRowsIntoOneReadingPerSiteHour() throws {
        let r = try AirNowTechCSVImporter.parse(try monFixture("airnowtech_burdens_creek_370630099_2019-08", "csv"), file: file,
                                                options: ImportOptions())
        // 3,595 data rows; 735 distinct (Site AQS, UTC hour); 6 rows carry QC code 9.
        #expect(r.rowsRead == 3595)
        #expect(monReadings(r).count == 735)
        #expect(r.records.count == 736)
        #expect(Set(monReadings(r).map(\.sensor)) == ["370630099"])
        #expect(monReadings(r).allSatisfy { $0.source == "airnow" })
        #expect(r.records.allSatisfy { $0.stream == .public })
        // Per hour: 650 readings with all 5 quantities, 84 with 4, 1 with 3 (python3 count after QC).
        let sizes = Dictionary(grouping: monReadings(r), by: { $0.values.count }).mapValues(\.count)
        #expect(sizes == [5: 650, 4: 84, 3: 1])
    }

    @Test func firstAndLastHoursMatchTheRawRows() throws {
        let r = try AirNowTechCSVImporter.parse(try monFixture("airnowtech_burdens_creek_370630099_2019-08", "csv"), file: file,
                                                options: ImportOptions())
        // 8/1/2019 5:00 UTC (= 0:00 LST): NO2 3, O3 23, PM2.5 9.9, RHUM 82, TEMP 21.1 (lines 2, 707, ...).
        let first = try #require(monReadings(r).first)
        #expect(first.time == 1_564_635_600)
        #expect(monValues(first) == ["no2": 3, "o3": 23, "pm25": 9.9, "humidity": 82, "temperature": 21.1])
        #expect(r.records[1].line == 2)
        // The last hour, 9/1/2019 4:00 UTC (8/31 23:00 LST): NO2 4, O3 49, PM2.5 8.6, RHUM 41, TEMP 29.9.
        let last = try #require(monReadings(r).max { $0.time < $1.time })
        #expect(last.time == 1_567_292_400)
        #expect(monValues(last) == ["no2": 4, "o3": 49, "pm25": 8.6, "humidity": 41, "temperature": 29.9])
        // The hour with only three parameters, 8/13/2019 15:00 UTC (first row at line 1690).
        #expect(monValues(monReading(r, sensor: "370630099", at: 1_565_708_400)) == ["pm25": 10.8, "humidity": 59, "temperature": 32.5])
    }

    @Test func valuesWithANonZeroQCCodeAreReportedAndNotUsed() throws {
        let r = try AirNowTechCSVImporter.parse(try monFixture("airnowtech_burdens_creek_370630099_2019-08", "csv"), file: file,
                                                options: ImportOptions())
        // QC code 9 rows: NO2 -3 (line 506), O3 -3 (1197), PM2.5 10.1 x4 (1831-1834, 2019-08-19 12-15 UTC,
        // the hours the AirNow API file reports as -999).
        #expect(r.issues.map(\.line) == [506, 1197, 1831, 1832, 1833, 1834])
        #expect(r.issues.map(\.reason) == ["QC code 9: value -3 not used", "QC code 9: value -3 not used"]
                + Array(repeating: "QC code 9: value 10.1 not used", count: 4))
        #expect(r.issues.allSatisfy { $0.file == file })
        // 2019-08-19 12:00 UTC keeps NO2 2, O3 16, RHUM 81, TEMP 28 but has no pm25.
        #expect(monValues(monReading(r, sensor: "370630099", at: 1_566_216_000)) == ["no2": 2, "o3": 16, "humidity": 81, "temperature": 28])
        // 2019-08-23 07:00 UTC: the NO2 -3 is dropped, the rest kept.
        #expect(monValues(monReading(r, sensor: "370630099", at: 1_566_543_600)) == ["o3": 23, "pm25": 9.4, "humidity": 94, "temperature": 21.8])
    }

    @Test func theSiteIsRegisteredOnceByNameAtTheGivenLocationInItsStandardTimeZone() throws {
        var options = ImportOptions()
        options.at = (35.889402, -78.8747)
        let r = try AirNowTechCSVImporter.parse(try monFixture("airnowtech_burdens_creek_370630099_2019-08", "csv"), file: file,
                                                options: options)
        #expect(monRegistrations(r) == [SensorRegistration(sensor: "370630099", name: "Burdens Creek", source: "airnow", kind: "monitor",
                                                        latitude: 35.889402, longitude: -78.8747, timeZone: "Etc/GMT+5")])
        // The file's "Offset (LST)" is -05:00 on every row: the fixed zone of US Eastern standard time.
        if case .sensorRegistered = r.records[0].body {} else { Issue.record("the registration comes first") }
        #expect(AirNowTechCSVImporter.fixedZone("-05:00") == "Etc/GMT+5" && AirNowTechCSVImporter.fixedZone("+01:00") == "Etc/GMT-1")
        #expect(AirNowTechCSVImporter.fixedZone("+00:00") == "Etc/GMT" && AirNowTechCSVImporter.fixedZone("-03:30") == nil)
        #expect(AirNowTechCSVImporter.fixedZone("garbage") == nil && AirNowTechCSVImporter.fixedZone("+15:00") == nil)
        // The database has Etc/GMT+12 (UTC-12) to Etc/GMT-14 (UTC+14) only.
        #expect(AirNowTechCSVImporter.fixedZone("-12:00") == "Etc/GMT+12" && AirNowTechCSVImporter.fixedZone("-13:00") == nil)
        #expect(AirNowTechCSVImporter.fixedZone("+14:00") == "Etc/GMT-14")
        let bare = try AirNowTechCSVImporter.parse(try monFixture("airnowtech_burdens_creek_370630099_2019-08", "csv"), file: file,
                                                   options: ImportOptions())
        #expect(monRegistrations(bare).first?.latitude == nil)
    }

    @Test func unknownParametersAreReportedForEveryRowAndUnitsAreConverted() throws {
        let csv = """
        Agency,Site,Site AQS,Param,Param AQS,POC,Method,Duration,Date (UTC),Time (UTC),Date (LST),Time (LST),Offset (LST),Value,Unit,QC Code
        OAQ,Test,60371103,CO,42101,1,554,1 Hr,8/1/2019,5:00,8/1/2019,0:00,-05:00,0.2,PPM,0
        OAQ,Test,60371103,CO,42101,1,554,1 Hr,8/1/2019,6:00,8/1/2019,1:00,-05:00,0.3,PPM,0
        OAQ,Test,60371103,O3,44201,1,199,1 Hr,8/1/2019,5:00,8/1/2019,0:00,-05:00,0.035,PPM,0
        OAQ,Test,60371103,TEMP,62101,1,40,1 Hr,8/1/2019,5:00,8/1/2019,0:00,-05:00,86,F,0
        OAQ,Test,60371103,NO2,42602,1,599,1 Hr,8/1/2019,6:00,8/1/2019,1:00,-05:00,,PPB,0
        OAQ,Test,60371103,NO2,42602,1,599,1 Hr,8/1/2019,7:00,8/1/2019,2:00,-05:00,-999,PPB,0
        OAQ,Test,60371103,NO2,42602,1,599,1 Hr,8/1/2019,8:00,8/1/2019,3:00,-05:00,4,PPM3,0
        """
        let r = try AirNowTechCSVImporter.parse(monBytes(csv), file: "t.csv", options: ImportOptions())
        #expect(r.rowsRead == 7)
        #expect(r.issues.map(\.description) == [
            "t.csv:2: unknown parameter 'CO' skipped", "t.csv:3: unknown parameter 'CO' skipped",   // every row counts
            "t.csv:6: no values", "t.csv:7: no values", "t.csv:8: unit 'PPM3' not supported for NO2",
        ])
        // The AQS id lost its leading zero (a spreadsheet); it is padded back to 9 digits.
        #expect(monReadings(r).map(\.sensor) == ["060371103"])
        #expect(monValues(monReadings(r).first) == ["o3": 35, "temperature": 30])
    }

    @Test func filesOfAnotherFormatAreRefused() throws {
        let api = try monFixture("sensortoolkit_AirNow_raw_370630099_PM25_B190801_E190902", "csv")
        #expect(monThrows(AirNowTechCSVImporter.self, api))
        let noValue = "Agency,Site,Site AQS,Param,Date (UTC),Time (UTC),Unit,QC Code\nOAQ,X,370630099,O3,8/1/2019,5:00,PPB,0\n"
        #expect(monThrows(AirNowTechCSVImporter.self, monBytes(noValue)))
        #expect(monThrows(AirNowTechCSVImporter.self, try monFixture("openaq_python_tests_sensors_response", "json", "monitors/openaq_v3")))
        #expect(monThrows(AirNowTechCSVImporter.self, []))
    }
}

struct AirNowAPIImporterTests {
    let file = "sensortoolkit_AirNow_raw_370630099_PM25_B190801_E190902.csv"

    @Test func realSensortoolkitFileGivesOneReadingPerHourWithRawAndNowCast() throws {
        let r = try AirNowAPIImporter.parse(try monFixture("sensortoolkit_AirNow_raw_370630099_PM25_B190801_E190902", "csv"),
                                            file: file, options: ImportOptions())
        // 1,464 rows = 61 days x 24 h, all distinct hours; -999 only ever in Param_Value (11 rows).
        #expect(r.rowsRead == 1464)
        #expect(monReadings(r).count == 1464)
        #expect(r.issues.isEmpty)
        #expect(monRegistrations(r) == [SensorRegistration(sensor: "370630099", name: "Burdens Creek", source: "airnow", kind: "monitor",
                                                        latitude: 35.889402000000004, longitude: -78.8747, timeZone: nil)])
        // First row (line 2): 2019-08-01T00:00, NowCast 10.4, raw 10.9. The duplicated DateTime_UTC header
        // names a row index (0) and the time: the time is used.
        let first = try #require(monReadings(r).first)
        #expect(first.time == 1_564_617_600)
        #expect(first.sensor == "370630099" && first.source == "airnow")
        #expect(monValues(first) == ["pm25": 10.9, "pm25_nowcast": 10.4])
        #expect(r.records[1].line == 2)
        // Last row (line 1465): 2019-09-30T23:00, NowCast 10.1, raw 8.2.
        let last = try #require(monReadings(r).last)
        #expect(last.time == 1_569_884_400)
        #expect(monValues(last) == ["pm25": 8.2, "pm25_nowcast": 10.1])
        #expect(r.records.last?.line == 1465)
    }

    @Test func minus999IsMissingNotZero() throws {
        let r = try AirNowAPIImporter.parse(try monFixture("sensortoolkit_AirNow_raw_370630099_PM25_B190801_E190902", "csv"),
                                            file: file, options: ImportOptions())
        let rawMissing = monReadings(r).filter { monValues($0)["pm25"] == nil }
        #expect(rawMissing.count == 11)
        #expect(monReadings(r).allSatisfy { monValues($0)["pm25_nowcast"] != nil })
        #expect(!monReadings(r).contains { $0.values.contains { $0.value == -999 || ($0.quantity == "pm25" && $0.value == 0) } })
        // Line 446: 2019-08-19T12:00, raw -999.0, NowCast 8.9.
        #expect(monValues(monReading(r, sensor: "370630099", at: 1_566_216_000)) == ["pm25_nowcast": 8.9])
        let lines = r.records.filter { if case .reading(let x) = $0.body { return monValues(x)["pm25"] == nil } else { return false } }.map(\.line)
        #expect(lines == [273, 446, 447, 448, 449, 495, 534, 535, 536, 1221, 1222])
    }

    @Test func theAPIsHeaderlessCSVGivesTheSameReadings() throws {
        // The API's own text/csv output has no header and no row index: rebuild it from the real file.
        let text = String(decoding: try monFixture("sensortoolkit_AirNow_raw_370630099_PM25_B190801_E190902", "csv"), as: UTF8.self)
        let lines = text.split(whereSeparator: \.isNewline).dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).dropFirst().joined(separator: ",") }
        let headerless = lines.joined(separator: "\n") + "\n"
        let r = try AirNowAPIImporter.parse(monBytes(headerless), file: "raw.csv", options: ImportOptions())
        let original = try AirNowAPIImporter.parse(try monFixture("sensortoolkit_AirNow_raw_370630099_PM25_B190801_E190902", "csv"),
                                                   file: file, options: ImportOptions())
        #expect(r.rowsRead == 1464)
        #expect(monReadings(r) == monReadings(original))
        #expect(monRegistrations(r) == monRegistrations(original))
        #expect(r.records.first?.line == 1)
    }

    // The documented /aq/data JSON row (shared/docs/domain.md section 5; docs.airnowapi.org). There is no
    // real JSON file in shared/data, so this literal follows the documented schema: the first row is the
    // domain.md example verbatim except SiteName/AgencyName, which the example elides.
    let json = """
    [{"Latitude":36.07,"Longitude":-115.24,"UTC":"2026-06-09T19:00","Parameter":"PM2.5","Unit":"UG/M3","Value":3.3,"RawConcentration":3.2,"AQI":18,"Category":1,"SiteName":"Example Site","AgencyName":"Example Agency","FullAQSCode":"320030044","IntlAQSCode":"840320030044"},
     {"Latitude":36.07,"Longitude":-115.24,"UTC":"2026-06-09T19:00","Parameter":"OZONE","Unit":"PPB","Value":41.0,"RawConcentration":44.0,"AQI":38,"Category":1,"SiteName":"Example Site","AgencyName":"Example Agency","FullAQSCode":"320030044","IntlAQSCode":"840320030044"},
     {"Latitude":36.07,"Longitude":-115.24,"UTC":"2026-06-09T20:00","Parameter":"PM2.5","Unit":"UG/M3","Value":-999,"RawConcentration":-999,"AQI":-999,"Category":-999,"SiteName":"Example Site","AgencyName":"Example Agency","FullAQSCode":"320030044","IntlAQSCode":"840320030044"},
     {"Latitude":36.07,"Longitude":-115.24,"UTC":"2026-06-09T19:00","Parameter":"CO","Unit":"PPM","Value":0.2,"RawConcentration":0.2,"AQI":2,"Category":1,"SiteName":"Example Site","AgencyName":"Example Agency","FullAQSCode":"320030044","IntlAQSCode":"840320030044"},
     {"Latitude":34.0669,"Longitude":-118.2268,"UTC":"2026-06-09T20:00","Parameter":"PM10","Unit":"UG/M3","Value":20.5,"AQI":19,"Category":1,"SiteName":"Second Site","AgencyName":"Example Agency","IntlAQSCode":"840060371103"},
     {"Latitude":36.07,"Longitude":-115.24,"UTC":"2026-06-09T21:00","Parameter":"PM2.5","Unit":"UG/M3","Value":-999,"RawConcentration":4.1,"AQI":-999,"Category":-999,"SiteName":"Example Site","AgencyName":"Example Agency","FullAQSCode":"320030044","IntlAQSCode":"840320030044"}]
    """

    @Test func jsonRowsGiveRawNowCastAndAQIPerParameterGroupedBySiteHour() throws {
        let r = try AirNowAPIImporter.parse(monBytes(json), file: "data.json", options: ImportOptions())
        #expect(r.rowsRead == 6)
        #expect(monValues(monReading(r, sensor: "320030044", at: 1_781_031_600))
                == ["pm25": 3.2, "pm25_nowcast": 3.3, "aqi": 18, "o3": 44, "o3_nowcast": 41, "o3_aqi": 38])
        // IntlAQSCode alone: its last 9 digits. PM10 without RawConcentration keeps NowCast and AQI.
        #expect(monValues(monReading(r, sensor: "060371103", at: 1_781_035_200)) == ["pm10_nowcast": 20.5, "pm10_aqi": 19])
        // A -999 NowCast with a present raw value keeps the raw value only.
        #expect(monValues(monReading(r, sensor: "320030044", at: 1_781_038_800)) == ["pm25": 4.1])
        #expect(monReadings(r).count == 3)
        #expect(r.issues.map(\.description) == ["data.json:3: no values", "data.json:4: unknown parameter 'CO' skipped"])
        #expect(monRegistrations(r) == [
            SensorRegistration(sensor: "320030044", name: "Example Site", source: "airnow", kind: "monitor",
                               latitude: 36.07, longitude: -115.24, timeZone: nil),
            SensorRegistration(sensor: "060371103", name: "Second Site", source: "airnow", kind: "monitor",
                               latitude: 34.0669, longitude: -118.2268, timeZone: nil),
        ])
    }

    @Test func filesOfAnotherFormatAreRefused() throws {
        // A reporting-area observation (domain.md section 5): AQI only, not monitor data.
        let observation = #"[{"DateObserved":"2021-01-06 ","HourObserved":21,"LocalTimeZone":"EST","ReportingArea":"Boston","StateCode":"MA","Latitude":42.351,"Longitude":-71.051,"ParameterName":"PM2.5","AQI":23,"Category":{"Number":1,"Name":"Good"}}]"#
        #expect(monThrows(AirNowAPIImporter.self, monBytes(observation)))
        #expect(monThrows(AirNowAPIImporter.self, monBytes(#"{"WebServiceError":[{"Message":"Invalid API key"}]}"#)))
        #expect(monThrows(AirNowAPIImporter.self, Array(monBytes(json).prefix(200))))
        let noParam = "DateTime_UTC,Site_Lat,Site_Lon,DateTime_UTC,Param_NowCast_Value,Param_Unit,Param_Value,Site_AQS\n0,35.9,-78.9,2019-08-01T00:00,10.4,UG/M3,10.9,370630099\n"
        #expect(monThrows(AirNowAPIImporter.self, monBytes(noParam)))
        #expect(monThrows(AirNowAPIImporter.self, try monFixture("airnowtech_burdens_creek_370630099_2019-08", "csv")))
    }
}

struct AQSImporterTests {
    // There is no real AQS file in shared/data. These rows are written by hand following the AQS API
    // documentation (https://aqs.epa.gov/aqsweb/documents/data_api.html; field list from
    // metaData/fieldsByService?service=sampleData): the JSON envelope {"Header":[..],"Data":[..]} and the
    // sampleData field names in the API's order. The site (37-063-0099 Burdens Creek, its coordinates) is
    // real; the values are modelled on the AirNow-Tech file for the same hours, not real AQS output.
    static let fields = ["state_code", "county_code", "site_number", "parameter_code", "poc", "latitude", "longitude", "datum",
                         "parameter", "date_local", "time_local", "date_gmt", "time_gmt", "sample_measurement", "units_of_measure",
                         "units_of_measure_code", "sample_duration", "sample_duration_code", "sample_frequency", "detection_limit",
                         "uncertainty", "qualifier", "method_type", "method", "method_code", "state", "county",
                         "date_of_last_change", "cbsa_code"]
    // (parameter_code, poc, parameter, local date/time, gmt date/time, sample, units, duration, qualifier)
    static let rows: [(String, Int, String, String, String, String, String, String?, String, String, String?)] = [
        ("44201", 1, "Ozone", "2019-08-01", "00:00", "2019-08-01", "05:00", "0.023", "Parts per million", "1 HOUR", nil),
        ("88502", 3, "Acceptable PM2.5 AQI & Speciation Mass", "2019-08-01", "00:00", "2019-08-01", "05:00", "10.4", "Micrograms/cubic meter (LC)", "1 HOUR", nil),
        ("88101", 1, "PM2.5 - Local Conditions", "2019-08-01", "00:00", "2019-08-01", "05:00", "9.9", "Micrograms/cubic meter (LC)", "1 HOUR", nil),
        ("42602", 1, "Nitrogen dioxide (NO2)", "2019-08-01", "00:00", "2019-08-01", "05:00", "3.0", "Parts per billion", "1 HOUR", nil),
        ("44201", 1, "Ozone", "2019-08-01", "01:00", "2019-08-01", "06:00", nil, "Parts per million", "1 HOUR", "BF - Precision/Zero/Span."),
        ("88101", 1, "PM2.5 - Local Conditions", "2019-08-01", "01:00", "2019-08-01", "06:00", "9.1", "Micrograms/cubic meter (LC)", "1 HOUR", nil),
        ("42101", 1, "Carbon monoxide", "2019-08-01", "01:00", "2019-08-01", "06:00", "0.2", "Parts per million", "1 HOUR", nil),
        ("88101", 2, "PM2.5 - Local Conditions", "2019-08-01", "00:00", "2019-08-01", "00:00", "8.7", "Micrograms/cubic meter (LC)", "24 HOUR", nil),
    ]

    static func fieldValues(of row: (String, Int, String, String, String, String, String, String?, String, String, String?)) -> [Any?] {
        ["37", "063", "0099", row.0, row.1, 35.889402, -78.8747, "WGS84", row.2, row.3, row.4, row.5, row.6,
         row.7.map { Double($0)! }, row.8, row.8 == "Parts per million" ? "007" : row.8 == "Parts per billion" ? "008" : "105",
         row.9, row.9 == "1 HOUR" ? "1" : "7", row.9 == "1 HOUR" ? "HOURLY" : "EVERY 3RD DAY", 0.005, nil, row.10,
         "FEM", "Instrumental", "087", "North Carolina", "Durham", "2019-11-05", "20500"]
    }

    static var jsonText: String {
        let data = rows.map { row -> String in
            let pairs = zip(fields, fieldValues(of: row)).map { (k, v) -> String in
                let value: String
                switch v {
                case let s as String: value = "\"\(s)\""
                case let d as Double: value = "\(d)"
                case let i as Int: value = "\(i)"
                default: value = "null"
                }
                return "\"\(k)\": \(value)"
            }
            return "{" + pairs.joined(separator: ", ") + "}"
        }
        return """
        {"Header": [{"status": "Success", "request_time": "2024-01-10T10:15:02-05:00",
          "url": "https://aqs.epa.gov/data/api/sampleData/bySite?email=x&key=x&param=44201,88101,88502,42602,42101&bdate=20190801&edate=20190801&state=37&county=063&site=0099",
          "rows": \(rows.count)}],
         "Data": [\(data.joined(separator: ",\n"))]}
        """
    }

    static var csvText: String {
        let lines = rows.map { row in
            fieldValues(of: row).map { v -> String in
                switch v {
                case let s as String: return s.contains(",") ? "\"\(s)\"" : s
                case let d as Double: return "\(d)"
                case let i as Int: return "\(i)"
                default: return ""
                }
            }.joined(separator: ",")
        }
        return ([fields.joined(separator: ",")] + lines).joined(separator: "\n") + "\n"
    }

    func checkTheHandWrittenSamples(_ r: ParseResult, file: String, firstLine: Int) {
        // Line numbers: JSON element index (1-based); CSV file line (header is line 1).
        let l = { (row: Int) in row + firstLine - 1 }
        #expect(r.rowsRead == 8)
        // The first row's local time 00:00 against 05:00 GMT: US Eastern standard time, Etc/GMT+5.
        #expect(monRegistrations(r) == [SensorRegistration(sensor: "370630099", name: "Durham, North Carolina (370630099)", source: "aqs",
                                                        kind: "monitor", latitude: 35.889402, longitude: -78.8747, timeZone: "Etc/GMT+5")])
        // 05:00 GMT: ozone 0.023 ppm = 23 ppb; PM2.5 88101 (9.9) preferred to 88502 (10.4) though later.
        #expect(monValues(monReading(r, sensor: "370630099", at: 1_564_635_600)) == ["o3": 23, "pm25": 9.9, "no2": 3])
        // 06:00 GMT: ozone null (qualifier BF) is missing, not zero.
        #expect(monValues(monReading(r, sensor: "370630099", at: 1_564_639_200)) == ["pm25": 9.1])
        #expect(monReadings(r).count == 2)
        #expect(monReadings(r).allSatisfy { $0.source == "aqs" })
        #expect(r.issues.map(\.description) == [
            "\(file):\(l(2)): duplicate pm25 for this sensor and hour: line \(l(3)) preferred",
            "\(file):\(l(5)): no value (qualifier 'BF - Precision/Zero/Span.')",   // the file's reason kept
            "\(file):\(l(7)): unknown parameter 42101 (Carbon monoxide) skipped",
            "\(file):\(l(8)): sample_duration '24 HOUR' is not hourly",
        ])
    }

    @Test func apiJSONSamplesBecomeHourlyReadingsPerSite() throws {
        let r = try AQSImporter.parse(monBytes(Self.jsonText), file: "aqs.json", options: ImportOptions())
        checkTheHandWrittenSamples(r, file: "aqs.json", firstLine: 1)
    }

    @Test func csvWithTheAPIFieldNamesGivesTheSameResult() throws {
        let r = try AQSImporter.parse(monBytes(Self.csvText), file: "aqs.csv", options: ImportOptions())
        checkTheHandWrittenSamples(r, file: "aqs.csv", firstLine: 2)
        let j = try AQSImporter.parse(monBytes(Self.jsonText), file: "aqs.json", options: ImportOptions())
        #expect(monReadings(r) == monReadings(j))
    }

    @Test func airDataHourlyFileColumnNamesAreAccepted() throws {
        // EPA AirData hourly_*.csv header (aqs.epa.gov/aqsweb/airdata/FileFormats.html), one hand-written row.
        let csv = """
        "State Code","County Code","Site Num","Parameter Code","POC","Latitude","Longitude","Datum","Parameter Name","Date Local","Time Local","Date GMT","Time GMT","Sample Measurement","Units of Measure","MDL","Uncertainty","Qualifier","Method Type","Method Code","Method Name","State Name","County Name","Date of Last Change"
        "37","063","0099","44201",1,35.889402,-78.8747,"WGS84","Ozone","2019-08-01","00:00","2019-08-01","05:00",0.023,"Parts per million",0.005,"","","FEM","087","INSTRUMENTAL - ULTRA VIOLET ABSORPTION","North Carolina","Durham","2019-11-05"
        """
        let r = try AQSImporter.parse(monBytes(csv), file: "hourly.csv", options: ImportOptions())
        #expect(r.issues.isEmpty)
        #expect(monReadings(r) == [Reading(source: "aqs", sensor: "370630099", time: 1_564_635_600, values: [Measurement("o3", 23)])])
        #expect(monRegistrations(r).first?.name == "Durham, North Carolina (370630099)")
    }

    @Test func errorResponsesAndOtherFormatsAreRefused() throws {
        let failed = #"{"Header":[{"status":"Failed","request_time":"2024-01-10T10:15:02-05:00","url":"https://aqs.epa.gov/data/api/sampleData/bySite","error":["Invalid Email/Key combination"]}],"Data":[]}"#
        #expect(monThrows(AQSImporter.self, monBytes(failed)))
        #expect(monThrows(AQSImporter.self, Array(monBytes(Self.jsonText).prefix(300))))
        let noSample = Self.csvText.replacingOccurrences(of: "sample_measurement", with: "measurement")
        #expect(monThrows(AQSImporter.self, monBytes(noSample)))
        #expect(monThrows(AQSImporter.self, try monFixture("openaq_python_tests_measurements_response", "json", "monitors/openaq_v3")))
        #expect(monThrows(AQSImporter.self, try monFixture("airnowtech_burdens_creek_370630099_2019-08", "csv")))
        // "No data matched" is a successful, empty answer.
        let empty = #"{"Header":[{"status":"No data matched your selection","request_time":"2024-01-10T10:15:02-05:00","url":"x","rows":0}],"Data":[]}"#
        let r = try AQSImporter.parse(monBytes(empty), file: "empty.json", options: ImportOptions())
        #expect(r.records.isEmpty && r.issues.isEmpty && r.rowsRead == 0)
    }
}

struct OpenAQImporterTests {
    @Test func realMeasurementsResponseNeedsASensorAndUsesThePeriodStart() throws {
        let data = try monFixture("openaq_python_tests_measurements_response", "json", "monitors/openaq_v3")
        // The response does not name its sensor.
        #expect(monThrows(OpenAQImporter.self, data))
        var options = ImportOptions()
        options.sensor = "3920"
        let r = try OpenAQImporter.parse(data, file: "m.json", options: options)
        #expect(r.rowsRead == 2)
        #expect(r.issues.isEmpty)
        #expect(monRegistrations(r).isEmpty)
        // 12:00-13:00 UTC value 6 and 13:00-14:00 UTC value 7.5 (pm25, ug/m3), stamped at datetimeFrom.
        #expect(monReadings(r) == [
            Reading(source: "openaq", sensor: "3920", time: 1_697_457_600, values: [Measurement("pm25", 6)]),
            Reading(source: "openaq", sensor: "3920", time: 1_697_461_200, values: [Measurement("pm25", 7.5)]),
        ])
        #expect(r.records.map(\.line) == [1, 2])
    }

    @Test func realSensorsResponseRegistersEverySensor() throws {
        let r = try OpenAQImporter.parse(try monFixture("openaq_python_tests_sensors_response", "json", "monitors/openaq_v3"),
                                         file: "s.json", options: ImportOptions())
        #expect(r.rowsRead == 8)
        #expect(r.issues.isEmpty)
        #expect(monReadings(r).isEmpty)
        let regs = monRegistrations(r)
        #expect(regs.map(\.sensor) == ["3916", "3918", "3920", "3917", "3919", "25227", "4272103", "4272226"])
        #expect(regs.map(\.name) == ["no2 ppm", "so2 ppm", "pm25 µg/m³", "o3 ppm", "pm10 µg/m³", "co ppm", "nox ppm", "no ppm"])
        #expect(regs.allSatisfy { $0.source == "openaq" && $0.kind == "monitor" && $0.latitude == 35.1353 && $0.longitude == -106.584702 })
    }

    @Test func parametersAreConvertedMissingValuesReportedAndLongPeriodsSkipped() throws {
        // A hand-written /hours response in the v3 shape (docs.openaq.org), found given as a string.
        func m(_ name: String, _ units: String, _ value: String, _ from: String, _ to: String, label: String = "1hour") -> String {
            #"{"value": \#(value), "parameter": {"id": 0, "name": "\#(name)", "units": "\#(units)"}, "period": {"label": "\#(label)", "interval": "01:00:00", "datetimeFrom": {"utc": "\#(from)"}, "datetimeTo": {"utc": "\#(to)"}}}"#
        }
        let text = """
        {"meta": {"name": "openaq-api", "website": "/", "page": 1, "limit": 100, "found": ">1000"}, "results": [
        \(m("o3", "ppm", "0.059", "2024-08-26T20:00:00Z", "2024-08-26T21:00:00Z")),
        \(m("no2", "ppm", "0.0007", "2024-08-26T20:00:00Z", "2024-08-26T21:00:00Z")),
        \(m("pm25", "µg/m³", "null", "2024-08-26T21:00:00Z", "2024-08-26T22:00:00Z")),
        \(m("so2", "ppm", "0.0003", "2024-08-26T20:00:00Z", "2024-08-26T21:00:00Z")),
        \(m("pm25", "µg/m³", "5.8", "2024-08-25T06:00:00Z", "2024-08-26T06:00:00Z", label: "1day")),
        \(m("temperature", "f", "86", "2024-08-26T20:00:00+00:00", "2024-08-26T21:00:00+00:00")),
        \(m("o3", "µg/m³", "100", "2024-08-26T22:00:00Z", "2024-08-26T23:00:00Z"))
        ]}
        """
        var options = ImportOptions()
        options.sensor = "3917"
        let r = try OpenAQImporter.parse(monBytes(text), file: "h.json", options: options)
        #expect(r.rowsRead == 7)
        // 2024-08-26T20:00Z = 1724702400 (python3 calendar.timegm).
        #expect(monValues(monReading(r, sensor: "3917", at: 1_724_702_400)) == ["o3": 59, "no2": 0.7, "temperature": 30])
        #expect(monReadings(r).count == 1)
        #expect(r.issues.map(\.description) == [
            "h.json:3: no values",
            "h.json:4: unknown parameter 'so2' skipped",
            "h.json:5: period '1day' is longer than an hour",
            "h.json:7: units 'µg/m³' not supported for o3",
        ])
    }

    @Test func errorResponsesAndOtherFormatsAreRefused() throws {
        var options = ImportOptions()
        options.sensor = "1"
        #expect(monThrows(OpenAQImporter.self, monBytes(#"{"detail":"Not Found"}"#), options: options))
        #expect(monThrows(OpenAQImporter.self, monBytes(#"{"message":"Unauthorized. A valid API key must be provided in the X-API-Key header."}"#), options: options))
        let truncated = Array(try monFixture("openaq_python_tests_sensors_response", "json", "monitors/openaq_v3").prefix(500))
        #expect(monThrows(OpenAQImporter.self, truncated, options: options))
        #expect(monThrows(OpenAQImporter.self, try monFixture("sensortoolkit_AirNow_raw_370630099_PM25_B190801_E190902", "csv"), options: options))
        let airnow = #"[{"UTC":"2026-06-09T19:00","Parameter":"PM2.5","Value":3.3}]"#
        #expect(monThrows(OpenAQImporter.self, monBytes(airnow), options: options))
        #expect(monThrows(OpenAQImporter.self, monBytes(#"{"meta":{},"results":[{"foo":1}]}"#), options: options))
    }
}
