public import BreezeCore
import BreezeAirQuality

/// What one `rollUpReadings` did.
public struct RollupReport: Sendable, Equatable {
    /// Streams rolled up.
    public var streams = 0
    /// Reading events replaced (their counters recorded in `retired`).
    public var eventsRetired = 0
    /// `reading.rollup` events written.
    public var eventsWritten = 0
    /// Hours they carry.
    public var hours = 0
    public init() {}

    /// Adds what another rollup did.
    public mutating func add(_ o: RollupReport) {
        streams += o.streams
        eventsRetired += o.eventsRetired
        eventsWritten += o.eventsWritten
        hours += o.hours
    }
}

extension EventLog {
    // MARK: The policy

    /// The retention policy this replica follows: the newest `retention.policy` of `public` signed by
    /// `authority` (the cluster authority it trusts), or nil when there is none (nothing is rolled up).
    public func retentionPolicy(authority: [UInt8]) throws(StoreError) -> RetentionPolicy? {
        do {
            guard let key = try streamKey(.public, create: false) else { return nil }
            let q = try db.cached("SELECT data FROM events WHERE stream = ? AND type = 'retention.policy'")
            defer { q.reset() }
            try q.bind(1, key)
            var found: [RetentionPolicy] = []
            while try q.step() {
                if let e = try? Event(decoding: q.blob(0), stored: true), case .retentionPolicy(let p)? = try? e.body() { found.append(p) }
            }
            return RetentionPolicy.inForce(found, authority: authority)
        } catch { throw StoreError.from(error, path: path) }
    }

    // MARK: Rollups (the writer's side)

    /// The hour before which readings are rolled up under a policy of `rawDays` days at `nowSeconds`: whole
    /// hours only, so no hour is summed up while its readings still come.
    public static func rollupCutoffHour(rawDays: Int, nowSeconds: Int64) -> Int64 {
        ReadingBucket.hour(nowSeconds - Int64(rawDays) * 86_400)
    }

    /// Replaces this replica's reading events of each `sensor:` stream whose readings are all before the raw
    /// window (`rawDays` days before `nowSeconds`, whole hours) by `reading.rollup` events: the projection's
    /// aggregate of each hour they touched, as the screens read it. One transaction per stream. Only this
    /// replica's own events (of every epoch it had: a restart starts a new one), as a compaction's: each
    /// replica rolls up what it wrote, so the servers of a cluster write one rollup of an hour, not one each.
    ///
    /// The projection is caught up first, so the aggregates are those of every event held.
    @discardableResult
    public func rollUpReadings(rawDays: Int, nowSeconds: Int64, progress: ((Int, Int) -> Void)? = nil) throws(StoreError) -> RollupReport {
        var report = RollupReport()
        let due = try streamsDueForRollup(rawDays: rawDays, nowSeconds: nowSeconds)
        for (i, s) in due.enumerated() {
            report.add(try rollUpStream(s, rawDays: rawDays, nowSeconds: nowSeconds))
            progress?(i + 1, due.count)
        }
        return report
    }

    /// The `sensor:` streams whose oldest reading event of this replica (any epoch) not yet rolled up holds only
    /// readings before the cutoff: a row of `heads` and a seek per epoch.
    public func streamsDueForRollup(rawDays: Int, nowSeconds: Int64) throws(StoreError) -> [StreamID] {
        let cutoff = Self.rollupCutoffHour(rawDays: rawDays, nowSeconds: nowSeconds) * 3600
        do {
            try refreshEpoch()
            let q = try db.prepare("""
                SELECT h.stream, s.name, h.epoch, coalesce(m.through, 0) FROM heads h JOIN streams s ON s.id = h.stream
                LEFT JOIN rollup_marks m ON m.stream = h.stream AND m.epoch = h.epoch
                WHERE h.origin = ? AND s.name LIKE 'sensor:%' AND h.counter > coalesce(m.through, 0)
                """)
            try q.bind(1, Int64(bitPattern: origin.replica.rawValue))
            var out: [StreamID] = []
            while try q.step() {
                guard let name = try? StreamID(parsing: q.text(1)), out.last != name else { continue }
                let epoch = UInt32(truncatingIfNeeded: q.int(2))
                if let first = try ownReadingEvents(stream: q.int(0), epoch: epoch, after: UInt64(bitPattern: q.int(3)), limit: 1).first,
                   let newest = Self.newestTime(first.event), newest < cutoff {
                    out.append(name)
                }
            }
            return out
        } catch { throw StoreError.from(error, path: path) }
    }

    /// Most bytes of hour aggregates one rollup carries (well under an event's 1 MiB), and most events it takes:
    /// a stream with more waits for the next run.
    static let rollupBytes = 256 * 1024, rollupEvents = 2_000

    /// Rolls up one stream (one transaction), if it is still due: see `rollUpReadings`.
    @discardableResult
    public func rollUpStream(_ stream: StreamID, rawDays: Int, nowSeconds: Int64) throws(StoreError) -> RollupReport {
        var report = RollupReport()
        let cutoffHour = Self.rollupCutoffHour(rawDays: rawDays, nowSeconds: nowSeconds)
        do {
            guard case .sensor = stream, let key = try streamKey(stream, create: false) else { return report }
            try catchUpProjection()             // a new projection version rebuilds here, outside the transaction
            try db.writeTransaction { () throws -> Void in
                try refreshEpoch()
                // The projection with every event held, in this transaction: no reading can come in between the
                // aggregates and the events they replace.
                try catchUpInTransaction()
                let epochs = try db.cached("SELECT h.epoch, coalesce(m.through, 0) FROM heads h LEFT JOIN rollup_marks m ON m.stream = h.stream AND m.epoch = h.epoch WHERE h.stream = ? AND h.origin = ? ORDER BY h.epoch")
                try epochs.bind(1, key)
                try epochs.bind(2, Int64(bitPattern: origin.replica.rawValue))
                var marks: [(epoch: UInt32, mark: UInt64)] = []
                while try epochs.step() { marks.append((UInt32(truncatingIfNeeded: epochs.int(0)), UInt64(bitPattern: epochs.int(1)))) }
                epochs.reset()
                var hours = Set<Int64>()
                var source: String?, sensor: String?
                var retired: [UInt32: [ClosedRange<UInt64>]] = [:]
                var newMarks: [(epoch: UInt32, through: UInt64)] = []
                var count = 0
                // Per epoch, in counter order, up to the first event with a reading in the raw window (what comes
                // after it is, nearly always, newer: a later run takes it), or the rollup's bounds.
                epochLoop: for (epoch, mark) in marks {
                    var through = mark
                    defer { if through > mark { newMarks.append((epoch, through)) } }
                    while true {
                        let page = try ownReadingEvents(stream: key, epoch: epoch, after: through, limit: 256)
                        if page.isEmpty { break }
                        for (_, e) in page {
                            guard let newest = Self.newestTime(e), let rows = EventBody.readingRows(of: e), newest < cutoffHour * 3600,
                                  source == nil || (rows.source == source && rows.sensor == sensor),
                                  count < Self.rollupEvents, hours.count * 40 < Self.rollupBytes else { continue epochLoop }
                            if source == nil { source = rows.source; sensor = rows.sensor }
                            for r in rows.rows { hours.insert(ReadingBucket.hour(r.time)) }
                            retired[epoch, default: []].append(e.id.counter...e.id.counter)
                            // What a compaction it replaces had replaced goes with it, so no peer keeps those.
                            if case .readingCompaction(let c)? = try? e.body() {
                                retired[epoch, default: []] += c.retires.filter { $0.upperBound < e.id.counter }
                            }
                            through = e.id.counter
                            count += 1
                        }
                    }
                }
                guard let source, let sensor, count > 0 else { return }
                // Each hour as the projection holds it, unless a rollup holds it already.
                let agg = try db.cached("SELECT agg, data FROM proj_readings WHERE source = ? AND sensor = ? AND hour = ?")
                var rolled: [ReadingRollup.Hour] = []
                for h in hours.sorted() {
                    agg.reset()
                    try agg.bind(1, source); try agg.bind(2, sensor); try agg.bind(3, h)
                    if let (a, d) = try agg.first({ ($0.blob(0), $0.blob(1)) }), ReadingBucket.rollupStamp(d) == nil,
                       (1...ReadingRollup.maxAggregateBytes).contains(a.count) {
                        rolled.append(ReadingRollup.Hour(hour: h, aggregate: a))
                    }
                }
                agg.reset()
                let rollup = ReadingRollup(source: source, sensor: sensor, retires: retired[origin.epoch] ?? [], hours: rolled,
                                           earlier: retired.filter { $0.key != origin.epoch }.map { .init(epoch: $0.key, ranges: $0.value) })
                _ = try appendInTransaction([(stream, .readingRollup(rollup))])
                for m in newMarks { try setRollupMark(key, epoch: m.epoch, m.through) }
                report.streams = 1
                report.eventsRetired = count
                report.eventsWritten = 1
                report.hours = rolled.count
            }
        } catch {
            streamIDs.removeAll()
            throw StoreError.from(error, path: path)
        }
        return report
    }

    /// This replica's reading events of a stream in one of its epochs after counter `after`, in counter order:
    /// `reading`, `reading.block` and `reading.compact`.
    private func ownReadingEvents(stream: Int64, epoch: UInt32, after: UInt64, limit: Int) throws -> [(seq: Int64, event: Event)] {
        let q = try db.cached("""
            SELECT seq, data FROM events WHERE stream = ? AND origin = ? AND epoch = ? AND counter > ?
            AND type IN ('reading', 'reading.block', 'reading.compact') ORDER BY counter LIMIT ?
            """)
        defer { q.reset() }
        try q.bind(1, stream)
        try q.bind(2, Int64(bitPattern: origin.replica.rawValue))
        try q.bind(3, Int64(epoch))
        try q.bind(4, Int64(bitPattern: after))
        try q.bind(5, Int64(limit))
        var out: [(seq: Int64, event: Event)] = []
        while try q.step() {
            if let e = try? Event(decoding: q.blob(1), stored: true) { out.append((q.int(0), e)) }
        }
        return out
    }

    /// The time of an event's newest reading, nil for anything else.
    static func newestTime(_ e: Event) -> Int64? {
        EventBody.readingRows(of: e)?.rows.map(\.time).max()
    }

    private func setRollupMark(_ stream: Int64, epoch: UInt32, _ counter: UInt64) throws {
        let q = try db.cached("INSERT INTO rollup_marks(stream, epoch, through) VALUES (?, ?, ?) ON CONFLICT(stream, epoch) DO UPDATE SET through = excluded.through")
        try q.bind(1, stream)
        try q.bind(2, Int64(epoch))
        try q.bind(3, Int64(bitPattern: counter))
        try q.run()
    }
}
