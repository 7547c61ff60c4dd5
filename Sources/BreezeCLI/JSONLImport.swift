import Breeze
import BreezeCore
import BreezeImport
import BreezeStore
import BreezeSync

/// `breeze import jsonl FILE...`: events written by `breeze export`, stored through the log's remote-ingest
/// path (`EventLog.ingest`), as if a peer had sent them. This is not a fact importer: ids, timestamps and
/// hashes are kept, so the events are the same events, byte for byte.
///
/// Each file is checked whole before anything from it is stored: every line must rebuild an event whose hash
/// is the one on the line, and no event may leave a gap in its origin's counters (given what the database
/// already holds); otherwise the file is refused, naming file:line and the reason. Then events already held
/// are duplicates (no-ops), and an event whose id is held with different content is a conflict: refused,
/// recorded in `conflicts` with its file:line, and reported (exit 1).
///
/// What the file says is taken only as far as it can be checked (the same rules as sync, `Protocol/sync.md`
/// 6.6 and 6.9): no event stamped more than a day ahead of this machine's clock (it would win every merge for
/// good), and an event of a user's streams under another replica's origin only with its origin's signature,
/// checked against the cluster authority given with `--authority FILE` at the event's time, or with
/// `--trust-unsigned`, which takes such events as the file says (a file from a source you trust).
enum JSONLImport {
    /// What an import trusts.
    struct Trust {
        /// The cluster authority's public key, to check the origin signatures a file carries.
        var authority: [UInt8]?
        /// Take a user's events under other origins without a signature.
        var unsigned = false
    }

    static let format = "jsonl"
    static let summary = "events exported by `breeze export`, stored as from a peer (same ids and hashes)"

    /// What happened to one file.
    struct FileReport {
        var file: String
        var refused: String?
        var issues: [String] = []
        var lines = 0, stored = 0, duplicates = 0, conflicts = 0
    }

    static let batchSize = 5_000
    static let maxIssuesShown = 20

    static func run(_ files: [String], trust: Trust = Trust(), _ ctx: Context) throws(CLIError) {
        let reports: [FileReport] = try ctx.withLog { log in files.map { importFile($0, log, trust: trust, ctx) } }
        if ctx.console.isTerminal { ctx.console.progress("") }
        for r in reports {
            if ctx.json {
                ctx.console.out(JSONValue.object([
                    ("file", .string(r.file)), ("format", .string(format)), ("refused", .string(r.refused)),
                    ("lines", .int(Int64(r.lines))), ("storedEvents", .int(Int64(r.stored))),
                    ("duplicates", .int(Int64(r.duplicates))), ("conflicts", .int(Int64(r.conflicts))),
                    ("issues", .array(r.issues.map { .string($0) })),
                ]).text)
            }
            for i in r.issues.prefix(maxIssuesShown) { ctx.console.err("breeze import: \(i)") }
            if r.issues.count > maxIssuesShown { ctx.console.err("breeze import: \(r.file): ... and \(r.issues.count - maxIssuesShown) more") }
            if let why = r.refused {
                ctx.console.err("breeze import: \(r.file): refused: \(why)")
            } else if !ctx.json {
                ctx.console.out("\(r.file): read \(r.lines) events; stored \(r.stored); \(r.duplicates) already held; \(r.conflicts) conflicting")
            }
        }
        let refused = reports.filter { $0.refused != nil }.count
        let conflicts = reports.map(\.conflicts).reduce(0, +)
        if refused > 0 {
            throw .failure("\(refused) of \(reports.count) file(s) refused; nothing from them was stored")
        }
        if conflicts > 0 {
            throw .failure("\(conflicts) event(s) conflict with events held under the same id: refused and recorded (see `breeze verify`)")
        }
    }

    /// What the checking pass decided for each line; the storing pass parses again only what it stores.
    private enum Plan: UInt8 { case blank, store, held, conflict }

    static func importFile(_ file: String, _ log: EventLog, trust: Trust = Trust(), _ ctx: Context) -> FileReport {
        var r = FileReport(file: file)
        let bytes: [UInt8]
        do throws(ImportError) { bytes = try Gzip.maybeInflate(try Replica.readFile(file), file: file) } catch {
            r.refused = error.message
            return r
        }
        // Lines as byte ranges (without CR LF or a leading byte-order mark). Only one byte per line is kept
        // between the passes, so memory stays bounded by the file and one batch of events.
        var lines: [Range<Int>] = []
        var from = 0
        for i in 0...bytes.count where i == bytes.count || bytes[i] == 10 {
            var lo = from, hi = i
            if hi > lo && bytes[hi - 1] == 13 { hi -= 1 }
            if lines.isEmpty && bytes[lo..<hi].starts(with: [0xEF, 0xBB, 0xBF]) { lo += 3 }
            lines.append(lo..<hi)
            from = i + 1
        }
        func decode(_ n: Int) throws(EventLine.LineError) -> (event: Event, signature: OriginSignature?)? {
            let line = bytes[lines[n]]
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return nil }
            return try EventLine.decodeSigned(Substring(decoding: line, as: UTF8.self))
        }
        var verifier = trust.authority.map { SignatureVerifier(authority: $0, revocations: nil) }
        let limit = SystemClock.nowMillis() &+ HybridClock.deviceMaxAheadMillis
        var untrusted = 0
        var plan = [Plan](repeating: .blank, count: lines.count)
        do {
            // 1. Every line rebuilds an event whose hash is the one on the line, and no event leaves a gap in
            //    its origin's counters given what the database holds; events already held are duplicates or,
            //    with other content, conflicts.
            var heads: [StreamID: VersionVector] = [:]
            var gapReported: Set<String> = []
            var bad = 0
            // The counters the file's compactions and rollups retire (sync.md 6.10): an export of a server's log
            // has holes where they were, which are not gaps.
            var retiredInFile: [String: [ClosedRange<UInt64>]] = [:]
            var retiredBefore: [Int: EventLog.RetiredRange] = [:]
            for n in lines.indices {
                guard let e = try? decode(n)?.event, e.type == "reading.compact" || e.type == "reading.rollup" else { continue }
                switch try? e.body() {
                case .readingCompaction(let c)?: retiredInFile["\(e.stream) \(e.id.origin)", default: []] += c.retires
                case .readingRollup(let u)?: retiredInFile["\(e.stream) \(e.id.origin)", default: []] += u.retires
                default: break
                }
            }
            for (k, v) in retiredInFile { retiredInFile[k] = ReadingCompaction.normalised(v) }
            for n in lines.indices {
                let e: Event
                do {
                    guard let decoded = try decode(n) else { continue }
                    e = decoded.event
                    // The checks sync applies to what a peer sends: a stamp at most a day ahead; a user's event
                    // under another replica's origin signed by that origin (or taken on trust).
                    if e.hlc.physicalMillis > limit {
                        r.issues.append("\(file):\(n + 1): event \(e.id) of \(e.stream) is stamped \(ISOTime.format(millis: Int64(clamping: e.hlc.physicalMillis))), more than \(HybridClock.deviceMaxAheadMillis / 3_600_000) h ahead of this machine's clock: it would win every merge")
                        untrusted += 1
                        continue
                    }
                    if OriginSignature.isSigned(e.stream) && e.id.origin.replica != log.replica && !trust.unsigned {
                        if let sig = decoded.signature, verifier != nil {
                            if let why = verifier!.refusal(e, sig, nowMillis: SystemClock.nowMillis()) {
                                r.issues.append("\(file):\(n + 1): \(why)")
                                untrusted += 1
                                continue
                            }
                        } else {
                            r.issues.append("\(file):\(n + 1): event \(e.id) of \(e.stream) is another replica's (\(e.id.origin.replica)) "
                                            + (decoded.signature == nil ? "and carries no origin signature" : "and its signature cannot be checked without the cluster authority")
                                            + ": give --authority FILE to check the signatures the file carries, or --trust-unsigned to take the file's word")
                            untrusted += 1
                            continue
                        }
                    }
                } catch {
                    r.issues.append("\(file):\(n + 1): \(error.description)")
                    bad += 1
                    continue
                }
                r.lines += 1
                if heads[e.stream] == nil { heads[e.stream] = try log.versionVector(of: e.stream) }
                let held = heads[e.stream]![e.id.origin]
                if e.id.counter == held + 1 {
                    heads[e.stream]!.advance(to: e.id)
                    plan[n] = .store
                } else if e.id.counter > held + 1,
                          let range = retiredInFile["\(e.stream) \(e.id.origin)"]?.first(where: { $0.contains(held + 1) }),
                          range.upperBound >= e.id.counter - 1 {
                    // Retired by a compaction or rollup the file holds: the hole goes in with the event after it.
                    retiredBefore[n] = EventLog.RetiredRange(stream: e.stream, origin: e.id.origin, range: (held + 1)...(e.id.counter - 1))
                    heads[e.stream]!.advance(to: e.id)
                    plan[n] = .store
                } else if e.id.counter > held + 1 {
                    if gapReported.insert("\(e.stream) \(e.id.origin)").inserted {
                        let holds = held == 0 ? "this database holds no event of origin \(e.id.origin) in that stream"
                            : "this database holds that origin's events only up to counter \(held)"
                        let missing = held + 1 == e.id.counter - 1 ? "counter \(held + 1) is"
                            : "counters \(held + 1)...\(e.id.counter - 1) are"
                        r.issues.append("\(file):\(n + 1): event \(e.id) of \(e.stream) has counter \(e.id.counter), but \(holds): "
                                        + "\(missing) missing (was the file exported with --since?)")
                    }
                } else if let stored = try log.event(e.id, in: e.stream) {
                    plan[n] = stored.hash == e.hash ? .held : .conflict
                } else {
                    plan[n] = .store     // held only by an earlier line of this file: ingest tells a repeat from a conflict
                }
            }
            if bad > 0 {
                r.refused = "\(bad) line(s) are not events exported by `breeze export`, or were altered"
                return r
            }
            if untrusted > 0 {
                r.refused = "\(untrusted) event(s) cannot be taken as the file gives them (see above)"
                return r
            }
            if !r.issues.isEmpty {
                r.refused = "its events would leave gaps in \(r.issues.count) origin(s)' counters (the log refuses gaps): "
                    + "import the earlier events first (an export without --since), then this file"
                return r
            }
            r.duplicates = plan.filter { $0 == .held }.count
            // 2. Store through the remote-ingest path in batches, then conflicts one by one so each records its line.
            let toStore = plan.filter { $0 == .store }.count
            var batch: [Event] = []
            var signatures: [Int: OriginSignature] = [:]
            var retired: [EventLog.RetiredRange] = []
            var done = 0
            func flush() throws {
                guard !batch.isEmpty else { return }
                let report = try log.ingest(groups: [batch], source: file, signatures: [signatures], retired: [retired])[0]
                signatures = [:]
                retired = []
                r.stored += report.inserted
                r.duplicates += report.duplicates      // stored meanwhile by another process or a node
                r.conflicts += report.conflicts
                if report.gaps > 0 { r.issues.append("\(file): \(report.gaps) event(s) refused as gaps while storing") }
                done += batch.count
                batch.removeAll(keepingCapacity: true)
                if ctx.console.isTerminal { ctx.console.progress("\(file): \(done)/\(toStore) events") }
            }
            for n in lines.indices where plan[n] == .store {
                if let d = try decode(n) {
                    if let sig = d.signature, verifier != nil, OriginSignature.isSigned(d.event.stream) { signatures[batch.count] = sig }
                    // A hole before this event: taken just before it.
                    if let r = retiredBefore[n] { retired.append(EventLog.RetiredRange(stream: r.stream, origin: r.origin, range: r.range, before: batch.count)) }
                    batch.append(d.event)
                }
                if batch.count == batchSize { try flush() }
            }
            try flush()
            for n in lines.indices where plan[n] == .conflict {
                guard let e = try decode(n)?.event else { continue }
                let report = try log.ingest([e], source: "\(file):\(n + 1)")
                r.conflicts += report.conflicts
                r.duplicates += report.duplicates
                if report.conflicts > 0 {
                    r.issues.append("\(file):\(n + 1): event \(e.id) of \(e.stream) conflicts with the event held under that id "
                                    + "(held hash differs from \(e.hashHex)): refused, recorded in conflicts")
                }
            }
        } catch {
            r.refused = "storing failed: \(error) (events of earlier batches of this file may be stored; importing again stores only what is missing)"
        }
        return r
    }
}
