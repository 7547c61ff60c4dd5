import Testing
import BreezeCore
import BreezeStore
@testable import BreezeCLI
@preconcurrency import Glibc
import BreezeTestSupport

/// `breeze export` and `breeze import jsonl` with the built binary on a log of real data: byte-for-byte round
/// trips, equal screens, tampered lines, gaps and conflicts.
struct ExportImportTests {
    static func breeze(_ args: [String]) -> (code: Int32, out: String, err: String) {
        let (c, o, e) = BinaryTests.run(args)
        return (c, o, e)
    }

    /// A log of real files (the fixtures the import tests use) and user edits, in `h.db`.
    static func realLog(_ h: Harness) {
        let f = ImportCLITests.fixtures
        #expect(h.run(["init"]).code == 0)
        let troy = h.dir + "/troy.csv"
        writeFileBytes(troy, Array("id,name,latitude,longitude,timezone\n149970,South Troy #2,42.7087,-73.6925,America/New_York\n".utf8))
        let runs: [[String]] = [
            ["sensors-csv", troy],
            ["sensors-csv", f + "/purpleair/ajl_sensors.csv"],
            ["purpleair-csv", f + "/purpleair/ajl_troy_ny_10min_merged_2023-10-22_to_29.csv"],
            ["google-pollen", f + "/pollen/google_pollen_forecast_DE_2025-08-03_teamjaf.json", "--at", "51.1657,10.4515"],
        ]
        for args in runs { #expect(h.run(["import"] + args).code == 0, "\(args)") }
        #expect(h.run(["favourite", "add", "149970"]).code == 0)
        #expect(h.run(["unit", "set", "fahrenheit"]).code == 0)
        #expect(h.run(["source", "correct", "purpleair", "lrapa"]).code == 0)
        #expect(h.run(["screen", "map", "--json"]).code == 0)          // a projection checkpoint mid-log
        #expect(h.run(["favourite", "add", "87173"]).code == 0)
    }

    static let screens: [[String]] = [
        ["screen", "detail", "--sensor", "149970", "--now", "2023-10-26T18:00:00Z", "--json"],
        ["screen", "history", "--sensor", "149970", "--now", "2023-10-28T12:00:00Z", "--json"],
        ["screen", "pollen", "--at", "51.1657,10.4515", "--date", "2025-08-03", "--json"],
        ["screen", "sheet", "--sensor", "149970", "--now", "2023-10-26T18:00:00Z", "--json"],
        ["state", "--json"],
    ]

    /// Every event's canonical bytes, in log order.
    static func encoded(_ path: String) throws -> [[UInt8]] {
        let log = try EventLog.open(at: path)
        defer { log.close() }
        var out: [[UInt8]] = []
        try log.forEach { out.append($0.event.encoded); return true }
        return out
    }

    static func lines(_ path: String) -> [String] {
        String(decoding: readFileBytes(path), as: UTF8.self).split(separator: "\n").map(String.init)
    }

    @Test func exportThenImportIntoAnEmptyDatabaseReproducesEveryEventAndEveryScreen() throws {
        let h = Harness()
        Self.realLog(h)
        let file = h.dir + "/log.jsonl"
        let export = Self.breeze(["--db", h.db, "export", "--out", file])
        #expect(export.code == 0, "\(export.err)")
        let original = try Self.encoded(h.db)
        #expect(original.count > 20)          // the sensors, a block per sensor and file of readings, the edits
        #expect(Self.lines(file).count == original.count)
        #expect(export.err.contains("exported \(original.count) events to \(file)"))
        let copy = h.dir + "/copy.db"
        #expect(Self.breeze(["--db", copy, "init"]).code == 0)
        // The history's user events are another replica's and unsigned (the database has no certificate): the
        // import takes them only when told to trust the file, and says so (nothing stored before).
        let untrusted = Self.breeze(["--db", copy, "import", "jsonl", file])
        #expect(untrusted.code == 1 && untrusted.err.contains("carries no origin signature") && untrusted.err.contains("--trust-unsigned"), "\(untrusted.err)")
        #expect(try Self.encoded(copy).isEmpty)
        let imported = Self.breeze(["--db", copy, "import", "jsonl", file, "--trust-unsigned"])
        #expect(imported.code == 0, "\(imported.err)")
        #expect(imported.out == "\(file): read \(original.count) events; stored \(original.count); 0 already held; 0 conflicting\n")
        #expect(try Self.encoded(copy) == original, "every event byte for byte, in the same order")
        for args in Self.screens {
            let a = Self.breeze(["--db", h.db] + args), b = Self.breeze(["--db", copy] + args)
            #expect(a.code == 0 && b.code == 0, "\(args): \(a.err) \(b.err)")
            #expect(a.out.count > 20 && a.out == b.out, "\(args)")
        }
        let logs = try [h.db, copy].map { try EventLog.open(at: $0) }
        for l in logs { try l.catchUpProjection() }
        #expect(try logs[0].projectionDigest() == logs[1].projectionDigest())
        for l in logs { l.close() }
        // The export is readable by people: the decoded body rides along.
        #expect(Self.lines(file).contains { $0.contains(#""type":"favourite.add""#) && $0.contains(#""body":{"sensor":"purpleair:149970"}"#) })   // the canonical id
        // Importing it again stores nothing; both databases verify clean.
        let again = Self.breeze(["--db", copy, "import", "jsonl", file, "--json", "--trust-unsigned"])
        #expect(again.code == 0 && again.out.contains(#""storedEvents":0,"duplicates":\#(original.count),"conflicts":0"#), "\(again.out)")
        #expect(Self.breeze(["--db", h.db, "verify"]).code == 0)
        #expect(Self.breeze(["--db", copy, "verify"]).code == 0)
    }

    @Test func aTamperedLineIsRefusedWithItsFileAndLineAndNothingIsStored() throws {
        let h = Harness()
        #expect(h.run(["init"]).code == 0)
        #expect(h.run(["import", "sensors-csv", ImportCLITests.fixtures + "/purpleair/ajl_sensors.csv"]).code == 0)
        #expect(h.run(["favourite", "add", "87173"]).code == 0)
        let file = h.dir + "/log.jsonl"
        #expect(Self.breeze(["--db", h.db, "export", "--out", file]).code == 0)
        var lines = Self.lines(file)
        #expect(lines.count == 12)
        // Line 5: the sensor's name changed inside the base64 payload; the hash no longer matches.
        let e5 = try EventLine.decode(lines[4][...])
        guard case .sensorRegistered(var s) = try e5.body() else { Issue.record("line 5 is not a sensor"); return }
        s.name = "Renamed"
        let forged = Event(stream: e5.stream, id: e5.id, hlc: e5.hlc, body: .sensorRegistered(s))
        lines[4] = lines[4].replacing(EventLine.payloadField(e5), with: EventLine.payloadField(forged))
        lines[8] = "{\"id\": 3}"
        writeFileBytes(file, Array(lines.joined(separator: "\n").utf8))
        let copy = h.dir + "/copy.db"
        #expect(Self.breeze(["--db", copy, "init"]).code == 0)
        let r = Self.breeze(["--db", copy, "import", "jsonl", file, "--trust-unsigned"])
        #expect(r.code == 1)
        #expect(r.err.contains("breeze import: \(file):5: hash \(e5.hashHex) does not match the event's content (computed \(forged.hashHex)): the line was altered"), "\(r.err)")
        #expect(r.err.contains("\(file):9: field 'id' is not a string"), "\(r.err)")
        #expect(r.err.contains("refused"))
        #expect(try EventLog.open(at: copy).count() == 0)
    }

    @Test func importingIntoADatabaseThatHoldsSomeEventsStoresTheRestAndRecordsConflicts() throws {
        let h = Harness()
        #expect(h.run(["init"]).code == 0)
        #expect(h.run(["import", "sensors-csv", ImportCLITests.fixtures + "/purpleair/ajl_sensors.csv"]).code == 0)
        #expect(h.run(["favourite", "add", "149970"]).code == 0)
        #expect(h.run(["unit", "set", "celsius"]).code == 0)
        let file = h.dir + "/log.jsonl", first = h.dir + "/first.jsonl"
        #expect(Self.breeze(["--db", h.db, "export", "--out", file]).code == 0)
        let lines = Self.lines(file)
        writeFileBytes(first, Array(lines.prefix(7).joined(separator: "\n").utf8))
        let copy = h.dir + "/copy.db"
        #expect(Self.breeze(["--db", copy, "init"]).code == 0)
        #expect(Self.breeze(["--db", copy, "favourite", "add", "own-edit"]).code == 0)     // the copy's own event
        #expect(Self.breeze(["--db", copy, "import", "jsonl", first, "--trust-unsigned"]).code == 0)
        let rest = Self.breeze(["--db", copy, "import", "jsonl", file, "--trust-unsigned"])
        #expect(rest.code == 0 && rest.out.contains("read 13 events; stored 6; 7 already held; 0 conflicting"), "\(rest.out) \(rest.err)")
        #expect(try Self.encoded(copy).dropFirst() == Self.encoded(h.db)[...])
        // A line with a held id but other content (its hash recomputed, so the line itself is consistent).
        let held = try EventLine.decode(lines[12][...])
        let other = Event(stream: held.stream, id: held.id, hlc: held.hlc, body: .unitSet(.fahrenheit))
        let conflicting = h.dir + "/conflict.jsonl"
        writeFileBytes(conflicting, Array((lines[0] + "\n" + EventLine.encode(other, seq: 13) + "\n").utf8))
        let c = Self.breeze(["--db", copy, "import", "jsonl", conflicting, "--trust-unsigned"])
        #expect(c.code == 1)
        #expect(c.err.contains("\(conflicting):2: event \(held.id) of user:me conflicts with the event held under that id"), "\(c.err)")
        let log = try EventLog.open(at: copy)
        #expect(try log.conflicts().map(\.source) == ["\(conflicting):2"])
        #expect(try log.event(held.id, in: .user("me"))?.hash == held.hash, "the held event is kept")
        log.close()
        let verify = Self.breeze(["--db", copy, "verify"])
        #expect(verify.code == 1 && verify.out.contains("problem: conflict: id \(held.id), stream user:me: held with hash \(held.hashHex), offered with hash \(other.hashHex) by \(conflicting):2"), "\(verify.out)")
    }

    @Test func aSuffixExportIntoAnEmptyDatabaseIsRefusedNamingTheGap() throws {
        let h = Harness()
        #expect(h.run(["init"]).code == 0)
        #expect(h.run(["favourite", "add", "a"]).code == 0)
        #expect(h.run(["favourite", "add", "b"]).code == 0)
        #expect(h.run(["favourite", "add", "c"]).code == 0)
        let file = h.dir + "/tail.jsonl"
        let tail = Self.breeze(["--db", h.db, "export", "--since", "2", "--out", file])
        #expect(tail.code == 0 && tail.err.contains("note: for 1 (stream, origin) pair(s) the export starts after counter 1"), "\(tail.err)")
        #expect(Self.lines(file).count == 2)
        let copy = h.dir + "/copy.db"
        #expect(Self.breeze(["--db", copy, "init"]).code == 0)
        let r = Self.breeze(["--db", copy, "import", "jsonl", file, "--trust-unsigned"])
        #expect(r.code == 1)
        #expect(r.err.contains("\(file):1: event ") && r.err.contains("of user:me has counter 2, but this database holds no event of origin"), "\(r.err)")
        #expect(r.err.contains("counter 1 is missing (was the file exported with --since?)"))
        #expect(r.err.contains("import the earlier events first"))
        #expect(try EventLog.open(at: copy).count() == 0)
        // With the first event in place, the same file imports.
        let head = h.dir + "/head.jsonl"
        #expect(Self.breeze(["--db", h.db, "export", "--until", "1", "--out", head]).code == 0)
        #expect(Self.breeze(["--db", copy, "import", "jsonl", head, "--trust-unsigned"]).code == 0)
        #expect(Self.breeze(["--db", copy, "import", "jsonl", file, "--trust-unsigned"]).code == 0)
        #expect(try Self.encoded(copy) == Self.encoded(h.db))
    }
}

extension EventLine {
    /// The `"payload":"..."` member of an event's line (for tests that alter one).
    static func payloadField(_ e: Event) -> String {
        let line = encode(e, seq: 0)
        let start = line.firstRange(of: "\"payload\":\"")!.lowerBound
        let end = line[line.index(start, offsetBy: 11)...].firstIndex(of: "\"")!
        return String(line[start...end])
    }
}
