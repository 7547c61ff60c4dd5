import BreezeCore
import BreezeStore

/// `breeze alert set`, `breeze unit set`, `breeze source ...`: last-writer-wins settings.
enum SettingsCommands {
    static let alertUsage = """
        usage: breeze alert set [--category good|moderate|usg|unhealthy|very-unhealthy|hazardous] \
        [--on-clear notify|silent] [--enabled true|false] [--user ID] [--db PATH] [--json]
               breeze alert test [--sensor ID]   request a test alert (shown on the alerts screen)
        """
    static let unitUsage = "usage: breeze unit set celsius|fahrenheit [--user ID] [--db PATH] [--json]"
    static let sourceUsage = """
        usage: breeze source list | enable SOURCE | disable SOURCE | correct SOURCE CORRECTION \
        [--user ID] [--db PATH] [--json]
        """

    static func alert(_ args: [String], _ ctx: Context) throws(CLIError) {
        let a = try Arguments(args, valued: ["category", "on-clear", "enabled", "sensor"], usage: alertUsage)
        _ = try a.expect(["set|test"])
        if a.positionals[0] == "test" {
            guard a.options.keys.allSatisfy({ $0 == "sensor" }) else { throw .usage("alert test takes only --sensor", alertUsage) }
            let sensor = try a.options["sensor"].map { s throws(CLIError) in try SetCommand.validateSensor(s) }
            let stream = try ctx.userStream()
            let e = try ctx.withLog { try $0.append(.testAlert(sensor: sensor), to: stream) }
            SetCommand.report(e, ctx, text: "test alert requested for \(ctx.user)" + (sensor.map { " (sensor \($0))" } ?? ""))
            return
        }
        guard a.positionals[0] == "set" else { throw .usage("expected 'set' or 'test', not '\(a.positionals[0])'", alertUsage) }
        guard a.options["sensor"] == nil else { throw .usage("--sensor goes with 'alert test'", alertUsage) }
        var change = AlertChange()
        if let c = a.options["category"] {
            guard let v = AQICategory(name: c) else {
                throw .failure("--category '\(c)': expected one of \(AQICategory.allCases.map(\.name).joined(separator: ", "))")
            }
            change.category = v
        }
        if let c = a.options["on-clear"] {
            guard let v = OnClear(name: c) else { throw .failure("--on-clear '\(c)': expected notify or silent") }
            change.onClear = v
        }
        if let c = a.options["enabled"] {
            switch c {
            case "true", "yes", "on": change.enabled = true
            case "false", "no", "off": change.enabled = false
            default: throw .failure("--enabled '\(c)': expected true or false")
            }
        }
        guard !change.isEmpty else {
            throw .usage("nothing to set: give --category, --on-clear or --enabled", alertUsage)
        }
        let stream = try ctx.userStream()
        let e = try ctx.withLog { try $0.append(.alertSet(change), to: stream) }
        var parts: [String] = []
        if let v = change.category { parts.append("category \(v.name)") }
        if let v = change.onClear { parts.append("on clear \(v.name)") }
        if let v = change.enabled { parts.append(v ? "enabled" : "disabled") }
        SetCommand.report(e, ctx, text: "alerts for \(ctx.user): " + parts.joined(separator: ", "))
    }

    static func unit(_ args: [String], _ ctx: Context) throws(CLIError) {
        let p = try Arguments(args, usage: unitUsage).expect(["set", "celsius|fahrenheit"])
        guard p[0] == "set" else { throw .usage("expected 'set', not '\(p[0])'", unitUsage) }
        guard let u = TemperatureUnit(name: p[1]) else {
            throw .failure("unit '\(p[1])': expected celsius or fahrenheit")
        }
        let stream = try ctx.userStream()
        let e = try ctx.withLog { try $0.append(.unitSet(u), to: stream) }
        SetCommand.report(e, ctx, text: "unit for \(ctx.user): \(u.name)")
    }

    static func source(_ args: [String], _ ctx: Context) throws(CLIError) {
        let a = try Arguments(args, usage: sourceUsage)
        guard let verb = a.positionals.first else { throw .usage("missing list, enable, disable or correct", sourceUsage) }
        let stream = try ctx.userStream()
        switch verb {
        case "list":
            _ = try a.expect(["list"])
            let state = try ctx.withLog { try $0.userState(user: ctx.user) }
            if ctx.json {
                ctx.console.out(JSONValue.array(DataSource.catalog.map { s in
                    .object([("id", .string(s.id)), ("name", .string(s.name)),
                             ("enabled", .bool(state.isEnabled(source: s.id))),
                             ("correction", .string(state.correction(for: s.id))),
                             ("corrections", .array(s.corrections.map(JSONValue.string)))])
                }).text)
            } else {
                for s in DataSource.catalog {
                    ctx.console.out(pad(s.id, 14) + pad(state.isEnabled(source: s.id) ? "enabled" : "disabled", 10)
                                    + "correction \(state.correction(for: s.id))  (available: \(s.corrections.joined(separator: ", ")))")
                }
            }
        case "enable", "disable":
            let p = try a.expect([verb, "SOURCE"])
            let s = try knownSource(p[1])
            let e = try ctx.withLog {
                try $0.append(verb == "enable" ? .sourceEnable(source: s.id) : .sourceDisable(source: s.id), to: stream)
            }
            SetCommand.report(e, ctx, text: "\(verb)d \(s.id) for \(ctx.user)")
        case "correct":
            let p = try a.expect([verb, "SOURCE", "CORRECTION"])
            let s = try knownSource(p[1])
            guard s.corrections.contains(p[2]) else {
                throw .failure("correction '\(p[2])' is not available for \(s.id); choose one of \(s.corrections.joined(separator: ", "))")
            }
            let e = try ctx.withLog { try $0.append(.sourceCorrect(source: s.id, correction: p[2]), to: stream) }
            SetCommand.report(e, ctx, text: "correction for \(s.id) for \(ctx.user): \(p[2])")
        default:
            throw .usage("expected list, enable, disable or correct, not '\(verb)'", sourceUsage)
        }
    }

    static func knownSource(_ id: String) throws(CLIError) -> DataSource {
        guard let s = DataSource.named(id) else {
            throw .failure("source '\(id)' is unknown; known sources: \(DataSource.catalog.map(\.id).joined(separator: ", "))")
        }
        return s
    }
}

/// Left-aligns `s` in a column of `width` characters.
func pad(_ s: String, _ width: Int) -> String {
    s.count >= width ? s + " " : s + String(repeating: " ", count: width - s.count)
}
