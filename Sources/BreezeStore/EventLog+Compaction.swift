public import BreezeCore

/// When a server merges the small reading events its live feeds left (`EventLog.compactReadings`).
///
/// A feed polled every two minutes writes one event per sensor per poll: about 190 bytes of event and 33 of
/// index for one row of readings, where a bulk import's block of hundreds of rows pays about 31 a row. Merging
/// them later into `reading.compact` events brings a live feed's storage back near a bulk import's
/// (`breeze-bench year`), while each reading still reaches the devices the moment it is stored.
public struct CompactionPolicy: Sendable, Equatable {
    /// An event of fewer rows than this is small: it is merged. Larger ones (an import's blocks) stay.
    public var smallRows: Int
    /// A stream is compacted once this replica wrote this many small events to it since its last compaction...
    public var targetEvents: Int
    /// ...or once the oldest of them is this old (so a sensor reporting every ten minutes is compacted daily).
    public var maxAgeMillis: UInt64
    /// Most rows in one `reading.compact` event.
    public var rowsPerEvent: Int

    public init(smallRows: Int = 64, targetEvents: Int = 720, maxAgeMillis: UInt64 = 86_400_000, rowsPerEvent: Int = 1_000) {
        self.smallRows = max(2, smallRows)
        self.targetEvents = max(2, targetEvents)
        self.maxAgeMillis = maxAgeMillis
        self.rowsPerEvent = max(1, min(rowsPerEvent, 20_000))
    }

    /// One day's readings of a sensor reporting every two minutes per event, or a day of anything slower.
    public static let `default` = CompactionPolicy()
}

/// What one `compactReadings` did.
public struct CompactionReport: Sendable, Equatable {
    /// Streams compacted.
    public var streams = 0
    /// Small events replaced (their rows deleted, their counters recorded in `retired`).
    public var eventsRetired = 0
    /// `reading.compact` events written.
    public var eventsWritten = 0
    /// Rows they carry.
    public var rows = 0
    public init() {}

    /// Adds what another compaction did.
    public mutating func add(_ o: CompactionReport) {
        streams += o.streams
        eventsRetired += o.eventsRetired
        eventsWritten += o.eventsWritten
        rows += o.rows
    }
}

extension EventLog {
    // MARK: Compaction (the writer's side)

    /// Merges this replica's small reading events of each `sensor:` stream into `reading.compact` events, for
    /// the streams due under `policy`, one transaction per stream. Only this replica's own events (its current
    /// epoch): another origin's events are its own to compact, so every replica that stores them ends up with
    /// the same compaction, not one each.
    ///
    /// Nothing changes meaning: each row keeps its event's stamp, the projection's winners stay, and the
    /// replaced counters are recorded in `retired`, so a peer that lacks them is told they are retired
    /// (`Protocol/sync.md` 6.10) and a peer that holds them drops them when the compaction reaches it.
    ///
    /// - Parameter progress: called after each stream with (streams done, streams due).
    @discardableResult
    public func compactReadings(policy: CompactionPolicy = .default,
                                progress: ((Int, Int) -> Void)? = nil) throws(StoreError) -> CompactionReport {
        var report = CompactionReport()
        let due = try streamsDueForCompaction(policy: policy)
        for (i, s) in due.enumerated() {
            report.add(try compactStream(s, policy: policy))
            progress?(i + 1, due.count)
        }
        return report
    }

    /// The `sensor:` streams where this replica wrote at least `targetEvents` events since their last
    /// compaction, or at least two of which the oldest is `maxAgeMillis` old: a row of `heads` each, and a
    /// seek for the age. (A node asks once a minute and compacts a few a second, `compactStream`, so its loop
    /// never stalls on a day's worth at once.)
    public func streamsDueForCompaction(policy: CompactionPolicy = .default) throws(StoreError) -> [StreamID] {
        do { return try dueForCompaction(policy).map(\.name) } catch { throw StoreError.from(error, path: path) }
    }

    /// Compacts one stream (one transaction), if it is still due: see `compactReadings`.
    @discardableResult
    public func compactStream(_ stream: StreamID, policy: CompactionPolicy = .default) throws(StoreError) -> CompactionReport {
        var report = CompactionReport()
        do {
            guard case .sensor = stream, let key = try streamKey(stream, create: false) else { return report }
            try db.writeTransaction { () throws -> Void in try compact(stream: DueStream(key: key, name: stream), policy: policy, into: &report) }
        } catch {
            streamIDs.removeAll()
            throw StoreError.from(error, path: path)
        }
        return report
    }

    private struct DueStream { let key: Int64; let name: StreamID }

    private func dueForCompaction(_ policy: CompactionPolicy) throws -> [DueStream] {
        try refreshEpoch()
        let q = try db.prepare("""
            SELECT h.stream, s.name, h.counter, coalesce(m.through, 0) FROM heads h JOIN streams s ON s.id = h.stream
            LEFT JOIN compaction_marks m ON m.stream = h.stream AND m.epoch = h.epoch
            WHERE h.origin = ? AND h.epoch = ? AND s.name LIKE 'sensor:%' AND h.counter > coalesce(m.through, 0) + 1
            """)
        try q.bind(1, Int64(bitPattern: origin.replica.rawValue))
        try q.bind(2, Int64(origin.epoch))
        let oldest = try db.cached("SELECT hlc FROM events WHERE stream = ? AND origin = ? AND epoch = ? AND counter > ? ORDER BY counter LIMIT 1")
        let cutoff = options.wallClock() &- min(options.wallClock(), policy.maxAgeMillis)
        var out: [DueStream] = []
        while try q.step() {
            let key = q.int(0), head = UInt64(bitPattern: q.int(2)), through = UInt64(bitPattern: q.int(3))
            guard let name = try? StreamID(parsing: q.text(1)) else { continue }
            if head - through >= UInt64(policy.targetEvents) { out.append(DueStream(key: key, name: name)); continue }
            oldest.reset()
            try oldest.bind(1, key)
            try oldest.bind(2, Int64(bitPattern: origin.replica.rawValue))
            try oldest.bind(3, Int64(origin.epoch))
            try oldest.bind(4, Int64(bitPattern: through))
            if let hlc = try oldest.first({ HLC(rawValue: UInt64(bitPattern: $0.int(0))) }), hlc.physicalMillis < cutoff {
                out.append(DueStream(key: key, name: name))
            }
            oldest.reset()
        }
        return out
    }

    /// One stream's compaction, inside the caller's transaction: reads this replica's events after the stream's
    /// mark, merges the small reading events into `reading.compact` events appended to the stream, deletes
    /// them, records their counters, moves the mark past what it wrote.
    private func compact(stream s: DueStream, policy: CompactionPolicy, into report: inout CompactionReport) throws {
        let through = try db.cached("SELECT through FROM compaction_marks WHERE stream = ? AND epoch = ?")
        try through.bind(1, s.key)
        try through.bind(2, Int64(origin.epoch))
        let mark = UInt64(bitPattern: try through.first { $0.int(0) } ?? 0)
        through.reset()
        // At most `examinedPerRun` events a transaction (a stream's backlog is taken over several runs).
        let q = try db.cached("SELECT seq, data FROM events WHERE stream = ? AND origin = ? AND epoch = ? AND counter > ? ORDER BY counter LIMIT ?")
        try q.bind(1, s.key)
        try q.bind(2, Int64(bitPattern: origin.replica.rawValue))
        try q.bind(3, Int64(origin.epoch))
        try q.bind(4, Int64(bitPattern: mark))
        try q.bind(5, Int64(Self.examinedPerRun))
        var source: String?, sensor: String?
        var rows: [ReadingCompaction.Row] = []
        var taken: [(seq: Int64, counter: UInt64)] = []
        var examined = 0, lastExamined = mark
        while try q.step() {
            examined += 1
            guard let e = try? Event(decoding: q.blob(1), stored: true), let body = try? e.body() else { continue }
            lastExamined = e.id.counter
            let (src, sen, eventRows): (String, String, [ReadingBlock.Row])
            switch body {
            case .reading(let r): (src, sen, eventRows) = (r.source, r.sensor, [ReadingBlock.Row(time: r.time, values: r.values)])
            case .readingBlock(let b) where b.rows.count < policy.smallRows: (src, sen, eventRows) = (b.source, b.sensor, b.rows)
            default: continue
            }
            // One sensor per stream (`FactPartition`); an event naming another is left as it is.
            if source == nil { source = src; sensor = sen }
            guard src == source, sen == sensor, !eventRows.isEmpty else { continue }
            for r in eventRows where !r.values.isEmpty {
                rows.append(ReadingCompaction.Row(time: r.time, counter: e.id.counter, hlc: e.hlc, values: r.values))
            }
            taken.append((q.int(0), e.id.counter))
        }
        q.reset()
        let cutShort = examined == Self.examinedPerRun
        guard taken.count >= 2, let source, let sensor else {
            try setMark(s.key, cutShort ? lastExamined : try head(stream: s.key, origin: origin))
            return
        }
        // Cut into events of at most `rowsPerEvent` rows, by counter (each event replaces whole events) and at
        // most `maxQuantities` quantities.
        var byCounter: [UInt64: [ReadingCompaction.Row]] = [:]
        for r in rows { byCounter[r.counter, default: []].append(r) }
        var pieces: [[UInt64]] = [[]]
        var pieceRows = 0
        var quantities = Set<String>()
        for t in taken {
            let rs = byCounter[t.counter] ?? []
            let q = Set(rs.flatMap { $0.values.map(\.quantity) })
            if !pieces[pieces.count - 1].isEmpty,
               pieceRows + rs.count > policy.rowsPerEvent || quantities.union(q).count > ReadingBlock.maxQuantities {
                pieces.append([])
                pieceRows = 0
                quantities = []
            }
            pieces[pieces.count - 1].append(t.counter)
            pieceRows += rs.count
            quantities.formUnion(q)
        }
        var bodies: [(StreamID, EventBody)] = []
        for counters in pieces where !counters.isEmpty {
            let c = ReadingCompaction(source: source, sensor: sensor, retires: counters.map { $0...$0 },
                                      rows: counters.flatMap { byCounter[$0] ?? [] })
            bodies.append((s.name, .readingCompaction(c)))
            report.rows += c.rows.count
        }
        let written = try appendInTransaction(bodies)
        let delete = try db.cached("DELETE FROM events WHERE seq = ?")
        for t in taken {
            delete.reset()
            try delete.bind(1, t.seq)
            try delete.run()
        }
        try recordRanges(table: "retired", taken.map { (s.key, Int64(bitPattern: origin.replica.rawValue), Int64(origin.epoch), Int64(bitPattern: $0.counter)) })
        try setMark(s.key, cutShort ? lastExamined : written.last!.id.counter)
        report.streams += 1
        report.eventsRetired += taken.count
        report.eventsWritten += written.count
    }

    /// Most events one compaction transaction reads.
    static let examinedPerRun = 5_000

    private func setMark(_ stream: Int64, _ counter: UInt64) throws {
        let q = try db.cached("INSERT INTO compaction_marks(stream, epoch, through) VALUES (?, ?, ?) ON CONFLICT(stream, epoch) DO UPDATE SET through = excluded.through")
        try q.bind(1, stream)
        try q.bind(2, Int64(origin.epoch))
        try q.bind(3, Int64(bitPattern: counter))
        try q.run()
    }

    // MARK: Compaction (every replica's side)

    /// A `reading.compact` or `reading.rollup` event was just stored (by `ingest` or `append`, inside its
    /// transaction): the events it replaces
    /// that this replica holds go, and their counters are recorded as retired. Only counters of the event's
    /// own origin and epoch, before its own counter, in a `sensor:` stream: an origin can retire nothing but its
    /// own past readings.
    func applyCompaction(_ e: Event, stream key: Int64) throws {
        guard case .sensor = e.stream else { return }
        let retires: [ClosedRange<UInt64>]
        switch try? e.body() {
        case .readingCompaction(let c)?: retires = c.retires
        case .readingRollup(let r)?:
            retires = r.retires
            try applyEarlierEpochs(r.earlier, of: e, stream: key)
        default: return
        }
        let o = Int64(bitPattern: e.id.origin.replica.rawValue), epoch = Int64(e.id.origin.epoch)
        var ranges: [ClosedRange<UInt64>] = []
        for r in retires where r.lowerBound < e.id.counter { ranges.append(r.lowerBound...min(r.upperBound, e.id.counter - 1)) }
        guard !ranges.isEmpty else { return }
        let delete = try db.cached("DELETE FROM events WHERE stream = ? AND origin = ? AND epoch = ? AND counter BETWEEN ? AND ?")
        for r in ranges {
            delete.reset()
            try delete.bind(1, key); try delete.bind(2, o); try delete.bind(3, epoch)
            try delete.bind(4, Int64(bitPattern: r.lowerBound)); try delete.bind(5, Int64(bitPattern: r.upperBound))
            try delete.run()
        }
        try recordRanges(table: "retired", ranges: ranges.map { (key, o, epoch, $0) })
    }

    /// A rollup's counters of its replica's earlier epochs: deleted, recorded as retired, and the head of each
    /// epoch moved to a range's end when the range continues it (those epochs write nothing more, and no event
    /// after the range will come to say it: sync.md 6.11).
    private func applyEarlierEpochs(_ earlier: [ReadingRollup.EpochRanges], of e: Event, stream key: Int64) throws {
        let replica = Int64(bitPattern: e.id.origin.replica.rawValue)
        let delete = try db.cached("DELETE FROM events WHERE stream = ? AND origin = ? AND epoch = ? AND counter BETWEEN ? AND ?")
        for x in earlier where x.epoch != e.id.origin.epoch {
            let origin = Origin(replica: e.id.origin.replica, epoch: x.epoch)
            let held = try self.head(stream: key, origin: origin)
            var head = held
            for r in x.ranges {
                delete.reset()
                try delete.bind(1, key); try delete.bind(2, replica); try delete.bind(3, Int64(x.epoch))
                try delete.bind(4, Int64(bitPattern: r.lowerBound)); try delete.bind(5, Int64(bitPattern: r.upperBound))
                try delete.run()
                if r.lowerBound <= head &+ 1, r.upperBound > head { head = r.upperBound }
            }
            try recordRanges(table: "retired", ranges: x.ranges.map { (key, replica, Int64(x.epoch), $0) })
            if head > held { try setHead(stream: key, origin: origin, counter: head) }
        }
    }

    /// Ranges a peer said are retired (`Protocol/sync.md` 6.10), recorded as they are: `ingest` has checked
    /// that each continues what this replica holds.
    func recordRetired(stream key: Int64, origin: Origin, _ range: ClosedRange<UInt64>) throws {
        try recordRanges(table: "retired", ranges: [(key, Int64(bitPattern: origin.replica.rawValue), Int64(origin.epoch), range)])
    }

    /// The retired range of (stream, origin) that holds `counter`, if any: what a sender tells a peer that
    /// lacks `counter` (`Protocol/sync.md` 6.10).
    public func retiredRange(stream: StreamID, origin: Origin, containing counter: UInt64) throws(StoreError) -> ClosedRange<UInt64>? {
        do {
            guard let key = try streamKey(stream, create: false) else { return nil }
            let q = try db.cached("""
                SELECT first, last FROM retired WHERE stream = ? AND origin = ? AND epoch = ? AND first <= ?
                ORDER BY first DESC LIMIT 1
                """)
            defer { q.reset() }
            try q.bind(1, key)
            try q.bind(2, Int64(bitPattern: origin.replica.rawValue))
            try q.bind(3, Int64(origin.epoch))
            try q.bind(4, Int64(bitPattern: counter))
            guard let r = try q.first({ (UInt64(bitPattern: $0.int(0)), UInt64(bitPattern: $0.int(1))) }), r.1 >= counter else { return nil }
            return r.0...r.1
        } catch { throw StoreError.from(error, path: path) }
    }

    /// Every retired range, per stream and origin (for `breeze verify` and `breeze diff`).
    public func retiredRanges() throws(StoreError) -> [StreamID: [Origin: [ClosedRange<UInt64>]]] {
        try rangeTable("retired")
    }

    /// True when `id` is inside a retired range.
    func isRetired(stream: Int64, id: EventID) throws -> Bool { try inRange("retired", stream: stream, id: id) }
}
