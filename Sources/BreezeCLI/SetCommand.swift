import BreezeCore
import BreezeStore

/// `breeze favourite add|remove SENSOR` and `breeze watch add|remove SENSOR`: edits of the user's add-wins
/// sets. A remove carries the add dots this replica has seen, so a concurrent add elsewhere wins.
enum SetCommand {
    enum Kind { case favourite, watch }

    static let favouriteUsage = "usage: breeze favourite add|remove SENSOR [--user ID] [--db PATH] [--json]"
    static let watchUsage = "usage: breeze watch add|remove SENSOR [--user ID] [--db PATH] [--json]"

    static func run(_ args: [String], _ ctx: Context, kind: Kind) throws(CLIError) {
        let usage = kind == .favourite ? favouriteUsage : watchUsage
        let p = try Arguments(args, usage: usage).expect(["add|remove", "SENSOR"])
        let sensor = try validateSensor(p[1])
        let noun = kind == .favourite ? "favourite" : "watched sensor"
        let stream = try ctx.userStream()
        let event: Event = try ctx.withLog { log in
            let state = try log.userState(user: ctx.user)
            let set = kind == .favourite ? state.favourites : state.watched
            switch p[0] {
            case "add":
                return try log.append(kind == .favourite ? .favouriteAdd(sensor: sensor) : .watchAdd(sensor: sensor),
                                      to: stream)
            case "remove":
                let dots = set.liveDots(of: sensor)
                guard !dots.isEmpty else {
                    throw CLIError.failure("sensor '\(sensor)' is not a \(noun) of user '\(ctx.user)'; nothing removed")
                }
                return try log.append(kind == .favourite ? .favouriteRemove(sensor: sensor, observed: dots)
                                                         : .watchRemove(sensor: sensor, observed: dots), to: stream)
            default:
                throw CLIError.usage("expected add or remove, not '\(p[0])'", usage)
            }
        }
        report(event, ctx, text: "\(p[0] == "add" ? "added" : "removed") \(noun) \(sensor) for \(ctx.user)")
    }

    /// Sensor ids: 1-128 characters, no spaces or control characters.
    static func validateSensor(_ s: String) throws(CLIError) -> String {
        guard !s.isEmpty, s.utf8.count <= 128, !s.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7f })
        else { throw .failure("SENSOR '\(s)': must be 1-128 characters without spaces or control characters") }
        return s
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
