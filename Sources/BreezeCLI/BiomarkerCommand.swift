import Breeze
import BreezeStore

/// `breeze biomarker target TYPE --max N [--min N] [--icon NAME]` sets a daily target (the gauge's range);
/// `breeze biomarker log TYPE VALUE UNIT [--time ISO8601]` logs a reading by hand. Both through `Replica`.
enum BiomarkerCommand {
    static let usage = """
        usage: breeze biomarker target TYPE --max N [--min N] [--icon NAME] [--user ID] [--db PATH] [--json]
                 the daily target of TYPE (e.g. "Blood Glucose"): readings wanted per day (--max), the gauge's
                 lower end (--min, default 0), its SF Symbol (--icon, default drop)
               breeze biomarker log TYPE VALUE UNIT [--time ISO8601] [--user ID] [--db PATH] [--json]
                 a reading taken by hand (e.g. biomarker log "Blood Glucose" 104 mg/dL), at --time or now
        """

    static func run(_ args: [String], _ ctx: Context) throws(CLIError) {
        let a = try Arguments(args, valued: ["max", "min", "icon", "time"], usage: usage)
        guard let verb = a.positionals.first else { throw .usage("missing target or log", usage) }
        switch verb {
        case "target":
            _ = try a.expect(["target", "TYPE"])
            guard a.options["time"] == nil else { throw .usage("--time goes with 'biomarker log'", usage) }
            guard let maxText = a.options["max"] else { throw .usage("missing --max N (readings wanted per day)", usage) }
            let type = a.positionals[1]
            let max = try number(maxText, "--max"), min = try a.options["min"].map { v throws(CLIError) in try number(v, "--min") } ?? 0
            let icon = a.options["icon"] ?? "drop"
            let e = try ctx.withReplica { try $0.setBiomarkerTarget(BiomarkerTarget(readingType: type, minReading: min, maxReading: max, icon: icon)) }
            SetCommand.report(e, ctx, text: "target for \(ctx.user): \(type) \(fmt(min))-\(fmt(max)) a day (\(icon))")
        case "log":
            _ = try a.expect(["log", "TYPE", "VALUE", "UNIT"])
            guard ["max", "min", "icon"].allSatisfy({ a.options[$0] == nil }) else {
                throw .usage("--max, --min and --icon go with 'biomarker target'", usage)
            }
            let type = a.positionals[1], value = try number(a.positionals[2], "VALUE"), unit = a.positionals[3]
            var time = Int64(SystemClock.nowMillis() / 1000)
            if let t = a.options["time"] {
                guard t.contains("T"), let v = DateParsing.isoDateTime(t) else {
                    throw .failure("--time '\(t)': expected an ISO 8601 date-time, e.g. 2026-12-02T08:30:00Z")
                }
                time = v
            }
            let e = try ctx.withReplica {
                try $0.logBiomarkerReading(BiomarkerReading(readingType: type, time: time, value: value, unit: unit))
            }
            SetCommand.report(e, ctx, text: "\(type) \(fmt(value)) \(unit) logged for \(ctx.user) at \(LocalTime.iso(time))")
        default:
            throw .usage("expected 'target' or 'log', not '\(verb)'", usage)
        }
    }

    /// A finite decimal number, or a clear error naming `what`.
    static func number(_ s: String, _ what: String) throws(CLIError) -> Double {
        guard let v = Double(s), v.isFinite else { throw .failure("\(what) '\(s)': expected a number") }
        return v
    }

    static func fmt(_ v: Double) -> String { v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v) }
}
