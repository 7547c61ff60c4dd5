import Breeze

/// `breeze state`: the user's settings as merged from every event of their stream.
enum StateCommand {
    static let usage = "usage: breeze state [--user ID] [--db PATH] [--json]"

    static func run(_ args: [String], _ ctx: Context) throws(CLIError) {
        _ = try Arguments(args, usage: usage).expect([])
        let stream = try ctx.userStream()
        let (state, vv) = try ctx.withReplica { r in (try r.state(), try r.read { try $0.versionVector(of: stream) }) }
        if ctx.json {
            ctx.console.out(state.json(user: ctx.user).text)
            return
        }
        let list = { (xs: [String]) in xs.isEmpty ? "(none)" : xs.joined(separator: ", ") }
        let c = ctx.console
        c.out("user        \(ctx.user)")
        c.out("favourites  \(list(state.favourites.elements))")
        c.out("watched     \(list(state.watched.elements))")
        c.out("alerts      \(state.effectiveAlertsEnabled ? "on" : "off"), from \(state.effectiveAlertCategory.title), when clear: \(state.effectiveOnClear.name)")
        c.out("unit        \(state.effectiveUnit.name)")
        for s in DataSource.catalog {
            c.out("source      " + pad(s.id, 14) + pad(state.isEnabled(source: s.id) ? "on" : "off", 4)
                  + "correction \(state.correction(for: s.id))")
        }
        for k in state.biomarkerTargets.sortedKeys {
            let t = state.biomarkerTargets[k]!
            c.out("target      \(t.readingType): \(Int(t.minReading))-\(Int(t.maxReading)) readings/day (\(t.icon))")
        }
        if state.testAlerts.count > 0 { c.out("test alerts \(state.testAlerts.count) requested") }
        c.out("events      \(vv.total) in \(stream) from \(vv.counters.count) origin(s)")
        c.out("state hash  \(state.stateHash)")
    }
}
