import BreezeCore
import BreezeStore
@preconcurrency import Glibc

/// `breeze export`: the events as JSON Lines (`EventLine`), oldest first, so a log can travel in a bug report;
/// `breeze import jsonl FILE` stores them again, byte for byte. Reads only: safe while a node runs.
enum ExportCommand {
    static let usage = """
        usage: breeze export [--stream S] [--since X] [--until X] [--out FILE] [--db PATH]
          writes one JSON object per event (id, stream, hlc, type, version, base64 payload, hash, decoded body) to
          standard output or FILE (written to FILE.partial, then renamed). X is a local sequence number, an HLC
          timestamp or an ISO 8601 time; both bounds are inclusive.
          An export that starts after the beginning (--since) imports only into a database that already holds
          the earlier events of each origin: the log refuses gaps.
        """

    static func run(_ args: [String], _ ctx: Context) throws(CLIError) {
        let a = try Arguments(args, valued: ["stream", "since", "until", "out"], usage: usage)
        _ = try a.expect([])
        let filter = try LogFilter(a)
        let out = a.options["out"]
        if out == "" { throw .failure("--out: empty path") }
        var file: UnsafeMutablePointer<FILE>?
        let partial = out.map { $0 + ".partial" }
        if let partial {
            // Users' data: readable by this user only (0600, whatever the umask), as every copy Breeze writes.
            let fd = open(partial, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            guard fd >= 0, fchmod(fd, 0o600) == 0, let f = fdopen(fd, "w") else {
                let why = String(cString: strerror(errno))
                throw .failure("--out \(out!): cannot write \(partial) (\(why))")
            }
            file = f
        }
        var count = 0
        // Origins whose exported events do not start at counter 1: such a file imports only where the earlier
        // events are held (ingest refuses gaps), which the exporter is told up front.
        var startsLate: Set<String> = [], seen: Set<String> = []
        do {
            try ctx.withLog { log in
                try log.forEach(stream: filter.stream, afterSeq: filter.startAfterSeq) { entry in
                    if filter.isPastEnd(entry.seq) { return false }
                    guard filter.matches(entry) else { return true }
                    let e = entry.event
                    let key = "\(e.stream) \(e.id.origin)"
                    if seen.insert(key).inserted && e.id.counter > 1 { startsLate.insert(key) }
                    let line = EventLine.encode(e, seq: entry.seq, signature: OriginSignature.isSigned(e.stream) ? try log.signature(of: e) : nil)
                    if let file {
                        guard fputs(line + "\n", file) >= 0 else {
                            throw CLIError.failure("--out \(out!): write failed (\(String(cString: strerror(errno))))")
                        }
                    } else {
                        ctx.console.out(line)
                    }
                    count += 1
                    if count % 20_000 == 0 && ctx.console.isTerminal { ctx.console.progress("export: \(count) events") }
                    return true
                }
            }
        } catch {
            if let file, let partial { fclose(file); unlink(partial) }
            throw error
        }
        if ctx.console.isTerminal { ctx.console.progress("") }
        if !startsLate.isEmpty {
            ctx.console.err("breeze export: note: for \(startsLate.count) (stream, origin) pair(s) the export starts after counter 1 "
                            + "(e.g. \(startsLate.sorted()[0])); it imports only into a database that holds their earlier events")
        }
        if let file, let partial, let out {
            let ok = fflush(file) == 0 && fsync(fileno(file)) == 0
            fclose(file)
            guard ok, rename(partial, out) == 0 else {
                unlink(partial)
                throw .failure("--out \(out): cannot finish writing (\(String(cString: strerror(errno))))")
            }
            ctx.console.err("exported \(count) events to \(out)")
        }
    }
}
