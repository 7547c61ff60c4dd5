import BreezeCLI
import BreezeCore
import BreezeCrypto
import BreezeStore
@preconcurrency import Glibc

/// `breeze-bench sync`: catch-up throughput between two node processes over loopback (sealed, as every
/// session is), against this build's local batched append rate measured in the same run, the cost of the
/// encryption in that run (`SealCost`), and the peak memory of both processes (the latency of live edits is
/// `breeze-bench live`).
enum SyncBench {
    static func run(_ a: Arguments, _ ctx: Context) throws(CLIError) {
        let count = try BenchCommand.positive(a.options["count"], "--count", default: 1_000_000)
        let dir: String
        if let d = a.options["dir"] { dir = d } else { dir = try BenchCommand.temporaryDirectory() }
        defer { if a.options["dir"] == nil { _ = system("rm -rf '\(dir)'") } }
        let authority = try LocalAuthority(directory: dir)
        let progress = { (s: String) in if ctx.console.isTerminal { ctx.console.progress(s) } }

        // 1. Node A's database, filled through the public append API: the local batched append rate.
        var o = EventLog.Options()
        o.durability = ctx.durability
        let appendRate: Double
        do {
            let log = try EventLog.create(at: dir + "/a.db", options: o)
            var gen = ReadingGenerator()
            var done = 0, seconds = 0.0
            while done < count {
                let n = min(10_000, count - done)
                let items = (0..<n).map { _ in (StreamID.public, EventBody.reading(gen.next())) }
                let t0 = SystemClock.monotonicSeconds()
                try log.append(items)
                seconds += SystemClock.monotonicSeconds() - t0
                done += n
                progress("filling node A: \(done)/\(count)")
            }
            log.close()
            appendRate = Double(count) / seconds
            try EventLog.create(at: dir + "/b.db", options: o).close()
        } catch { throw .failure("bench sync: \(error)") }

        // 2. Catch-up: B (empty, another process) dials A.
        let nodeA = try Subprocess(executable: try Subprocess.breezePath(), args: ["node", "--db", dir + "/a.db", "--listen", "127.0.0.1:0"] + authority.nodeArguments(db: dir + "/a.db")
                                       + ["--durability", ctx.durability.rawValue], stderrPath: dir + "/a.log")
        let addressA = listenAddress(nodeA)
        let t0 = SystemClock.monotonicSeconds()
        let nodeB = try Subprocess(executable: try Subprocess.breezePath(), args: ["node", "--db", dir + "/b.db", "--listen", "127.0.0.1:0", "--peer", addressA]
                                       + authority.nodeArguments(db: dir + "/b.db") + ["--durability", ctx.durability.rawValue],
                                   stderrPath: dir + "/b.log")
        _ = listenAddress(nodeB)
        let reader: EventLog
        do { reader = try EventLog.open(at: dir + "/b.db") } catch { throw .failure("bench sync: \(error)") }
        var held: UInt64 = 0
        while held < UInt64(count) {
            usleep(20_000)
            held = (try? reader.versionVector(of: .public).total) ?? 0
            progress("node B caught up \(held)/\(count)")
            if SystemClock.monotonicSeconds() - t0 > 1800 { throw .failure("bench sync: B did not catch up within 30 minutes (\(held)/\(count))") }
        }
        let syncSeconds = SystemClock.monotonicSeconds() - t0
        let memA = nodeA.peakResidentMiB(), memB = nodeB.peakResidentMiB()
        reader.close()
        nodeA.stop()
        nodeB.stop()
        // The cost of encryption in this run: the AEAD work of every frame the catch-up sent (`SealCost`).
        let seal: SealCost.Figures
        do { seal = try SealCost.measure(db: dir + "/a.db") } catch let e as CLIError { throw e } catch { throw .failure("bench sync: \(error)") }
        let ratioWithoutAEAD = Double(count) / max(syncSeconds - seal.seconds, 1e-6) / appendRate

        if ctx.console.isTerminal { ctx.console.progress("") }
        let syncRate = Double(count) / syncSeconds
        if ctx.json {
            ctx.console.out(JSONValue.object([
                ("benchmark", .string("sync")), ("events", .int(Int64(count))),
                ("syncEventsPerSecond", .double(syncRate.rounded())),
                ("localAppendEventsPerSecond", .double(appendRate.rounded())),
                ("ratio", .double((syncRate / appendRate * 1000).rounded() / 1000)),
                ("aeadSeconds", .double((seal.seconds * 1000).rounded() / 1000)), ("aeadFrames", .int(Int64(seal.frames))),
                ("aeadShareOfCatchUp", .double((seal.seconds / syncSeconds * 10000).rounded() / 10000)),
                ("ratioWithoutAEADAtMost", .double((ratioWithoutAEAD * 1000).rounded() / 1000)),
                ("peakRSSMiBNodeA", .double(memA)), ("peakRSSMiBNodeB", .double(memB)),
            ]).text)
        } else {
            let c = ctx.console
            c.out("sync benchmark: \(count) events from node A to an empty node B (separate processes, loopback)")
            c.out("  catch-up                     \(BenchCommand.fmt(syncRate)) events/s (\(BenchCommand.fmt2(syncSeconds)) s)")
            c.out("  local batched append         \(BenchCommand.fmt(appendRate)) events/s (same build, same run)")
            c.out("  ratio sync/append            \(BenchCommand.fmt2(syncRate / appendRate))  (goal >= 0.5; every frame sealed)")
            c.out("  encryption                   \(BenchCommand.fmt2(seal.seconds * 1000)) ms of AEAD for \(seal.frames) frames (seal + open, measured here) = "
                  + "\(BenchCommand.fmt2(seal.seconds / syncSeconds * 100))% of the catch-up; without it the ratio would be at most \(BenchCommand.fmt2(ratioWithoutAEAD))")
            c.out("  peak resident memory         A \(BenchCommand.fmt2(memA)) MiB, B \(BenchCommand.fmt2(memB)) MiB  (goal <= 150 each)")
        }
    }

    static func listenAddress(_ p: Subprocess) -> String {
        let line = p.readLine() ?? ""
        return line.hasPrefix("listening on ") ? String(line.dropFirst("listening on ".count)) : ""
    }
}
