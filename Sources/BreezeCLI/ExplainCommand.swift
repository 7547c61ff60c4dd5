import Breeze
import BreezeCore
import BreezeStore

/// `breeze explain FIELD`: why a piece of the user's state has its value, from the events of their stream,
/// through `UserState.explain` (the same apply and merge code that computes the state).
enum ExplainCommand {
    static let usage = """
        usage: breeze explain favourite SENSOR | watch SENSOR | unit | alert [category|on-clear|enabled|test]
                              | source SOURCE [enabled|correction] | target TYPE... [--user ID] [--db PATH] [--json]

        Lists the events that decided the field, with their replica (origin replica, epoch, counter), HLC
        (time and logical counter) and local seq, which one won and why, and the writes that lost.
          last-writer-wins fields (unit, alert, source, target): the write with the greatest HLC wins; equal
            HLCs are ordered by origin replica, then epoch, then counter. Each loser says on which it lost,
            and how it relates to the winner as far as this log tells: an earlier write of the same replica,
            overwritten (the winner was written here after it arrived), concurrent (written here before it
            arrived), or unknown (both written elsewhere).
          add-wins sets (favourite, watch): each add is a dot (its event id); a remove removes exactly the dots
            its replica had observed, so the sensor is present while some add was observed by no remove.
          test alerts (alert test): a grow-only set: every request is kept; each is listed.
        `alert` alone explains its three settings, `source SOURCE` alone both of its fields. Read-only.
        """

    static let rule = "last writer wins: greatest HLC; equal HLCs by origin replica, then epoch, then counter"
    static let setRule = "add wins: a remove removes only the adds (dots) its replica had observed"

    static func run(_ args: [String], _ ctx: Context) throws(CLIError) {
        let p = try Arguments(args, usage: usage).positionals
        let fields = try parseFields(p)
        let stream = try ctx.userStream()
        let (explanations, ctxOf) = try ctx.withReadOnlyLog { log in try explain(fields, stream: stream, log) }
        if ctx.json {
            ctx.console.out(JSONValue.object([
                ("user", .string(ctx.user)), ("stream", .string(stream.description)),
                ("fields", .array(explanations.map { json($0, ctxOf) })),
            ]).text)
            return
        }
        for (i, x) in explanations.enumerated() {
            if i > 0 { ctx.console.out("") }
            for l in text(x, ctxOf, user: ctx.user) { ctx.console.out(l) }
        }
    }

    /// The explanations of `fields` from the events of `stream` in `log` (`breeze inspect` calls it too), with
    /// what the log knows beyond them.
    static func explain(_ fields: [UserStateField], stream: StreamID, _ log: EventLog) throws -> ([FieldExplanation], Local) {
        var entries: [EventLog.Entry] = []
        try log.forEach(stream: stream) { entries.append($0); return true }
        let seqOf = Dictionary(entries.map { ($0.event.id, $0.seq) }, uniquingKeysWith: { a, _ in a })
        let explanations = expanded(fields, entries.map(\.event)).map { UserState.explain($0, events: entries.map(\.event)) }
        if let bad = explanations.first(where: { !$0.consistent }) {
            throw CLIError.failure("\(bad.field): the explanation disagrees with the merged state (a bug in the merge code); please report it with `breeze log --json --stream \(stream)`")
        }
        return (explanations, Local(replica: log.replica, seqOf: seqOf))
    }

    /// What this database knows beyond the events: its own replica and the local order of arrival.
    struct Local {
        let replica: ReplicaID
        let seqOf: [EventID: Int64]
    }

    /// How a losing write relates to the winner, as far as this log can tell:
    /// - `earlier-write`: the same replica wrote both, the loser first;
    /// - `overwritten`: the winner was written on this replica after the loser had arrived here (its writer
    ///   had seen the loser);
    /// - `concurrent`: the winner was written on this replica before the loser arrived (its writer had not
    ///   seen it);
    /// - `unknown`: both came from elsewhere; the log does not record what the winner's writer had seen.
    static func relation(_ loser: Event, _ winner: Event, _ local: Local) -> String {
        if loser.id.origin.replica == winner.id.origin.replica { return "earlier-write" }
        guard winner.id.origin.replica == local.replica, let w = local.seqOf[winner.id], let l = local.seqOf[loser.id] else {
            return "unknown"
        }
        return l < w ? "overwritten" : "concurrent"
    }

    static let relationText = [
        "earlier-write": "same replica: an earlier write",
        "overwritten": "another replica; overwritten: the winner was written here after this write arrived",
        "concurrent": "another replica; concurrent: the winner was written here before this write arrived",
        "unknown": "another replica; concurrent unless the winner's writer had seen it (not recorded here)",
    ]

    /// Each favourite or watch field as every element of its set that names the same sensor: `149970`
    /// explains `purpleair:149970` (the canonical id a star is stored under) and, from before ids were
    /// canonical, a bare `149970` too; a name no event uses is kept as given.
    static func expanded(_ fields: [UserStateField], _ events: [Event]) -> [UserStateField] {
        var favourites: Set<String> = [], watched: Set<String> = []
        for e in events {
            switch try? e.body() {
            case .favouriteAdd(let s)?, .favouriteRemove(let s, _)?: favourites.insert(s)
            case .watchAdd(let s)?, .watchRemove(let s, _)?: watched.insert(s)
            default: break
            }
        }
        func forms(_ ref: String, _ names: Set<String>) -> [String] {
            let bare = ref.firstIndex(of: ":").map { String(ref[ref.index(after: $0)...]) } ?? ref
            let found = names.filter { $0 == ref || $0 == bare || $0.hasSuffix(":" + bare) && (ref == bare || $0 == ref) }.sorted()
            return found.isEmpty ? [ref] : found
        }
        return fields.flatMap { f -> [UserStateField] in
            switch f {
            case .favourite(let ref): return forms(ref, favourites).map { .favourite($0) }
            case .watch(let ref): return forms(ref, watched).map { .watch($0) }
            default: return [f]
            }
        }
    }

    static func sensorID(_ s: String) throws(CLIError) -> String {
        do { return try Replica.validateSensor(s) } catch { throw .failure(error.description) }
    }

    static func parseFields(_ p: [String]) throws(CLIError) -> [UserStateField] {
        guard let kind = p.first else { throw .usage("missing FIELD", usage) }
        func one(_ name: String) throws(CLIError) -> String {
            guard p.count >= 2 else { throw .usage("missing \(name)", usage) }
            guard p.count == 2 else { throw .usage("unexpected argument '\(p[2])'", usage) }
            return p[1]
        }
        switch kind {
        case "favourite": return [.favourite(try sensorID(try one("SENSOR")))]
        case "watch": return [.watch(try sensorID(try one("SENSOR")))]
        case "unit":
            guard p.count == 1 else { throw .usage("unexpected argument '\(p[1])'", usage) }
            return [.unit]
        case "alert":
            guard p.count <= 2 else { throw .usage("unexpected argument '\(p[2])'", usage) }
            switch p.count == 2 ? p[1] : nil {
            case nil: return [.alertCategory, .alertOnClear, .alertsEnabled]
            case "category": return [.alertCategory]
            case "on-clear": return [.alertOnClear]
            case "enabled": return [.alertsEnabled]
            case "test": return [.testAlerts]
            case let x?: throw .usage("alert field '\(x)': expected category, on-clear, enabled or test", usage)
            }
        case "source":
            guard p.count >= 2 else { throw .usage("missing SOURCE", usage) }
            guard p.count <= 3 else { throw .usage("unexpected argument '\(p[3])'", usage) }
            let s = p[1]
            guard DataSource.named(s) != nil else {
                throw .failure("source '\(s)' is unknown; known sources: \(DataSource.catalog.map(\.id).joined(separator: ", "))")
            }
            switch p.count == 3 ? p[2] : nil {
            case nil: return [.sourceEnabled(s), .correction(s)]
            case "enabled": return [.sourceEnabled(s)]
            case "correction": return [.correction(s)]
            case let x?: throw .usage("source field '\(x)': expected enabled or correction", usage)
            }
        case "target":
            guard p.count >= 2 else { throw .usage("missing TYPE", usage) }
            return [.target(p.dropFirst().joined(separator: " "))]
        default:
            throw .usage("unknown field '\(kind)'; fields: favourite, watch, unit, alert, source, target", usage)
        }
    }

    // MARK: Text

    /// `replica 3f9c0a1b2c3d4e5f epoch 1 counter 4, hlc 2026-11-29T15:47:14.567Z+0 (1764431234567.0), seq 7`
    static func describe(_ e: Event, _ seqOf: [EventID: Int64]) -> String {
        "\(e.type) event \(e.id) (replica \(e.id.origin.replica) epoch \(e.id.origin.epoch) counter \(e.id.counter), "
            + "hlc \(ISOTime.format(millis: Int64(e.hlc.physicalMillis)))+\(e.hlc.logical) [\(e.hlc)]"
            + (seqOf[e.id].map { ", seq \($0)" } ?? "") + ")"
    }

    static func reason(_ c: Stamp.Component?, loser: Event, winner: Event) -> String {
        let l = loser.id, w = winner.id
        switch c {
        case .hlc?: return "older HLC: \(loser.hlc) < \(winner.hlc)"
        case .replica?: return "equal HLC \(loser.hlc); tie-break on origin replica: \(l.origin.replica) < \(w.origin.replica)"
        case .epoch?: return "equal HLC and replica; tie-break on epoch: \(l.origin.epoch) < \(w.origin.epoch)"
        case .counter?: return "equal HLC, replica and epoch; tie-break on counter: \(l.counter) < \(w.counter)"
        case nil: return "same event"
        }
    }

    static func text(_ x: FieldExplanation, _ local: Local, user: String) -> [String] {
        let seqOf = local.seqOf
        var out: [String] = []
        if x.field.isSetMembership {
            let el = x.field.element!
            let present = x.value == "true"
            out.append("\(x.field) (user \(user)): \(present ? "present" : "absent")")
            if x.adds.isEmpty { out.append("  no event has added \(el)"); return out }
            for add in x.adds {
                if let e = add.event {
                    out.append("  add     \(describe(e, seqOf))")
                } else {
                    out.append("  add     dot \(add.dot) (observed by a remove; the add itself is not held here)")
                }
                out.append(add.removedBy.isEmpty ? "          live: observed by no remove"
                                                 : "          removed by \(add.removedBy.map(\.description).joined(separator: ", "))")
            }
            for r in x.removes {
                out.append("  remove  \(describe(r.event, seqOf))")
                out.append("          observed \(r.observed.map(\.description).joined(separator: ", "))")
            }
            let live = x.adds.filter { $0.event != nil && $0.removedBy.isEmpty }
            if present {
                for a in live {
                    let missed = x.removes.filter { !$0.observed.contains(a.dot) }.map(\.event.id.description)
                    out.append("  why: present because add \(a.dot) "
                               + (missed.isEmpty ? "was never removed" : "was not observed by remove \(missed.joined(separator: ", "))"))
                }
            } else {
                out.append("  why: absent because every add was observed by a remove: "
                           + x.adds.map { "\($0.dot) by \($0.removedBy.map(\.description).joined(separator: ", "))" }.joined(separator: "; "))
            }
            out.append("  rule: \(setRule)")
            return out
        }
        if x.field == .testAlerts {
            out.append("\(x.field) (user \(user)): \(x.value) request(s)")
            for e in x.requests {
                let sensor: String
                if case .testAlert(let s)? = try? e.body() { sensor = s ?? "(any sensor)" } else { sensor = "?" }
                out.append("  request \(sensor): \(describe(e, seqOf))")
            }
            out.append("  rule: grow-only set: every request is kept")
            return out
        }
        guard let w = x.winner else {
            out.append("\(x.field) (user \(user)): \(x.value) (default: no event has set it)")
            return out
        }
        out.append("\(x.field) (user \(user)): \(x.value), \(x.losers.count + 1) write(s)")
        out.append("  won   \(w.value): \(describe(w.event, seqOf))")
        for l in x.losers {
            out.append("  lost  \(l.value): \(describe(l.event, seqOf))")
            out.append("        \(reason(l.lostOn, loser: l.event, winner: w.event))"
                       + " (\(relationText[relation(l.event, w.event, local)]!))")
        }
        out.append("  rule: \(rule)")
        return out
    }

    // MARK: JSON

    static func eventJSON(_ e: Event, _ seqOf: [EventID: Int64]) -> [(String, JSONValue)] {
        var pairs: [(String, JSONValue)] = [("id", .string(e.id.description))]
        if let s = seqOf[e.id] { pairs.append(("seq", .int(s))) }
        return pairs + [
            ("type", .string(e.type)), ("origin", .string(e.id.origin.replica.description)),
            ("epoch", .int(Int64(e.id.origin.epoch))), ("counter", .int(Int64(bitPattern: e.id.counter))),
            ("hlc", .string(e.hlc.description)), ("time", .string(ISOTime.format(millis: Int64(e.hlc.physicalMillis)))),
            ("logical", .int(Int64(e.hlc.logical))),
        ]
    }

    static func json(_ x: FieldExplanation, _ local: Local) -> JSONValue {
        let seqOf = local.seqOf
        var pairs: [(String, JSONValue)] = [("field", .string(x.field.description))]
        if x.field.isSetMembership {
            pairs += [
                ("kind", .string("add-wins-set")), ("present", .bool(x.value == "true")),
                ("adds", .array(x.adds.map { a in
                    .object([("dot", .string(a.dot.description)), ("held", .bool(a.event != nil))]
                            + (a.event.map { eventJSON($0, seqOf).filter { $0.0 != "id" } } ?? [])
                            + [("live", .bool(a.removedBy.isEmpty)),
                               ("removedBy", .array(a.removedBy.map { .string($0.description) }))])
                })),
                ("removes", .array(x.removes.map { r in
                    .object(eventJSON(r.event, seqOf) + [("observed", .array(r.observed.map { .string($0.description) }))])
                })),
                ("rule", .string(setRule)),
            ]
            return .object(pairs)
        }
        if x.field == .testAlerts {
            pairs += [("kind", .string("grow-only-set")), ("count", .int(Int64(x.requests.count))),
                      ("requests", .array(x.requests.map { e in
                          var sensor: JSONValue = .null
                          if case .testAlert(let s?)? = try? e.body() { sensor = .string(s) }
                          return .object(eventJSON(e, seqOf) + [("sensor", sensor)])
                      }))]
            return .object(pairs)
        }
        pairs += [("kind", .string("last-writer-wins")), ("value", .string(x.value)), ("default", .bool(x.isDefault))]
        if let w = x.winner {
            pairs.append(("winner", .object(eventJSON(w.event, seqOf) + [("value", .string(w.value))])))
            pairs.append(("losers", .array(x.losers.map { l in
                .object(eventJSON(l.event, seqOf) + [
                    ("value", .string(l.value)), ("lostOn", .string(l.lostOn?.rawValue ?? "none")),
                    ("reason", .string(reason(l.lostOn, loser: l.event, winner: w.event))),
                    ("sameReplicaAsWinner", .bool(l.event.id.origin.replica == w.event.id.origin.replica)),
                    ("relation", .string(relation(l.event, w.event, local))),
                ])
            })))
        } else {
            pairs += [("winner", .null), ("losers", .array([]))]
        }
        pairs.append(("rule", .string(rule)))
        return .object(pairs)
    }
}
