import Breeze
import BreezeCLI
import BreezeCore
import BreezeStore
import Foundation
@preconcurrency import Glibc

/// `breeze-bench year` (issue 28): a server fed a city live, in time order, one batch per polling step (every
/// sensor's reading of that step, as `breeze feed` stores one PurpleAir answer), for D simulated days; beside it,
/// in the same run, the same rows imported in bulk (a day's rows at a time, as `breeze import` of a day's file).
///
/// Prints the bytes per reading of both (the compaction goal: live within 1.3x of bulk), the bytes per
/// sensor-year, and the growth of a 2,000-sensor city's server over a year after its first `--raw-days` days
/// (the retention goal: <= 5 GB), extrapolated linearly from the days simulated. A server keeps every raw reading
/// today (no retention yet), so the growth is every reading's bytes.
enum YearBench {
    static func run(_ a: Arguments, _ ctx: Context) throws(CLIError) {
        let sensors = try BenchCommand.positive(a.options["sensors"], "--sensors", default: 100)
        let days = try BenchCommand.positive(a.options["days"], "--days", default: 60)
        let step = try BenchCommand.positive(a.options["step"], "--step", default: 120)
        let rawDays = try BenchCommand.positive(a.options["raw-days"], "--raw-days", default: 30)
        guard days > rawDays else { throw .failure("bench year: --days \(days) must exceed --raw-days \(rawDays) (the growth after them is measured)") }
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
        let perStep = Double(sensors)
        let readings = Double(result.readings)
        let liveBPR = Double(result.liveBytes) / readings, bulkBPR = Double(result.bulkBytes) / readings
        // The growth after the raw window, per sensor and day, then for 2,000 sensors over 365 days.
        let growthPerSensorDay = Double(result.liveBytes - result.liveBytesAtRawDays) / Double(sensors) / Double(days - rawDays)
        let cityYearGB = growthPerSensorDay * 2000 * 365 / 1e9
        let sensorYearMB = Double(result.liveBytes) / Double(sensors) * 365 / Double(days) / 1e6
        if ctx.json {
            ctx.console.out(JSONValue.object([
                ("benchmark", .string("year")), ("sensors", .int(Int64(sensors))), ("days", .int(Int64(days))), ("stepSeconds", .int(Int64(step))),
                ("rawDays", .int(Int64(rawDays))), ("readings", .int(Int64(result.readings))),
                ("liveBytesPerReading", .double(LiveBench.round2(liveBPR))), ("bulkBytesPerReading", .double(LiveBench.round2(bulkBPR))),
                ("liveOverBulk", .double(LiveBench.round2(liveBPR / bulkBPR))), ("sensorYearMB", .double(LiveBench.round2(sensorYearMB))),
                ("cityYearGrowthGB", .double(LiveBench.round2(cityYearGB))), ("liveSecondsPerDay", .double(LiveBench.round2(result.liveSeconds / Double(days)))),
            ]).text)
            return
        }
        ctx.console.out("year benchmark: a \(sensors)-sensor city fed live for \(days) simulated days (a batch of \(Int(perStep)) readings every \(step) s, "
                        + "\(result.readings) readings of 9 values), durability normal")
        ctx.console.out("  live: \(BenchCommand.fmt2(liveBPR)) bytes per reading (database pages in use); bulk, the same rows a day at a time: "
                        + "\(BenchCommand.fmt2(bulkBPR)); live / bulk \(BenchCommand.fmt2(liveBPR / bulkBPR)) (goal <= 1.3)")
        ctx.console.out("  per sensor-year: \(BenchCommand.fmt2(sensorYearMB)) MB; a 2,000-sensor city's server grows "
                        + "\(BenchCommand.fmt2(cityYearGB)) GB a year after its first \(rawDays) days (goal <= 5; extrapolated from days \(rawDays)-\(days); "
                        + "no retention yet: every raw reading is kept)")
        ctx.console.out("  feeding: \(BenchCommand.fmt2(result.liveSeconds / Double(days))) s of this machine per simulated day")
    }

    struct Result { var readings = 0; var liveBytes = 0; var liveBytesAtRawDays = 0; var bulkBytes = 0; var liveSeconds = 0.0 }

    static func simulate(dir: String, sensors n: Int, days: Int, step: Int, rawDays: Int, progress: (String) -> Void) throws -> Result {
        var o = EventLog.Options()
        o.durability = .normal
        let live = try EventLog.create(at: dir + "/live.db", options: o)
        defer { live.close() }
        let bulk = try EventLog.create(at: dir + "/bulk.db", options: o)
        defer { bulk.close() }
        let registrations: [(StreamID, EventBody)] = (0..<n).map { i in
            let (lat, lon) = ScreensBench.sensorPoint(i, of: n)
            return (.public, .sensorRegistered(SensorRegistration(sensor: String(200_000 + i), name: "Seattle \(i)", source: "purpleair",
                                                                   kind: "purpleair", latitude: lat, longitude: lon, timeZone: "America/Los_Angeles")))
        }
        _ = try live.appendFacts(registrations)
        _ = try bulk.appendFacts(registrations)
        var g = ReadingGenerator()
        var r = Result()
        let start: Int64 = 1_735_689_600    // 2025-01-01T00:00:00Z
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
                let t0 = SystemClock.monotonicSeconds()
                _ = try live.appendFacts(batch)
                r.liveSeconds += SystemClock.monotonicSeconds() - t0
                r.readings += batch.count
                day += batch
            }
            _ = try bulk.appendFacts(day)
            if d + 1 == rawDays { r.liveBytesAtRawDays = try live.bytesInUse() }
            progress("year: day \(d + 1) of \(days), \(r.readings) readings")
        }
        try live.catchUpProjection()
        try bulk.catchUpProjection()
        r.liveBytes = try live.bytesInUse()
        r.bulkBytes = try bulk.bytesInUse()
        return r
    }
}
