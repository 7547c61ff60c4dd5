import Breeze

/// `breeze favourite add|remove SENSOR` and `breeze watch add|remove SENSOR`: edits of the user's add-wins
/// sets, through `Replica` (a remove carries the add dots this replica has seen, so a concurrent add
/// elsewhere wins).
enum SetCommand {
    enum Kind { case favourite, watch }

    static let favouriteUsage = "usage: breeze favourite add|remove SENSOR [--user ID] [--db PATH] [--json]"
    static let watchUsage = "usage: breeze watch add|remove SENSOR [--user ID] [--db PATH] [--json]"

    static func run(_ args: [String], _ ctx: Context, kind: Kind) throws(CLIError) {
        let usage = kind == .favourite ? favouriteUsage : watchUsage
        let p = try Arguments(args, usage: usage).expect(["add|remove", "SENSOR"])
        guard p[0] == "add" || p[0] == "remove" else { throw .usage("expected add or remove, not '\(p[0])'", usage) }
        let add = p[0] == "add", sensor = p[1]
        let event: Event = try ctx.withReplica { r in
            switch (kind, add) {
            case (.favourite, true): return try r.addFavourite(sensor)
            case (.favourite, false): return try r.removeFavourite(sensor)
            case (.watch, true): return try r.addWatch(sensor)
            case (.watch, false): return try r.removeWatch(sensor)
            }
        }
        let noun = kind == .favourite ? "favourite" : "watched sensor"
        report(event, ctx, text: "\(add ? "added" : "removed") \(noun) \(sensor) for \(ctx.user)")
    }

    /// Prints the appended event: its id as text, or the event as JSON.
    static func report(_ e: Event, _ ctx: Context, text: String) {
        if ctx.json {
            ctx.console.out(LogCommand.json(e, seq: nil).text)
        } else {
            ctx.console.out("\(text) (event \(e.id))")
        }
    }
}
