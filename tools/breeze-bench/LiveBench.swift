import BreezeCLI
import Breeze
import BreezeCrypto
@preconcurrency import Glibc

/// `breeze-bench live`: single edits made through the library in the writer's own process, across a chain of
/// three replicas: x (a `Replica` with its sync node in this process), y and z (`breeze node` processes; y
/// dials x, z dials y). Each edit stars or un-stars one sensor, so the sheet's `isFavourite` flips every time.
/// Measured per edit, from before the call:
/// - commit: until `addFavourite`/`removeFavourite` returns (committed, `synchronous=FULL` by default);
/// - local yield: from that return until x's observed sheet yields the new `isFavourite`;
/// - z's log: until the event is in z's database (a second replica on z's file, in this process, observing
///   z's version vector: z's commits are noticed through inotify);
/// - z's model: until z's observed sheet yields the new value.
enum LiveBench {
    static func run(_ a: Arguments, _ ctx: Context) throws(CLIError) {
        let edits = try BenchCommand.positive(a.options["edits"], "--edits", default: 1000)
        let dir: String
        if let d = a.options["dir"] { dir = d } else { dir = try BenchCommand.temporaryDirectory() }
        defer { if a.options["dir"] == nil { _ = system("rm -rf '\(dir)'") } }
        let progress = { (s: String) in if ctx.console.isTerminal { ctx.console.progress(s) } }
        let authority = try LocalAuthority(directory: dir)
        var o = Replica.Options(user: "bench")
        o.durability = ctx.durability == .full ? .full : .normal
        let sensor = "900001"
        var commit: [Double] = [], local: [Double] = [], zLog: [Double] = [], zModel: [Double] = []
        do {
            for n in ["y", "z"] { try Replica(path: dir + "/\(n).db", options: o).close() }
            let x = try Replica(path: dir + "/x.db", options: o)
            defer { x.close() }
            _ = try x.importData(Array("id,name,latitude,longitude,timezone\n\(sensor),Bench,42.7,-73.7,America/New_York\n".utf8),
                                 name: "bench-sensor.csv", format: "sensors-csv")
            let xArgs = try authority.nodeArguments(db: dir + "/x.db")
            let status = try x.startSync(try SyncOptions(certificateFile: xArgs[1], authorityFile: xArgs[3], listen: "127.0.0.1:0"))
            guard let ax = status.listenAddress else { throw CLIError.failure("bench live: x is not listening") }
            let breeze = try Subprocess.breezePath()
            let y = try Subprocess(executable: breeze, args: ["node", "--db", dir + "/y.db", "--listen", "127.0.0.1:0", "--peer", ax]
                                       + authority.nodeArguments(db: dir + "/y.db") + ["--durability", ctx.durability.rawValue],
                                   stderrPath: dir + "/y.log")
            let ay = SyncBench.listenAddress(y)
            let z = try Subprocess(executable: breeze, args: ["node", "--db", dir + "/z.db", "--listen", "127.0.0.1:0", "--peer", ay]
                                       + authority.nodeArguments(db: dir + "/z.db") + ["--durability", ctx.durability.rawValue],
                                   stderrPath: dir + "/z.log")
            _ = SyncBench.listenAddress(z)
            defer { y.stop(); z.stop() }
            let zr = try Replica(path: dir + "/z.db", options: o)
            defer { zr.close() }
            // The sensor's registration must reach z before z's sheet can be built.
            let t0 = SystemClock.monotonicSeconds()
            while (try zr.read { try $0.eventCount(stream: .public) }) < 1 {
                usleep(2000)
                if SystemClock.monotonicSeconds() - t0 > 30 { throw CLIError.failure("bench live: the sensor did not reach z within 30 s (see \(dir)/y.log, z.log)") }
            }
            let params = x.parameters(now: 1_800_000_000, sensor: sensor)
            let xSheet = Recorder<Bool>(), zSheet = Recorder<Bool>(), zVector = Recorder<VersionVector>()
            let tasks = [
                xSheet.follow(x.observe(SheetScreen.self, params)) { $0.isFavourite },
                zSheet.follow(zr.observe(SheetScreen.self, params)) { $0.isFavourite },
                zVector.follow(zr.observe { try $0.versionVector(of: .user("bench")) }) { $0 },
            ]
            defer { for t in tasks { t.cancel() } }
            _ = try xSheet.wait { $0 == false }
            _ = try zSheet.wait { $0 == false }
            for i in 0..<edits {
                let star = i % 2 == 0
                let start = SystemClock.monotonicSeconds()
                let e = star ? try x.addFavourite(sensor) : try x.removeFavourite(sensor)
                let committed = SystemClock.monotonicSeconds()
                let yielded = try xSheet.wait { $0 == star }
                let inLog = try zVector.wait { $0.contains(e.id) }
                let modelled = try zSheet.wait { $0 == star }
                commit.append((committed - start) * 1000)
                local.append((yielded - committed) * 1000)
                zLog.append((inLog - start) * 1000)
                zModel.append((modelled - start) * 1000)
                if i % 50 == 0 { progress("live edits: \(i)/\(edits)") }
            }
        } catch let e as CLIError { throw e } catch { throw .failure("bench live: \(error)") }
        if ctx.console.isTerminal { ctx.console.progress("") }
        let figures: [(String, String, [Double])] = [("commit", "local commit (the edit returns)", commit),
                                                     ("localYield", "commit to x's observer yield", local),
                                                     ("zLog", "edit to z's log", zLog), ("zModel", "edit to z's observed sheet", zModel)]
        if ctx.json {
            var fields: [(String, JSONValue)] = [("benchmark", .string("live")), ("edits", .int(Int64(edits))),
                                                 ("durability", .string(ctx.durability.rawValue))]
            for (key, _, values) in figures {
                fields.append(("\(key)MedianMs", .double(round2(percentile(values, 0.5)))))
                fields.append(("\(key)P99Ms", .double(round2(percentile(values, 0.99)))))
            }
            ctx.console.out(JSONValue.object(fields).text)
        } else {
            ctx.console.out("live benchmark: \(edits) single edits through the library, x (this process) -> y -> z (processes)")
            for (_, label, values) in figures {
                ctx.console.out("  \(pad(label, 34)) median \(BenchCommand.fmt2(percentile(values, 0.5))) ms, p99 \(BenchCommand.fmt2(percentile(values, 0.99))) ms")
            }
            ctx.console.out("  goals: edit to z p99 <= 5 ms; commit to local yield p99 <= 2 ms")
        }
    }

    static func percentile(_ values: [Double], _ p: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let s = values.sorted()
        return s[min(s.count - 1, Int(Double(s.count) * p))]
    }

    static func round2(_ v: Double) -> Double { (v * 100).rounded() / 100 }
}

/// The values an observation yields, each with the monotonic time it arrived, and a wait for one that
/// matches.
///
/// `@unchecked Sendable`: `values` and `failure` are guarded by the mutex; waiters sleep on the condition.
final class Recorder<T: Sendable>: @unchecked Sendable {
    private var mutex = pthread_mutex_t(), cond = pthread_cond_t()
    private var values: [(T, Double)] = []
    private var failure: String?

    init() {
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&cond, nil)
    }

    /// Iterates `observation` in a task, recording `project` of each value.
    func follow<V: Equatable & Sendable>(_ observation: ValueObservation<V>, _ project: @escaping @Sendable (V) -> T) -> Task<Void, Never> {
        Task.detached {
            do {
                for try await v in observation { self.record(project(v)) }
            } catch { self.fail("\(error)") }
        }
    }

    private func record(_ v: T) {
        let t = SystemClock.monotonicSeconds()
        pthread_mutex_lock(&mutex)
        values.append((v, t))
        pthread_cond_broadcast(&cond)
        pthread_mutex_unlock(&mutex)
    }

    private func fail(_ message: String) {
        pthread_mutex_lock(&mutex)
        failure = message
        pthread_cond_broadcast(&cond)
        pthread_mutex_unlock(&mutex)
    }

    /// Waits (at most 30 s) for the first recorded value that matches, consumes it and those before it, and
    /// returns when it arrived.
    func wait(_ match: (T) -> Bool) throws(CLIError) -> Double {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        let deadline = SystemClock.monotonicSeconds() + 30
        while true {
            if let i = values.firstIndex(where: { match($0.0) }) {
                let t = values[i].1
                values.removeFirst(i + 1)
                return t
            }
            if let failure { throw .failure("bench live: an observation ended: \(failure)") }
            guard SystemClock.monotonicSeconds() < deadline else { throw .failure("bench live: no matching value within 30 s") }
            var ts = timespec()
            clock_gettime(CLOCK_REALTIME, &ts)
            ts.tv_nsec += 100_000_000
            if ts.tv_nsec >= 1_000_000_000 { ts.tv_sec += 1; ts.tv_nsec -= 1_000_000_000 }
            pthread_cond_timedwait(&cond, &mutex, &ts)
        }
    }
}
