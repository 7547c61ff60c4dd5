import Testing
import BreezeCore
@testable import BreezeStore
@testable import BreezeCLI
@preconcurrency import Glibc
import BreezeTestSupport

/// `breeze log` filters on a log of real data, `--follow` with the built binary while another process
/// appends, and `breeze verify` through the CLI.
struct LogFilterTests {
    /// Real sensors and readings of one replica, user edits, and events of a second (remote) replica.
    static func makeLog(_ h: Harness) throws -> (remote: Origin, hlcOfSeq: [Int64: HLC]) {
        #expect(h.run(["init"]).code == 0)
        #expect(h.run(["import", "sensors-csv", ImportCLITests.fixtures + "/purpleair/ajl_sensors.csv"]).code == 0)
        #expect(h.run(["favourite", "add", "166653"]).code == 0)
        #expect(h.run(["unit", "set", "fahrenheit"]).code == 0)
        #expect(h.run(["favourite", "add", "149970"]).code == 0)
        let remote = Origin(replica: ReplicaID(rawValue: 0xB0B0_0000_0000_0001), epoch: 3)
        let log = try EventLog.open(at: h.db)
        defer { log.close() }
        var theirs: [Event] = []
        for c in 1...3 {
            let hlc = HLC(physicalMillis: 1_600_000_000_000 + UInt64(c) * 1000, logical: 0)
            theirs.append(Event(stream: .user("me"), id: EventID(origin: remote, counter: UInt64(c)), hlc: hlc, body: .watchAdd(sensor: "w\(c)")))
        }
        #expect(try log.ingest(theirs).inserted == 3)
        var hlcs: [Int64: HLC] = [:]
        try log.forEach { hlcs[$0.seq] = $0.event.hlc; return true }
        return (remote, hlcs)
    }

    static func seqs(_ out: [String]) -> [Int64] {
        out.compactMap { line in
            guard let r = line.firstRange(of: "\"seq\":") else { return nil }
            return Int64(line[r.upperBound...].prefix { $0.isNumber })
        }
    }

    @Test func filtersByStreamTypeOriginAndRange() throws {
        let h = Harness()
        let (remote, hlcs) = try Self.makeLog(h)
        #expect(Self.seqs(h.run(["log", "--json"]).out) == Array(1...17))
        #expect(Self.seqs(h.run(["log", "--json", "--stream", "public"]).out) == Array(1...11))
        #expect(Self.seqs(h.run(["log", "--json", "--type", "favourite.add"]).out) == [12, 14])
        #expect(Self.seqs(h.run(["log", "--json", "--type", "unit.set,watch.add"]).out) == [13, 15, 16, 17])
        #expect(Self.seqs(h.run(["log", "--json", "--type", "unit.set", "--type", "favourite.add"]).out) == [12, 13, 14])
        #expect(Self.seqs(h.run(["log", "--json", "--origin", remote.replica.description]).out) == [15, 16, 17])
        #expect(Self.seqs(h.run(["log", "--json", "--origin", remote.description]).out) == [15, 16, 17])
        #expect(Self.seqs(h.run(["log", "--json", "--origin", remote.replica.description + ".2"]).out) == [])
        #expect(Self.seqs(h.run(["log", "--json", "--since", "5", "--until", "7"]).out) == [5, 6, 7])
        #expect(Self.seqs(h.run(["log", "--json", "--since", "12", "--limit", "2"]).out) == [12, 13])
        // HLC and time bounds select by the event's timestamp, not its arrival: the remote events are older.
        #expect(Self.seqs(h.run(["log", "--json", "--until", hlcs[16]!.description]).out) == [15, 16])
        #expect(Self.seqs(h.run(["log", "--json", "--since", hlcs[13]!.description, "--stream", "user:me"]).out) == [13, 14])
        #expect(Self.seqs(h.run(["log", "--json", "--until", "2020-09-13T12:26:41Z"]).out) == [15])        // 1600000001 s
        #expect(Self.seqs(h.run(["log", "--json", "--since", "2020-09-13T12:26:41.500Z", "--until", "2020-09-14"]).out) == [16, 17])
        // Text output is one line per event too.
        let text = h.run(["log", "--type", "watch.add"])
        #expect(text.out.count == 3 && text.out[0].contains("2020-09-13T12:26:41.000Z") && text.out[0].contains(#"{"sensor":"w1"}"#))
    }

    @Test func badFilterValuesAreClearErrors() throws {
        let h = Harness()
        _ = try Self.makeLog(h)
        let cases: [([String], Int32, String)] = [
            (["--since", "yesterday"], 1, "--since 'yesterday': expected a sequence number (e.g. 120), an HLC timestamp"),
            (["--until", "2023-13-45T00:00:00Z"], 1, "--until '2023-13-45T00:00:00Z': expected"),
            (["--since", "1.99999"], 1, "--since '1.99999': HLC out of range"),
            (["--origin", "xyz"], 1, "--origin 'xyz': expected a replica id of 16 hex digits"),
            (["--stream", "private"], 1, "--stream 'private':"),
            (["--type", "fav add"], 1, "--type 'fav add': expected an event type name"),
            (["--since", "9", "--until", "3"], 1, "--since 9 is after --until 3"),
            (["--limit", "0"], 1, "--limit '0': expected a positive whole number"),
            (["--follow-timeout", "3"], 2, "--follow-timeout needs --follow"),
            (["--follow", "--follow-timeout", "-1"], 1, "--follow-timeout '-1': expected a positive number of seconds"),
        ]
        for (args, code, message) in cases {
            let r = h.run(["log"] + args)
            #expect(r.code == code && r.err.first?.contains(message) == true, "\(args): \(r.err)")
        }
        let unknown = h.run(["log", "--type", "radon.reading"])
        #expect(unknown.code == 0 && unknown.out.isEmpty && unknown.err.first?.contains("not a type this build knows") == true)
    }

    @Test func followPrintsEventsAppendedByAnotherProcessWithinASecond() throws {
        let h = Harness()
        _ = try Self.makeLog(h)
        let breeze = BinaryTests.binary()
        let child = Child(breeze, ["--db", h.db, "log", "--follow", "--follow-timeout", "30", "--json", "--type", "favourite.add"],
                          stderrPath: h.dir + "/follow.err")
        #expect(Self.seqs([child.readLine() ?? "", child.readLine() ?? ""]) == [12, 14], "the history first")
        #expect(runProgram(breeze, ["--db", h.db, "unit", "set", "celsius"]).code == 0)      // does not match
        var t0 = timespec(), t1 = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t0)
        #expect(runProgram(breeze, ["--db", h.db, "favourite", "add", "151502"]).code == 0)
        let next = child.readLine() ?? ""
        clock_gettime(CLOCK_MONOTONIC, &t1)
        #expect(next.contains(#""seq":19"#) && next.contains(#""payload":{"sensor":"purpleair:151502"}"#), "\(next)")
        let ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1_000_000
        #expect(ms < 30_000, "appeared after \(ms) ms")
        // A burst from a torture process: every matching event, in order, none twice.
        #expect(runProgram(productsDirectory() + "/breeze-torture", ["append", "--db", h.db, "--count", "40", "--batch", "7",
                                                                      "--stream", "user:me"]).code == 0)
        var burst: [String] = []
        while burst.count < 40, let l = child.readLine() { burst.append(l) }
        #expect(Self.seqs(burst) == Array(20...59))
        child.signal(SIGTERM)
        #expect(child.readLine() == nil)
        #expect(child.wait() == 0, "SIGTERM ends --follow normally")
    }

    @Test func followStopsAtItsTimeoutAndAtTheEndOfASeqRange() throws {
        let h = Harness()
        _ = try Self.makeLog(h)
        let timed = runProgram(BinaryTests.binary(), ["--db", h.db, "log", "--follow", "--follow-timeout", "0.3", "--since", "17"])
        #expect(timed.code == 0 && timed.out.split(separator: "\n").count == 1)
        let bounded = runProgram(BinaryTests.binary(), ["--db", h.db, "log", "--follow", "--until", "3"])
        #expect(bounded.code == 0 && bounded.out.split(separator: "\n").count == 3, "nothing after seq 3 can match: no wait")
    }

    @Test func verifyThroughTheCLIReportsAndExits() throws {
        let h = Harness()
        _ = try Self.makeLog(h)
        #expect(h.run(["screen", "map", "--json"]).code == 0)
        let clean = BinaryTests.run(["--db", h.db, "verify"])
        #expect(clean.0 == 0 && clean.1.contains("17 events (last seq 17) in 2 streams") && clean.1.contains("\nclean: "), "\(clean)")
        let json = BinaryTests.run(["--db", h.db, "verify", "--json"])
        #expect(json.0 == 0 && json.1.contains(#""clean":true"#) && json.1.contains(#""projection":{"result":"equal","checkpoint":17"#))
        let log = try EventLog.open(at: h.db)
        try log.db.execute("DELETE FROM events WHERE seq = 13")
        log.close()
        let broken = BinaryTests.run(["--db", h.db, "verify"])
        #expect(broken.0 == 1)
        #expect(broken.1.contains("problem: gap: seq 14, id "), "\(broken.1)")
        #expect(broken.1.contains("stream user:me: counter 2 is missing for origin"))
        #expect(broken.2.contains("breeze verify: \(h.db): "))
        let missing = BinaryTests.run(["--db", h.dir + "/none.db", "verify"])
        #expect(missing.0 == 1 && missing.2.contains("no Breeze database here"))
        #expect(BinaryTests.run(["--db", h.db, "verify", "extra"]).0 == 2)
    }
}
