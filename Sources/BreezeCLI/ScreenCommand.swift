import BreezeCore
import BreezeProjections
import BreezeStore

/// `breeze screen NAME`: prints a screen's read model, computed from the facts projection (brought up to
/// date from its checkpoint first) and the user's state.
enum ScreenCommand {
    static var usage: String {
        """
        usage: breeze screen NAME [--user ID] [--at LAT,LON] [--sensor [SOURCE:]ID] [--bbox S,W,N,E] [--date YYYY-MM-DD]
                             [--now ISO8601] [--metric aqi|temperature|humidity|pm25] [--db PATH] [--json]
        screens:
        """ + Screens.all.map { "\n  \(pad($0.name, 12))\($0.summary)" }.joined()
    }

    static func run(_ args: [String], _ ctx: Context) throws(CLIError) {
        let a = try Arguments(args, valued: ["at", "sensor", "bbox", "date", "now", "metric"], usage: usage)
        guard let name = a.positionals.first else { throw .usage("missing NAME", usage) }
        guard let screen = Screens.named(name) else {
            throw .usage("unknown screen '\(name)'; screens: \(Screens.all.map { $0.name }.joined(separator: ", "))", usage)
        }
        _ = try a.expect(["NAME"])
        let p = try parameters(a, ctx)
        let lines: [String] = try ctx.withLog { log in
            try log.catchUpProjection { n in if ctx.console.isTerminal { ctx.console.progress("projecting: \(n) events") } }
            if ctx.console.isTerminal { ctx.console.progress("") }
            return try output(screen, LogWorld(log: log), p, json: ctx.json)
        }
        for l in lines { ctx.console.out(l) }
    }

    static func output<S: Screen>(_ screen: S.Type, _ world: WorldReader, _ p: ScreenParameters, json: Bool) throws -> [String] {
        let model: S.Model
        do { model = try S.build(world, p) } catch let e as ScreenError { throw CLIError.failure("screen \(S.name): \(e)") }
        return json ? [try Screens.json(model)] : S.render(model)
    }

    static func parameters(_ a: Arguments, _ ctx: Context) throws(CLIError) -> ScreenParameters {
        var now = SystemClock.nowMillis() / 1000
        if let n = a.options["now"] {
            guard let t = parseISO(n) else { throw .failure("--now '\(n)': expected ISO 8601, e.g. 2023-10-25T14:00:00Z") }
            now = UInt64(max(0, t))
        }
        var p = ScreenParameters(user: try ctx.userStream().userID ?? "me", now: Int64(now))
        if let at = a.options["at"] {
            let v = at.split(separator: ",").compactMap { Double($0) }
            guard v.count == 2, abs(v[0]) <= 90, abs(v[1]) <= 180 else { throw .failure("--at '\(at)': expected LAT,LON") }
            p.at = (v[0], v[1])
        }
        if let b = a.options["bbox"] {
            let v = b.split(separator: ",").compactMap { Double($0) }
            guard v.count == 4, v[0] <= v[2] else { throw .failure("--bbox '\(b)': expected SOUTH,WEST,NORTH,EAST") }
            p.bbox = (v[0], v[1], v[2], v[3])
        }
        p.sensor = a.options["sensor"]
        if let d = a.options["date"] {
            guard parseISO(d + "T00:00:00Z") != nil else { throw .failure("--date '\(d)': expected YYYY-MM-DD") }
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

    /// ISO 8601 date-time to Unix seconds (UTC unless an offset is given).
    static func parseISO(_ s: String) -> Int64? {
        let parts = s.split(separator: "T", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        let date = parts[0].split(separator: "-").compactMap { Int($0) }
        guard date.count == 3 else { return nil }
        var time = String(parts[1]), offset = 0
        if time.hasSuffix("Z") { time.removeLast() } else if let i = time.lastIndex(where: { $0 == "+" || $0 == "-" }) {
            let o = time[time.index(after: i)...].split(separator: ":").compactMap { Int($0) }
            guard o.count == 2 else { return nil }
            offset = (o[0] * 3600 + o[1] * 60) * (time[i] == "-" ? -1 : 1)
            time = String(time[..<i])
        }
        let t = time.split(separator: ":").compactMap { Double($0) }
        guard t.count >= 2, date[1] >= 1, date[1] <= 12, date[2] >= 1, date[2] <= 31 else { return nil }
        let days = civilDays(date[0], date[1], date[2])
        return days * 86400 + Int64(t[0]) * 3600 + Int64(t[1]) * 60 + Int64(t.count > 2 ? t[2] : 0) - Int64(offset)
    }

    static func civilDays(_ year: Int, _ month: Int, _ day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let m = Int64(month)
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        return era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468
    }
}

/// `WorldReader` over the SQLite projection of a log.
struct LogWorld: WorldReader {
    let log: EventLog
    func sensors() throws -> [SensorRegistration] { try log.projectedSensors() }
    func readings(source: String, sensor: String, from: Int64, to: Int64) throws -> [(time: Int64, values: [String: Double])] {
        try log.projectedReadings(source: source, sensor: sensor, from: from, to: to)
    }
    func latestReadingTime(source: String, sensor: String, atOrBefore at: Int64) throws -> Int64? {
        try log.latestReadingTime(source: source, sensor: sensor, at: at)
    }
    func facts(kind: String, keyPrefix: String) throws -> [EventBody] { try log.projectedFacts(kind: kind, keyPrefix: keyPrefix) }
    func userState(user: String) throws -> UserState { try log.userState(user: user) }
}
