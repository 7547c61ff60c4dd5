import Breeze

/// `breeze interest add|remove|list`: what this device holds (`Protocol/sync.md` 6.7), through `Replica`.
/// Interests are the device's own (kept in its database, never synced); a node running on the database
/// picks a change up within its poll and fetches or drops what it names.
enum InterestCommand {
    static let usage = """
        usage: breeze interest add|remove near LAT,LON KM | box S,W,N,E | sensor [SOURCE:]ID | pollen LAT,LON | climate STATION
               breeze interest list [--db PATH] [--user ID] [--json]
        """

    static func run(_ args: [String], _ ctx: Context) throws(CLIError) {
        let a = try Arguments(args, usage: usage)
        guard let verb = a.positionals.first else { throw .usage("missing add, remove or list", usage) }
        switch verb {
        case "list":
            _ = try a.expect(["list"])
            try list(ctx)
        case "add", "remove":
            let interest: Interest
            do { interest = try Interest(words: Array(a.positionals.dropFirst())) } catch {
                throw .usage("interest '\(a.positionals.dropFirst().joined(separator: " "))': \(error.description)", usage)
            }
            let (changed, horizon): (Bool, Int?) = try ctx.withReplica { r in
                if verb == "add" { return (try r.addInterest(interest), try r.horizonDays()) }
                try r.removeInterest(interest)
                return (true, try r.horizonDays())
            }
            if ctx.json {
                ctx.console.out(JSONValue.object([("interest", .string(interest.description)), (verb == "add" ? "added" : "removed", .bool(changed)),
                                                  ("horizonDays", horizon.map { .int(Int64($0)) } ?? .null)]).text)
            } else if verb == "add" {
                // The horizon the interest brings, said where it is added (a device with interests keeps 14
                // days of readings unless `breeze horizon` says otherwise).
                ctx.console.out((changed ? "added interest \(interest)" : "interest \(interest) was declared already")
                                + "; this device keeps " + (horizon.map { "\($0) days of readings (change with `breeze horizon`)" } ?? "every reading"))
            } else {
                ctx.console.out("removed interest \(interest)")
            }
        default:
            throw .usage("expected add, remove or list, not '\(verb)'", usage)
        }
    }

    private static func list(_ ctx: Context) throws(CLIError) {
        let (interests, streams, held): ([Interest], Set<StreamID>?, [StreamID]) = try ctx.withReplica { r in
            (try r.interests(), try r.subscribedStreams(), try r.heldFactStreams())
        }
        if ctx.json {
            ctx.console.out(JSONValue.object([
                ("interests", .array(interests.map { .string($0.description) })),
                ("streams", streams.map { s in .array(s.sorted().map { .string($0.description) }) } ?? .null),
                ("held", .array(held.map { .string($0.description) })),
            ]).text)
            return
        }
        let c = ctx.console
        for i in interests { c.out("interest \(i)") }
        c.out(summary(interests: interests, streams: streams, held: held))
    }

    /// One line: what the interests name and what is held (for `list` and `breeze status`).
    static func summary(interests: [Interest], streams: Set<StreamID>?, held: [StreamID]) -> String {
        guard let streams else { return "interests none: this device holds every stream (\(held.count) fact streams held)" }
        let sensors = streams.filter { if case .sensor = $0 { return true } else { return false } }.count
        return "interests \(interests.count) name \(streams.count) fact streams (\(sensors) sensors, \(streams.count - sensors) pollen cells and climate stations, favourites and watched included); \(held.count) held"
    }
}
