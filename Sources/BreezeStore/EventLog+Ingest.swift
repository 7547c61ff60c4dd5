public import BreezeCore

/// Remote ingest: events from peers and files, idempotent, never overwriting, gaps refused.
extension EventLog {
    // MARK: Remote ingest

    /// What happened to a batch of remote events.
    public struct IngestReport: Equatable, Sendable {
        /// Newly stored.
        public var inserted = 0
        /// Already held with the same hash: nothing done.
        public var duplicates = 0
        /// Same id, different hash: refused and recorded in `conflicts`.
        public var conflicts = 0
        /// Would leave a gap in the origin's counters (an earlier event is missing): refused.
        public var gaps = 0
        /// A known type in a stream it does not belong to: stored with flag 2 (relayed, never reduced).
        public var invalid = 0
        /// Stored, but with a timestamp beyond the clock-skew bound (flagged).
        public var skewed = 0
        /// Claimed this replica's current origin (replica and epoch) for an event it never wrote: refused.
        /// Only this process issues that origin's counters, so such an event is forged (`Protocol/sync.md` 6.6).
        /// Other incarnations' events are taken back: a replica restored from a backup recovers what it had
        /// sent before, and a restore always starts a new, random epoch (`EventLog` opening).
        public var forged = 0
        /// Would start one more origin (incarnation) of a replica that already has
        /// `EventLog.maxOriginsPerReplica` in this stream: refused, so no sender can make a stream's version
        /// vector grow without bound.
        public var overOriginLimit = 0
        /// Counters a peer said are retired (`Protocol/sync.md` 6.10) that this replica now records as such.
        public var retired: UInt64 = 0
        /// True when any event was refused as forged or over the origin limit: the sender is broken or
        /// hostile, and a node ends its session.
        public var refusedHostile: Bool { forged > 0 || overOriginLimit > 0 }
        /// The events stored, in order.
        public var stored: [Event] = []
        /// The sequence numbers the stored events took, in order (nil when nothing was stored, or when the
        /// transaction's rows did not form one run, which the rowid rule should never allow):
        /// a node need not read them back to offer them to the peer that sent them (`Node.commitPending`).
        public var seqs: ClosedRange<Int64>?
        public init() {}
        public static func == (a: IngestReport, b: IngestReport) -> Bool {
            (a.inserted, a.duplicates, a.conflicts, a.gaps, a.invalid, a.skewed)
                == (b.inserted, b.duplicates, b.conflicts, b.gaps, b.invalid, b.skewed)
                && (a.forged, a.overOriginLimit) == (b.forged, b.overOriginLimit)
        }
    }

    /// Stores events received from a peer or a file, in one transaction. Idempotent; never overwrites.
    ///
    /// - Parameter source: who sent them (a peer address, a file name), recorded with any conflict.
    public func ingest(_ events: [Event], source: String? = nil) throws(StoreError) -> IngestReport {
        try ingest(groups: [events], source: source)[0]
    }

    /// Stores several groups of remote events (for example one batch per peer) in one transaction, a group
    /// commit, and reports on each group separately. All or nothing: if the transaction fails, no group
    /// is stored.
    ///
    /// - Parameter syncLater: with `Durability.full`, commit without the fsync (`synchronous=NORMAL` for this
    ///   transaction): the events are visible at once, so a node can relay them while the disk catches up,
    ///   and the caller must call `syncWAL()` before it acknowledges them. Without it (the default) they are
    ///   on disk when this returns.
    public func ingest(groups: [[Event]], source: String? = nil, syncLater: Bool,
                       fromDevice: [Bool] = [], signatures: [[Int: OriginSignature]] = [],
                       retired: [[RetiredRange]] = []) throws(StoreError) -> [IngestReport] {
        guard syncLater && options.durability == .full else {
            return try ingest(groups: groups, source: source, fromDevice: fromDevice, signatures: signatures, retired: retired)
        }
        do { try db.execute("PRAGMA synchronous=NORMAL") } catch { throw StoreError.from(error, path: path) }
        defer { try? db.execute("PRAGMA synchronous=FULL") }
        return try ingest(groups: groups, source: source, fromDevice: fromDevice, signatures: signatures, retired: retired)
    }

    /// Counters of (stream, origin) a peer said are retired, compacted into a later event (`Protocol/sync.md`
    /// 6.10): taken before the group they came with, when they continue what this replica holds.
    public struct RetiredRange: Hashable, Sendable {
        public let stream: StreamID
        public let origin: Origin
        public let range: ClosedRange<UInt64>
        /// The position in its group of the event it precedes: it is taken just before that event (after the
        /// group's earlier events of its origin), or after the group's last event when past it.
        public let before: Int
        public init(stream: StreamID, origin: Origin, range: ClosedRange<UInt64>, before: Int = 0) {
            self.stream = stream
            self.origin = origin
            self.range = range
            self.before = before
        }
    }

    /// Syncs the write-ahead log (through SQLite's VFS, as a `synchronous=FULL` commit does): after
    /// `ingest(groups:source:syncLater: true)`, the events are durable once this returns.
    public func syncWAL() throws(StoreError) {
        do { try db.syncWAL() } catch { throw StoreError.from(error, path: path) }
    }

    ///
    /// - Parameter fromDevice: per group, whether it came from a device's session (`Protocol/sync.md` 6.6):
    ///   such a group may start at most `maxOriginsPerReplica` origins of one replica in a stream, and its
    ///   events raise a stream's ahead floor to at most `HybridClock.deviceMaxAheadMillis` past the wall
    ///   clock. Groups past its end, and files, are not bounded: the cluster and the user's own files relay
    ///   whatever exists.
    /// - Parameter signatures: per group, origin signatures by index in the group (already verified by the
    ///   session, `Protocol/sync.md` 6.9): each is kept for its event when the event is stored or already held
    ///   with the same hash, never for a conflicting one.
    /// - Parameter retired: per group, ranges a peer said are retired (6.10), each taken just before the event it
    ///   precedes (`RetiredRange.before`) when it starts at most one past what this replica holds of its (stream,
    ///   origin): the head moves to its end and the range is recorded. One that starts further on is ignored (the
    ///   event after it is a gap).
    public func ingest(groups: [[Event]], source: String? = nil, fromDevice: [Bool] = [],
                       signatures: [[Int: OriginSignature]] = [], retired: [[RetiredRange]] = []) throws(StoreError) -> [IngestReport] {
        do {
            return try db.writeTransaction { () throws -> [IngestReport] in
                try refreshEpoch()
                var reports: [IngestReport] = []
                var clock = HybridClock(last: try readClock(), maxSkewMillis: options.maxSkewMillis)
                var heads: [HeadKey: Head] = [:]
                var keys: [StreamID: Int64] = [:]
                let insert = try EventInserter(db: db)
                let wall = options.wallClock()
                // The (stream, origin) of the previous event and what is known of it: a batch is mostly runs
                // of one origin's consecutive events, which then cost no dictionary lookup.
                var slot: HeadKey?
                var head = Head(key: 0, counter: 0, dirty: false)
                var lastType: String?, lastTypeFits = true   // the type last checked, in this slot
                var originsStarted: [OriginCountKey: Int] = [:]  // new origins of (stream, replica) in this transaction
                // Rows take the sequence numbers after the highest, in insertion order (seq is the rowid), so
                // each group's stored events take a run of them; checked against the highest after the inserts.
                let firstSeq = try lastSeq() + 1
                var compactions: [(event: Event, stream: Int64)] = []
                func select(_ stream: StreamID, _ origin: Origin) throws {
                    guard slot?.stream != stream || slot?.origin != origin else { return }
                    if let s = slot { heads[s] = head }
                    let k = HeadKey(stream: stream, origin: origin)
                    if let h = heads[k] { head = h } else {
                        let key: Int64
                        if let known = keys[stream] { key = known } else {
                            key = try streamKey(stream, create: true)!
                            keys[stream] = key
                        }
                        head = Head(key: key, counter: try self.head(stream: key, origin: origin), dirty: false)
                    }
                    slot = k
                    lastType = nil
                }
                for (g, events) in groups.enumerated() {
                    let fromDeviceGroup = g < fromDevice.count && fromDevice[g]
                    let signed = g < signatures.count ? signatures[g] : [:]
                    var report = IngestReport()
                    report.stored.reserveCapacity(events.count)
                    var ranges: [Int: [RetiredRange]] = [:]
                    // Only readings are ever retired (sync.md 6.10): a range in another kind of stream, or past
                    // the counters SQLite can order, is ignored.
                    for r in g < retired.count ? retired[g] : [] where r.origin != origin && r.range.upperBound < UInt64(Int64.max) {
                        guard case .sensor = r.stream else { continue }
                        ranges[min(max(r.before, 0), events.count), default: []].append(r)
                    }
                    func takeRetired(_ i: Int) throws {
                        for r in ranges[i] ?? [] {
                            try select(r.stream, r.origin)
                            guard r.range.lowerBound <= head.counter &+ 1, r.range.upperBound > head.counter else { continue }
                            try insert.flush()
                            try recordRetired(stream: head.key, origin: r.origin, r.range)
                            report.retired &+= r.range.upperBound - head.counter
                            head.counter = r.range.upperBound
                            head.dirty = true
                        }
                    }
                    for (i, e) in events.enumerated() {
                        if !ranges.isEmpty { try takeRetired(i) }
                        try select(e.stream, e.id.origin)
                        if e.id.counter <= head.counter {
                            try insert.flush()   // the stored copy may still be queued
                            let stored = try storedHash(stream: head.key, id: e.id)
                            // Covered by the head but not held, and recorded as dropped beyond this device's
                            // horizon (EventLog+Horizon): taken as held. Not recorded: a conflict, as before.
                            // Retired by a compaction (EventLog+Compaction) is held in that compaction.
                            let dropped = try stored == nil && (droppedBeyondHorizon(stream: head.key, id: e.id)
                                                                || isRetired(stream: head.key, id: e.id))
                            if stored == e.hash || dropped {
                                report.duplicates += 1
                                if stored != nil, let sig = signed[i] { try storeSignature(sig, stream: head.key, id: e.id) }
                            } else {
                                report.conflicts += 1
                                try recordConflict(e, storedHash: stored ?? [], source: source, wall: wall)
                            }
                            continue
                        }
                        if e.id.origin == origin {
                            report.forged += 1
                            continue
                        }
                        guard e.id.counter == head.counter + 1 else {
                            report.gaps += 1
                            continue
                        }
                        if fromDeviceGroup && head.counter == 0 && !head.dirty {
                            let k = OriginCountKey(stream: head.key, replica: e.id.origin.replica)
                            let held = try originCount(stream: head.key, replica: e.id.origin.replica)
                            guard held + originsStarted[k, default: 0] < EventLog.maxOriginsPerReplica else {
                                report.overOriginLimit += 1
                                continue
                            }
                            originsStarted[k, default: 0] += 1
                        }
                        // A known type in the wrong kind of stream (possible only through a build that did not
                        // know the type) is stored flagged, so the origin's counters stay contiguous; the
                        // reducers read streams of their own kind and never see it.
                        if e.type != lastType {
                            lastType = e.type
                            lastTypeFits = EventBody.type(e.type, belongsIn: e.stream)
                        }
                        let misplaced = !lastTypeFits
                        let skewed = clock.observe(e.hlc, wallMillis: wall)
                        if skewed {
                            report.skewed += 1
                            // A device's write superseding a far-ahead value is let through a little past
                            // that value (SyncSession.supersedesHeldFloor); it must not lift the floor, or
                            // each such write would let the next one further.
                            let cap = HLC(physicalMillis: wall &+ HybridClock.deviceMaxAheadMillis, logical: .max)
                            try raiseAheadFloor(e.stream, to: fromDeviceGroup && e.hlc > cap ? cap : e.hlc)
                        }
                        if misplaced { report.invalid += 1 }
                        try insert.add(e, stream: head.key, flags: (skewed ? 1 : 0) | (misplaced ? 2 : 0))
                        head.counter = e.id.counter
                        head.dirty = true
                        report.inserted += 1
                        report.stored.append(e)
                        if let sig = signed[i] { try storeSignature(sig, stream: head.key, id: e.id) }
                        if e.type == "reading.compact" || e.type == "reading.rollup", !misplaced { compactions.append((e, head.key)) }
                    }
                    if !ranges.isEmpty { try takeRetired(events.count) }
                    reports.append(report)
                }
                if let s = slot { heads[s] = head }
                try insert.flush()
                if try lastSeq() - firstSeq + 1 == Int64(reports.reduce(0) { $0 + $1.inserted }) {
                    var next = firstSeq
                    for g in reports.indices where reports[g].inserted > 0 {
                        reports[g].seqs = next...(next + Int64(reports[g].inserted) - 1)
                        next += Int64(reports[g].inserted)
                    }
                }
                for (k, h) in heads where h.dirty {
                    try setHead(stream: h.key, origin: k.origin, counter: h.counter)
                }
                // After the rows' sequence numbers are known: a compaction's events go (some may be this
                // transaction's own, sent just before it).
                for c in compactions { try applyCompaction(c.event, stream: c.stream) }
                try writeClock(clock.last)
                return reports
            }
        } catch {
            streamIDs.removeAll()
            throw StoreError.from(error, path: path)
        }
    }

    /// What `ingest` knows of one (stream, origin): the stream's row id and the highest counter held.
    private struct Head {
        var key: Int64
        var counter: UInt64
        /// True once an event was stored in this transaction (the `heads` row must be written).
        var dirty: Bool
    }

    private struct HeadKey: Hashable { let stream: StreamID; let origin: Origin }
    private struct OriginCountKey: Hashable { let stream: Int64; let replica: ReplicaID }

    /// Most origins (incarnations) of one replica a stream takes in from a device's session. A replica starts
    /// a new incarnation at most once per boot, and one shows up in a stream only if it wrote there: a phone
    /// rebooted every day that writes every day gets here in eleven years; a device making up epochs is
    /// stopped here. The cluster's sessions are not bounded, so two servers that each took a different
    /// set from a hostile device still converge.
    public static let maxOriginsPerReplica = 4096

    private func originCount(stream: Int64, replica: ReplicaID) throws -> Int {
        let q = try db.cached("SELECT count(*) FROM heads WHERE stream = ? AND origin = ?")
        try q.bind(1, stream)
        try q.bind(2, Int64(bitPattern: replica.rawValue))
        return try q.first { Int($0.int(0)) } ?? 0
    }

    private func storedHash(stream: Int64, id: EventID) throws -> [UInt8]? {
        let q = try db.cached("SELECT data FROM events WHERE stream = ? AND origin = ? AND epoch = ? AND counter = ?")
        try q.bind(1, stream)
        try q.bind(2, Int64(bitPattern: id.origin.replica.rawValue))
        try q.bind(3, Int64(id.origin.epoch))
        try q.bind(4, Int64(bitPattern: id.counter))
        return try q.first { Array($0.blob(0).suffix(Event.hashLength)) }
    }

    /// Most conflicts recorded in full per (stream, origin); beyond, they are counted only
    /// (`conflict_origins.counted`), so a peer re-sending its ids with other content cannot grow the database.
    public static let maxConflictsPerOrigin: Int64 = 4

    private func recordConflict(_ e: Event, storedHash: [UInt8], source: String?, wall: UInt64) throws {
        let kept = try db.cached("SELECT kept FROM conflict_origins WHERE stream = ? AND origin = ? AND epoch = ?")
        try kept.bind(1, e.stream.description)
        try kept.bind(2, Int64(bitPattern: e.id.origin.replica.rawValue))
        try kept.bind(3, Int64(e.id.origin.epoch))
        let n = try kept.first { $0.int(0) } ?? 0
        let count = try db.cached("""
            INSERT INTO conflict_origins(stream, origin, epoch, kept, counted) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT(stream, origin, epoch) DO UPDATE SET kept = excluded.kept, counted = counted + excluded.counted
            """)
        try count.bind(1, e.stream.description)
        try count.bind(2, Int64(bitPattern: e.id.origin.replica.rawValue))
        try count.bind(3, Int64(e.id.origin.epoch))
        try count.bind(4, min(n + 1, Self.maxConflictsPerOrigin))
        try count.bind(5, Int64(n < Self.maxConflictsPerOrigin ? 0 : 1))
        try count.run()
        guard n < Self.maxConflictsPerOrigin else { return }
        let s = try db.cached("""
            INSERT INTO conflicts(stream, event_id, stored_hash, offered, source, received_ms)
            VALUES (?, ?, ?, ?, ?, ?)
            """)
        try s.bind(1, e.stream.description)
        try s.bind(2, e.id.description)
        try s.bind(3, storedHash)
        try s.bind(4, e.encoded)
        if let source { try s.bind(5, source) } else { try s.bindNull(5) }
        try s.bind(6, Int64(bitPattern: wall))
        try s.run()
    }

    /// A refused event: same id as a stored one, different content.
    public struct Conflict: Sendable {
        public let stream: String
        public let eventID: String
        public let storedHash: [UInt8]
        public let offered: [UInt8]
        public let source: String?
        public let receivedMillis: UInt64
    }

    /// Every conflict recorded, oldest first.
    public func conflicts() throws(StoreError) -> [Conflict] {
        do {
            let q = try db.cached("SELECT stream, event_id, stored_hash, offered, source, received_ms FROM conflicts ORDER BY id")
            var out: [Conflict] = []
            while try q.step() {
                out.append(Conflict(stream: q.text(0), eventID: q.text(1), storedHash: q.blob(2), offered: q.blob(3),
                                    source: q.isNull(4) ? nil : q.text(4), receivedMillis: UInt64(bitPattern: q.int(5))))
            }
            return out
        } catch { throw StoreError.from(error, path: path) }
    }
}
