import Foundation
import Testing
import BreezeCore
@testable import BreezeImport

/// `GlucoseCSVImporter` on the real CGM file in Fixtures/biomarker/ (see PROVENANCE.md). Expected counts and
/// values were computed from the raw file with python3 (gzip + csv.DictReader; times via calendar.timegm).
struct GlucoseImportTests {
    static let fileName = "bokeh_sampledata_CGM.csv.gz"

    static func gzipBytes() throws -> [UInt8] {
        let url = try #require(Bundle.module.url(forResource: "bokeh_sampledata_CGM", withExtension: "csv.gz",
                                                 subdirectory: "Fixtures/biomarker"))
        return Array(try Data(contentsOf: url))
    }

    static func readings(_ result: ParseResult, user: String = "me") throws -> [BiomarkerReading] {
        #expect(result.records.allSatisfy { $0.stream == .health(user) })
        let out = result.records.compactMap { record -> BiomarkerReading? in
            if case .biomarkerReading(let b) = record.body { return b }
            return nil
        }
        try #require(out.count == result.records.count, "every record is a biomarker reading")
        return out
    }

    @Test func theRealGzippedFileGivesOneReadingPerRow() throws {
        let result = try GlucoseCSVImporter.parse(try Self.gzipBytes(), file: Self.fileName, options: ImportOptions())
        #expect(result.rowsRead == 52_281)
        #expect(result.records.count == 52_281)
        #expect(result.issues.isEmpty)
        let readings = try Self.readings(result)
        #expect(readings.allSatisfy { $0.readingType == "Blood Glucose" && $0.unit == "mg/dL" })
        // First row: 22.59,2010-03-24 09:51:00,258 (read as UTC by default: the file has no zone).
        #expect(readings.first == BiomarkerReading(readingType: "Blood Glucose", time: 1_269_424_260, value: 258, unit: "mg/dL"))
        #expect(result.records.first?.line == 2)
        // Last row: 30.8,2010-10-10 23:57:00,165.
        #expect(readings.last == BiomarkerReading(readingType: "Blood Glucose", time: 1_286_755_020, value: 165, unit: "mg/dL"))
        #expect(result.records.last?.line == 52_282)
    }

    @Test func repeatedTimestampsAndIrregularStepsAreKeptAsTheFileHasThem() throws {
        let result = try GlucoseCSVImporter.parse(try Self.gzipBytes(), file: Self.fileName, options: ImportOptions())
        let readings = try Self.readings(result)
        var byTime: [Int64: [Double]] = [:]
        for r in readings { byTime[r.time, default: []].append(r.value) }
        let repeated = byTime.filter { $0.value.count > 1 }
        #expect(byTime.count == 52_278)
        #expect(repeated.count == 3)
        // 2010-05-20 03:21:00 appears twice, with glucose 122 then 124.
        #expect(repeated[1_274_325_660] == [122, 124])
        // Time order is kept; 583 steps are not 5 minutes (3 of them are the zero steps of the repeats).
        let steps = zip(readings.dropFirst(), readings).map { $0.time - $1.time }
        #expect(steps.allSatisfy { $0 >= 0 })
        #expect(steps.filter { $0 != 300 }.count == 583)
        #expect(steps.filter { $0 == 0 }.count == 3)
    }

    @Test func naiveLocalTimesUseTheGivenUTCOffset() throws {
        var options = ImportOptions()
        options.utcOffsetSeconds = -4 * 3600   // e.g. US Eastern daylight time
        options.user = "alice"
        let result = try GlucoseCSVImporter.parse(try Self.gzipBytes(), file: Self.fileName, options: options)
        let readings = try Self.readings(result, user: "alice")
        // 09:51 at UTC-4 is 13:51 UTC.
        let first: Int64 = 1_269_424_260 + 4 * 3600, last: Int64 = 1_286_755_020 + 4 * 3600
        #expect(readings.first?.time == first)
        #expect(readings.last?.time == last)
    }

    @Test func gzipAndPlainFormsGiveIdenticalRecords() throws {
        let gz = try Self.gzipBytes()
        let plain = try Gzip.maybeInflate(gz, file: Self.fileName)
        #expect(!Gzip.isGzip(plain))
        #expect(plain.starts(with: Array("isig,datetime,glucose\r\n".utf8)))   // the file has CRLF line ends
        let fromGzip = try GlucoseCSVImporter.parse(gz, file: "a.csv.gz", options: ImportOptions())
        let fromPlain = try GlucoseCSVImporter.parse(plain, file: "a.csv", options: ImportOptions())
        #expect(fromPlain.rowsRead == fromGzip.rowsRead)
        #expect(fromPlain.records == fromGzip.records)
        #expect(fromPlain.records.count == 52_281)
    }

    @Test func badRowsAreSkippedWithReasons() throws {
        let csv = """
        datetime,isig,glucose
        2010-03-24 09:51:00,22.59,258
        2010-03-24 09:56:00,22.52,
        2010-03-24 10:01:00,22.23,high
        24/03/2010 10:06,21.56,254
        2010-03-24T10:11:00Z,21.0,250
        """
        let result = try GlucoseCSVImporter.parse(Array(csv.utf8), file: "g.csv", options: ImportOptions())
        #expect(result.rowsRead == 5)
        #expect(result.issues.map(\.line) == [3, 4, 5])
        #expect(result.issues[0].reason == "no values")
        #expect(result.issues[1].reason.contains("high"))
        #expect(result.issues[2].reason.contains("24/03/2010"))
        let readings = try Self.readings(result)
        #expect(readings.map(\.time) == [1_269_424_260, 1_269_425_460])
        #expect(readings.map(\.value) == [258, 250])
    }

    @Test func badFilesAreRefused() throws {
        let gz = try Self.gzipBytes()
        let bad: [(String, [UInt8])] = [
            ("gzip magic, bad data", [0x1f, 0x8b] + Array("not really compressed".utf8)),
            ("truncated gzip", Array(gz.prefix(1000))),
            ("no glucose column", Array("isig,datetime,sgv\n22.59,2010-03-24 09:51:00,258\n".utf8)),
            ("no time column", Array("isig,glucose\n22.59,258\n".utf8)),
            ("temperature CSV", Array("rownames,date,tmin,tmax\n1,1930-01-01,28.94,66.92\n".utf8)),
            ("JSON", Array(#"{"regionCode":"DE","dailyInfo":[]}"#.utf8)),
            ("empty", []),
        ]
        for (name, bytes) in bad {
            let error = #expect(throws: ImportError.self, "\(name)") {
                _ = try GlucoseCSVImporter.parse(bytes, file: name, options: ImportOptions())
            }
            #expect(error?.file == name)
        }
        let noGlucose = #expect(throws: ImportError.self) {
            _ = try GlucoseCSVImporter.parse(bad[2].1, file: "x.csv", options: ImportOptions())
        }
        #expect(noGlucose?.message.contains("glucose") == true)
        var badUser = ImportOptions()
        badUser.user = "not a user"
        #expect(throws: ImportError.self) {
            _ = try GlucoseCSVImporter.parse(gz, file: Self.fileName, options: badUser)
        }
    }
}
