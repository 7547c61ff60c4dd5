import BreezeCLI
import BreezeCore
import BreezeStore
@preconcurrency import Glibc

/// `breeze-bench events`: the workload of the comparison with the Python `eventsourcing` package
/// (`tools/bench/eventsourcing_events.py`): N events of one user's settings (`source.correct`, key
/// k<i mod 100>, value v<i>) appended in transactions of B events, then replayed: the whole stream read back,
/// each event decoded and its hash checked, and folded into the user's state.
enum EventsBench {
    struct Result {
        var appendRate: Double, replayRate: Double, peakMiB: Double
        /// Raw SQLite inserts of the same rows in the same transactions (`RawBaseline`): with the engine's
        /// rows per `INSERT`, and with one row per `INSERT`. The ceiling for a log that stores a row per event.
        var rawRate = 0.0, rawOneRowRate = 0.0
        /// CPU time (user + system) per event, in microseconds.
        var appendCPU: Double, replayCPU: Double
        /// The log's SQLite page size in bytes.
        var pageSize = 0
    }

    static func run(_ a: Arguments, _ ctx: Context) throws(CLIError) {
        let count = try BenchCommand.positive(a.options["count"], "--count", default: 100_000)
        let batch = try BenchCommand.positive(a.options["batch"], "--batch", default: 1000)
        let dir = try BenchCommand.temporaryDirectory()
        defer { _ = system("rm -rf '\(dir)'") }
        var o = EventLog.Options()
        o.durability = ctx.durability
        let r: Result
        do {
            let log = try EventLog.create(at: dir + "/events.db", options: o)
            defer { log.close() }
            let stream = StreamID.user("bench")
            var t0 = SystemClock.monotonicSeconds()
            var c0 = cpuSeconds()
            var done = 0
            while done < count {
                let n = min(batch, count - done)
                try log.append((done..<(done + n)).map { (stream, SettingsBench.body($0, keys: 100)) })
                done += n
            }
            let appendSeconds = SystemClock.monotonicSeconds() - t0
            let appendCPU = cpuSeconds() - c0
            t0 = SystemClock.monotonicSeconds()
            c0 = cpuSeconds()
            let state = try log.userState(user: "bench")
            let replaySeconds = SystemClock.monotonicSeconds() - t0
            let replayCPU = cpuSeconds() - c0
            let last = count - 1
            guard state.corrections.entries.count == min(100, count), state.corrections["k\(last % 100)"] == "v\(last)" else {
                throw CLIError.failure("bench events: the replayed state does not hold the last values written")
            }
            var result = Result(appendRate: Double(count) / appendSeconds, replayRate: Double(count) / replaySeconds,
                                peakMiB: peakResidentMiB(), appendCPU: appendCPU / Double(count) * 1e6,
                                replayCPU: replayCPU / Double(count) * 1e6)
            result.pageSize = try log.pageSize()
            // The same rows, straight into SQLite (same table, index, pragmas and transactions).
            let rows = try log.rawRows(seq: 1...Int64(count))
            for (i, perStatement) in [RawBaseline.engineRowsPerStatement, 1].enumerated() {
                let raw = try RawBaseline(path: dir + "/raw\(i).db", durability: ctx.durability, rowsPerStatement: perStatement)
                defer { raw.close() }
                t0 = SystemClock.monotonicSeconds()
                var start = 0
                while start < rows.count {
                    let end = min(rows.count, start + batch)
                    try raw.insert(Array(rows[start..<end]))
                    start = end
                }
                let rate = Double(rows.count) / (SystemClock.monotonicSeconds() - t0)
                if i == 0 { result.rawRate = rate } else { result.rawOneRowRate = rate }
            }
            r = result
        } catch let e as CLIError { throw e } catch { throw .failure("bench events in \(dir): \(error)") }
        if ctx.json {
            ctx.console.out(JSONValue.object([
                ("benchmark", .string("events")), ("system", .string("Breeze")), ("events", .int(Int64(count))),
                ("batch", .int(Int64(batch))), ("appendEventsPerSecond", .double(r.appendRate.rounded())),
                ("replayEventsPerSecond", .double(r.replayRate.rounded())), ("peakRSSMiB", .double(r.peakMiB)),
                ("appendCPUMicrosPerEvent", .double((r.appendCPU * 1000).rounded() / 1000)),
                ("replayCPUMicrosPerEvent", .double((r.replayCPU * 1000).rounded() / 1000)),
                ("rawAppendEventsPerSecond", .double(r.rawRate.rounded())),
                ("rawAppendOneRowEventsPerSecond", .double(r.rawOneRowRate.rounded())),
                ("rawRowsPerStatement", .int(Int64(RawBaseline.engineRowsPerStatement))),
                ("durability", .string(ctx.durability.rawValue.uppercased())), ("pageSize", .int(Int64(r.pageSize))),
            ]).text)
        } else {
            ctx.console.out("events benchmark: \(count) settings events in transactions of \(batch), durability \(ctx.durability.rawValue), pages of \(r.pageSize) bytes")
            ctx.console.out("  append              \(BenchCommand.fmt(r.appendRate)) events/s (CPU \(BenchCommand.fmt2(r.appendCPU)) us/event)")
            ctx.console.out("  raw SQLite, same rows and transactions: \(BenchCommand.fmt(r.rawRate)) rows/s (\(RawBaseline.engineRowsPerStatement) rows per INSERT), "
                            + "\(BenchCommand.fmt(r.rawOneRowRate)) rows/s (one row per INSERT); append / raw \(BenchCommand.fmt2(r.appendRate / r.rawRate))")
            ctx.console.out("  replay (fold)       \(BenchCommand.fmt(r.replayRate)) events/s (CPU \(BenchCommand.fmt2(r.replayCPU)) us/event)")
            ctx.console.out("  peak resident memory \(BenchCommand.fmt2(r.peakMiB)) MiB")
        }
    }
}
