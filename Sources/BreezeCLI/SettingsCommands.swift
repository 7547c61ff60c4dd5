import Breeze

/// `breeze alert set|test`, `breeze unit set`, `breeze source ...`: last-writer-wins settings, through `Replica`.
enum SettingsCommands {
    static let alertUsage = """
        usage: breeze alert set [--category good|moderate|usg|unhealthy|very-unhealthy|hazardous] \
        [--on-clear notify|silent] [--enabled true|false] [--user ID] [--db PATH] [--json]
               breeze alert test [--sensor ID]   request a test alert (shown on the alerts screen)
               breeze alert delivered KEY        record that this device notified the alert KEY (the alerts
                                                 screen's key), so the user's other devices do not notify again
        """
    static let unitUsage = "usage: breeze unit set celsius|fahrenheit [--user ID] [--db PATH] [--json]"
    static let sourceUsage = """
        usage: breeze source list | enable SOURCE | disable SOURCE | correct SOURCE CORRECTION \
        [--user ID] [--db PATH] [--json]
        """

    static func alert(_ args: [String], _ ctx: Context) throws(CLIError) {
        let a = try Arguments(args, valued: ["category", "on-clear", "enabled", "sensor"], usage: alertUsage)
        guard let verb = a.positionals.first else { throw .usage("missing set, test or delivered", alertUsage) }
        if verb == "delivered" {
            let p = try a.expect(["delivered", "KEY"])
            guard a.options.isEmpty else { throw .usage("alert delivered takes only KEY", alertUsage) }
            let e = try ctx.withReplica { try $0.markAlertDelivered(p[1]) }
            SetCommand.report(e, ctx, text: "alert \(p[1]) delivered for \(ctx.user)")
            return
        }
        _ = try a.expect(["set|test"])
        if a.positionals[0] == "test" {
            guard a.options.keys.allSatisfy({ $0 == "sensor" }) else { throw .usage("alert test takes only --sensor", alertUsage) }
            let sensor = a.options["sensor"]
            let e = try ctx.withReplica { try $0.requestTestAlert(sensor: sensor) }
            SetCommand.report(e, ctx, text: "test alert requested for \(ctx.user)" + (sensor.map { " (sensor \($0))" } ?? ""))
            return
        }
        guard a.positionals[0] == "set" else { throw .usage("expected 'set' or 'test', not '\(a.positionals[0])'", alertUsage) }
        guard a.options["sensor"] == nil else { throw .usage("--sensor goes with 'alert test'", alertUsage) }
        var category: AQICategory?, onClear: OnClear?, enabled: Bool?
        if let c = a.options["category"] {
            guard let v = AQICategory(name: c) else {
                throw .failure("--category '\(c)': expected one of \(AQICategory.allCases.map(\.name).joined(separator: ", "))")
            }
            category = v
        }
        if let c = a.options["on-clear"] {
            guard let v = OnClear(name: c) else { throw .failure("--on-clear '\(c)': expected notify or silent") }
            onClear = v
        }
        if let c = a.options["enabled"] {
            switch c {
            case "true", "yes", "on": enabled = true
            case "false", "no", "off": enabled = false
            default: throw .failure("--enabled '\(c)': expected true or false")
            }
        }
        guard category != nil || onClear != nil || enabled != nil else {
            throw .usage("nothing to set: give --category, --on-clear or --enabled", alertUsage)
        }
        let e = try ctx.withReplica { try $0.setAlerts(category: category, onClear: onClear, enabled: enabled) }
        var parts: [String] = []
        if let v = category { parts.append("category \(v.name)") }
        if let v = onClear { parts.append("on clear \(v.name)") }
        if let v = enabled { parts.append(v ? "enabled" : "disabled") }
        SetCommand.report(e, ctx, text: "alerts for \(ctx.user): " + parts.joined(separator: ", "))
    }

    static func unit(_ args: [String], _ ctx: Context) throws(CLIError) {
        let p = try Arguments(args, usage: unitUsage).expect(["set", "celsius|fahrenheit"])
        guard p[0] == "set" else { throw .usage("expected 'set', not '\(p[0])'", unitUsage) }
        guard let u = TemperatureUnit(name: p[1]) else {
            throw .failure("unit '\(p[1])': expected celsius or fahrenheit")
        }
        let e = try ctx.withReplica { try $0.setUnit(u) }
        SetCommand.report(e, ctx, text: "unit for \(ctx.user): \(u.name)")
    }

    static func source(_ args: [String], _ ctx: Context) throws(CLIError) {
        let a = try Arguments(args, usage: sourceUsage)
        guard let verb = a.positionals.first else { throw .usage("missing list, enable, disable or correct", sourceUsage) }
        switch verb {
        case "list":
            _ = try a.expect(["list"])
            let state = try ctx.withReplica { try $0.state() }
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
            let e = try ctx.withReplica { try $0.setSource(p[1], enabled: verb == "enable") }
            SetCommand.report(e, ctx, text: "\(verb)d \(p[1]) for \(ctx.user)")
        case "correct":
            let p = try a.expect([verb, "SOURCE", "CORRECTION"])
            let e = try ctx.withReplica { try $0.setCorrection(p[2], for: p[1]) }
            SetCommand.report(e, ctx, text: "correction for \(p[1]) for \(ctx.user): \(p[2])")
        default:
            throw .usage("expected list, enable, disable or correct, not '\(verb)'", sourceUsage)
        }
    }
}

/// Left-aligns `s` in a column of `width` characters.
public func pad(_ s: String, _ width: Int) -> String {
    s.count >= width ? s + " " : s + String(repeating: " ", count: width - s.count)
}
