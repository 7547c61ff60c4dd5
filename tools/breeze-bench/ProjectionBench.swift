import BreezeCLI
import Breeze
import BreezeStore
@preconcurrency import Glibc

/// `breeze-bench projections`: rebuilds the facts projection from N events (readings of 200 sensors, their
/// registrations and user edits) and compares with a raw decoded scan of the same log in the same run; then
/// times one new reading reaching the read models it affects (projection catch-up plus the screens built).
enum ProjectionBench {
    static func run(_ a: Arguments, _ ctx: Context) throws(CLIError) {
        let count = try BenchCommand.positive(a.options["count"], "--count", default: 1_000_000)
        let dir = try BenchCommand.temporaryDirectory()
        defer { _ = system("rm -rf '\(dir)'") }
        var o = EventLog.Options()
        o.durability = ctx.durability
        do {
            let log = try EventLog.create(at: dir + "/p.db", options: o)
            defer { log.close() }
            var gen = ReadingGenerator()
            try log.append((0..<200).map { i in (StreamID.public, EventBody.sensorRegistered(SensorRegistration(
                sensor: String(100_000 + i), name: "Bench \(i)", source: "purpleair", kind: "purpleair",
                latitude: 42 + Double(i) / 1000, longitude: -73 - Double(i) / 1000, timeZone: "America/New_York"))) })
            var done = 200
            while done < count {
                let n = min(10_000, count - done)
                var items = (0..<n).map { _ in (StreamID.public, EventBody.reading(gen.next())) }
                items[0] = (.user("me"), .favouriteAdd(sensor: String(100_000 + done % 200)))
                try log.append(items)
                done += n
                if ctx.console.isTerminal { ctx.console.progress("writing \(done)/\(count) events") }
            }
            // Baseline: decode every event and its body, as any reader of the log must.
            var t0 = SystemClock.monotonicSeconds()
            var decoded = 0
            try log.forEach { entry in
                if (try? entry.event.body()) != nil { decoded += 1 }
                return true
            }
            let scanSeconds = SystemClock.monotonicSeconds() - t0
            t0 = SystemClock.monotonicSeconds()
            let applied = try log.rebuildProjection { n in
                if ctx.console.isTerminal { ctx.console.progress("rebuilding: \(n)/\(count) events") }
            }
            let rebuildSeconds = SystemClock.monotonicSeconds() - t0
            // One new reading, then the screens that show it (through the library, as the app computes them).
            var ro = Replica.Options()
            ro.durability = ctx.durability == .full ? .full : .normal
            let replica = try Replica(path: dir + "/p.db", options: ro)
            defer { replica.close() }
            let now = Int64(1_698_000_000 + (count / 200) * 120 + 3600)
            var p = ScreenParameters(user: "me", now: now)
            p.sensor = "purpleair:100000"
            p.at = (42, -73)
            var latencies: [Double] = []
            var perScreen: [String: [Double]] = [:]
            for i in 0..<20 {
                t0 = SystemClock.monotonicSeconds()
                try log.append(.reading(Reading(source: "purpleair", sensor: "100000", time: now - 60 + Int64(i),
                                                values: [Measurement("pm25_cf1_a", 10), Measurement("pm25_cf1_b", 11)])), to: .public)
                try replica.updateProjection()
                for screen in Screens.all {
                    let s0 = SystemClock.monotonicSeconds()
                    _ = try? build(screen, replica, p)
                    perScreen[screen.name, default: []].append((SystemClock.monotonicSeconds() - s0) * 1000)
                }
                latencies.append((SystemClock.monotonicSeconds() - t0) * 1000)
            }
            latencies.sort()
            let slowest = perScreen.map { ($0.key, $0.value.sorted()[$0.value.count / 2]) }.sorted { $0.1 > $1.1 }.prefix(3)
            if ctx.console.isTerminal { ctx.console.progress("") }
            let rebuildRate = Double(applied) / rebuildSeconds, scanRate = Double(decoded) / scanSeconds
            let c = ctx.console
            if ctx.json {
                c.out(JSONValue.object([("benchmark", .string("projections")), ("events", .int(Int64(applied))),
                    ("rebuildEventsPerSecond", .double(rebuildRate.rounded())), ("rawScanEventsPerSecond", .double(scanRate.rounded())),
                    ("ratio", .double((rebuildRate / scanRate * 1000).rounded() / 1000)),
                    ("newReadingMedianMs", .double((latencies[latencies.count / 2] * 100).rounded() / 100)),
                    ("screens", .int(Int64(Screens.all.count))), ("peakRSSMiB", .double(peakResidentMiB()))]).text)
            } else {
                c.out("projection benchmark: \(applied) events (readings of 200 sensors, registrations, user edits)")
                c.out("  rebuild of the facts projection   \(BenchCommand.fmt(rebuildRate)) events/s (\(BenchCommand.fmt2(rebuildSeconds)) s)")
                c.out("  raw decoded scan of the same log  \(BenchCommand.fmt(scanRate)) events/s")
                c.out("  ratio rebuild/scan                \(BenchCommand.fmt2(rebuildRate / scanRate))  (goal >= 0.5)")
                c.out("  one new reading to \(Screens.all.count) screens     median \(BenchCommand.fmt2(latencies[latencies.count / 2])) ms, max \(BenchCommand.fmt2(latencies.last!)) ms")
                c.out("  slowest screens (median ms)       " + slowest.map { "\($0.0) \(BenchCommand.fmt2($0.1))" }.joined(separator: ", "))
                c.out("  peak resident memory              \(BenchCommand.fmt2(peakResidentMiB())) MiB")
            }
        } catch let e as CLIError { throw e } catch { throw .failure("bench projections: \(error)") }
    }

    /// A screen's model as JSON, as the app would fetch and encode it.
    static func build<S: Screen>(_ screen: S.Type, _ replica: Replica, _ p: ScreenParameters) throws -> String {
        try Screens.json(try replica.screen(screen, p))
    }
}
