import BreezeCore
import BreezeProjections
import BreezeStore
import Glibc

/// `breeze diff A.db B.db`: how two replicas' logs differ, and whether the same events give the same state
/// in both (determinism). Both databases are opened read-only.
enum DiffCommand {
    static let usage = """
        usage: breeze diff A.db B.db [--stream S] [--limit N] [--json]

        Compares two databases (read-only, each read in one consistent snapshot; they may be in use by
        running nodes), stream by stream:
          1. version vectors side by side: for each origin (replica.epoch), the highest counter each holds;
          2. the events each holds that the other lacks: a count, and the first N (--limit, default 10) ids
             and types; events with one id but different content (conflicts) are listed too;
          3. for a stream both hold with exactly the same events: each log is replayed in its own seq order
             through the same code as the state (UserState for user streams, the facts world for public and
             health streams) and the two states are compared; if they differ, the order of A and the order of
             B are walked side by side and the first point where both have applied the same set of events
             but disagree is reported as a DETERMINISM BUG, with the events applied since they last agreed;
          4. each database's stored projection (when caught up with its log) is compared with a fresh replay
             of its own log into a temporary database (projection digest); a difference is a determinism bug
             or a damaged projection, reported as such. With the same facts, the two stored digests are
             compared too.
        Exit status: 0 when the two hold the same events and the same state, 1 when they differ (like
        diff(1)), 2 on usage errors.
        """

    /// The comparison of one stream.
    struct StreamReport {
        let stream: StreamID
        let vectorA: VersionVector
        let vectorB: VersionVector
        var onlyA = 0, onlyB = 0
        var sampleA: [Event] = []
        var sampleB: [Event] = []
        var conflicts: [EventID] = []
        var stateA: String?
        var stateB: String?
        var divergence: ReplayDivergence?
        /// "A" or "B": a fact stream only the other holds, which this side's interests do not name (it holds
        /// part of the facts by design, `Protocol/sync.md` 6.7): not a difference.
        var outsideInterestsOf: String?
        /// Events one side holds that the other dropped beyond its horizon (`horizon_gaps`): not differences;
        /// the states are then not compared (one side holds fewer readings by design).
        var beyondHorizonA = 0, beyondHorizonB = 0
        /// Events one side holds that the other compacted (`retired`: their rows are in a `reading.compact`
        /// event there): not differences, and the states are still compared (a compaction changes no fact).
        var compactedA = 0, compactedB = 0
        var sameEvents: Bool { onlyA == 0 && onlyB == 0 && conflicts.isEmpty }
        var differs: Bool { outsideInterestsOf == nil && (!sameEvents || divergence != nil || stateA != stateB) }
    }

    /// One database's stored projection against a fresh replay.
    struct ProjectionReport {
        let name: String
        var checkpoint: Int64 = 0
        var lastSeq: Int64 = 0
        var stored: String?
        var fresh: String?
        var note: String?
        var bad: Bool { stored != nil && fresh != nil && stored != fresh }
    }

    static func run(_ args: [String], _ ctx: Context) throws(CLIError) {
        let a = try Arguments(args, valued: ["stream", "limit"], usage: usage)
        let paths = try a.expect(["A.db", "B.db"])
        var only: StreamID?
        if let s = a.options["stream"] {
            do { only = try StreamID(parsing: s) } catch { throw .failure("--stream: \(error.description)") }
        }
        var limit = 10
        if let l = a.options["limit"] {
            guard let n = Int(l), n >= 0 else { throw .failure("--limit '\(l)': expected a whole number >= 0") }
            limit = n
        }
        let console = ctx.console
        func progress(_ s: String) { if console.isTerminal { console.progress(s) } }
        let (streams, projections, crossDigest, differs) = try ctx.withReadOnlyLog(at: paths[0]) { A in
            try ctx.withReadOnlyLog(at: paths[1]) { B in try compareLogs(A, B, only: only, limit: limit, progress: progress) }
        }
        if ctx.json {
            console.out(json(streams, projections, paths, crossDigest: crossDigest, differs: differs).text)
        } else {
            for l in text(streams, projections, paths, crossDigest: crossDigest) { console.out(l) }
        }
        if differs { throw .failure("\(paths[0]) and \(paths[1]) differ") }
    }

    /// Compares two logs, each read in one snapshot (`breeze inspect --compare` calls it too): every stream (or
    /// `only`), then each stored projection against a fresh replay. `crossDigest`: the same facts but different
    /// stored projections; `differs`: any difference at all.
    static func compareLogs(_ A: EventLog, _ B: EventLog, only: StreamID?, limit: Int, progress: (String) -> Void)
        throws -> (streams: [StreamReport], projections: [ProjectionReport], crossDigest: Bool, differs: Bool) {
        let (streams, projections): ([StreamReport], [ProjectionReport]) = try A.withSnapshot { try B.withSnapshot {
            let all = Array(Set(try A.streams() + B.streams())).sorted()
            let names = only.map { [$0] } ?? all
            var reports: [StreamReport] = []
            // A replica with interests holds only the fact streams they name (and its subscription can name
            // streams the other side lacks): a fact stream one side does not hold at all is outside its interests.
            let partialA = try subscribed(A), partialB = try subscribed(B)
            let gapsA = (try? A.horizonGaps()) ?? [:], gapsB = (try? B.horizonGaps()) ?? [:]
            let retiredA = (try? A.retiredRanges()) ?? [:], retiredB = (try? B.retiredRanges()) ?? [:]
            for s in names {
                progress("comparing \(s)")
                var r = try compare(s, A, B, limit: limit, gapsA: gapsA[s] ?? [:], gapsB: gapsB[s] ?? [:],
                                    retiredA: retiredA[s] ?? [:], retiredB: retiredB[s] ?? [:], progress: progress)
                // Only a stream the side does not subscribe to: one it subscribes to and lacks is a difference.
                if s.isFactPartition {
                    if let sub = partialA, !sub.contains(s), r.vectorA.counters.isEmpty, !r.vectorB.counters.isEmpty { r.outsideInterestsOf = "A" }
                    if let sub = partialB, !sub.contains(s), r.vectorB.counters.isEmpty, !r.vectorA.counters.isEmpty { r.outsideInterestsOf = "B" }
                }
                reports.append(r)
            }
            var projections: [ProjectionReport] = []
            if !(only?.isUser ?? false) {
                for (name, log) in [("A", A), ("B", B)] {
                    progress("replaying \(name)'s projection")
                    projections.append(try projection(name, log))
                }
            }
            progress("")
            return (reports, projections)
        } }
        // Projections of a partial replica hold part of the facts: their digests are compared only when
        // both hold the same facts.
        let factsSame = streams.filter { !$0.stream.isUser }.allSatisfy { $0.sameEvents && $0.outsideInterestsOf == nil && $0.beyondHorizonA + $0.beyondHorizonB == 0 }
        let crossDigest = projections.count == 2 && factsSame && projections[0].stored != nil && projections[1].stored != nil
            && projections[0].stored != projections[1].stored
        let differs = streams.contains { $0.differs } || projections.contains { $0.bad } || crossDigest
        return (streams, projections, crossDigest, differs)
    }

    /// The fact streams a replica's interests name (for every user whose settings it holds), nil when it
    /// declared none (it holds everything).
    static func subscribed(_ log: EventLog) throws -> Set<StreamID>? {
        guard !(try log.interests().isEmpty) else { return nil }
        let users = try log.streams().compactMap { s -> String? in if case .user(let u) = s { return u } else { return nil } }
        var out = Set<StreamID>()
        for u in users.isEmpty ? [nil] : users.map(Optional.some) {
            out.formUnion(try InterestResolver().subscription(log, user: u) ?? [])
        }
        return out
    }

    /// Compares one stream of the two logs.
    static func compare(_ s: StreamID, _ A: EventLog, _ B: EventLog, limit: Int,
                        gapsA: [Origin: [ClosedRange<UInt64>]] = [:], gapsB: [Origin: [ClosedRange<UInt64>]] = [:],
                        retiredA: [Origin: [ClosedRange<UInt64>]] = [:], retiredB: [Origin: [ClosedRange<UInt64>]] = [:],
                        progress: (String) -> Void) throws -> StreamReport {
        var r = StreamReport(stream: s, vectorA: try A.versionVector(of: s), vectorB: try B.versionVector(of: s))
        var hashesA: [UInt8] = Array(repeating: 0, count: Event.hashLength)
        var hashesB = hashesA
        func scan(_ log: EventLog, other: VersionVector, otherGaps: [Origin: [ClosedRange<UInt64>]], beyond: inout Int,
                  otherRetired: [Origin: [ClosedRange<UInt64>]], compacted: inout Int,
                  count: inout Int, sample: inout [Event], xor: inout [UInt8]) throws {
            try each(log, s) { entry in
                if otherGaps[entry.event.id.origin]?.contains(where: { $0.contains(entry.event.id.counter) }) == true {
                    beyond += 1
                } else if otherRetired[entry.event.id.origin]?.contains(where: { $0.contains(entry.event.id.counter) }) == true {
                    compacted += 1
                } else if other.contains(entry.event.id) {
                    let h = entry.event.hash
                    for i in 0..<Event.hashLength { xor[i] ^= h[i] }
                } else {
                    count += 1
                    if sample.count < limit { sample.append(entry.event) }
                }
            }
        }
        try scan(A, other: r.vectorB, otherGaps: gapsB, beyond: &r.beyondHorizonB, otherRetired: retiredB, compacted: &r.compactedB,
                 count: &r.onlyA, sample: &r.sampleA, xor: &hashesA)
        try scan(B, other: r.vectorA, otherGaps: gapsA, beyond: &r.beyondHorizonA, otherRetired: retiredA, compacted: &r.compactedA,
                 count: &r.onlyB, sample: &r.sampleB, xor: &hashesB)
        if hashesA != hashesB {
            // Some id is held by both with different content: find which.
            var held: [EventID: [UInt8]] = [:]
            try each(A, s) { if r.vectorB.contains($0.event.id) { held[$0.event.id] = $0.event.hash } }
            try each(B, s) { e in
                if let h = held[e.event.id], h != e.event.hash { r.conflicts.append(e.event.id) }
            }
            r.conflicts.sort()
        }
        guard r.sameEvents, r.beyondHorizonA == 0, r.beyondHorizonB == 0 else { return r }
        // Same events: replay each in its own order (streaming, page by page) and compare; only when the
        // states differ are both orders loaded to find where.
        func entries(_ log: EventLog) throws -> [(seq: Int64, event: Event)] {
            var out: [(seq: Int64, event: Event)] = []
            try each(log, s) { out.append(($0.seq, $0.event)) }
            return out
        }
        func replay<S>(_ log: EventLog, _ initial: S, _ apply: (inout S, Event) -> Void) throws -> S {
            var state = initial
            try each(log, s) { apply(&state, $0.event) }
            return state
        }
        let report = { (i: Int) in progress("\(s): looking for the divergence, \(i) events") }
        if case .user = s {
            let sa = try replay(A, UserState()) { $0.apply($1) }, sb = try replay(B, UserState()) { $0.apply($1) }
            r.stateA = sa.stateHash
            r.stateB = sb.stateHash
            if sa != sb {
                r.divergence = ReplayDivergence.first(try entries(A), try entries(B), initial: UserState(), progress: report) { $0.apply($1) }
            }
        } else {
            let wa = try replay(A, FactWorld()) { $0.apply($1) }, wb = try replay(B, FactWorld()) { $0.apply($1) }
            if wa != wb {
                r.stateA = "differs"
                r.stateB = "differs from A"
                r.divergence = ReplayDivergence.first(try entries(A), try entries(B), initial: FactWorld(), progress: report) { $0.apply($1) }
            }
        }
        return r
    }

    /// Calls `body` for each event of stream `s` in seq order. `forEach(stream:)` re-reads the stream's index
    /// range for every page (that index is ordered by origin and counter, not seq), which grows with the square
    /// of a large stream; a large stream is read by one scan of the whole log in seq order instead.
    static func each(_ log: EventLog, _ s: StreamID, _ body: (EventLog.Entry) throws -> Void) throws {
        if try log.count(stream: s) > 20_000 {
            try log.forEach { entry in
                if entry.event.stream == s { try body(entry) }
                return true
            }
        } else {
            try log.forEach(stream: s) { try body($0); return true }
        }
    }

    /// The stored projection digest of `log` and that of a fresh replay of its events into a temporary
    /// database (removed afterwards).
    static func projection(_ name: String, _ log: EventLog) throws -> ProjectionReport {
        var p = ProjectionReport(name: name)
        let (seq, version) = try log.projectionCheckpoint()
        p.checkpoint = seq
        p.lastSeq = try log.lastSeq()
        guard version == EventLog.projectionVersion, seq == p.lastSeq else {
            p.note = version == 0 ? "no stored projection yet (`breeze screen` builds it): not compared"
                : version != EventLog.projectionVersion
                ? "stored projection is of mapping version \(version), this build's is \(EventLog.projectionVersion): not compared"
                : "stored projection is at seq \(seq) of \(p.lastSeq) (not caught up; run `breeze screen` to catch up): not compared"
            return p
        }
        p.stored = try log.projectionDigest()
        var template = Array("/tmp/breeze-diff-XXXXXX".utf8CString)
        guard let d = mkdtemp(&template) else { throw CLIError.failure("cannot create a temporary directory in /tmp") }
        let dir = String(cString: d)
        defer {
            for f in ["fresh.db", "fresh.db-wal", "fresh.db-shm"] { unlink(dir + "/" + f) }
            rmdir(dir)
        }
        // A device's log with readings dropped beyond its horizon has gaps that `ingest` refuses: it is
        // replayed as it is.
        let gapped = !(((try? log.horizonGaps()) ?? [:]).isEmpty) || !(((try? log.retiredRanges()) ?? [:]).isEmpty)
        var options = EventLog.Options()
        options.durability = .normal                     // a scratch database: no fsync per commit
        let fresh = try EventLog.create(at: dir + "/fresh.db", options: options)
        defer { fresh.close() }
        // A projection that leaves out readings beyond a horizon: the replay does the same.
        let cutoff = (try? log.appliedHorizonCutoff()) ?? 0
        if cutoff > 0 { try fresh.takeProjectionCutoff(cutoff) }
        var batch: [Event] = []
        try log.forEach { entry in
            batch.append(entry.event)
            if batch.count == 10_000 {
                if gapped { try fresh.storeReplayed(batch) } else { _ = try fresh.ingest(batch) }
                batch.removeAll(keepingCapacity: true)
            }
            return true
        }
        if !batch.isEmpty { if gapped { try fresh.storeReplayed(batch) } else { _ = try fresh.ingest(batch) } }
        try fresh.catchUpProjection()
        p.fresh = try fresh.projectionDigest()
        return p
    }

    // MARK: Output

    static func text(_ streams: [StreamReport], _ projections: [ProjectionReport], _ paths: [String], crossDigest: Bool) -> [String] {
        var out = ["A = \(paths[0])", "B = \(paths[1])"]
        for side in ["A", "B"] {
            let outside = streams.filter { $0.outsideInterestsOf == side }
            guard !outside.isEmpty else { continue }
            let events = outside.reduce(UInt64(0)) { $0 + (side == "A" ? $1.vectorB : $1.vectorA).total }
            out.append("")
            out.append("\(outside.count) fact stream(s) (\(events) events) held only by \(side == "A" ? "B" : "A"): outside \(side)'s interests, which hold part of the facts by design (not a difference)")
        }
        for r in streams where r.outsideInterestsOf == nil {
            out.append("")
            let horizon = r.beyondHorizonA + r.beyondHorizonB > 0
            out.append("stream \(r.stream): \(r.differs ? "DIFFERENT" : horizon ? "same events within the horizon" : "same events, same state")")
            out.append("  " + pad("origin", 24) + pad("A", 12) + "B")
            for o in Set(r.vectorA.counters.keys).union(r.vectorB.counters.keys).sorted() {
                let a = r.vectorA.counters[o], b = r.vectorB.counters[o]
                out.append("  " + pad(o.description, 24) + pad(a.map(String.init) ?? "-", 12) + (b.map(String.init) ?? "-")
                           + (a != b ? "   <" : ""))
            }
            for (who, n, sample, other) in [("A", r.onlyA, r.sampleA, "B"), ("B", r.onlyB, r.sampleB, "A")] where n > 0 {
                out.append("  only in \(who): \(n) event(s) \(other) lacks" + (sample.count < n ? " (first \(sample.count))" : ""))
                for e in sample { out.append("    \(e.id)  \(e.type)") }
            }
            for (who, n) in [("A", r.beyondHorizonA), ("B", r.beyondHorizonB)] where n > 0 {
                out.append("  \(n) event(s) of \(who == "A" ? "B" : "A") are beyond \(who)'s horizon (dropped there by design, not a difference; states not compared)")
            }
            for (who, n) in [("A", r.compactedA), ("B", r.compactedB)] where n > 0 {
                out.append("  \(n) event(s) of \(who == "A" ? "B" : "A") were compacted on \(who) (their rows are in a reading.compact event there, not a difference)")
            }
            if !r.conflicts.isEmpty {
                out.append("  conflicts: \(r.conflicts.count) id(s) held by both with different content")
                for id in r.conflicts.prefix(10) { out.append("    \(id)") }
            }
            if r.stream.isUser, let a = r.stateA, let b = r.stateB {
                out.append("  state hash  A \(a)")
                out.append("              B \(b)")
            }
            if let d = r.divergence {
                out.append("  DETERMINISM BUG: the same events give different states in A's order and in B's order")
                out.append("  the states agreed after \(d.lastAgreed) event(s) and differ after \(d.applied), the first point where both had applied the same events;")
                out.append("  applied since, in A's order:")
                for x in d.sinceA { out.append("    seq \(x.seq)  \(x.event.id)  \(x.event.type)") }
                out.append("  in B's order:")
                for x in d.sinceB { out.append("    seq \(x.seq)  \(x.event.id)  \(x.event.type)") }
            } else if r.sameEvents && r.stateA != r.stateB {
                out.append("  DETERMINISM BUG: the same events give different states, and no common point of the two orders agrees")
            }
        }
        for p in projections {
            out.append("")
            if let note = p.note { out.append("projection \(p.name): \(note)"); continue }
            if p.bad {
                out.append("projection \(p.name): DETERMINISM BUG or damaged projection: the stored projection (digest \(p.stored!)) differs from a fresh replay of its own log (digest \(p.fresh!))")
            } else {
                out.append("projection \(p.name): stored projection equals a fresh replay of its log (digest \(p.fresh!))")
            }
        }
        if crossDigest {
            out.append("projections: A and B hold the same facts but their stored projections differ")
        }
        return out
    }

    static func json(_ streams: [StreamReport], _ projections: [ProjectionReport], _ paths: [String], crossDigest: Bool, differs: Bool) -> JSONValue {
        func vv(_ v: VersionVector) -> JSONValue {
            .object(v.counters.keys.sorted().map { ($0.description, .int(Int64(bitPattern: v.counters[$0]!))) })
        }
        func sample(_ es: [Event]) -> JSONValue {
            .array(es.map { .object([("id", .string($0.id.description)), ("type", .string($0.type))]) })
        }
        func since(_ xs: [(seq: Int64, event: Event)]) -> JSONValue {
            .array(xs.map { .object([("seq", .int($0.seq)), ("id", .string($0.event.id.description)), ("type", .string($0.event.type))]) })
        }
        let s: [JSONValue] = streams.filter { $0.outsideInterestsOf == nil }.map { r in
            var pairs: [(String, JSONValue)] = [
                ("stream", .string(r.stream.description)), ("same", .bool(!r.differs)),
                ("vectorA", vv(r.vectorA)), ("vectorB", vv(r.vectorB)),
                ("onlyA", .object([("count", .int(Int64(r.onlyA))), ("events", sample(r.sampleA))])),
                ("onlyB", .object([("count", .int(Int64(r.onlyB))), ("events", sample(r.sampleB))])),
                ("conflicts", .array(r.conflicts.map { .string($0.description) })),
                ("beyondHorizonOfA", .int(Int64(r.beyondHorizonA))), ("beyondHorizonOfB", .int(Int64(r.beyondHorizonB))),
                ("compactedOnA", .int(Int64(r.compactedA))), ("compactedOnB", .int(Int64(r.compactedB))),
            ]
            if r.stream.isUser, let a = r.stateA, let b = r.stateB { pairs += [("stateHashA", .string(a)), ("stateHashB", .string(b))] }
            if let d = r.divergence {
                pairs.append(("determinismBug", .object([("agreedAfter", .int(Int64(d.lastAgreed))), ("differAfter", .int(Int64(d.applied))),
                                                         ("sinceA", since(d.sinceA)), ("sinceB", since(d.sinceB))])))
            }
            return .object(pairs)
        }
        let p: [JSONValue] = projections.map { p in
            .object([("db", .string(p.name)), ("checkpoint", .int(p.checkpoint)), ("lastSeq", .int(p.lastSeq)),
                     ("stored", p.stored.map(JSONValue.string) ?? .null), ("fresh", p.fresh.map(JSONValue.string) ?? .null),
                     ("determinismBug", .bool(p.bad)), ("note", p.note.map(JSONValue.string) ?? .null)])
        }
        return .object([("a", .string(paths[0])), ("b", .string(paths[1])), ("same", .bool(!differs)),
                        ("streams", .array(s)), ("projections", .array(p)), ("storedProjectionsDiffer", .bool(crossDigest)),
                        ("outsideInterestsOfA", .array(streams.filter { $0.outsideInterestsOf == "A" }.map { .string($0.stream.description) })),
                        ("outsideInterestsOfB", .array(streams.filter { $0.outsideInterestsOf == "B" }.map { .string($0.stream.description) }))])
    }
}

extension StreamID {
    /// True for `user:<id>` streams.
    var isUser: Bool { if case .user = self { return true } else { return false } }
}
