import Breeze
import BreezeStore

/// `breeze screen NAME`: prints a screen's read model, computed from the facts projection (brought up to
/// date from its checkpoint first) and the user's state.
enum ScreenCommand {
    static var usage: String {
        """
        usage: breeze screen NAME [--user ID] [--at LAT,LON] [--sensor [SOURCE:]ID] [--bbox S,W,N,E] [--date YYYY-MM-DD]
                             [--now ISO8601] [--metric aqi|temperature|humidity|pm25] [--tz ZONE] [--db PATH] [--json]
        --tz ZONE: the user's IANA time zone (e.g. America/New_York): today on the pollen, climate and biomarker
                   screens (default UTC); history uses the sensor's own zone
        screens:
        """ + Screens.all.map { "\n  \(pad($0.name, 12))\($0.summary)" }.joined()
    }

    static func run(_ args: [String], _ ctx: Context) throws(CLIError) {
        let a = try Arguments(args, valued: options, usage: usage)
        guard let name = a.positionals.first else { throw .usage("missing NAME", usage) }
        guard let screen = Screens.named(name) else {
            throw .usage("unknown screen '\(name)'; screens: \(Screens.all.map { $0.name }.joined(separator: ", "))", usage)
        }
        _ = try a.expect(["NAME"])
        let p = try parameters(a, ctx)
        let lines: [String] = try ctx.withReplica { r in
            try r.updateProjection { n in if ctx.console.isTerminal { ctx.console.progress("projecting: \(n) events") } }
            if ctx.console.isTerminal { ctx.console.progress("") }
            return try output(screen, r, p, json: ctx.json)
        }
        for l in lines { ctx.console.out(l) }
    }

    /// The screen options (`--at --sensor --bbox --date --now --metric --tz`; `--user` and `--json` are
    /// global), shared with `breeze replay`.
    static let options: Set<String> = ["at", "sensor", "bbox", "date", "now", "metric", "tz"]
    /// Their usage text.
    static let optionsUsage = "[--user ID] [--at LAT,LON] [--sensor [SOURCE:]ID] [--bbox S,W,N,E] [--date YYYY-MM-DD] [--now ISO8601] [--metric aqi|temperature|humidity|pm25] [--tz ZONE]"

    /// The model the replica computes, as JSON or as text.
    static func output<S: Screen>(_ screen: S.Type, _ replica: Replica, _ p: ScreenParameters, json: Bool) throws -> [String] {
        try output(screen, p, json: json) { s, p in try replica.screen(s, p) }
    }

    /// The model built from `world` (a replay's in-memory world), as JSON or as text.
    static func output<S: Screen>(_ screen: S.Type, _ world: WorldReader, _ p: ScreenParameters, json: Bool) throws -> [String] {
        try output(screen, p, json: json) { s, p in try s.build(world, p) }
    }

    /// The model `build` makes, as JSON or as text.
    static func output<S: Screen>(_ screen: S.Type, _ p: ScreenParameters, json: Bool,
                                  _ build: (S.Type, ScreenParameters) throws -> S.Model) throws -> [String] {
        let model: S.Model
        do { model = try build(screen, p) } catch let e as ScreenError { throw CLIError.failure("screen \(S.name): \(e)") }
        return json ? [try Screens.json(model)] : S.render(model)
    }

    /// The screen parameters from the screen options; `now` is `--now`, else `defaultNow`, else the wall clock.
    static func parameters(_ a: Arguments, _ ctx: Context, defaultNow: Int64? = nil) throws(CLIError) -> ScreenParameters {
        var now = defaultNow ?? Int64(SystemClock.nowMillis() / 1000)
        if let n = a.options["now"] {
            guard n.contains("T"), let t = DateParsing.isoDateTime(n) else {
                throw .failure("--now '\(n)': expected an ISO 8601 date-time with years 1-9999, e.g. 2023-10-25T14:00:00Z")
            }
            now = t
        }
        var p = ScreenParameters(user: try ctx.userStream().userID ?? "me", now: now)
        if let at = a.options["at"] {
            guard let v = numbers(at, 2), abs(v[0]) <= 90, abs(v[1]) <= 180 else {
                throw .failure("--at '\(at)': expected LAT,LON in degrees, e.g. 42.73,-73.69")
            }
            p.at = (v[0], v[1])
        }
        if let b = a.options["bbox"] {
            guard let v = numbers(b, 4), abs(v[0]) <= 90, abs(v[2]) <= 90, v[0] <= v[2], abs(v[1]) <= 180, abs(v[3]) <= 180 else {
                throw .failure("--bbox '\(b)': expected SOUTH,WEST,NORTH,EAST in degrees (latitudes -90..90, longitudes -180..180)")
            }
            p.bbox = (v[0], v[1], v[2], v[3])
        }
        p.sensor = a.options["sensor"]
        if let z = a.options["tz"] {
            // The user's zone, as the phone's TimeZone.current; checked here so the error names the option.
            guard LocalTime(timeZone: z).isKnown else {
                throw .failure("--tz '\(z)': not a time zone in the time-zone database (e.g. America/New_York, Europe/Berlin, UTC)")
            }
            p.timeZone = z
        }
        if let d = a.options["date"] {
            guard d.count == 10, DateParsing.isoDateTime(d + "T00:00:00Z") != nil else { throw .failure("--date '\(d)': expected YYYY-MM-DD") }
            p.date = d
        }
        if let m = a.options["metric"] {
            guard ["aqi", "temperature", "humidity", "pm25"].contains(m) else {
                throw .failure("--metric '\(m)': expected aqi, temperature, humidity or pm25")
            }
            p.metric = m
        }
        return p
    }

    /// Exactly `count` finite numbers separated by commas, or nil.
    static func numbers(_ text: String, _ count: Int) -> [Double]? {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { Double($0.trimmingCharacters()) }
        guard parts.count == count, parts.allSatisfy({ $0 != nil && $0!.isFinite }) else { return nil }
        return parts.map { $0! }
    }
}

extension Substring {
    func trimmingCharacters() -> String { String(self).trimmingSpaces }
}
