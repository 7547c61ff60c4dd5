import Breeze

/// `breeze horizon [set DAYS|none]`: how many days of readings this device keeps (`Protocol/sync.md` 6.8),
/// through `Replica`. Older readings are dropped at once and then as they age; sync never sends them back.
enum HorizonCommand {
    static let usage = "usage: breeze horizon [set DAYS|none] [--db PATH] [--json]"

    static func run(_ args: [String], _ ctx: Context) throws(CLIError) {
        let a = try Arguments(args, usage: usage)
        switch a.positionals.first {
        case nil:
            let days: Int? = try ctx.withReplica { r in try r.horizonDays() }
            if ctx.json {
                ctx.console.out(JSONValue.object([("days", days.map { .int(Int64($0)) } ?? .null)]).text)
            } else {
                ctx.console.out(describe(days))
            }
        case "set":
            let p = try a.expect(["set", "DAYS|none"])
            let days: Int?
            if p[1] == "none" {
                days = nil
            } else {
                guard let d = Int(p[1]), (1...36_500).contains(d) else {
                    throw .usage("horizon '\(p[1])': expected a number of days from 1 to 36500, or none", usage)
                }
                days = d
            }
            let dropped: Int = try ctx.withReplica { r in try r.setHorizon(days: days) }
            if ctx.json {
                ctx.console.out(JSONValue.object([("days", days.map { .int(Int64($0)) } ?? .null), ("dropped", .int(Int64(dropped)))]).text)
            } else {
                ctx.console.out(describe(days) + (dropped > 0 ? "; dropped \(dropped) reading events older than that" : ""))
            }
        case let other?:
            throw .usage("expected set, not '\(other)'", usage)
        }
    }

    /// One line for `horizon` and `breeze status`.
    static func describe(_ days: Int?) -> String {
        guard let days else { return "horizon none: every reading is kept" }
        return "horizon \(days) days: readings older than that (and the 12 hours NowCast needs before them) are dropped"
    }
}
