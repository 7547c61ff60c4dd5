import Breeze
import BreezeStore

/// `breeze compact`: merges this replica's small reading events (what a live feed leaves, one row each) into
/// `reading.compact` events now, for the streams due (`EventLog.compactReadings`). A cluster node does the same
/// by itself a few streams a second (`NodeConfig.compaction`); this is for an operator who wants it done at
/// once, and safe while that node runs (it notices the new events and sends them on).
enum CompactCommand {
    static let usage = "usage: breeze compact [--target-events N] [--max-age-hours H] [--db PATH] [--json]"

    static func run(_ args: [String], _ ctx: Context) throws(CLIError) {
        let a = try Arguments(args, valued: ["target-events", "max-age-hours"], usage: usage)
        _ = try a.expect([])
        var policy = CompactionPolicy.default
        if let v = a.options["target-events"] {
            guard let n = Int(v), (2...1_000_000).contains(n) else {
                throw .usage("--target-events '\(v)': expected a number of events from 2 to 1000000", usage)
            }
            policy.targetEvents = n
        }
        if let v = a.options["max-age-hours"] {
            guard let h = Int(v), (0...87_600).contains(h) else {
                throw .usage("--max-age-hours '\(v)': expected a number of hours from 0 to 87600", usage)
            }
            policy.maxAgeMillis = UInt64(h) * 3_600_000
        }
        let progress = { (done: Int, total: Int) in
            if ctx.console.isTerminal { ctx.console.progress("compacting: \(done) of \(total) streams") }
        }
        let r: CompactionReport = try ctx.withLog { log in try log.compactReadings(policy: policy, progress: progress) }
        if ctx.console.isTerminal { ctx.console.progress("") }
        if ctx.json {
            ctx.console.out(JSONValue.object([
                ("streams", .int(Int64(r.streams))), ("eventsRetired", .int(Int64(r.eventsRetired))),
                ("eventsWritten", .int(Int64(r.eventsWritten))), ("rows", .int(Int64(r.rows))),
            ]).text)
        } else if r.streams == 0 {
            ctx.console.out("compact: no stream due (fewer than \(policy.targetEvents) small events of this replica since the last compaction, none older than \(policy.maxAgeMillis / 3_600_000) h)")
        } else {
            ctx.console.out("compact: \(r.eventsRetired) small reading events of \(r.streams) streams merged into \(r.eventsWritten) reading.compact events (\(r.rows) rows)")
        }
    }
}
