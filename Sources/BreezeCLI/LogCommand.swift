import BreezeCore
import BreezeStore

/// `breeze log`: the events, oldest first; `--json` prints one JSON object per line.
enum LogCommand {
    static let usage = "usage: breeze log [--stream public|user:ID|health:ID] [--limit N] [--db PATH] [--json]"

    static func run(_ args: [String], _ ctx: Context) throws(CLIError) {
        let a = try Arguments(args, valued: ["stream", "limit"], usage: usage)
        _ = try a.expect([])
        var stream: StreamID?
        if let s = a.options["stream"] {
            do { stream = try StreamID(parsing: s) } catch { throw .failure("--stream: \(error.description)") }
        }
        var limit = Int.max
        if let l = a.options["limit"] {
            guard let n = Int(l), n > 0 else { throw .failure("--limit '\(l)': expected a positive whole number") }
            limit = n
        }
        try ctx.withLog { log in
            var printed = 0
            try log.forEach(stream: stream) { entry in
                if ctx.json {
                    ctx.console.out(json(entry.event, seq: entry.seq).text)
                } else {
                    let e = entry.event
                    let payload = (try? e.body().json.text) ?? "(undecodable payload)"
                    ctx.console.out("\(pad(String(entry.seq), 6))\(ISOTime.format(millis: Int64(e.hlc.physicalMillis)))  "
                                    + "\(pad(e.id.description, 24))\(pad(e.stream.description, 14))\(pad(e.type, 18))\(payload)"
                                    + (entry.skewed ? "  [clock ahead]" : ""))
                }
                printed += 1
                return printed < limit
            }
        }
    }

    /// One event as a JSON object: id, origin, epoch, counter, stream, hlc, type, version, hash, payload.
    static func json(_ e: Event, seq: Int64?) -> JSONValue {
        var pairs: [(String, JSONValue)] = []
        if let seq { pairs.append(("seq", .int(seq))) }
        let payload: JSONValue = (try? e.body().json) ?? .null
        pairs += [
            ("id", .string(e.id.description)),
            ("origin", .string(e.id.origin.replica.description)),
            ("epoch", .int(Int64(e.id.origin.epoch))),
            ("counter", .int(Int64(bitPattern: e.id.counter))),
            ("stream", .string(e.stream.description)),
            ("hlc", .string(e.hlc.description)),
            ("time", .string(ISOTime.format(millis: Int64(e.hlc.physicalMillis)))),
            ("type", .string(e.type)),
            ("version", .int(Int64(e.schemaVersion))),
            ("hash", .string(e.hashHex)),
            ("payload", payload),
        ]
        return .object(pairs)
    }
}
