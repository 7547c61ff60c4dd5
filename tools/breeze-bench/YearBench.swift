import Breeze
import BreezeCLI
import BreezeCore
import BreezeStore
import Foundation
@preconcurrency import Glibc

/// `breeze-bench year` (issue 28): a server fed a city live, in time order, one batch per polling step (every
/// sensor's reading of that step, as `breeze feed` stores one PurpleAir answer), for D simulated days, under a
/// retention policy of `--raw-days` days (default 30, the policy's default); beside it, in the same run, the same
/// rows imported in bulk (a day's rows at a time, as `breeze import` of a day's file) for the raw window.
///
/// The live server does what a node does: it compacts its small events (`EventLog.compactReadings`, default
/// policy: a stream's day of one-row events into one `reading.compact`), here once a simulated hour, and rolls up
/// what leaves the raw window (`EventLog.rollUpReadings`), here once a simulated day. Prints the bytes per reading
/// of both within the raw window (the compaction goal: live within 1.3x of bulk), the bytes per sensor-year, and
/// the growth of a 2,000-sensor city's server over a year after its first `--raw-days` days (the retention goal:
/// <= 5 GB), extrapolated linearly from the days simulated after the raw window.
enum YearBench {
    static func run(_ a: Arguments, _ ctx: Context) throws(CLIError) {
        let sensors = try BenchCommand.positive(a.options["sensors"], "--sensors", default: 100)
        let days = try BenchCommand.positive(a.options["days"], "--days", default: 45)
        let step = try BenchCommand.positive(a.options["step"], "--step", default: 120)
        let rawDays = try BenchCommand.positive(a.options["raw-days"], "--raw-days", default: Int(RetentionPolicy.defaultRawDays))
        guard days > rawDays + 1 else { throw .failure("bench year: --days \(days) must exceed --raw-days \(rawDays) + 1 (the growth after them is measured)") }
        guard step >= 10, step <= 3600, 3600 % step == 0 else { throw .failure("bench year: --step \(step): seconds dividing an hour, 10 to 3600") }
        let dir: String
        if let d = a.options["dir"] { dir = d } else { dir = try BenchCommand.temporaryDirectory() }
        defer { if a.options["dir"] == nil { _ = system("rm -rf '\(dir)'") } }
        let progress = { (s: String) in if ctx.console.isTerminal { ctx.console.progress(s) } }
        let result: Result
        do { result = try simulate(dir: dir, sensors: sensors, days: days, step: step, rawDays: rawDays, progress: progress) } catch {
            throw .failure("bench year: \(error)")
        }
        if ctx.console.isTerminal { ctx.console.progress("") }
        let windowReadings = Double(result.readingsAtRawDays)
        let liveBPR = Double(result.liveBytesAtRawDays) / windowReadings, bulkBPR = Double(result.bulkBytesAtRawDays) / windowReadings
        // The growth after the raw window, per sensor and day, then for 2,000 sensors over 365 days.
        let growthPerSensorDay = Double(result.liveBytes - result.liveBytesAtRawDays) / Double(sensors) / Double(days - rawDays)
        let cityYearGB = growthPerSensorDay * 2000 * 365 / 1e9
        // A sensor-year: its raw window, and a year of rollups.
        let sensorYearMB = (Double(result.liveBytesAtRawDays) / Double(sensors) + growthPerSensorDay * 365) / 1e6
        if ctx.json {
            ctx.console.out(JSONValue.object([
                ("benchmark", .string("year")), ("sensors", .int(Int64(sensors))), ("days", .int(Int64(days))), ("stepSeconds", .int(Int64(step))),
                ("rawDays", .int(Int64(rawDays))), ("readings", .int(Int64(result.readings))),
                ("liveBytesPerReading", .double(LiveBench.round2(liveBPR))), ("bulkBytesPerReading", .double(LiveBench.round2(bulkBPR))),
                ("liveOverBulk", .double(LiveBench.round2(liveBPR / bulkBPR))), ("sensorYearMB", .double(LiveBench.round2(sensorYearMB))),
                ("growthBytesPerSensorDay", .double(LiveBench.round2(growthPerSensorDay))),
                ("cityYearGrowthGB", .double(LiveBench.round2(cityYearGB))), ("liveSecondsPerDay", .double(LiveBench.round2(result.liveSeconds / Double(days)))),
                ("compactedEvents", .int(Int64(result.compacted))), ("compactionEvents", .int(Int64(result.compactions))),
                ("compactSecondsPerDay", .double(LiveBench.round2(result.compactSeconds / Double(days)))),
                ("rolledUpEvents", .int(Int64(result.rolledUp))), ("rollupEvents", .int(Int64(result.rollups))),
                ("rollupSecondsPerDay", .double(LiveBench.round2(result.rollupSeconds / Double(days - rawDays)))),
            ]).text)
            return
        }
        ctx.console.out("year benchmark: a \(sensors)-sensor city fed live for \(days) simulated days (a batch of \(sensors) readings every \(step) s, "
                        + "\(result.readings) readings of 9 values), a retention policy of \(rawDays) days, durability normal")
        ctx.console.out("  within the raw window (day \(rawDays)): live \(BenchCommand.fmt2(liveBPR)) bytes per reading (database pages in use); bulk, "
                        + "the same rows a day at a time: \(BenchCommand.fmt2(bulkBPR)); live / bulk \(BenchCommand.fmt2(liveBPR / bulkBPR)) (goal <= 1.3)")
        ctx.console.out("  after it: \(BenchCommand.fmt2(growthPerSensorDay)) bytes per sensor-day (rollups and the projection's hours); "
                        + "a sensor-year \(BenchCommand.fmt2(sensorYearMB)) MB (raw window and a year of rollups); a 2,000-sensor city's server grows "
                        + "\(BenchCommand.fmt2(cityYearGB)) GB a year after its first \(rawDays) days (goal <= 5; extrapolated from days \(rawDays)-\(days))")
        ctx.console.out("  compaction (default policy, every simulated hour): \(result.compacted) small events merged into \(result.compactions) "
                        + "reading.compact events; \(BenchCommand.fmt2(result.compactSeconds / Double(days))) s of this machine per simulated day")
        ctx.console.out("  rollup (every simulated day): \(result.rolledUp) events replaced by \(result.rollups) reading.rollup events; "
                        + "\(BenchCommand.fmt2(result.rollupSeconds / Double(days - rawDays))) s of this machine per simulated day")
        ctx.console.out("  feeding: \(BenchCommand.fmt2(result.liveSeconds / Double(days))) s of this machine per simulated day")
    }

    struct Result {
        var readings = 0, readingsAtRawDays = 0, liveBytes = 0, liveBytesAtRawDays = 0, bulkBytesAtRawDays = 0, liveSeconds = 0.0
        var compacted = 0, compactions = 0, compactSeconds = 0.0
        var rolledUp = 0, rollups = 0, rollupSeconds = 0.0
    }

    static func simulate(dir: String, sensors n: Int, days: Int, step: Int, rawDays: Int, progress: (String) -> Void) throws -> Result {
        var o = EventLog.Options()
        o.durability = .normal
        let bulk = try EventLog.create(at: dir + "/bulk.db", options: o)
        // The live server's clock is the simulation's: each step's batch arrives a step after its readings'
        // time, as a feed's poll does, so the stamps (and the bytes they take) are a real server's.
        let clock = SimulatedClock()
        o.wallClock = { clock.millis }
        let live = try EventLog.create(at: dir + "/live.db", options: o)
        defer { live.close() }
        defer { bulk.close() }
        let start: Int64 = 1_735_689_600    // 2025-01-01T00:00:00Z
        clock.millis = UInt64(start) * 1000
        let registrations: [(StreamID, EventBody)] = (0..<n).map { i in
            let (lat, lon) = ScreensBench.sensorPoint(i, of: n)
            return (.public, .sensorRegistered(SensorRegistration(sensor: String(200_000 + i), name: "Seattle \(i)", source: "purpleair",
                                                                   kind: "purpleair", latitude: lat, longitude: lon, timeZone: "America/Los_Angeles")))
        }
        _ = try live.appendFacts(registrations)
        _ = try bulk.appendFacts(registrations)
        var g = ReadingGenerator()
        var r = Result()
        var day: [(StreamID, EventBody)] = []
        for d in 0..<days {
            day.removeAll(keepingCapacity: true)
            for s in 0..<(86_400 / step) {
                let t = start + Int64(d) * 86_400 + Int64(s * step)
                var batch: [(StreamID, EventBody)] = []
                batch.reserveCapacity(n)
                for i in 0..<n {
                    let values = ScreensBench.cityValues(sensor: i, at: t - start, &g)
                    batch.append((.public, .reading(Reading(source: "purpleair", sensor: String(200_000 + i), time: t + Int64(i % step), values: values))))
                }
                clock.millis = UInt64(t + Int64(step)) * 1000
                let t0 = SystemClock.monotonicSeconds()
                _ = try live.appendFacts(batch)
                r.liveSeconds += SystemClock.monotonicSeconds() - t0
                r.readings += batch.count
                if d < rawDays { day += batch }
                if (s + 1) % (3600 / step) == 0 {
                    // What a node does a few streams at a time (`NodeConfig.compaction`), here once an hour.
                    let t1 = SystemClock.monotonicSeconds()
                    let c = try live.compactReadings()
                    r.compactSeconds += SystemClock.monotonicSeconds() - t1
                    r.compacted += c.eventsRetired
                    r.compactions += c.eventsWritten
                }
            }
            if d < rawDays { _ = try bulk.appendFacts(day) }
            // And what it does under the retention policy, here once a day.
            let t2 = SystemClock.monotonicSeconds()
            let u = try live.rollUpReadings(rawDays: rawDays, nowSeconds: Int64(clock.millis / 1000))
            if d >= rawDays { r.rollupSeconds += SystemClock.monotonicSeconds() - t2 }
            r.rolledUp += u.eventsRetired
            r.rollups += u.eventsWritten
            if d + 1 == rawDays {
                try live.catchUpProjection()
                try bulk.catchUpProjection()
                r.liveBytesAtRawDays = try live.bytesInUse()
                r.bulkBytesAtRawDays = try bulk.bytesInUse()
                r.readingsAtRawDays = r.readings
            }
            progress("year: day \(d + 1) of \(days), \(r.readings) readings")
        }
        try live.catchUpProjection()
        r.liveBytes = try live.bytesInUse()
        return r
    }
}

/// The live server's wall clock in the year bench: set by the simulation's one thread before each append, read
/// by the log on that same thread.
///
/// `@unchecked Sendable`: `EventLog.Options.wallClock` must be `@Sendable`, but only the bench's thread, which
/// also sets it, ever calls it.
final class SimulatedClock: @unchecked Sendable {
    var millis: UInt64 = 0
}
