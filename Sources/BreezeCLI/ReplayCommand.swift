import BreezeCore
import BreezeProjections
import BreezeStore
import BreezeImport

/// `breeze replay`: a screen's read model as it was at a point of the log, computed by the same screen code
/// over an in-memory `FactWorld` fed the events up to that point; `--step` walks forward event by event and
/// prints what each event changed in the read model.
enum ReplayCommand {
    static let usage = """
        usage: breeze replay --until SEQ|HLC|ISO8601 --screen NAME [screen options] [--db PATH] [--json]
               breeze replay --step [--from SEQ|HLC|ISO8601] [--until SEQ|HLC|ISO8601] --screen NAME [--all]
                             [screen options] [--db PATH] [--json]
        screen options (as `breeze screen`): \(ScreenCommand.optionsUsage)

        The point of the log ("cut"):
          SEQ       a local sequence number (as `breeze log` prints): the events with seq <= SEQ, in the order
                    this database received them (seq order differs between replicas)
          HLC       a hybrid logical clock as `breeze log --json` prints it, MILLIS.LOGICAL: the events whose
                    HLC is <= it, whichever replica wrote them and whenever they arrived
          ISO8601   a date-time, e.g. 2026-11-29T15:00:00Z: the events whose HLC is <= that instant
        --now defaults to the time of the cut (the latest HLC applied for SEQ; the HLC or instant given), so the
        screen shows the read model as it was then; give --now to look at the same events at another time.

        --step walks forward from the cut (--until), or over the range after --from up to --until, one event
        at a time (seq order for SEQ; HLC order, ties by origin and counter, for HLC and ISO8601), and prints
        each event (seq, id, type, stream) with what it changed in the read model: JSON paths added (+),
        removed (-) and changed (~, old -> new). Events that change nothing are skipped unless --all. While
        stepping, --now stays fixed (default: the time of the end of the walk), so a change shown is the
        event's own. The database is opened read-only: a running node is not disturbed.
        """

    /// A point of the log.
    enum Cut: Equatable, CustomStringConvertible {
        case seq(Int64)
        case hlc(HLC, text: String)

        /// Parses SEQ, MILLIS.LOGICAL or an ISO 8601 time (the same forms as `breeze log --since/--until`).
        static func parse(_ text: String, option: String) throws(CLIError) -> Cut {
            switch try LogPoint(text, option: option) {
            case .seq(let n): return .seq(n)
            case .hlc(let h): return .hlc(h, text: text)
            case .time(let ms):
                guard ms >= 0 else { throw .failure("--\(option) '\(text)': a time before 1970 precedes every event") }
                return .hlc(HLC(physicalMillis: UInt64(ms), logical: .max), text: text)
            }
        }

        /// True when the event at `seq` belongs to the log up to this point.
        func includes(seq: Int64, _ e: Event) -> Bool {
            switch self {
            case .seq(let n): return seq <= n
            case .hlc(let h, _): return e.hlc <= h
            }
        }

        var isSeq: Bool { if case .seq = self { return true } else { return false } }

        /// True when this cut holds fewer events than `other` of the same kind.
        func isBefore(_ other: Cut) -> Bool {
            switch (self, other) {
            case (.seq(let a), .seq(let b)): return a < b
            case (.hlc(let a, _), .hlc(let b, _)): return a < b
            default: return false
            }
        }

        var description: String {
            switch self {
            case .seq(let n): return "seq \(n)"
            case .hlc(let h, let text): return text.contains("T") ? text : "hlc \(h)"
            }
        }
    }

    static func run(_ args: [String], _ ctx: Context) throws(CLIError) {
        let a = try Arguments(args, valued: ScreenCommand.options.union(["until", "from", "screen"]), flags: ["step", "all"],
                              usage: usage)
        _ = try a.expect([])
        guard let name = a.options["screen"] else { throw .usage("missing --screen NAME", usage) }
        guard let screen = Screens.named(name) else {
            throw .usage("unknown screen '\(name)'; screens: \(Screens.all.map { $0.name }.joined(separator: ", "))", usage)
        }
        let step = a.options["step"] != nil
        let until = try a.options["until"].map { t throws(CLIError) in try Cut.parse(t, option: "until") }
        let from = try a.options["from"].map { t throws(CLIError) in try Cut.parse(t, option: "from") }
        if !step {
            guard from == nil else { throw .usage("--from is for --step", usage) }
            guard a.options["all"] == nil else { throw .usage("--all is for --step", usage) }
        }
        guard let start = from ?? until else { throw .usage("missing --until (or --from with --step)", usage) }
        let end = from == nil ? nil : until
        if let end, end.isSeq != start.isSeq {
            throw .usage("--from and --until must both be sequence numbers or both times (HLC or ISO 8601)", usage)
        }
        if let end, end.isBefore(start) { throw .failure("--until \(end) is before --from \(start)") }
        _ = try ScreenCommand.parameters(a, ctx, defaultNow: 0)      // bad screen options fail before any replay
        let lines: [String] = try ctx.withReadOnlyLog { log in
            let last = try log.lastSeq()
            for case .seq(let n) in [start, end].compactMap({ $0 }) where n > last {
                throw CLIError.failure("seq \(n): the log of \(ctx.dbPath) ends at seq \(last)")
            }
            if step { return try walk(screen, log, a, ctx, start: start, end: end, all: a.options["all"] != nil) }
            return try snapshot(screen, log, a, ctx, cut: start)
        }
        for l in lines { ctx.console.out(l) }
    }

    /// The read model at `cut`.
    static func snapshot(_ screen: any Screen.Type, _ log: EventLog, _ a: Arguments, _ ctx: Context, cut: Cut) throws -> [String] {
        var world = FactWorld()
        let (applied, latest) = try replay(log, to: cut, onto: &world) { n in
            if ctx.console.isTerminal { ctx.console.progress("replaying: \(n) events") }
        }
        if ctx.console.isTerminal { ctx.console.progress("") }
        let p = try ScreenCommand.parameters(a, ctx, defaultNow: defaultNow(cut, latest: latest))
        let body = try ScreenCommand.output(screen, world, p, json: ctx.json)
        if ctx.json { return body }
        return ["replay of \(screen.name) at \(cut): \(applied) events, now \(ISOTime.format(millis: p.now * 1000))"] + body
    }

    /// Applies to `world` the events of the log up to `cut` that come after seq `afterSeq`, in seq order (so
    /// a world replayed to seq N and continued to seq M equals one replayed to M at once: `breeze inspect`'s
    /// scrubber keeps such worlds). Returns how many events were applied and the latest HLC among them;
    /// `progress` hears every 50,000 events.
    static func replay(_ log: EventLog, to cut: Cut, onto world: inout FactWorld, afterSeq: Int64 = 0,
                       progress: (Int) -> Void = { _ in }) throws -> (applied: Int, latest: HLC) {
        var applied = 0, latest = HLC.zero
        try log.forEach(afterSeq: afterSeq) { entry in
            if case .seq(let n) = cut, entry.seq > n { return false }
            guard cut.includes(seq: entry.seq, entry.event) else { return true }
            world.apply(entry.event)
            applied += 1
            latest = max(latest, entry.event.hlc)
            if applied % 50_000 == 0 { progress(applied) }
            return true
        }
        return (applied, latest)
    }

    /// The time of a cut in Unix seconds: the instant or HLC given, or the latest HLC applied.
    static func defaultNow(_ cut: Cut?, latest: HLC) -> Int64 {
        if case .hlc(let h, _)? = cut { return Int64(h.physicalMillis / 1000) }
        return Int64(latest.physicalMillis / 1000)
    }

    /// `--step`: the events after `start` (up to `end`), each with what it changed.
    static func walk(_ screen: any Screen.Type, _ log: EventLog, _ a: Arguments, _ ctx: Context,
                     start: Cut, end: Cut?, all: Bool) throws -> [String] {
        var world = FactWorld()
        var latest = HLC.zero
        var pending: [EventLog.Entry] = []
        var read = 0
        try log.forEach { entry in
            read += 1
            if read % 50_000 == 0, ctx.console.isTerminal { ctx.console.progress("reading: \(read) events") }
            if start.includes(seq: entry.seq, entry.event) {
                world.apply(entry.event)
                latest = max(latest, entry.event.hlc)
            } else if end == nil || end!.includes(seq: entry.seq, entry.event) {
                pending.append(entry)
                latest = max(latest, entry.event.hlc)
            } else if case .seq? = end {
                return false
            }
            return true
        }
        if !start.isSeq { pending.sort { $0.event.stamp < $1.event.stamp } }
        let p = try ScreenCommand.parameters(a, ctx, defaultNow: defaultNow(end, latest: latest))
        var out: [String] = []
        if !ctx.json {
            out.append("replay --step of \(screen.name) from \(start)\(end.map { " to \($0)" } ?? " to the end"): "
                       + "\(pending.count) events, now \(ISOTime.format(millis: p.now * 1000))")
        }
        var before = try model(screen, world, p)
        for (i, entry) in pending.enumerated() {
            world.apply(entry.event)
            let after = try model(screen, world, p)
            let changes = JSONDiff.changes(from: before, to: after)
            before = after
            if ctx.console.isTerminal, i % 100 == 0 { ctx.console.progress("stepping: \(i) of \(pending.count) events") }
            if changes.isEmpty && !all { continue }
            let e = entry.event
            if ctx.json {
                out.append(JSONValue.object([
                    ("seq", .int(entry.seq)), ("id", .string(e.id.description)), ("type", .string(e.type)),
                    ("stream", .string(e.stream.description)), ("hlc", .string(e.hlc.description)),
                    ("changes", .array(changes.map(\.json))),
                ]).text)
            } else {
                out.append("seq \(entry.seq)  \(e.id)  \(e.type)  \(e.stream)  hlc \(e.hlc)")
                out += changes.isEmpty ? ["  (no change)"] : changes.map { "  " + $0.text }
            }
        }
        if ctx.console.isTerminal { ctx.console.progress("") }
        return out
    }

    /// The read model as a JSON value; a screen that cannot be built at this point (no such sensor yet, say)
    /// is `{"error": "..."}`, so its appearance shows as a change.
    static func model(_ screen: any Screen.Type, _ world: WorldReader, _ p: ScreenParameters) throws -> JSONValue {
        let text: String
        do { text = try ScreenCommand.output(screen, world, p, json: true).joined() } catch let e as CLIError {
            return .object([("error", .string(e.message))])
        }
        do { return try JSONReader.parse(text) } catch { throw CLIError.failure("screen \(screen.name): read model is not JSON (\(error))") }
    }
}

