import Testing
import BreezeCore
import BreezeStore
import BreezeTestSupport
import Foundation

/// The scripted scenario of issue 6: two replicas of one user edit the same favourite (and the unit)
/// concurrently while apart, then sync; `explain` names the winners and the losers, `replay` before and after
/// the sync point shows the change, and `diff` of the two running replicas finds them identical.
@Suite(.serialized)
struct DebuggerScenarioTests {
    static func object(_ line: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
    }

    /// `breeze log --json` of one stream, one object per event.
    static func log(_ c: Cluster, _ name: String) -> [[String: Any]] {
        c.cli(name, ["log", "--json", "--stream", "user:me"]).out.split(separator: "\n").map { object(String($0)) }
    }

    @Test func concurrentEditsWhileApartAreExplainedAndReplayedAfterSync() throws {
        let c = Cluster()
        let a = c.start("a")
        c.start("b", peers: [a])
        let sensors = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("BreezeImportTests/Fixtures/purpleair/ajl_sensors.csv").path
        #expect(c.cli("a", ["import", "sensors-csv", sensors]).code == 0)
        #expect(c.cli("a", ["favourite", "add", "149970"]).code == 0)
        #expect(waitUntil(seconds: 10) { c.count("b") == 12 && c.fingerprint("b") == c.fingerprint("a") }, "b receives a's edits")
        // Apart: both nodes stop. b removes the favourite it has seen; a adds it again; both set the unit,
        // b first, then a (so a's write has the greater clock).
        c.stop("a")
        c.stop("b")
        #expect(c.cli("b", ["favourite", "remove", "149970"]).code == 0)
        #expect(c.cli("b", ["unit", "set", "celsius"]).code == 0)
        #expect(c.cli("a", ["favourite", "add", "149970"]).code == 0)
        #expect(c.cli("a", ["unit", "set", "fahrenheit"]).code == 0)
        let beforeSync = c.count("b")                     // b's last seq before the sync
        #expect(beforeSync == 14)
        let sheet = ["--screen", "sheet", "--sensor", "149970", "--now", "2026-01-01T00:00:00Z", "--json"]
        #expect(c.cli("b", ["replay", "--until", String(beforeSync)] + sheet).out.contains(#""isFavourite":false"#))
        // Together again.
        let a2 = c.start("a")
        c.start("b", peers: [a2])
        #expect(waitUntil(seconds: 20) { c.count("b") == 16 && c.fingerprint("b") == c.fingerprint("a") }, "a and b converge")
        // diff of the two databases while both nodes run: identical.
        let diff = runProgram(c.breeze, ["diff", c.db("a"), c.db("b")])
        #expect(diff.code == 0, "\(diff.out)")
        #expect(diff.out.contains("stream user:me: same events, same state"))

        for name in ["a", "b"] {
            let events = Self.log(c, name)
            func ids(_ type: String) -> [String] { events.filter { $0["type"] as? String == type }.compactMap { $0["id"] as? String } }
            func id(_ type: String, _ key: String, _ value: String) -> String? {
                events.first { $0["type"] as? String == type && ($0["payload"] as? [String: Any])?[key] as? String == value }?["id"] as? String
            }
            let adds = ids("favourite.add"), removes = ids("favourite.remove")
            #expect(adds.count == 2 && removes.count == 1)
            // Both logs received the first add before the second.
            let firstAdd = adds.first, secondAdd = adds.last
            // The favourite: present, because a's second add was not observed by b's remove.
            let fav = Self.object(c.cli(name, ["explain", "favourite", "149970", "--json"]).out)
            let field = (fav["fields"] as? [[String: Any]])?.first ?? [:]
            #expect(field["present"] as? Bool == true)
            let addInfo = (field["adds"] as? [[String: Any]]) ?? []
            #expect(addInfo.first { $0["dot"] as? String == firstAdd }?["removedBy"] as? [String] == removes)
            #expect(addInfo.first { $0["dot"] as? String == secondAdd }?["live"] as? Bool == true)
            #expect(((field["removes"] as? [[String: Any]])?.first?["observed"] as? [String]) == [firstAdd!])
            let text = c.cli(name, ["explain", "favourite", "149970"]).out
            #expect(text.contains("why: present because add \(secondAdd!) was not observed by remove \(removes[0])"), "\(text)")
            // The unit: a's fahrenheit won on the clock over b's celsius.
            let unit = (Self.object(c.cli(name, ["explain", "unit", "--json"]).out)["fields"] as? [[String: Any]])?.first ?? [:]
            #expect(unit["value"] as? String == "fahrenheit")
            #expect((unit["winner"] as? [String: Any])?["id"] as? String == id("unit.set", "unit", "fahrenheit"))
            let loser = (unit["losers"] as? [[String: Any]])?.first ?? [:]
            #expect(loser["id"] as? String == id("unit.set", "unit", "celsius"))
            #expect(loser["lostOn"] as? String == "hlc" && loser["sameReplicaAsWinner"] as? Bool == false)
            // a wrote the winner before b's write arrived: concurrent, as a's log shows; b cannot tell.
            #expect(loser["relation"] as? String == (name == "a" ? "concurrent" : "unknown"))
        }
        // replay on b: before the sync point the favourite was gone; after, a's concurrent add brought it back.
        #expect(c.cli("b", ["replay", "--until", String(beforeSync)] + sheet).out.contains(#""isFavourite":false"#))
        #expect(c.cli("b", ["replay", "--until", "16"] + sheet).out.contains(#""isFavourite":true"#))
        // Stepping over the sync shows which received event changed it.
        let step = c.cli("b", ["replay", "--step", "--from", String(beforeSync)] + sheet).out.split(separator: "\n")
        let secondAdd = Self.log(c, "b").filter { $0["type"] as? String == "favourite.add" }.last?["id"] as? String
        #expect(step.count == 1 && step[0].contains(#""id":"\#(secondAdd ?? "-")""#)
                && step[0].contains(#"{"op":"changed","path":"/isFavourite","old":false,"new":true}"#), "\(step)")
        c.stopAll()
        // Apart again, a new edit on a: diff exits 1 and names it.
        #expect(c.cli("a", ["favourite", "add", "87173"]).code == 0)
        let apart = runProgram(c.breeze, ["diff", c.db("a"), c.db("b"), "--stream", "user:me"])
        let added = Self.log(c, "a").last?["id"] as? String ?? "-"
        #expect(apart.code == 1 && apart.out.contains("  only in A: 1 event(s) B lacks\n    \(added)  favourite.add"), "\(apart.out)")
    }
}
