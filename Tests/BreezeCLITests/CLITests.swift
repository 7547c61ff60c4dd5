import Testing
import BreezeCore
import BreezeStore
@testable import BreezeCLI
@preconcurrency import Glibc
import BreezeTestSupport

/// Runs a command in-process against a temporary database.
final class Harness {
    private let temp = TempDir()
    var dir: String { temp.path }
    var db: String { dir + "/b.db" }

    @discardableResult
    func run(_ args: [String], env: [String: String]? = nil) -> (code: Int32, out: [String], err: [String]) {
        let c = BufferConsole()
        let code = BreezeCLI.run(args, environment: env ?? ["BREEZE_DB": db, "HOME": dir], console: c)
        return (code, c.stdout, c.stderr)
    }

    /// Event count and the default user's state hash: what bad input must not change.
    func fingerprint() throws -> (Int, String) {
        let log = try EventLog.open(at: db)
        defer { log.close() }
        return (try log.count(), try log.userState(user: "me").stateHash)
    }
}

struct CLITests {
    @Test func theClockOffsetShiftsTimestampsAndABadOneIsRefusedWithNothingStored() throws {
        let h = Harness()
        #expect(h.run(["init"]).code == 0)
        let hour: Int64 = 3_600_000
        let env = { (offset: String) in ["BREEZE_DB": h.db, "HOME": h.dir, "BREEZE_CLOCK_OFFSET_MS": offset] }
        #expect(h.run(["unit", "set", "fahrenheit"], env: env(String(48 * hour))).code == 0)
        // A process whose clock is 54 h behind the last one still stamps after it, and its write wins.
        #expect(h.run(["unit", "set", "celsius"], env: env(String(-6 * hour))).code == 0)
        let log = try EventLog.open(at: h.db)
        var stamps: [HLC] = []
        try log.forEach { stamps.append($0.event.hlc); return true }
        let state = try log.userState(user: "me")
        log.close()
        let now = Int64(SystemClock.nowMillis())
        #expect(stamps.count == 2 && stamps[1] > stamps[0])
        #expect(abs(Int64(stamps[0].physicalMillis) - (now + 48 * hour)) < 60_000)
        #expect(state.effectiveUnit == .celsius)
        let before = try h.fingerprint()
        for bad in ["soon", "1.5", "999999999999999999"] {
            let r = h.run(["unit", "set", "fahrenheit"], env: env(bad))
            #expect(r.code == 1 && r.err.first?.contains("BREEZE_CLOCK_OFFSET_MS '\(bad)'") == true, "\(r.err)")
        }
        #expect(try h.fingerprint() == before)
    }

    @Test func aSessionOfEditsShowsUpInStateAndLog() throws {
        let h = Harness()
        #expect(h.run(["init"]).code == 0)
        #expect(h.run(["favourite", "add", "131075"]).code == 0)
        #expect(h.run(["favourite", "add", "AQS-370630099"]).code == 0)
        #expect(h.run(["favourite", "remove", "131075"]).code == 0)
        #expect(h.run(["watch", "add", "131075"]).code == 0)
        #expect(h.run(["alert", "set", "--category", "very-unhealthy", "--on-clear", "silent", "--enabled", "false"]).code == 0)
        #expect(h.run(["unit", "set", "fahrenheit"]).code == 0)
        #expect(h.run(["source", "disable", "airnow"]).code == 0)
        #expect(h.run(["source", "correct", "purpleair", "lrapa"]).code == 0)
        #expect(h.run(["--user", "bo", "favourite", "add", "x"]).code == 0)
        #expect(h.run(["alert", "test", "--sensor", "131075"]).code == 0)
        let state = h.run(["state", "--json"])
        #expect(state.code == 0)
        let json = state.out.joined()
        #expect(json.contains(#""favourites":["AQS-370630099"]"#))
        #expect(json.contains(#""watched":["131075"]"#))
        #expect(json.contains(#""alert":{"category":"very-unhealthy","onClear":"silent","enabled":false}"#))
        #expect(json.contains(#""unit":"fahrenheit""#))
        #expect(json.contains(#"{"id":"airnow","enabled":false,"correction":"none"}"#))
        #expect(json.contains(#"{"id":"purpleair","enabled":true,"correction":"lrapa"}"#))
        #expect(h.run(["state", "--json", "--user", "bo"]).out.joined().contains(#""favourites":["x"]"#))
        let log = h.run(["log", "--json", "--stream", "user:me"])
        #expect(log.out.count == 9)
        #expect(log.out[8].contains(#""type":"alert.test""#) && log.out[8].contains(#""sensor":"131075""#))
        for (i, line) in log.out.enumerated() {
            for field in ["\"id\":", "\"origin\":", "\"counter\":\(i + 1)", "\"stream\":\"user:me\"", "\"hlc\":", "\"type\":", "\"payload\":{"] {
                #expect(line.contains(field), "line \(i) lacks \(field): \(line)")
            }
        }
        #expect(log.out[2].contains(#""type":"favourite.remove""#) && log.out[2].contains(#""observed":[""#))
        #expect(h.run(["log", "--limit", "3"]).out.count == 3)
        let text = h.run(["state"]).out
        #expect(text.contains { $0.hasPrefix("favourites  AQS-370630099") })
    }

    @Test func badInputFailsClearlyAndChangesNothing() throws {
        let h = Harness()
        #expect(h.run(["init"]).code == 0)
        #expect(h.run(["favourite", "add", "keep-me"]).code == 0)
        let before = try h.fingerprint()
        let cases: [([String], Int32, String)] = [
            ([], 2, "no command"),
            (["frobnicate"], 2, "unknown command 'frobnicate'"),
            (["favourite"], 2, "missing add|remove"),
            (["favourite", "add"], 2, "missing SENSOR"),
            (["favourite", "add", "a", "b"], 2, "unexpected argument 'b'"),
            (["favourite", "toggle", "a"], 2, "expected add or remove"),
            (["favourite", "add", "has space"], 1, "sensor 'has space'"),
            (["favourite", "add", ""], 1, "sensor ''"),
            (["favourite", "add", String(repeating: "x", count: 129)], 1, "1-128 characters"),
            (["favourite", "remove", "never-added"], 1, "not a favourite"),
            (["watch", "remove", "keep-me"], 1, "not a watched sensor"),
            (["alert", "set"], 2, "nothing to set"),
            (["alert", "set", "--category"], 2, "--category needs a value"),
            (["alert", "set", "--category", "awful"], 1, "--category 'awful'"),
            (["alert", "set", "--on-clear", "loud"], 1, "--on-clear 'loud'"),
            (["alert", "set", "--enabled", "maybe"], 1, "--enabled 'maybe'"),
            (["alert", "set", "--colour", "red"], 2, "unknown option --colour"),
            (["alert", "get"], 2, "expected 'set'"),
            (["alert", "test", "--category", "usg"], 2, "alert test takes only --sensor"),
            (["alert", "test", "--sensor", "a b"], 1, "sensor 'a b'"),
            (["unit", "set", "kelvin"], 1, "unit 'kelvin'"),
            (["unit", "set"], 2, "missing celsius|fahrenheit"),
            (["source", "enable", "myspace"], 1, "source 'myspace' is unknown"),
            (["source", "correct", "airnow", "lrapa"], 1, "not available for airnow"),
            (["source", "correct", "purpleair"], 2, "missing CORRECTION"),
            (["source", "explode"], 2, "expected list, enable"),
            (["log", "--stream", "private"], 1, "stream 'private'"),
            (["log", "--limit", "-3"], 1, "--limit '-3'"),
            (["state", "--user", "no way"], 1, "user id 'no way'"),
            (["state", "extra"], 2, "unexpected argument"),
            (["state", "--durability", "sometimes"], 2, "--durability must be full or normal"),
            (["--db"], 2, "--db needs a value"),
        ]
        for (args, code, message) in cases {
            let r = h.run(args)
            #expect(r.code == code, "\(args): exit \(r.code), stderr \(r.err)")
            #expect(r.err.first?.contains(message) == true, "\(args): stderr \(r.err)")
            if code == 2 { #expect(r.err.count >= 2 && r.err[1].contains("usage"), "\(args) prints usage") }
            #expect(r.out.isEmpty, "\(args) printed to stdout: \(r.out)")
        }
        #expect(try h.fingerprint() == before)
    }

    @Test func databaseProblemsAreOneLineErrorsThatNameTheFile() throws {
        let h = Harness()
        let missing = h.run(["state", "--db", h.dir + "/nowhere.db"])
        #expect(missing.code == 1 && missing.err == ["breeze state: \(h.dir)/nowhere.db: no Breeze database here (create one with `breeze init --db \(h.dir)/nowhere.db`)"])
        let notes = h.dir + "/notes.txt"
        let f = fopen(notes, "w")!
        fputs("not a database at all, just some text that is long enough to look like a header\n", f)
        fclose(f)
        for cmd in [["state"], ["favourite", "add", "x"], ["log"], ["init"]] {
            let r = h.run(cmd + ["--db", notes])
            #expect(r.code == 1, "\(cmd)")
            #expect(r.err.count == 1 && r.err[0].contains("not a Breeze database"), "\(cmd): \(r.err)")
        }
        let dirAsDB = h.run(["state", "--db", h.dir])
        #expect(dirAsDB.code == 1 && dirAsDB.err[0].contains("is a directory"))
    }

    @Test func everyCommandHasHelp() {
        let h = Harness()
        let top = h.run(["--help"])
        #expect(top.code == 0 && top.out.joined().contains("usage: breeze <command>"))
        for c in BreezeCLI.commands {
            let r = h.run([c.name, "--help"])
            #expect(r.code == 0 && r.out.joined().contains("usage: breeze \(c.name)"), "\(c.name)")
        }
    }

    @Test func theDatabasePathComesFromTheFlagThenTheEnvironmentThenTheDefault() throws {
        let h = Harness()
        let env = ["HOME": h.dir]
        #expect(h.run(["init"], env: env).code == 0)
        #expect(access(h.dir + "/.local/share/breeze/breeze.db", F_OK) == 0)
        #expect(h.run(["init"], env: ["XDG_DATA_HOME": h.dir + "/xdg"]).code == 0)
        #expect(access(h.dir + "/xdg/breeze/breeze.db", F_OK) == 0)
        #expect(h.run(["favourite", "add", "e"], env: ["BREEZE_DB": h.dir + "/env.db", "HOME": h.dir]).code == 1)
        #expect(h.run(["init", "--db", h.dir + "/env.db"], env: env).code == 0)
        #expect(h.run(["favourite", "add", "e"], env: ["BREEZE_DB": h.dir + "/env.db", "HOME": h.dir]).code == 0)
        #expect(h.run(["state", "--json", "--db", h.dir + "/env.db"], env: env).out.joined().contains(#""favourites":["e"]"#))
        #expect(h.run(["init", "--db", h.dir + "/deep/er/x.db"], env: env).code == 0)
    }
}
