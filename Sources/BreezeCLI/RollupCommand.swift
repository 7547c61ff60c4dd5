import Breeze
import BreezeCore
import BreezeStore

/// `breeze rollup --raw-days N`: replaces this replica's reading events older than N days by `reading.rollup`
/// events now (`EventLog.rollUpReadings`): each sensor's hours as the screens read them. A cluster node does it
/// by itself under the cluster's retention policy (`breeze authority retention`); this is for an operator who
/// wants it done at once, and safe while that node runs.
enum RollupCommand {
    static let usage = "usage: breeze rollup --raw-days N [--db PATH] [--json]"

    static func run(_ args: [String], _ ctx: Context) throws(CLIError) {
        let a = try Arguments(args, valued: ["raw-days"], usage: usage)
        _ = try a.expect([])
        guard let v = a.options["raw-days"] else { throw .usage("--raw-days N is required (days of raw readings to keep)", usage) }
        guard let days = Int(v), (1...Int(RetentionPolicy.maxRawDays)).contains(days) else {
            throw .usage("--raw-days '\(v)': expected a number of days from 1 to \(RetentionPolicy.maxRawDays)", usage)
        }
        let now = Int64(SystemClock.nowMillis(offsetMillis: ctx.clockOffsetMillis) / 1000)
        let progress = { (done: Int, total: Int) in
            if ctx.console.isTerminal { ctx.console.progress("rolling up: \(done) of \(total) streams") }
        }
        let r: RollupReport = try ctx.withLog { log in try log.rollUpReadings(rawDays: days, nowSeconds: now, progress: progress) }
        if ctx.console.isTerminal { ctx.console.progress("") }
        if ctx.json {
            ctx.console.out(JSONValue.object([
                ("streams", .int(Int64(r.streams))), ("eventsRetired", .int(Int64(r.eventsRetired))),
                ("eventsWritten", .int(Int64(r.eventsWritten))), ("hours", .int(Int64(r.hours))),
            ]).text)
        } else {
            let cutoff = ISOTime.format(millis: EventLog.rollupCutoffHour(rawDays: days, nowSeconds: now) * 3_600_000)
            ctx.console.out("rollup: \(r.eventsRetired) reading events of \(r.streams) streams before \(cutoff) replaced by \(r.eventsWritten) reading.rollup events (\(r.hours) hours)")
        }
    }
}
