import Testing
import Foundation
import BreezeCLI
import BreezeStore
import BreezeTestSupport

/// `breeze biomarker target` and `breeze biomarker log`, checked through the biomarker screen on the real glucose
/// export, and their bad input refused with nothing stored.
struct BiomarkerCLITests {
    @Test func aTargetAndAHandLoggedReadingShowOnTheGauge() throws {
        let h = Harness()
        #expect(h.run(["init"]).code == 0)
        // A new user: the default 0/3 gauge, not an error.
        let empty = h.run(["screen", "biomarker", "--now", "2010-03-25T12:00:00Z"])
        #expect(empty.code == 0 && empty.out.contains { $0.contains("0/3") && $0.contains("(default)") }, "\(empty)")
        #expect(h.run(["import", "glucose-csv", ImportCLITests.fixtures + "/biomarker/bokeh_sampledata_CGM.csv.gz"]).code == 0)
        let set = h.run(["biomarker", "target", "Blood Glucose", "--max", "200", "--icon", "drop.fill"])
        #expect(set.code == 0 && set.out.first?.hasPrefix("target for me: Blood Glucose 0-200 a day (drop.fill)") == true, "\(set)")
        // 2010-03-25 12:00Z: the export's readings every 5 minutes since midnight UTC (144, the last 122 mg/dL at
        // 11:56; python3), plus one taken by hand at 11:58, the newest.
        let log = h.run(["biomarker", "log", "Blood Glucose", "104", "mg/dL", "--time", "2010-03-25T11:58:00Z"])
        #expect(log.code == 0 && log.out.first?.hasPrefix("Blood Glucose 104 mg/dL logged for me at 2010-03-25T11:58:00Z") == true, "\(log)")
        let m = h.run(["screen", "biomarker", "--now", "2010-03-25T12:00:00Z", "--json"])
        #expect(m.code == 0)
        let g = try #require(((try JSONSerialization.jsonObject(with: Data(m.out.joined().utf8)) as? [String: Any])?["biomarkers"] as? [[String: Any]])?.first)
        #expect(g["readingType"] as? String == "Blood Glucose" && g["maxReading"] as? Double == 200 && g["icon"] as? String == "drop.fill")
        #expect(g["hasTarget"] as? Bool == true && g["readingCount"] as? Int == 145 && g["latestValue"] as? Double == 104)
    }

    @Test func badInputIsRefusedWithNothingStored() throws {
        let h = Harness()
        #expect(h.run(["init"]).code == 0)
        let before = try h.fingerprint()
        let cases: [([String], Int32, String)] = [
            (["biomarker", "target", "Blood Glucose"], 2, "missing --max"),
            (["biomarker", "target", "Blood Glucose", "--max", "many"], 1, "--max 'many': expected a number"),
            (["biomarker", "target", "Blood Glucose", "--max", "2", "--min", "3"], 1, "expected 0 <= minimum <= maximum"),
            (["biomarker", "target", "", "--max", "2"], 1, "reading type ''"),
            // What the decoder would refuse is never written (a target of a billion readings a day).
            (["biomarker", "target", "Blood Glucose", "--max", "1e9"], 1, "< 1e9"),
            (["biomarker", "log", "Blood Glucose", "nan", "mg/dL"], 1, "VALUE 'nan': expected a number"),
            (["biomarker", "log", "Blood Glucose", "104", "mg/dL", "--time", "yesterday"], 1, "--time 'yesterday'"),
            (["biomarker", "log", "Blood Glucose", "104"], 2, "missing UNIT"),
            (["biomarker", "weigh"], 2, "expected 'target' or 'log'"),
        ]
        for (args, code, text) in cases {
            let r = h.run(args)
            #expect(r.code == code && r.err.joined(separator: "\n").contains(text), "\(args): \(r)")
        }
        #expect(try h.fingerprint() == before)
    }

    @Test func aHugeValueAndEscapeCodesInANameArePrintedSafely() throws {
        let h = Harness()
        #expect(h.run(["init"]).code == 0)
        // 1e300 mg/dL is no measurement (issue 29: readings are bounded as targets are): refused, naming the
        // value and the range, and nothing stored.
        let huge = h.run(["biomarker", "log", "Blood Glucose", "1e300", "mg/dL", "--time", "2010-03-25T11:58:00Z"])
        #expect(huge.code != 0 && huge.err.joined().contains("1e+300 mg/dL is outside 0...1000"), "\(huge)")
        let text = h.run(["screen", "biomarker", "--now", "2010-03-25T12:00:00Z"])
        #expect(text.code == 0 && !text.out.contains { $0.contains("latest") }, "\(text)")
        // The largest value the unit allows is stored and printed.
        #expect(h.run(["biomarker", "log", "Blood Glucose", "1000", "mg/dL", "--time", "2010-03-25T11:58:00Z"]).code == 0)
        let shown = h.run(["screen", "biomarker", "--now", "2010-03-25T12:00:00Z"])
        #expect(shown.out.contains { $0.contains("latest 1000 mg/dL") }, "\(shown)")
        // A sensor name carrying terminal escape codes (a hostile registry): the text shows no control byte.
        let csv = h.dir + "/evil.csv"
        writeFileBytes(csv, Array("id,name,latitude,longitude\n149970,\u{1B}[2J\u{1B}[31mEvil\u{07},42.7087,-73.6925\n".utf8))
        #expect(h.run(["import", "sensors-csv", csv]).code == 0)
        let sheet = h.run(["screen", "sheet", "--sensor", "149970", "--now", "2023-10-27T22:27:30Z"])
        #expect(sheet.code == 0 && sheet.out.joined().contains("\u{FFFD}[31mEvil\u{FFFD}"), "\(sheet)")
        #expect(!sheet.out.joined().unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 })
        // JSON keeps the name exactly, escaped as JSON does.
        let json = h.run(["screen", "sheet", "--sensor", "149970", "--now", "2023-10-27T22:27:30Z", "--json"])
        #expect(json.code == 0 && json.out.joined().contains(#"\u001b[31mEvil"#), "\(json)")
    }
}
