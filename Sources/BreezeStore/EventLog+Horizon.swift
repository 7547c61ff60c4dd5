public import BreezeCore

/// A device's horizon (`Protocol/sync.md` 6.8): it keeps readings for so many days and drops older ones. A
/// dropped event stays covered by the device's version vector (so sync never sends it back) and is recorded
/// as part of a counter range in `horizon_gaps` (so `breeze verify` tells it from a lost one, and `breeze diff`
/// from a missing one); readings older than the cutoff are also left out of the facts projection, whether
/// their event is dropped or kept, so a rebuild and the incremental projection agree.
///
/// Only readings in fact streams (`sensor:`) go: pollen, temperatures (the climate screen looks back decades),
/// `public` and the user's streams are kept.
extension EventLog {
    /// What one `applyHorizon` did.
    public struct HorizonReport: Sendable, Equatable {
        /// Reading events dropped now.
        public var dropped = 0
        /// The cutoff applied (Unix seconds; readings before it are gone), nil when there is no horizon.
        public var cutoff: Int64?
        public init() {}
    }

    /// The default horizon of a device with interests: 14 days, what History needs (this week and last).
    public static let defaultHorizonDays = 14
    /// Beyond the horizon's days, what NowCast looks back for the first hour it shows: 12 hours.
    public static let horizonNowCastMarginSeconds: Int64 = 12 * 3600

    /// The horizon set with `setHorizon(days:)`: a number of days, 0 for none (keep everything), nil when
    /// never set (then `effectiveHorizonDays` applies the default).
    public func horizonSetting() throws(StoreError) -> Int? {
        do {
            return try db.cached("SELECT value FROM meta WHERE key = 'horizon_days'").first { Int($0.int(0)) }
        } catch { throw StoreError.from(error, path: path) }
    }

    /// The days of readings this replica keeps, nil for all: the horizon set, else 14 for a device that
    /// declared interests (it holds part of the facts), else none (a server keeps everything unless told).
    public func effectiveHorizonDays() throws(StoreError) -> Int? {
        if let d = try horizonSetting() { return d == 0 ? nil : d }
        return try interests().isEmpty ? nil : EventLog.defaultHorizonDays
    }

    /// Sets the horizon: keep readings for `days` days (1 to 36,500), or nil for none (keep everything).
    public func setHorizon(days: Int?) throws(StoreError) {
        if let days, !(1...36_500).contains(days) {
            throw StoreError(.invalidAppend, "horizon \(days) days: expected 1 to 36500 days, or none")
        }
        do {
            let s = try db.prepare("INSERT OR REPLACE INTO meta(key, value) VALUES ('horizon_days', ?)")
            try s.bind(1, Int64(days ?? 0))
            try s.run()
        } catch { throw StoreError.from(error, path: path) }
    }

    /// The cutoff for `days` at `nowSeconds`: `days` days and NowCast's 12 hours before now, down to the hour
    /// (readings of whole hours go, so the projection's hourly buckets are never cut).
    public static func horizonCutoff(days: Int, nowSeconds: Int64) -> Int64 {
        let t = nowSeconds - Int64(days) * 86_400 - horizonNowCastMarginSeconds
        return t - ((t % 3600) + 3600) % 3600
    }

    /// The cutoff the projection applies (readings before it are left out), 0 for none.
    func projectionCutoff() throws -> Int64 {
        try db.cached("SELECT value FROM meta WHERE key = 'horizon_cutoff'").first { $0.int(0) } ?? 0
    }

    /// The horizon cutoff this replica's projection applies (Unix seconds), 0 for none: a replay of its
    /// events into a scratch database (`breeze diff`) takes it over (`takeProjectionCutoff`) to compare.
    public func appliedHorizonCutoff() throws(StoreError) -> Int64 {
        do { return try projectionCutoff() } catch { throw StoreError.from(error, path: path) }
    }

    /// Stores `events` as they are, with no check of counters (a gap is taken as is) and heads set to the
    /// greatest counter of each origin: for a scratch database that replays another replica's log, such as
    /// a device's with counters dropped beyond its horizon (`breeze diff` checks its projection this way;
    /// `ingest` would refuse the gaps). Never for a replica that syncs.
    public func storeReplayed(_ events: [Event]) throws(StoreError) {
        do {
            try db.writeTransaction {
                let insert = try EventInserter(db: db)
                var heads: [[Int64]: (Origin, UInt64)] = [:]
                for e in events {
                    let key = try streamKey(e.stream, create: true)!
                    try insert.add(e, stream: key, flags: EventBody.type(e.type, belongsIn: e.stream) ? 0 : 2)
                    let k = [key, Int64(bitPattern: e.id.origin.replica.rawValue), Int64(e.id.origin.epoch)]
                    if (heads[k]?.1 ?? 0) < e.id.counter { heads[k] = (e.id.origin, e.id.counter) }
                }
                try insert.flush()
                for (k, h) in heads where try head(stream: k[0], origin: h.0) < h.1 { try setHead(stream: k[0], origin: h.0, counter: h.1) }
            }
        } catch {
            streamIDs.removeAll()
            throw StoreError.from(error, path: path)
        }
    }

    /// Makes this (scratch) database's projection leave out readings before `cutoff`, as the replica it
    /// replays does.
    public func takeProjectionCutoff(_ cutoff: Int64) throws(StoreError) {
        do { try setMeta("horizon_cutoff", cutoff) } catch { throw StoreError.from(error, path: path) }
    }

    /// Drops the reading events of fact streams whose newest reading is older than the horizon's cutoff
    /// at `nowSeconds`, and leaves readings before it out of the projection. Each reading event is decoded
    /// once, when it is first seen here, and filed under the hour it expires; so a call costs what arrived
    /// since the last one and what expired. Nothing happens without a horizon.
    @discardableResult
    public func applyHorizon(nowSeconds: Int64) throws(StoreError) -> HorizonReport {
        var report = HorizonReport()
        let days = try effectiveHorizonDays()
        // The projection's cutoff follows the horizon both ways: none (or a longer one) brings back what
        // is still held before the old cutoff, by a rebuild (what was dropped stays dropped: the vectors
        // cover it).
        let newCutoff = days.map { EventLog.horizonCutoff(days: $0, nowSeconds: nowSeconds) } ?? 0
        do {
            let held = try projectionCutoff()
            if held > 0 && (days == nil || newCutoff < held) {
                try db.writeTransaction {
                    try setMeta("horizon_cutoff", newCutoff)
                    try setMeta("proj_version", 0)
                    try setMeta("drop_generation", try dropGeneration() + 1)
                }
            }
        } catch { throw StoreError.from(error, path: path) }
        guard days != nil else { return report }
        let cutoff = newCutoff
        report.cutoff = cutoff
        do {
            try db.writeTransaction {
                let oldMax = try db.scalarInt("SELECT max(seq) FROM events") ?? 0
                var doomed: [(seq: Int64, stream: Int64, origin: Int64, epoch: Int64, counter: Int64)] = []
                var expiring: [Int64: [Int64]] = [:]     // hour -> seqs
                // 1. Reading events not seen yet: dropped at once when too old, else filed by expiry hour. (CROSS
                // JOIN keeps SQLite reading `events` by sequence number, from where the last call stopped.)
                let from = try db.cached("SELECT value FROM meta WHERE key = 'horizon_seq'").first { $0.int(0) } ?? 0
                let q = try db.cached("""
                    SELECT e.seq, e.stream, e.origin, e.epoch, e.counter, e.data FROM events e CROSS JOIN streams s ON s.id = e.stream
                    WHERE e.seq > ? AND e.type IN ('reading', 'reading.block', 'reading.compact') AND s.name LIKE 'sensor:%' ORDER BY e.seq
                    """)
                try q.bind(1, from)
                while try q.step() {
                    guard let e = try? Event(decoding: q.blob(5), stored: true), let rows = EventBody.readingRows(of: e),
                          let newest = rows.rows.map(\.time).max() else { continue }
                    let row = (q.int(0), q.int(1), q.int(2), q.int(3), q.int(4))
                    if newest < cutoff { doomed.append(row) } else { expiring[ReadingBucket.hour(newest), default: []].append(row.0) }
                }
                q.reset()
                try setMeta("horizon_seq", oldMax)
                for (hour, seqs) in expiring { try fileExpiry(hour: hour, seqs: seqs) }
                // 2. Events filed under hours before the cutoff's.
                let expired = try db.prepare("SELECT hour, seqs FROM reading_expiry WHERE hour < ?")
                try expired.bind(1, cutoff / 3600)
                var seqs: [Int64] = []
                while try expired.step() { seqs += EventLog.decodeSeqs(expired.blob(1)) }
                try db.execute("DELETE FROM reading_expiry WHERE hour < \(cutoff / 3600)")
                // A number filed here may since name another row (the newest row takes the greatest number
                // when rows are deleted, `keepHighestSeq`): only a reading of a `sensor:` stream whose newest
                // reading is before the cutoff goes.
                let row = try db.prepare("""
                    SELECT e.stream, e.origin, e.epoch, e.counter, e.data FROM events e JOIN streams s ON s.id = e.stream
                    WHERE e.seq = ? AND e.type IN ('reading', 'reading.block', 'reading.compact') AND s.name LIKE 'sensor:%'
                    """)
                for seq in seqs {
                    row.reset()
                    try row.bind(1, seq)
                    guard try row.step(), let e = try? Event(decoding: row.blob(4), stored: true), let rows = EventBody.readingRows(of: e),
                          let newest = rows.rows.map(\.time).max(), newest < cutoff else { continue }
                    doomed.append((seq, row.int(0), row.int(1), row.int(2), row.int(3)))
                }
                row.reset()
                // If nothing would be left (a log of readings only), the newest row stays, filed for the next
                // pass: in an empty table SQLite numbers the next row 1, and every reader's position (a
                // session's cursor, the projection's checkpoint) would pass over what comes next
                // (`keepHighestSeq`). Screens do not show it (it is before the projection's cutoff).
                if doomed.contains(where: { $0.seq == oldMax }),
                   try db.scalarInt("SELECT count(*) FROM events") ?? 0 <= Int64(Set(doomed.map(\.seq)).count) {
                    doomed.removeAll { $0.seq == oldMax }
                    try fileExpiry(hour: cutoff / 3600, seqs: [oldMax])
                }
                // 3. Drop them, remember their counters, and keep the greatest sequence number.
                let del = try db.prepare("DELETE FROM events WHERE seq = ?")
                for d in doomed {
                    del.reset()
                    try del.bind(1, d.seq)
                    try del.run()
                }
                try recordGaps(doomed.map { ($0.stream, $0.origin, $0.epoch, $0.counter) })
                try keepHighestSeq(oldMax)
                report.dropped = doomed.count
                // 4. The projection leaves out what is before the cutoff.
                if cutoff > (try projectionCutoff()) {
                    try setMeta("horizon_cutoff", cutoff)
                    try db.execute("DELETE FROM proj_readings WHERE hour < \(cutoff / 3600) AND substr(data, 1, 2) != x'8001'")   // a rollup's hours stay (sync.md 6.11)
                    // A sensor's row of newest hours that reaches below it goes too (RecentHours: read from the table).
                    try db.execute("DELETE FROM proj_recent WHERE hour - \(EventLog.recentHours) < \(cutoff / 3600)")
                    // Caches and a rebuild running elsewhere (which read with the old cutoff) start over.
                    try setMeta("drop_generation", try dropGeneration() + 1)
                }
            }
        } catch { throw StoreError.from(error, path: path) }
        if report.dropped > 0 { try? reclaimSpace() }     // busy: the next pass tries again
        return report
    }

    /// Gives the pages that dropped events freed back to the file system, so a device's database shrinks
    /// with its horizon: `incremental_vacuum` once the file is in incremental auto-vacuum mode; before that,
    /// when a quarter of its pages are free, one `VACUUM` that also turns that mode on (a device's database
    /// is small; a server, with no horizon, never gets here).
    public func reclaimSpace() throws(StoreError) {
        do {
            if try db.scalarInt("PRAGMA auto_vacuum") == 2 {
                try db.execute("PRAGMA incremental_vacuum")
                return
            }
            let free = try db.scalarInt("PRAGMA freelist_count") ?? 0, pages = try db.scalarInt("PRAGMA page_count") ?? 0
            guard free * 4 > pages else { return }
            try db.execute("PRAGMA auto_vacuum = INCREMENTAL")
            try db.execute("VACUUM")
        } catch { throw StoreError.from(error, path: path) }
    }

    /// Adds `seqs` to the list of reading events that expire in `hour`.
    private func fileExpiry(hour: Int64, seqs: [Int64]) throws {
        let q = try db.cached("SELECT seqs FROM reading_expiry WHERE hour = ?")
        try q.bind(1, hour)
        let held = try q.first { $0.blob(0) } ?? []
        q.reset()
        var w = ByteWriter()
        w.raw(held)
        var last = EventLog.decodeSeqs(held).last ?? 0
        for s in seqs.sorted() {
            w.varint(UInt64(bitPattern: s &- last))
            last = s
        }
        let s = try db.cached("INSERT OR REPLACE INTO reading_expiry(hour, seqs) VALUES (?, ?)")
        try s.bind(1, hour)
        try s.bind(2, w.bytes)
        try s.run()
    }

    /// The sequence numbers of a `reading_expiry` row: varint differences, ascending.
    static func decodeSeqs(_ bytes: [UInt8]) -> [Int64] {
        var r = ByteReader(bytes)
        var out: [Int64] = [], last: Int64 = 0
        while !r.isAtEnd, let d = try? r.varint() {
            last &+= Int64(bitPattern: d)
            out.append(last)
        }
        return out
    }

    /// Merges dropped counters into `horizon_gaps`, per (stream, origin, epoch), as ranges.
    func recordGaps(_ ids: [(stream: Int64, origin: Int64, epoch: Int64, counter: Int64)]) throws {
        try recordRanges(table: "horizon_gaps", ids)
    }

    /// Merges counters into a table of ranges (`horizon_gaps`, `retired`), per (stream, origin, epoch).
    func recordRanges(table: String, _ ids: [(stream: Int64, origin: Int64, epoch: Int64, counter: Int64)]) throws {
        try recordRanges(table: table, ranges: ids.map { ($0.stream, $0.origin, $0.epoch, UInt64(bitPattern: $0.counter)...UInt64(bitPattern: $0.counter)) })
    }

    /// Merges counter ranges into a table of ranges (`horizon_gaps`, `retired`), per (stream, origin, epoch):
    /// overlapping and adjacent ranges become one row.
    func recordRanges(table: String, ranges given: [(stream: Int64, origin: Int64, epoch: Int64, range: ClosedRange<UInt64>)]) throws {
        var byKey: [[Int64]: [(Int64, Int64)]] = [:]
        for g in given {
            byKey[[g.stream, g.origin, g.epoch], default: []].append((Int64(bitPattern: g.range.lowerBound), Int64(bitPattern: g.range.upperBound)))
        }
        for (k, added) in byKey {
            let q = try db.cached("SELECT first, last FROM \(table) WHERE stream = ? AND origin = ? AND epoch = ?")
            try q.bind(1, k[0]); try q.bind(2, k[1]); try q.bind(3, k[2])
            var ranges: [(Int64, Int64)] = []
            while try q.step() { ranges.append((q.int(0), q.int(1))) }
            q.reset()
            ranges += added
            ranges.sort { $0.0 < $1.0 }
            var merged: [(Int64, Int64)] = []
            for r in ranges {
                if let last = merged.last, r.0 <= last.1 &+ 1, last.1 != Int64.max { merged[merged.count - 1].1 = max(last.1, r.1) } else { merged.append(r) }
            }
            let del = try db.cached("DELETE FROM \(table) WHERE stream = ? AND origin = ? AND epoch = ?")
            try del.bind(1, k[0]); try del.bind(2, k[1]); try del.bind(3, k[2])
            try del.run()
            let ins = try db.cached("INSERT INTO \(table)(stream, origin, epoch, first, last) VALUES (?, ?, ?, ?, ?)")
            for (a, b) in merged {
                ins.reset()
                try ins.bind(1, k[0]); try ins.bind(2, k[1]); try ins.bind(3, k[2]); try ins.bind(4, a); try ins.bind(5, b)
                try ins.run()
            }
        }
    }

    /// True when `id` of stream `stream` (its key) is inside a range dropped beyond the horizon.
    func droppedBeyondHorizon(stream: Int64, id: EventID) throws -> Bool { try inRange("horizon_gaps", stream: stream, id: id) }

    /// True when `id` of stream `stream` (its key) is inside a range of a table of ranges (`horizon_gaps`,
    /// `retired`).
    func inRange(_ table: String, stream: Int64, id: EventID) throws -> Bool {
        let q = try db.cached("""
            SELECT 1 FROM \(table) WHERE stream = ? AND origin = ? AND epoch = ? AND first <= ? AND last >= ? LIMIT 1
            """)
        defer { q.reset() }
        try q.bind(1, stream)
        try q.bind(2, Int64(bitPattern: id.origin.replica.rawValue))
        try q.bind(3, Int64(id.origin.epoch))
        try q.bind(4, Int64(bitPattern: id.counter))
        try q.bind(5, Int64(bitPattern: id.counter))
        return try q.first { _ in true } ?? false
    }

    /// The counter ranges dropped beyond the horizon, per stream and origin.
    public func horizonGaps() throws(StoreError) -> [StreamID: [Origin: [ClosedRange<UInt64>]]] {
        try rangeTable("horizon_gaps")
    }

    /// A table of counter ranges (`horizon_gaps`, `retired`), per stream and origin.
    func rangeTable(_ table: String) throws(StoreError) -> [StreamID: [Origin: [ClosedRange<UInt64>]]] {
        do {
            let q = try db.cached("SELECT s.name, g.origin, g.epoch, g.first, g.last FROM \(table) g JOIN streams s ON s.id = g.stream ORDER BY 1, 2, 3, 4")
            var out: [StreamID: [Origin: [ClosedRange<UInt64>]]] = [:]
            while try q.step() {
                guard let s = try? StreamID(parsing: q.text(0)) else { continue }
                let o = Origin(replica: ReplicaID(rawValue: UInt64(bitPattern: q.int(1))), epoch: UInt32(truncatingIfNeeded: q.int(2)))
                out[s, default: [:]][o, default: []].append(UInt64(bitPattern: q.int(3))...UInt64(bitPattern: q.int(4)))
            }
            return out
        } catch { throw StoreError.from(error, path: path) }
    }

    /// After rows were deleted: if the greatest sequence number went, the newest row left takes it, so no
    /// number is given out twice (readers keep positions in the log). Inside a write transaction.
    /// The moved row is read again by the next `applyHorizon` (its expiry was filed under its old number).
    /// A projection checkpoint that covered the moved row moves with it.
    func keepHighestSeq(_ oldMax: Int64) throws {
        if let newMax = try db.scalarInt("SELECT max(seq) FROM events"), newMax < oldMax {
            try db.execute("UPDATE events SET seq = \(oldMax) WHERE seq = \(newMax)")
            try db.execute("UPDATE meta SET value = min(value, \(newMax - 1)) WHERE key = 'horizon_seq'")
            try db.execute("UPDATE meta SET value = \(oldMax) WHERE key = 'proj_seq' AND value >= \(newMax)")
        }
    }
}
