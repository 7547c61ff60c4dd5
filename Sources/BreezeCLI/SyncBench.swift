import BreezeCore
import BreezeCrypto
import BreezeStore
@preconcurrency import Glibc

/// `breeze bench sync`: catch-up throughput between two node processes over loopback (sealed, as every
/// session is), against this build's local batched append rate measured in the same run, the cost of the
/// encryption in that run (`SealCost`), the peak memory of both processes, and the latency of single live edits
/// across a chain of three nodes.
enum SyncBench {
    static func run(_ a: Arguments, _ ctx: Context) throws(CLIError) {
        let count = try BenchCommand.positive(a.options["count"], "--count", default: 1_000_000)
        let edits = try BenchCommand.positive(a.options["edits"], "--edits", default: 1000)
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
                let t0 = monotonicSeconds()
                try log.append(items)
                seconds += monotonicSeconds() - t0
                done += n
                progress("filling node A: \(done)/\(count)")
            }
            log.close()
            appendRate = Double(count) / seconds
            try EventLog.create(at: dir + "/b.db", options: o).close()
        } catch { throw .failure("bench sync: \(error)") }

        // 2. Catch-up: B (empty, another process) dials A.
        let nodeA = try Subprocess(args: ["node", "--db", dir + "/a.db", "--listen", "127.0.0.1:0"] + authority.nodeArguments(db: dir + "/a.db")
                                       + ["--durability", ctx.durability.rawValue], stderrPath: dir + "/a.log")
        let addressA = listenAddress(nodeA)
        let t0 = monotonicSeconds()
        let nodeB = try Subprocess(args: ["node", "--db", dir + "/b.db", "--listen", "127.0.0.1:0", "--peer", addressA]
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
            if monotonicSeconds() - t0 > 1800 { throw .failure("bench sync: B did not catch up within 30 minutes (\(held)/\(count))") }
        }
        let syncSeconds = monotonicSeconds() - t0
        let memA = nodeA.peakResidentMiB(), memB = nodeB.peakResidentMiB()
        reader.close()
        nodeA.stop()
        nodeB.stop()
        // The cost of encryption in this run: the AEAD work of every frame the catch-up sent (`SealCost`).
        let seal: SealCost.Figures
        do { seal = try SealCost.measure(db: dir + "/a.db") } catch let e as CLIError { throw e } catch { throw .failure("bench sync: \(error)") }
        let ratioWithoutAEAD = Double(count) / max(syncSeconds - seal.seconds, 1e-6) / appendRate

        // 3. Live edits across a chain x - y - z of fresh nodes.
        var latencies: [Double] = []
        do {
            for n in ["x", "y", "z"] { try EventLog.create(at: dir + "/\(n).db", options: o).close() }
            let x = try Subprocess(args: ["node", "--db", dir + "/x.db", "--listen", "127.0.0.1:0"] + authority.nodeArguments(db: dir + "/x.db"),
                                   stderrPath: dir + "/x.log")
            let ax = listenAddress(x)
            let y = try Subprocess(args: ["node", "--db", dir + "/y.db", "--listen", "127.0.0.1:0", "--peer", ax]
                                       + authority.nodeArguments(db: dir + "/y.db"), stderrPath: dir + "/y.log")
            let ay = listenAddress(y)
            let z = try Subprocess(args: ["node", "--db", dir + "/z.db", "--listen", "127.0.0.1:0", "--peer", ay]
                                       + authority.nodeArguments(db: dir + "/z.db"), stderrPath: dir + "/z.log")
            _ = listenAddress(z)
            defer { x.stop(); y.stop(); z.stop() }
            let writer = try EventLog.open(at: dir + "/x.db", options: o)
            let watcher = try EventLog.open(at: dir + "/z.db")
            defer { writer.close(); watcher.close() }
            let stream = StreamID.user("bench")
            for i in 0..<edits {
                let start = monotonicSeconds()
                let e = try writer.append(.favouriteAdd(sensor: "s\(i % 50)"), to: stream)
                while !((try? watcher.versionVector(of: stream).contains(e.id)) ?? false) {
                    usleep(200)
                    if monotonicSeconds() - start > 30 { throw CLIError.failure("bench sync: edit \(i) did not reach z in 30 s") }
                }
                latencies.append((monotonicSeconds() - start) * 1000)
                if i % 50 == 0 { progress("live edits: \(i)/\(edits)") }
            }
        } catch let e as CLIError { throw e } catch { throw .failure("bench sync: \(error)") }
        if ctx.console.isTerminal { ctx.console.progress("") }
        latencies.sort()
        let median = latencies[latencies.count / 2]
        let p99 = latencies[min(latencies.count - 1, Int(Double(latencies.count) * 0.99))]
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
                ("liveEdits", .int(Int64(edits))), ("latencyMedianMs", .double((median * 100).rounded() / 100)),
                ("latencyP99Ms", .double((p99 * 100).rounded() / 100)),
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
            c.out("  live edit x -> y -> z        median \(BenchCommand.fmt2(median)) ms, p99 \(BenchCommand.fmt2(p99)) ms over \(edits) edits")
        }
    }

    static func listenAddress(_ p: Subprocess) -> String {
        let line = p.readLine() ?? ""
        return line.hasPrefix("listening on ") ? String(line.dropFirst("listening on ".count)) : ""
    }
}
