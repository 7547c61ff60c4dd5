public import BreezeCore

/// Recovery from a damaged database: copy every intact event into a fresh one, whose missing events a
/// peer then sends back (`breeze salvage`, issue 7 scenario 9).
///
/// The damaged file is opened read-only and read row by row, so one bad page costs only the rows on it:
/// pages of rows are read in `seq` order, and where SQLite reports damage the rows are probed one `seq` at
/// a time until reading works again. Each row must decode and match its BLAKE2b hash, so nothing altered is
/// copied. Per stream and origin only the contiguous run of counters from 1 is kept (the log refuses gaps;
/// the peer re-sends the rest). The fresh database gets a new replica id, so the events this replica wrote
/// and the damage destroyed can never have their ids issued again; the old replica's events stay what
/// they are, events of another origin.
public struct SalvageReport: Sendable, Equatable {
    /// Rows read from the damaged file (intact or not).
    public var rowsRead = 0
    /// Events copied into the fresh database.
    public var salvaged = 0
    /// Rows that did not decode or did not match their hash.
    public var unreadable = 0
    /// Intact events left out because an earlier event of their origin was lost (a peer re-sends them).
    public var beyondGap = 0
    /// Ranges of `seq` SQLite could not read (probed row by row).
    public var damagedRanges = 0
    /// The damaged database's replica id, when it could be read.
    public var oldReplica: ReplicaID?
    /// The fresh database's replica id.
    public var newReplica: ReplicaID = ReplicaID(rawValue: 0)
    public init() {}
}

extension EventLog {
    /// Copies every intact event of the damaged database at `damaged` into a new database at `fresh`.
    ///
    /// - Throws: `.missing` when `damaged` does not exist; `.sqlite` when `fresh` already exists (it is
    ///   never overwritten), when `damaged` cannot be opened at all, or when `fresh` cannot be written.
    public static func salvage(damaged: String, into fresh: String, options: Options = Options()) throws(StoreError) -> SalvageReport {
        guard FileChecks.exists(damaged) else { throw StoreError(.missing, "\(damaged): no database here to salvage") }
        guard !FileChecks.exists(fresh) else {
            throw StoreError(.sqlite, "\(fresh): already exists; salvage writes a new file only (choose another --out)")
        }
        var report = SalvageReport()
        let source: Database
        do { source = try Database(path: damaged, create: false, readOnly: true) } catch {
            throw StoreError(.sqlite, "\(damaged): cannot open even read-only (\(error.message)); nothing can be salvaged from it, fetch everything from a peer into a new database", sqliteCode: error.code)
        }
        defer { source.close() }
        if let r = try? source.scalarInt("SELECT value FROM meta WHERE key = 'replica'") {
            report.oldReplica = ReplicaID(rawValue: UInt64(bitPattern: r))
        }
        let oldClock = (try? source.scalarInt("SELECT value FROM meta WHERE key = 'hlc'")).flatMap { $0 } ?? 0

        // Read every intact event, in seq order.
        var events: [Event] = []
        var last: Int64 = 0
        let maxSeq = (try? source.scalarInt("SELECT max(seq) FROM events")).flatMap { $0 }
        var probing = false, misses = 0
        while true {
            if !probing {
                do {
                    let q = try source.prepare("SELECT seq, data FROM events WHERE seq > ? ORDER BY seq LIMIT 512")
                    try q.bind(1, last)
                    var n = 0
                    while try q.step() {
                        n += 1
                        last = q.int(0)
                        report.rowsRead += 1
                        if let e = try? Event(decoding: q.blob(1), stored: true) { events.append(e) } else { report.unreadable += 1 }
                    }
                    if n == 0 { break }
                } catch {
                    probing = true
                    report.damagedRanges += 1
                }
            } else {
                // One row at a time past the damage: until a read works again, or past the end.
                let seq = last + 1
                if let maxSeq, seq > maxSeq { break }
                if maxSeq == nil && misses > 100_000 { break }
                last = seq
                // Without a readable schema there is nothing to probe.
                guard let q = try? source.prepare("SELECT data FROM events WHERE seq = ?") else { break }
                do {
                    try q.bind(1, seq)
                    if try q.step() {
                        report.rowsRead += 1
                        misses = 0
                        if let e = try? Event(decoding: q.blob(0), stored: true) { events.append(e) } else { report.unreadable += 1 }
                        probing = false
                    } else {
                        misses += 1
                    }
                } catch {
                    misses += 1
                }
            }
        }

        // Keep, per stream and origin, the contiguous counters from 1 (each once).
        struct Key: Hashable { let stream: StreamID; let origin: Origin }
        var counters: [Key: Set<UInt64>] = [:]
        for e in events { counters[Key(stream: e.stream, origin: e.id.origin), default: []].insert(e.id.counter) }
        // Counters a salvaged compaction or rollup retires (sync.md 6.10) are held there: not a gap.
        var retiredBy: [Key: [ClosedRange<UInt64>]] = [:]
        for e in events where e.type == "reading.compact" || e.type == "reading.rollup" {
            switch try? e.body() {
            case .readingCompaction(let c)?: retiredBy[Key(stream: e.stream, origin: e.id.origin), default: []] += c.retires.filter { $0.upperBound < e.id.counter }
            case .readingRollup(let u)?: retiredBy[Key(stream: e.stream, origin: e.id.origin), default: []] += u.retires.filter { $0.upperBound < e.id.counter }
            default: break
            }
        }
        // And those the damaged file recorded (a compaction's own ranges are gone once a rollup replaced it), as
        // far as its table still reads.
        if let q = try? source.prepare("SELECT s.name, r.origin, r.epoch, r.first, r.last FROM retired r JOIN streams s ON s.id = r.stream") {
            while (try? q.step()) == true {
                guard let stream = try? StreamID(parsing: q.text(0)), q.int(3) >= 1, q.int(4) >= q.int(3) else { continue }
                let origin = Origin(replica: ReplicaID(rawValue: UInt64(bitPattern: q.int(1))), epoch: UInt32(truncatingIfNeeded: q.int(2)))
                retiredBy[Key(stream: stream, origin: origin), default: []].append(UInt64(q.int(3))...UInt64(q.int(4)))
            }
        }
        for (k, v) in retiredBy { retiredBy[k] = ReadingCompaction.normalised(v) }
        var keepUpTo: [Key: UInt64] = [:]
        for (k, set) in counters {
            var c: UInt64 = 0
            while true {
                if set.contains(c + 1) { c += 1; continue }
                if let r = retiredBy[k]?.first(where: { $0.contains(c + 1) }), set.contains(r.upperBound + 1) { c = r.upperBound + 1; continue }
                break
            }
            keepUpTo[k] = c
        }
        struct Slot: Hashable { let stream: StreamID; let id: EventID }
        var seen: Set<Slot> = []
        var kept: [Event] = []
        for e in events {
            let k = Key(stream: e.stream, origin: e.id.origin)
            if e.id.counter <= keepUpTo[k]! {
                if seen.insert(Slot(stream: e.stream, id: e.id)).inserted { kept.append(e) }
            } else {
                report.beyondGap += 1
            }
        }
        // Counters ascend per origin in a sound log's arrival order; sort anyway, so ingest sees no gap.
        kept.sort { ($0.stream.description, $0.id.origin.replica.rawValue, $0.id.origin.epoch, $0.id.counter)
            < ($1.stream.description, $1.id.origin.replica.rawValue, $1.id.origin.epoch, $1.id.counter) }

        let log = try EventLog.create(at: fresh, options: options)
        defer { log.close() }
        report.newReplica = log.replica
        var at = 0
        var previous: (key: Key, counter: UInt64)?
        while at < kept.count {
            let chunk = Array(kept[at..<min(at + 10_000, kept.count)])
            // Each hole a kept compaction or rollup retires goes in just before the event after it.
            var holes: [EventLog.RetiredRange] = []
            for (i, e) in chunk.enumerated() {
                let k = Key(stream: e.stream, origin: e.id.origin)
                let held = previous?.key == k ? previous!.counter : 0
                if e.id.counter > held + 1 {
                    holes.append(EventLog.RetiredRange(stream: e.stream, origin: e.id.origin, range: (held + 1)...(e.id.counter - 1), before: i))
                }
                previous = (k, e.id.counter)
            }
            let r = try log.ingest(groups: [chunk], source: "salvage of \(damaged)", retired: [holes])[0]
            report.salvaged += r.inserted
            at += chunk.count
        }
        // The clock never runs backwards, even past what the damaged file's events show.
        do {
            try log.db.writeTransaction {
                let s = try log.db.prepare("UPDATE meta SET value = max(value, ?) WHERE key = 'hlc'")
                try s.bind(1, oldClock)
                try s.run()
            }
        } catch { throw StoreError.from(error, path: fresh) }
        return report
    }
}
