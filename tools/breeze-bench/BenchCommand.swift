import BreezeCLI
import BreezeCore
import BreezeStore
import Glibc

/// `breeze-bench NAME` dispatches to each benchmark (`breeze-bench all` runs them all, see `BenchAll`).
/// `breeze-bench append`: appends N synthetic readings through `EventLog.append` in batches and, batch by
/// batch in the same run, inserts the very same rows with plain SQLite statements into a table of the same
/// shape (`RawBaseline`); prints both rates, their ratio and the peak resident memory.
enum BenchCommand {
    static let usage = """
        usage: breeze-bench append [--count N] [--batch B] [--dir DIR] [--durability full|normal] [--json]
          N events (default 1000000) in batches of B (default 10000), in a temporary directory unless --dir
               breeze-bench sync [--count N] [--dir DIR] [--json]
          node A holds N events (default 1000000); an empty node B in another process syncs them over loopback
               breeze-bench live [--edits E] [--dir DIR] [--json]
          E single edits (default 1000) through the library: x (this process) -> y -> z (processes); times to
          commit, to x's observer, to z's log and to z's observed read model
               breeze-bench app [--edits E] [--import-rows N] [--sensors S] [--fixtures DIR] [--dir DIR] [--only city] [--json]
          an app's first week on the real fixtures: every screen's first value on a fresh replica, a star to the
          sheet's observer with the heavy screens observed beside it (E edits, default 200), awaited reads during
          an N-row import (default 50000) against the same reads without one, the map of an S-sensor city (2000)
          right after opening (--only city: that alone)
               breeze-bench screens [--sensors N,M] [--hours H] [--repeats R] [--json]
          a synthetic city of N and M PurpleAir sensors (default 2000,20000), H hours of 10-minute rows (36):
          each screen's time (first call and median of R), bytes per row, one new reading to every observer
               breeze-bench import [--count N] [--troy DIR] [--json]
          imports a synthetic PurpleAir CSV of N rows (default 1000000) and the Troy NY batches
               breeze-bench projections [--count N] [--json]
          rebuilds the facts projection from N events against a raw decoded scan; one new reading to every screen
               breeze-bench settings [--count N] [--keys K] [--writers W] [--full-sample S] [--json]
          N last-writer-wins settings writes over K keys (default 100000, 100): write cost, wire bytes, peer apply
          (in process and a second node over TCP), stored size, merge of W concurrent writers (default 2000)
               breeze-bench events [--count N] [--batch B] [--json]
          appends N settings events (default 100000) in transactions of B (default 1000), then replays them
               breeze-bench fanout [--devices D] [--sensors S] [--radius KM] [--history-minutes M] [--idle-seconds I]
                                   [--feed-seconds F] [--rates 1,10] [--dark-sensors K] [--restart yes|no] [--connect-limit SECONDS]
                                   [--unwanted-rate M] [--unwanted-pairs P] [--servers K] [--dir DIR] [--json]
          D device sessions (default 1000; one process, one loop) against a `breeze node` holding a city of S sensors
          (2000) with M minutes of readings (60): connect and catch-up time, memory per session and CPU when idle,
          commit-to-device latency and CPU per reading at a city's rate and multiples, the CPU of readings no device
          wants (K sensors nobody subscribes to, default 2,000, at M times a city's rate, default 2,000, P windows, 12), recovery after a restart; --servers K: K nodes meshed, devices
          spread over them, the feed on the first, the last killed (failover)
               breeze-bench hostile [--seconds S] [--dir DIR] [--json]
          one enrolled device attacks a `breeze node` for S seconds each way (default 8: re-sent ids, made-up
          origins, 40 sessions and reconnect loops, alternating 50,000-stream subscriptions): honest phones' handshake
          times (p50, p99, max; goal p99 < 100 ms), the node's CPU and memory, against a quiet baseline in the same run
               breeze-bench year [--sensors N] [--days D] [--step S] [--raw-days R] [--dir DIR] [--json]
          a server fed a city of N sensors (default 100) live for D simulated days (60), a batch of every sensor's
          reading each S seconds (120), beside the same rows imported a day at a time: bytes per reading (live / bulk,
          goal <= 1.3) and a 2,000-sensor city's growth in a year after its first R days (30; goal <= 5 GB)
               breeze-bench all [--runs R] [--write FILE] [--no-compare] [--scripts DIR] [--python P] [--node P]
                                [--append-count N] [--sync-count N] [--edits E] [--projection-count N]
                                [--import-count N] [--settings-count N] [--writers W] [--events-count N]
                                [--fanout-devices 10,1000,5000,10000] [--fanout-seconds 20] [--hostile-seconds 8]
          every benchmark R times (default 3), each in its own process, with the comparison scripts of
          tools/bench (Yjs, Loro, pycrdt, eventsourcing); prints BENCHMARKS.md-ready markdown (medians)
        """

    static func run(_ args: [String], _ ctx: Context) throws(CLIError) {
        let a = try Arguments(args, valued: ["count", "batch", "dir", "edits", "troy", "keys", "writers", "full-sample", "runs",
                                             "write", "scripts", "python", "node", "append-count", "sync-count",
                                             "projection-count", "import-count", "settings-count", "events-count", "sensors", "hours", "repeats",
                                             "devices", "history-minutes", "radius", "feed-seconds", "idle-seconds", "rates", "restart",
                                             "connect-limit", "dark-sensors", "unwanted-rate", "unwanted-pairs", "import-rows", "fixtures", "servers", "fanout-devices", "fanout-seconds", "seconds", "hostile-seconds", "only", "days", "step", "raw-days"],
                              flags: ["no-compare"], usage: usage)
        let p = try a.expect(["append|sync|live|app|screens|import|projections|settings|events|fanout|hostile|year|all"])
        if p[0] == "fanout" { return try FanoutBench.run(a, ctx) }
        if p[0] == "hostile" { return try HostileBench.run(a, ctx) }
        if p[0] == "live" { return try LiveBench.run(a, ctx) }
        if p[0] == "app" { return try AppBench.run(a, ctx) }
        if p[0] == "year" { return try YearBench.run(a, ctx) }
        if p[0] == "screens" { return try ScreensBench.run(a, ctx) }
        if p[0] == "all" { return try BenchAll.run(a, ctx) }
        if p[0] == "settings" { return try SettingsBench.run(a, ctx) }
        if p[0] == "events" { return try EventsBench.run(a, ctx) }
        if p[0] == "sync" { return try SyncBench.run(a, ctx) }
        if p[0] == "import" { return try ImportBench.run(a, ctx) }
        if p[0] == "projections" { return try ProjectionBench.run(a, ctx) }
        guard p[0] == "append" else { throw .usage("unknown benchmark '\(p[0])'; available: append, sync, live, app, screens, import, projections, settings, events, fanout, hostile, all", usage) }
        let count = try positive(a.options["count"], "--count", default: 1_000_000)
        let batch = try positive(a.options["batch"], "--batch", default: 10_000)
        let dir: String
        if let d = a.options["dir"] { dir = d } else { dir = try temporaryDirectory() }
        let result = try append(count: count, batch: batch, dir: dir, durability: ctx.durability, console: ctx.console)
        if a.options["dir"] == nil {
            for f in ["engine.db", "engine.db-wal", "engine.db-shm", "raw.db", "raw.db-wal", "raw.db-shm"] {
                unlink(dir + "/" + f)
            }
            rmdir(dir)
        }
        if ctx.json {
            ctx.console.out(JSONValue.object([
                ("benchmark", .string("append")), ("events", .int(Int64(count))), ("batch", .int(Int64(batch))),
                ("durability", .string(ctx.durability.rawValue)),
                ("engineEventsPerSecond", .double(result.engineRate.rounded())),
                ("rawSQLiteRowsPerSecond", .double(result.rawRate.rounded())),
                ("ratio", .double((result.engineRate / result.rawRate * 1000).rounded() / 1000)),
                ("peakRSSMiB", .double(result.peakMiB)),
            ]).text)
        } else {
            ctx.console.out("append benchmark: \(count) events in batches of \(batch), durability \(ctx.durability.rawValue)")
            ctx.console.out("  engine (EventLog.append)   \(fmt(result.engineRate)) events/s")
            ctx.console.out("  raw SQLite, same rows      \(fmt(result.rawRate)) rows/s")
            ctx.console.out("  ratio engine/raw           \(fmt2(result.engineRate / result.rawRate))  (goal >= 0.6)")
            ctx.console.out("  peak resident memory       \(fmt2(result.peakMiB)) MiB")
        }
    }

    struct Result { var engineRate: Double; var rawRate: Double; var peakMiB: Double }

    static func append(count: Int, batch: Int, dir: String, durability: EventLog.Durability,
                       console: Console) throws(CLIError) -> Result {
        var o = EventLog.Options()
        o.durability = durability
        do {
            let log = try EventLog.create(at: dir + "/engine.db", options: o)
            let raw = try RawBaseline(path: dir + "/raw.db", durability: durability)
            defer { log.close(); raw.close() }
            var engineSeconds = 0.0, rawSeconds = 0.0
            var generator = ReadingGenerator()
            var done = 0
            var lastSeq: Int64 = 0
            while done < count {
                let n = min(batch, count - done)
                let items = (0..<n).map { _ in (StreamID.public, EventBody.reading(generator.next())) }
                let t0 = SystemClock.monotonicSeconds()
                try log.append(items)
                let t1 = SystemClock.monotonicSeconds()
                let rows = try log.rawRows(seq: (lastSeq + 1)...(lastSeq + Int64(n)))
                let t2 = SystemClock.monotonicSeconds()
                try raw.insert(rows)
                let t3 = SystemClock.monotonicSeconds()
                engineSeconds += t1 - t0
                rawSeconds += t3 - t2
                lastSeq += Int64(n)
                done += n
                if console.isTerminal { console.progress("appended \(done)/\(count)") }
            }
            if console.isTerminal { console.progress("") }
            return Result(engineRate: Double(count) / engineSeconds, rawRate: Double(count) / rawSeconds,
                          peakMiB: peakResidentMiB())
        } catch {
            throw .failure("bench append in \(dir): \(error)")
        }
    }

    static func positive(_ s: String?, _ name: String, default d: Int) throws(CLIError) -> Int {
        try Arguments.positive(s, name, default: d)
    }

    static func temporaryDirectory() throws(CLIError) -> String {
        var template = Array("/tmp/breeze-bench-XXXXXX".utf8CString)
        guard let p = mkdtemp(&template) else { throw .failure("cannot create a temporary directory in /tmp") }
        return String(cString: p)
    }

    static func fmt(_ v: Double) -> String {
        let s = String(Int(v.rounded()))
        var out = ""
        for (i, ch) in s.enumerated() {
            if i > 0 && (s.count - i) % 3 == 0 { out += "," }
            out.append(ch)
        }
        return out
    }

    static func fmt2(_ v: Double) -> String {
        if v < 0 { return "-" + fmt2(-v) }
        let r = (v * 100).rounded() / 100
        let whole = Int(r), frac = Int(((r - Double(whole)) * 100).rounded())
        return "\(whole).\(frac < 10 ? "0" : "")\(frac)"
    }
}

/// Deterministic synthetic PurpleAir-like readings (200 sensors, one reading per sensor every 2 minutes).
struct ReadingGenerator {
    private var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    private var i = 0

    mutating func random() -> Double {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Double(state >> 11) / Double(1 << 53)
    }

    mutating func next() -> Reading {
        defer { i += 1 }
        let sensor = i % 200
        let a = 2 + random() * 40, b = a + random() * 2 - 1
        return Reading(source: "purpleair", sensor: String(100_000 + sensor), time: 1_698_000_000 + Int64(i / 200) * 120,
                       values: [Measurement("pm25_cf1_a", a), Measurement("pm25_cf1_b", b),
                                Measurement("humidity", 30 + random() * 50), Measurement("temperature", 5 + random() * 20)])
    }
}

/// CPU time (user + system) this process has used so far, in seconds: unlike wall time, it does not count
/// waiting for a CPU on a busy machine, nor for the disk.
func cpuSeconds() -> Double {
    var u = rusage()
    getrusage(RUSAGE_SELF.rawValue, &u)
    return Double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + Double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6
}

/// Peak resident set size of this process (getrusage `ru_maxrss`, in KiB on Linux), in MiB.
func peakResidentMiB() -> Double {
    var u = rusage()
    getrusage(RUSAGE_SELF.rawValue, &u)
    return Double(u.ru_maxrss) / 1024
}

extension String {
    var replacingUnderscores: String { String(filter { $0 != "_" && $0 != "," }) }
}
