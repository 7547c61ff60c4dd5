import Testing
import BreezeCore
import BreezeStore
@testable import BreezeCLI
@preconcurrency import Glibc
import BreezeTestSupport
import Foundation

/// Retention with rollups on real data (issue 28): once a server's readings are older than its raw window and
/// rolled up, the screens that reach back that far (History, a detail at an hour's end) read the same models
/// from the rollups as they did from the readings, the log says what went, and `verify` stays clean.
struct RetentionCLITests {
    static let screens: [[String]] = [
        ["screen", "history", "--sensor", "149970", "--now", "2023-10-28T11:59:59Z", "--json"],
        ["screen", "history", "--sensor", "149970", "--now", "2023-10-26T23:59:59Z", "--json"],
        ["screen", "detail", "--sensor", "149970", "--now", "2023-10-26T17:59:59Z", "--json"],
        ["screen", "detail", "--sensor", "149970", "--now", "2023-10-24T05:59:59Z", "--json"],
        ["screen", "sheet", "--sensor", "149970", "--now", "2023-10-26T17:59:59Z", "--json"],
        ["screen", "pollen", "--at", "51.1657,10.4515", "--date", "2025-08-03", "--json"],
        ["state", "--json"],
    ]

    static func run(_ db: String, _ args: [String]) -> (code: Int32, out: String, err: String) {
        ExportImportTests.breeze(["--db", db] + args)
    }

    @Test func screensPastTheRawWindowReadTheSameFromTheRollups() throws {
        let h = Harness()
        ExportImportTests.realLog(h)
        let before = Self.screens.map { Self.run(h.db, $0) }
        for (args, r) in zip(Self.screens, before) { #expect(r.code == 0 && r.out.count > 50, "\(args): \(r.err)") }
        let events = try ExportImportTests.encoded(h.db).count
        // A bad value is refused, naming it, and changes nothing.
        let bad = Self.run(h.db, ["rollup", "--raw-days", "0"])
        #expect(bad.code == 2 && bad.err.contains("--raw-days '0'"), "\(bad.err)")
        let rolled = Self.run(h.db, ["rollup", "--raw-days", "30", "--json"])
        #expect(rolled.code == 0, "\(rolled.err)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(rolled.out.utf8)) as? [String: Any])
        let retired = json["eventsRetired"] as? Int ?? 0, written = json["eventsWritten"] as? Int ?? 0
        #expect(retired > 5 && written >= 2 && (json["hours"] as? Int ?? 0) > 100, "\(rolled.out)")
        #expect(try ExportImportTests.encoded(h.db).count == events - retired + written)
        for (args, old) in zip(Self.screens, before) {
            let now = Self.run(h.db, args)
            #expect(now.code == 0 && now.out == old.out, "\(args) after the rollup:\n\(now.out.prefix(600))\nbefore:\n\(old.out.prefix(600))")
        }
        // Importing the same file again stores nothing: a rolled-up hour takes no raw reading any more.
        let reimport = Self.run(h.db, ["import", "purpleair-csv", ImportCLITests.fixtures + "/purpleair/ajl_troy_ny_10min_merged_2023-10-22_to_29.csv"])
        #expect(reimport.code == 0, "\(reimport.err)")
        #expect(try ExportImportTests.encoded(h.db).count == events - retired + written, "\(reimport.out)")
        // Nothing more to roll up; the log shows the rollups; verify is clean and says what went.
        let again = Self.run(h.db, ["rollup", "--raw-days", "30"])
        #expect(again.code == 0 && again.out.contains("rollup: 0 reading events"), "\(again.out)")
        #expect(Self.run(h.db, ["log", "--type", "reading.rollup"]).out.contains("reading.rollup"))
        let v = Self.run(h.db, ["verify"])
        #expect(v.code == 0 && v.out.contains("\(retired) reading events were replaced by reading.compact or reading.rollup"), "\(v.out)")
        // An export of the rolled-up log imports into an empty database: the retired counters are told, not gaps.
        let file = h.dir + "/rolled.jsonl", copy = h.dir + "/copy.db"
        #expect(Self.run(h.db, ["export", "--out", file]).code == 0)
        #expect(ExportImportTests.breeze(["--db", copy, "init"]).code == 0)
        let imported = ExportImportTests.breeze(["--db", copy, "import", "jsonl", file, "--trust-unsigned"])
        #expect(imported.code == 0, "\(imported.err)")
        #expect(try ExportImportTests.encoded(copy) == ExportImportTests.encoded(h.db))
        for (args, old) in zip(Self.screens, before) { #expect(Self.run(copy, args).out == old.out, "\(args) in the imported copy") }
        #expect(Self.run(copy, ["verify"]).code == 0)
        // A rebuild of the projection from the rolled-up log gives the same screens.
        do {
            let log = try EventLog.open(at: h.db)
            _ = try log.rebuildProjection()
            log.close()
        }
        for (args, old) in zip(Self.screens, before) { #expect(Self.run(h.db, args).out == old.out, "\(args) after a rebuild") }
    }
}
