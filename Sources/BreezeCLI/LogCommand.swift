import BreezeCore
import BreezeStore
@preconcurrency import Glibc

/// `breeze log`: the events, oldest first, filtered by stream, type, origin and range; `--json` prints one
/// JSON object per line; `--follow` then keeps printing new matching events as they are committed (by another
/// process, or by a node receiving them from a peer) until SIGINT/SIGTERM or `--follow-timeout`.
enum LogCommand {
    static let usage = """
        usage: breeze log [--stream public|user:ID|health:ID] [--type T]... [--origin REPLICA[.EPOCH]]
                          [--since X] [--until X] [--limit N] [--follow [--follow-timeout SECONDS]] [--db PATH] [--json]
          --type T        only events of type T (repeat the option or give a comma list: --type favourite.add,favourite.remove)
          --origin R      only events written by replica R (16 hex digits), or by one epoch of it (R.EPOCH); comma list allowed
          --since X       events at or after X; --until X: at or before X. X is a local sequence number (120),
                          an HLC timestamp as printed (1700000000123.4) or an ISO 8601 time (2023-10-26T18:00:00Z)
          --limit N       at most N events
          --follow        after the history, print new matching events as they land (polls every 100 ms; reads only)
          --follow-timeout SECONDS   stop following after SECONDS (default: until SIGINT or SIGTERM)
        """

    /// How often `--follow` looks for new events.
    static let pollMicroseconds: UInt32 = 100_000

    static func run(_ args: [String], _ ctx: Context) throws(CLIError) {
        let a = try Arguments(args, valued: LogFilter.valued.union(["limit", "follow-timeout"]), flags: ["follow"],
                              multi: LogFilter.multi, usage: usage)
        _ = try a.expect([])
        let filter = try LogFilter(a)
        var limit = Int.max
        if let l = a.options["limit"] {
            guard let n = Int(l), n > 0 else { throw .failure("--limit '\(l)': expected a positive whole number") }
            limit = n
        }
        let follow = a.options["follow"] != nil
        var timeout: Double?
        if let t = a.options["follow-timeout"] {
            guard follow else { throw .usage("--follow-timeout needs --follow", usage) }
            guard let s = Double(t), s.isFinite, s > 0 else { throw .failure("--follow-timeout '\(t)': expected a positive number of seconds") }
            timeout = s
        }
        for t in filter.unknownTypes {
            ctx.console.err("breeze log: note: --type '\(t)' is not a type this build knows; showing any such events anyway")
        }
        try ctx.withLog { log in
            var printed = 0
            var last = filter.startAfterSeq
            func show(_ entry: EventLog.Entry) -> Bool {
                last = entry.seq
                if filter.isPastEnd(entry.seq) { return false }
                if filter.matches(entry) {
                    ctx.console.out(line(entry, json: ctx.json))
                    printed += 1
                }
                return printed < limit
            }
            try log.forEach(stream: filter.stream, afterSeq: last) { show($0) }
            guard follow, printed < limit, !filter.isPastEnd(last + 1) else { return }
            let stop = FollowStop()
            defer { stop.restore() }
            var deadline: Double?
            if let timeout { deadline = SystemClock.monotonicSeconds() + timeout }
            var version = try log.dataVersion()
            while !stop.requested && printed < limit && !filter.isPastEnd(last + 1) {
                if let deadline, SystemClock.monotonicSeconds() >= deadline { break }
                usleep(pollMicroseconds)
                // `data_version` changes only when another connection commits, so an idle poll is one pragma.
                let now = try log.dataVersion()
                if now == version { continue }
                version = now
                var more = true
                // Every new row, whatever its stream, so `last` moves past rows that do not match and the next
                // poll reads only what is new.
                try log.forEach(afterSeq: last) { more = show($0); return more }
                if !more { break }
            }
        }
    }

    /// One event for display: a line of text, or `json(_:seq:)` when `--json`.
    static func line(_ entry: EventLog.Entry, json asJSON: Bool) -> String {
        if asJSON { return json(entry.event, seq: entry.seq).text }
        let e = entry.event
        let payload = (try? e.body().json.text) ?? "(undecodable payload)"
        return "\(pad(String(entry.seq), 6))\(ISOTime.format(millis: Int64(e.hlc.physicalMillis)))  "
            + "\(pad(e.id.description, 24))\(pad(e.stream.description, 14))\(pad(e.type, 18))\(payload)"
            + (entry.skewed ? "  [clock ahead]" : "")
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

/// Set by the SIGINT/SIGTERM handler while `breeze log --follow` runs; read by its poll loop. A signal handler
/// can only touch lock-free state, hence a plain `sig_atomic_t` global.
nonisolated(unsafe) private var followStopRequested: sig_atomic_t = 0

/// Turns SIGINT and SIGTERM into a request to stop following (so the command ends normally, exit 0), and
/// puts the previous handlers back afterwards.
private final class FollowStop {
    private var previous: [(Int32, sigaction)] = []

    init() {
        followStopRequested = 0
        for s in [SIGINT, SIGTERM] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { _ in followStopRequested = 1 }
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0          // no SA_RESTART: the poll's sleep returns at once
            var old = sigaction()
            sigaction(s, &action, &old)
            previous.append((s, old))
        }
    }

    var requested: Bool { followStopRequested != 0 }

    func restore() {
        for (s, old) in previous {
            var o = old
            sigaction(s, &o, nil)
        }
        previous = []
    }
}
