import Testing
import BreezeCore
import BreezeProjections
import BreezeStore
import BreezeTestSupport
@testable import BreezeCLI

/// `breeze replay`: read models at a point of the log, and the walk event by event.
struct ReplayCLITests {
    /// The real Troy data and concurrent settings of `ScreenDeterminismTests`, ingested in one order.
    static func loaded() throws -> (Harness, [Event]) {
        let h = Harness()
        #expect(h.run(["init"]).code == 0)
        let events = try ScreenDeterminismTests.events()
        let log = try EventLog.open(at: h.db)
        _ = try log.ingest(events)
        log.close()
        return (h, events)
    }

    static func expected(_ events: [Event], _ screen: any Screen.Type, sensor: String, now: Int64) throws -> String {
        var p = ScreenParameters(user: "me", now: now)
        p.sensor = sensor
        return try ScreenCommand.output(screen, FactWorld(events: events), p, json: true).joined()
    }

    @Test func replayAtTheEndEqualsTheScreenAndEachCutFormSelectsItsEvents() throws {
        let (h, events) = try Self.loaded()
        let last = String(events.count)
        let detail = ["--screen", "detail", "--sensor", "149970", "--now", "2023-10-26T18:00:00Z", "--json"]
        // At the last seq, the in-memory replay equals the SQLite projection that `breeze screen` reads.
        let screen = h.run(["screen", "detail", "--sensor", "149970", "--now", "2023-10-26T18:00:00Z", "--json"])
        let replay = h.run(["replay", "--until", last] + detail)
        #expect(screen.code == 0 && replay.code == 0, "\(replay.err)")
        #expect(replay.out == screen.out)
        #expect(replay.out.joined().contains(#""aqi":"#))
        // SEQ: the first k events in this log's order (ingest kept the array order, so seq i is events[i-1]).
        let now = Int64(1_698_343_200)   // 2023-10-26T18:00:00Z
        let k = 2000
        let bySeq = h.run(["replay", "--until", String(k)] + detail)
        #expect(bySeq.out.joined() == (try Self.expected(Array(events.prefix(k)), DetailScreen.self, sensor: "149970", now: now)))
        #expect(bySeq.out != replay.out)
        // HLC: the events whose clock is <= MILLIS.LOGICAL, whatever their seq (the settings at 100-103 ms sit
        // at the end of the log but have small clocks).
        let cut = HLC(physicalMillis: 101, logical: 0)
        let byHLC = h.run(["replay", "--until", "101.0"] + detail)
        #expect(byHLC.code == 0)
        #expect(byHLC.out.joined() == (try Self.expected(events.filter { $0.hlc <= cut }, DetailScreen.self, sensor: "149970", now: now)))
        // The favourite (hlc 100) is in, so the sheet's star shows; at 99.0 it is not.
        let sheet = ["--screen", "sheet", "--sensor", "149970", "--now", "2023-10-26T18:00:00Z", "--json"]
        #expect(h.run(["replay", "--until", "101.0"] + sheet).out.joined().contains(#""isFavourite":true"#))
        #expect(h.run(["replay", "--until", "99.0"] + sheet).out.joined().contains(#""isFavourite":false"#))
        // ISO 8601: the events whose clock is at or before that instant; --now defaults to the instant.
        let iso = h.run(["replay", "--until", "1970-01-01T00:00:00Z", "--screen", "sheet", "--sensor", "149970"])
        let isoCut = events.filter { $0.hlc.physicalMillis <= 0 }
        #expect(isoCut.isEmpty && iso.code == 1 && iso.err.joined().contains("no sensor '149970'"), "\(iso)")
        let second = h.run(["replay", "--until", "1970-01-01T00:00:01Z", "--screen", "sheet", "--sensor", "149970"])
        #expect(second.code == 0, "\(second.err)")
        let inSecond = events.filter { $0.hlc.physicalMillis <= 1000 }.count
        #expect(second.out.first == "replay of sheet at 1970-01-01T00:00:01Z: \(inSecond) events, now 1970-01-01T00:00:01.000Z")
        // For SEQ, --now defaults to the latest clock applied.
        let seqText = h.run(["replay", "--until", "3", "--screen", "sheet", "--sensor", "149970"])
        #expect(seqText.out.first == "replay of sheet at seq 3: 3 events, now 1970-01-01T00:00:00.000Z")
    }

    @Test func stepShowsWhatEachEventChangedAndSkipsTheRest() throws {
        let h = Harness()
        #expect(h.run(["init"]).code == 0)
        #expect(h.run(["import", "sensors-csv", ImportCLITests.fixtures + "/purpleair/ajl_sensors.csv"]).code == 0)
        let start = try EventLog.open(at: h.db).count()
        #expect(h.run(["favourite", "add", "149970"]).code == 0)
        #expect(h.run(["unit", "set", "fahrenheit"]).code == 0)
        #expect(h.run(["favourite", "remove", "149970"]).code == 0)
        let log = h.run(["log", "--json"]).out
        let ids = log.suffix(3).map { Self.field($0, "id") }
        let sheet = ["--screen", "sheet", "--sensor", "149970", "--now", "2026-01-01T00:00:00Z"]
        let json = h.run(["replay", "--step", "--from", String(start)] + sheet + ["--json"])
        #expect(json.code == 0, "\(json.err)")
        #expect(json.out == [
            #"{"seq":\#(start + 1),"id":"\#(ids[0])","type":"favourite.add","stream":"user:me","hlc":"\#(hlc(log[start]))","changes":[{"op":"changed","path":"/isFavourite","old":false,"new":true}]}"#,
            #"{"seq":\#(start + 3),"id":"\#(ids[2])","type":"favourite.remove","stream":"user:me","hlc":"\#(hlc(log[start + 2]))","changes":[{"op":"changed","path":"/isFavourite","old":true,"new":false}]}"#,
        ])
        // --all shows the unit change too, with no change to this screen.
        let all = h.run(["replay", "--step", "--all", "--from", String(start)] + sheet)
        #expect(all.out.count == 1 + 6)
        #expect(all.out[1].hasPrefix("seq \(start + 1)  \(ids[0])  favourite.add  user:me"))
        #expect(all.out[2] == "  ~ /isFavourite: false -> true")
        #expect(all.out[3].contains("unit.set") && all.out[4] == "  (no change)")
        // A range: only the events after --from up to --until.
        let range = h.run(["replay", "--step", "--from", String(start), "--until", String(start + 1)] + sheet)
        #expect(range.out.count == 3 && range.out[0].contains("from seq \(start) to seq \(start + 1): 1 events"))
        // From the beginning: the sensor appears (the error model is replaced by the sheet).
        let first = h.run(["replay", "--step", "--from", "0", "--until", String(start)] + sheet + ["--json"])
        #expect(first.out.count == 1 && first.out[0].contains(#"{"op":"removed","path":"/error""#)
                && first.out[0].contains(#"{"op":"added","path":"/name","new":"South Troy #2"}"#), "\(first.out)")
        // --until alone walks from that cut to the end of the log.
        #expect(h.run(["replay", "--step", "--until", String(start + 1)] + sheet + ["--json"]).out.count == 1)
        // By HLC: the same walk in clock order.
        let byClock = h.run(["replay", "--step", "--from", hlc(log[start - 1])] + sheet + ["--json"])
        #expect(byClock.out == json.out)
    }

    /// A string field of a JSON object line.
    static func field(_ line: String, _ key: String) -> String {
        guard case .object(let p)? = try? JSONReader.parse(line), case .string(let s)? = p.first(where: { $0.0 == key })?.1 else { return "" }
        return s
    }

    func hlc(_ line: String) -> String { Self.field(line, "hlc") }

    @Test func theJSONReaderAndDiffRoundTripWhatThisBuildWrites() throws {
        for text in ["a\"b\\c/d", "line\nnext\ttab", "\u{1}\u{1f}", "Köln 😀", ""] {
            #expect(try JSONReader.parse(JSONValue.string(text).text) == .string(text))
        }
        #expect(try JSONReader.parse(#""\ud83d\ude00 \u00e9""#) == .string("😀 é"))
        let a = try JSONReader.parse(#"{"a":1,"b":[1,2,3],"c/d":{"x":true},"e":-2.5e3,"f":null}"#)
        let b = try JSONReader.parse(#"{"a":1,"b":[1,5],"c/d":{"x":false},"e":-2500,"g":"new"}"#)
        // No change at /e: -2.5e3 and -2500 are the same number.
        #expect(JSONDiff.changes(from: a, to: b).map(\.text) == [
            "~ /b/1: 2 -> 5", "- /b/2: 3", "~ /c~1d/x: true -> false", "- /f: null", "+ /g: \"new\"",
        ])
        #expect(JSONDiff.changes(from: a, to: a).isEmpty)
        for bad in ["{", "[1,", "\"open", "{\"a\" 1}", "tru", "1 2"] {
            #expect(throws: JSONReader.Failure.self) { try JSONReader.parse(bad) }
        }
    }

    @Test func badReplayArgumentsFailClearly() throws {
        let h = Harness()
        #expect(h.run(["init"]).code == 0)
        #expect(h.run(["favourite", "add", "x"]).code == 0)
        let cases: [([String], Int32, String)] = [
            (["replay", "--until", "1"], 2, "missing --screen"),
            (["replay", "--screen", "sheet"], 2, "missing --until"),
            (["replay", "--until", "1", "--screen", "nope"], 2, "unknown screen 'nope'"),
            (["replay", "--until", "1", "--from", "0", "--screen", "sheet"], 2, "--from is for --step"),
            (["replay", "--step", "--from", "0", "--until", "1.0", "--screen", "sheet"], 2, "both be sequence numbers"),
            (["replay", "--until", "abc", "--screen", "sheet"], 1, "--until 'abc': expected a sequence number"),
            (["replay", "--until", "9", "--screen", "sheet"], 1, "seq 9: the log of"),
            (["replay", "--until", "1.99999", "--screen", "sheet"], 1, "HLC out of range"),
            (["replay", "--step", "--from", "1", "--until", "0", "--screen", "sheet"], 1, "--until seq 0 is before --from seq 1"),
            (["replay", "--until", "1", "--screen", "sheet", "--at", "91,0"], 1, "--at '91,0'"),
        ]
        for (args, code, text) in cases {
            let r = h.run(args)
            #expect(r.code == code && r.err.joined(separator: "\n").contains(text), "\(args): \(r.code) \(r.err)")
        }
    }
}
