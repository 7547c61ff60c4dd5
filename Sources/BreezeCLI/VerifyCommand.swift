import BreezeCore
import BreezeStore

/// `breeze verify`: the integrity of a database (see `EventLog.verify(at:)`): SQLite's integrity check, every
/// event's hash, counters without gaps against the version vectors, recorded conflicts, stream kinds, the
/// clock, and the projection checkpoint against a fresh rebuild. Read-only: safe while a node runs.
enum VerifyCommand {
    static let usage = """
        usage: breeze verify [--db PATH] [--json] [--snapshot-dir DIR]
          checks a database without writing to it (safe while a node uses it) and lists every problem with its
          seq, event id and stream; exit status 0 when clean, 1 when a problem was found.
          --snapshot-dir DIR   where the temporary consistent copy goes (default $TMPDIR, else /tmp)
        """

    static func run(_ args: [String], _ ctx: Context) throws(CLIError) {
        let a = try Arguments(args, valued: ["snapshot-dir"], usage: usage)
        _ = try a.expect([])
        let console = ctx.console
        var lastShown = -1
        let report: VerificationReport
        do {
            report = try EventLog.verify(at: ctx.dbPath, snapshotDirectory: a.options["snapshot-dir"]) { phase, done, total in
                // Progress on standard error: rewritten in place on a terminal, a line per 10% for big logs otherwise.
                if console.isTerminal {
                    console.progress(total > 0 ? "verify: \(phase) \(done)/\(total)" : "verify: \(phase)")
                } else if total >= 200_000 {
                    let pct = done * 10 / total
                    if pct != lastShown { lastShown = pct; console.err("verify: \(phase) \(done)/\(total)") }
                }
            }
        } catch { throw .failure(error.description) }
        if console.isTerminal { console.progress("") }
        if ctx.json {
            console.out(json(report).text)
        } else {
            for line in text(report) { console.out(line) }
        }
        if !report.isClean {
            throw .failure("\(report.path): \(report.problemCount) problem(s) found")
        }
    }

    static func text(_ r: VerificationReport) -> [String] {
        var out = ["\(r.path): \(r.events) events (last seq \(r.lastSeq)) in \(r.streams) streams from \(r.origins) (stream, origin) pairs"]
        for p in r.problems { out.append("problem: \(p)") }
        if r.omittedProblems > 0 { out.append("problem: ... and \(r.omittedProblems) more") }
        for n in r.notes { out.append("note: \(n)") }
        if r.omittedNotes > 0 { out.append("note: ... and \(r.omittedNotes) more") }
        switch r.projection {
        case .equal(0, _): out.append("projection: not built yet (checkpoint seq 0; the first screen read builds it)")
        case .equal(let seq, let digest):
            let lag = r.lastSeq > seq ? "; later events are projected on the next screen read" : ""
            out.append("projection: checkpoint seq \(seq) equals a fresh rebuild of events 1...\(seq) (digest \(digest.prefix(16))…)\(lag)")
        case .different(let seq, _, _): out.append("projection: checkpoint seq \(seq) DIFFERS from a fresh rebuild")
        case .skipped(let why): out.append("projection: not compared (\(why))")
        }
        out.append(r.isClean ? "clean: hashes, counters, version vectors, conflicts, stream kinds, clock and projection check out"
                             : "\(r.problemCount) problem(s)")
        return out
    }

    static func json(_ r: VerificationReport) -> JSONValue {
        func finding(_ f: VerificationReport.Finding) -> JSONValue {
            .object([("kind", .string(f.kind.rawValue)), ("seq", f.seq.map { .int($0) } ?? .null), ("id", .string(f.eventID)),
                     ("stream", .string(f.stream)), ("message", .string(f.message))])
        }
        let projection: JSONValue
        switch r.projection {
        case .equal(let seq, let digest):
            projection = .object([("result", .string("equal")), ("checkpoint", .int(seq)), ("digest", .string(digest))])
        case .different(let seq, let stored, let rebuilt):
            projection = .object([("result", .string("different")), ("checkpoint", .int(seq)), ("stored", .string(stored)),
                                  ("rebuilt", .string(rebuilt))])
        case .skipped(let why):
            projection = .object([("result", .string("skipped")), ("reason", .string(why))])
        }
        return .object([
            ("db", .string(r.path)), ("clean", .bool(r.isClean)), ("events", .int(Int64(r.events))), ("lastSeq", .int(r.lastSeq)),
            ("streams", .int(Int64(r.streams))), ("problemCount", .int(Int64(r.problemCount))),
            ("problems", .array(r.problems.map(finding))), ("notes", .array(r.notes.map(finding))), ("projection", projection),
        ])
    }
}
