public import BreezeCore
public import BreezeAirQuality
import BreezeCrypto

/// The facts projection: sensors, readings and other facts of the log laid out in tables that screens can
/// query (`proj_sensors`, `proj_readings`, `proj_facts`), kept up to date from a checkpoint (`meta.proj_seq`).
///
/// Every row is a last-writer-wins register keyed by the fact's natural key and ordered by the event stamp
/// (HLC, origin, epoch, counter), so the tables hold the same rows whatever order the events were applied
/// in: incremental catch-up from any checkpoint equals a full rebuild (tested in `ProjectionTests`).
///
/// When `projectionVersion` changes (the mapping from events to rows changed), `catchUpProjection` rebuilds
/// into shadow tables private to that rebuild (`proj_*_next_<random>`) in chunks, while readers keep reading
/// the current tables, and swaps them in one
/// transaction at the end.
extension EventLog {
    /// The version of the event-to-row mapping. Bump it when that mapping changes: databases then rebuild.
    public static let projectionVersion: Int64 = 9
    static let projectionTables = ["proj_sensors", "proj_readings", "proj_facts", "proj_recent"]
    static let projectionChunk = 20_000
    /// Events per transaction of a rebuild: larger, since its shadow tables have no reader to wait for it and
    /// fewer chunks mean fewer hours written twice (an hour whose readings straddle two chunks is read back,
    /// merged and written again).
    static let rebuildChunk = 100_000

    /// Applies every event after the checkpoint (rebuilding first if the projection code changed). Returns
    /// how many events were applied.
    @discardableResult
    public func catchUpProjection(progress: (Int) -> Void = { _ in }) throws(StoreError) -> Int {
        do {
            let version = try db.cached("SELECT value FROM meta WHERE key = 'proj_version'").first { $0.int(0) } ?? 0
            if version != EventLog.projectionVersion { return try rebuildProjection(progress: progress) }
            var total = 0
            while true {
                let n = try db.writeTransaction { () throws -> Int in
                    let from = try db.cached("SELECT value FROM meta WHERE key = 'proj_seq'").first { $0.int(0) } ?? 0
                    var lookUpAll: Set<Int>? = nil
                    let (n, last) = try applyProjection(afterSeq: from, suffix: "", written: &lookUpAll)
                    if n > 0 { try setMeta("proj_seq", last) }
                    return n
                }
                total += n
                if n > 0 { progress(total) } else { return total }     // a page can be cut by size: go on until empty
            }
        } catch is ProjectionDamage {
            // The tables are derived: a damaged row is repaired by rebuilding them from the log.
            return try rebuildProjection(progress: progress)
        } catch { throw StoreError.from(error, path: path) }
    }

    /// Inside a write transaction the caller holds: applies every event after the checkpoint and moves it
    /// (the projection's version must be current: `catchUpProjection` first rebuilds when it is not).
    func catchUpInTransaction() throws {
        while true {
            let from = try db.cached("SELECT value FROM meta WHERE key = 'proj_seq'").first { $0.int(0) } ?? 0
            var lookUpAll: Set<Int>? = nil
            let (n, last) = try applyProjection(afterSeq: from, suffix: "", written: &lookUpAll)
            guard n > 0 else { return }
            try setMeta("proj_seq", last)
        }
    }

    /// Rebuilds the projection from the whole log into shadow tables, then swaps them in. Readers see the old
    /// tables until the swap commits.
    @discardableResult
    public func rebuildProjection(progress: (Int) -> Void = { _ in }) throws(StoreError) -> Int {
        // Shadow tables are private to this rebuild (a random suffix), so two processes rebuilding at once
        // never touch each other's tables; the first to finish swaps its tables in, the other discards its own.
        let suffix = "_next_" + String(UInt64.random(in: 1...UInt64.max), radix: 36)
        do {
            let startedStale = (try db.cached("SELECT value FROM meta WHERE key = 'proj_version'").first { $0.int(0) } ?? 0)
                != EventLog.projectionVersion
            // Streams dropped while this rebuild reads (`dropFactStreams`, by any connection) make its tables
            // wrong: it starts over rather than swap them in.
            let generation = try dropGeneration()
            try db.writeTransaction { try db.execute(Schema.projectionDDL(suffix: suffix)) }
            // The shadow tables are derived and private until the swap: their chunks commit without an fsync
            // each (WAL with synchronous=NORMAL still never corrupts the file; a crash only loses shadow rows, and
            // the next rebuild starts afresh). The swap below commits with the configured durability.
            let synchronous = try db.scalarInt("PRAGMA synchronous") ?? 2
            if synchronous > 1 { try db.execute("PRAGMA synchronous = NORMAL") }
            defer { if synchronous > 1 { try? db.execute("PRAGMA synchronous = \(synchronous)") } }
            var after: Int64 = 0, total = 0
            // Hashes of the buckets this rebuild wrote: any other is not in its tables yet (a collision only costs
            // a look-up). Hashes rather than keys keep this small for years of readings.
            var written: Set<Int>? = []
            func shadowTablesGone() throws -> Bool {
                // Another process's swap drops every other rebuild's tables (see below): it finished first.
                (try db.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = 'proj_readings\(suffix)'") ?? 0) == 0
            }
            while true {
                let (n, last) = try db.writeTransaction { () throws -> (Int, Int64) in
                    if try shadowTablesGone() { return (-1, after) }
                    return try applyProjection(afterSeq: after, suffix: suffix, written: &written)
                }
                if n < 0 { return total }
                if n == 0 { break }
                total += n
                after = last
                progress(total)
            }
            if synchronous > 1 { try db.execute("PRAGMA synchronous = \(synchronous)") }
            let outdated = try db.writeTransaction { () throws -> Bool in
                if try shadowTablesGone() { return false }
                if try dropGeneration() != generation {
                    for t in EventLog.projectionTables { try db.execute("DROP TABLE \(t)\(suffix)") }
                    return true
                }
                let version = try db.cached("SELECT value FROM meta WHERE key = 'proj_version'").first { $0.int(0) } ?? 0
                if startedStale && version == EventLog.projectionVersion {
                    // Another process finished the rebuild this one was started for: keep its tables.
                    for t in EventLog.projectionTables { try db.execute("DROP TABLE \(t)\(suffix)") }
                    return false
                }
                // Events appended while the rebuild ran are applied under the lock, then the tables swap.
                while true {
                    let (n, last) = try applyProjection(afterSeq: after, suffix: suffix, written: &written)
                    if n == 0 { break }
                    after = last
                }
                for t in EventLog.projectionTables {
                    try db.execute("DROP TABLE \(t); ALTER TABLE \(t)\(suffix) RENAME TO \(t)")
                }
                // Shadow tables left by a rebuild that was killed (or is still running: it stops at its next
                // chunk, finding its tables gone) would otherwise stay in the file for good.
                let q = try db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'proj\\_%\\_next\\_%' ESCAPE '\\'")
                var orphans: [String] = []
                while try q.step() { orphans.append(q.text(0)) }
                for name in orphans { try db.execute("DROP TABLE \"\(name)\"") }
                try setMeta("proj_seq", after)
                try setMeta("proj_version", EventLog.projectionVersion)
                return false
            }
            if outdated { return try rebuildProjection(progress: progress) }
            return total
        } catch {
            for t in EventLog.projectionTables { try? db.execute("DROP TABLE IF EXISTS \(t)\(suffix)") }
            throw StoreError.from(error, path: path)
        }
    }

    /// A damaged projection row found by a reader: the projection is marked for a rebuild (derived data; the
    /// log is intact), which the next catch-up runs; a read-only connection just reports it.
    private func projectionDamaged(_ source: String, _ sensor: String, _ e: DecodingError) -> StoreError {
        try? db.execute("UPDATE meta SET value = 0 WHERE key = 'proj_version'")
        return StoreError(.corrupt, "\(path): the projected readings of \(source):\(sensor) are damaged (\(e)); the projection "
                          + "is rebuilt from the log (which is intact) by the next command that reads it")
    }

    func setMeta(_ key: String, _ value: Int64) throws {
        let s = try db.cached("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)")
        try s.bind(1, key)
        try s.bind(2, value)
        try s.run()
    }

    /// Applies up to `projectionChunk` (a rebuild: `rebuildChunk`) events after `afterSeq` to the tables with `suffix`; returns how many
    /// rows were read and the last sequence number.
    ///
    /// `written`, given by a rebuild (whose shadow tables start empty and are its own), holds the buckets it
    /// has written: a bucket not in it need not be looked up. Catch-up passes nil and looks every one up.
    func applyProjection(afterSeq: Int64, suffix: String, written: inout Set<Int>?) throws -> (Int, Int64) {
        // Readings go to hour buckets (`ReadingBucket`): this page's values are grouped per bucket first, then
        // each touched bucket is read once, merged and written once, in key order (B-tree locality).
        let selectBucket = try db.cached("SELECT data FROM proj_readings\(suffix) WHERE source = ? AND sensor = ? AND hour = ?")
        let writeBucket = try db.cached("INSERT OR REPLACE INTO proj_readings\(suffix)(source, sensor, hour, agg, data) VALUES (?, ?, ?, ?, ?)")
        var pending: [BucketKey: ReadingBucket.Pending] = [:]
        // Hours summed up by `reading.rollup` events (EventLog+Retention): the later stamp of one hour wins.
        var rollups: [BucketKey: (aggregate: [UInt8], stamp: Stamp)] = [:]
        var scratch: [(quantity: String, value: Double)] = []      // one buffer for every reading's values
        // A device's horizon (EventLog+Horizon): readings before its cutoff are left out, dropped or not.
        let cutoff = try projectionCutoff()
        let upsertSensor = try db.cached("""
            INSERT INTO proj_sensors\(suffix)(source, sensor, name, kind, latitude, longitude, time_zone, hlc, origin, epoch, counter)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(source, sensor) DO UPDATE SET name = excluded.name, kind = excluded.kind,
              latitude = excluded.latitude, longitude = excluded.longitude, time_zone = excluded.time_zone,
              hlc = excluded.hlc, origin = excluded.origin, epoch = excluded.epoch, counter = excluded.counter
            WHERE (excluded.hlc, excluded.origin, excluded.epoch, excluded.counter) > (hlc, origin, epoch, counter)
            """)
        let upsertFact = try db.cached("""
            INSERT INTO proj_facts\(suffix)(kind, key, data, hlc, origin, epoch, counter) VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(kind, key) DO UPDATE SET data = excluded.data, hlc = excluded.hlc, origin = excluded.origin,
              epoch = excluded.epoch, counter = excluded.counter
            WHERE (excluded.hlc, excluded.origin, excluded.epoch, excluded.counter) > (hlc, origin, epoch, counter)
            """)
        func bindStamp(_ s: Statement, _ first: Int32, _ e: Event) throws {
            try s.bind(first, Int64(bitPattern: e.hlc.rawValue ^ (1 << 63)))          // unsigned order in a signed column
            try s.bind(first + 1, Int64(bitPattern: e.id.origin.replica.rawValue ^ (1 << 63)))
            try s.bind(first + 2, Int64(e.id.origin.epoch))
            try s.bind(first + 3, Int64(bitPattern: e.id.counter ^ (1 << 63)))
        }
        func apply(_ e: Event) throws {
            // Readings, nearly every event, take the fast path: payload straight to a bucket group.
            if let r = EventBody.readingValues(of: e, into: &scratch) {
                // A reading belongs in `public` or a `sensor:` stream (`EventBody.type(_:belongsIn:)`), checked
                // without its table look-up.
                guard !scratch.isEmpty, cutoff == 0 || r.time >= cutoff else { return }
                switch e.stream { case .public, .sensor: break; default: return }
                pending[BucketKey(source: r.source, sensor: r.sensor, hour: ReadingBucket.hour(r.time)), default: ReadingBucket.Pending()]
                    .add(time: r.time, stamp: e.stamp, values: scratch)
                return
            }
            if e.type == "reading.rollup" {
                // Whatever the horizon: a rollup is what a device keeps of the long history.
                guard case .sensor = e.stream, EventBody.knownTypes[e.type] == e.schemaVersion,
                      case .readingRollup(let r)? = try? e.body(), e.stream == StreamID.sensor(source: r.source, sensor: r.sensor) else { return }
                for h in r.hours where (try? HourAggregate(hour: h.hour * 3600, decoding: h.aggregate)) != nil {
                    let key = BucketKey(source: r.source, sensor: r.sensor, hour: h.hour)
                    if let held = rollups[key], held.stamp > e.stamp { continue }
                    rollups[key] = (h.aggregate, e.stamp)
                }
                return
            }
            if let c = EventBody.compactionRows(of: e) {
                // Each row with the stamp of the event it replaced, so merging it changes no winner; a row
                // stamped after its compaction, or of a counter not before it, was never such an event. Only in
                // its sensor's own stream (what a device subscribed to that sensor receives).
                guard e.stream == StreamID.sensor(source: c.source, sensor: c.sensor) else { return }
                for row in c.rows where !row.values.isEmpty && (cutoff == 0 || row.time >= cutoff)
                    && row.hlc <= e.hlc && row.counter < e.id.counter {
                    let stamp = Stamp(hlc: row.hlc, id: EventID(origin: e.id.origin, counter: row.counter))
                    pending[BucketKey(source: c.source, sensor: c.sensor, hour: ReadingBucket.hour(row.time)), default: ReadingBucket.Pending()]
                        .add(time: row.time, stamp: stamp, values: row.values)
                }
                return
            }
            if let r = EventBody.readingRows(of: e) {
                guard EventBody.type(e.type, belongsIn: e.stream) else { return }
                for row in r.rows where !row.values.isEmpty && (cutoff == 0 || row.time >= cutoff) {
                    pending[BucketKey(source: r.source, sensor: r.sensor, hour: ReadingBucket.hour(row.time)), default: ReadingBucket.Pending()]
                        .add(time: row.time, stamp: e.stamp, values: row.values)
                }
                return
            }
            guard EventBody.factTypes.contains(e.type), EventBody.type(e.type, belongsIn: e.stream),
                  let body = try? e.body() else { return }
            switch body {
            case .reading, .readingBlock, .readingCompaction:
                return                                      // a reading `readingRows` refused does not decode either
            case .sensorRegistered(let s):
                upsertSensor.reset()
                try upsertSensor.bind(1, s.source)
                try upsertSensor.bind(2, s.sensor)
                try upsertSensor.bind(3, s.name)
                try upsertSensor.bind(4, s.kind)
                if let v = s.latitude { try upsertSensor.bind(5, v) } else { try upsertSensor.bindNull(5) }
                if let v = s.longitude { try upsertSensor.bind(6, v) } else { try upsertSensor.bindNull(6) }
                if let v = s.timeZone { try upsertSensor.bind(7, v) } else { try upsertSensor.bindNull(7) }
                try bindStamp(upsertSensor, 8, e)
                try upsertSensor.run()
            default:
                guard let (kind, key) = body.projectionFactKey(stream: e.stream) else { return }
                upsertFact.reset()
                try upsertFact.bind(1, kind)
                try upsertFact.bind(2, key)
                try upsertFact.bind(3, e.encoded)
                try bindStamp(upsertFact, 4, e)
                try upsertFact.run()
            }
        }
        // Events are read a page at a time (few live at once) while their values gather in `pending`.
        var count = 0, last = afterSeq
        try forEach(afterSeq: afterSeq, pageSize: 2048) { row in
            try apply(row.event)
            count += 1
            last = row.seq
            return count < (written == nil ? EventLog.projectionChunk : EventLog.rebuildChunk)
        }
        guard count > 0 else { return (0, afterSeq) }
        let touched = Set(pending.keys).union(rollups.keys).sorted()
        for key in touched {
            var groups = pending[key]?.groups ?? []
            let mayExist = written?.insert(key.hashValue).inserted == false || written == nil
            selectBucket.reset()
            try selectBucket.bind(1, key.source)
            try selectBucket.bind(2, key.sensor)
            try selectBucket.bind(3, key.hour)
            var storedRollup: Stamp?
            if mayExist, let stored = try selectBucket.first({ $0.blob(0) }) {
                if let stamp = ReadingBucket.rollupStamp(stored) { storedRollup = stamp } else {
                    do { groups += try ReadingBucket(decoding: stored).groups } catch { throw ProjectionDamage() }
                }
            }
            writeBucket.reset()
            try writeBucket.bind(1, key.source)
            try writeBucket.bind(2, key.sensor)
            try writeBucket.bind(3, key.hour)
            // An hour a rollup holds is the rollup's: raw readings of it are no longer taken in, and the later
            // rollup of two wins. A rollup's row keeps its aggregate as it came and, as data, only its stamp.
            if let r = rollups[key], storedRollup.map({ r.stamp > $0 }) ?? true {
                try writeBucket.bind(4, r.aggregate)
                try writeBucket.bind(5, ReadingBucket.rollupMark(r.stamp))
                try writeBucket.run()
                continue
            }
            if storedRollup != nil { continue }
            let bucket = ReadingBucket(merging: groups)
            let (bytes, aggregate) = bucket.encodedWithAggregate(hour: key.hour * 3600)
            try writeBucket.bind(4, aggregate.encoded)
            try writeBucket.bind(5, bytes)
            try writeBucket.run()
        }
        // Each sensor whose hours changed gets its row of newest hours again (`RecentHours`); the keys are
        // sorted, so a sensor's buckets are next to each other.
        var sensors: [(source: String, sensor: String)] = []
        for key in touched where sensors.last.map({ $0.source != key.source || $0.sensor != key.sensor }) ?? true {
            sensors.append((key.source, key.sensor))
        }
        try refreshRecentHours(sensors, suffix: suffix)
        return (count, last)
    }

    // MARK: Queries (screens read these)

    /// The columns of `proj_sensors` that `sensorRow` reads, in its order.
    static let sensorColumns = "source, sensor, name, kind, latitude, longitude, time_zone"

    /// The registration of the row `q` stands on (selected as `sensorColumns`).
    static func sensorRow(_ q: Statement) -> SensorRegistration {
        SensorRegistration(sensor: q.text(1), name: q.text(2), source: q.text(0), kind: q.text(3),
                           latitude: q.isNull(4) ? nil : q.double(4), longitude: q.isNull(5) ? nil : q.double(5),
                           timeZone: q.isNull(6) ? nil : q.text(6))
    }

    /// Every sensor registered, sorted by source and id.
    public func projectedSensors() throws(StoreError) -> [SensorRegistration] {
        do {
            let q = try db.cached("SELECT \(Self.sensorColumns) FROM proj_sensors ORDER BY source, sensor")
            var out: [SensorRegistration] = []
            while try q.step() {
                out.append(Self.sensorRow(q))
            }
            return out
        } catch { throw StoreError.from(error, path: path) }
    }

    /// The sensors registered under `id` (in any source), sorted by source; and whether any sensor is
    /// registered at all (a replica with no catalogue yet cannot tell an unknown id from a new one).
    public func projectedSensors(id: String) throws(StoreError) -> (matches: [SensorRegistration], catalogue: Bool) {
        do {
            let q = try db.cached("SELECT \(Self.sensorColumns) FROM proj_sensors WHERE sensor = ? ORDER BY source")
            defer { q.reset() }
            try q.bind(1, id)
            var out: [SensorRegistration] = []
            while try q.step() {
                out.append(Self.sensorRow(q))
            }
            if !out.isEmpty { return (out, true) }
            return (out, try db.scalarInt("SELECT EXISTS (SELECT 1 FROM proj_sensors)") == 1)
        } catch { throw StoreError.from(error, path: path) }
    }

    /// A sensor's values with `from <= time < to`, in time order, one dictionary of quantities per time.
    public func projectedReadings(source: String, sensor: String, from: Int64, to: Int64) throws(StoreError) -> [(time: Int64, values: [String: Double])] {
        guard from < to else { return [] }
        do {
            let q = try db.cached("SELECT data FROM proj_readings WHERE source = ? AND sensor = ? AND hour >= ? AND hour <= ? ORDER BY hour")
            defer { q.reset() }
            try q.bind(1, source)
            try q.bind(2, sensor)
            try q.bind(3, ReadingBucket.hour(from))
            try q.bind(4, ReadingBucket.hour(to - 1))
            var out: [(time: Int64, values: [String: Double])] = []
            while try q.step() { try ReadingBucket.readValues(q.blob(0), from: from, to: to, into: &out) }
            return out
        } catch let e as DecodingError {
            throw projectionDamaged(source, sensor, e)
        } catch { throw StoreError.from(error, path: path) }
    }

    /// A sensor's hours with readings in `from <= time < to`, summed up (`HourAggregate`), by hour: the stored
    /// aggregates, except for an hour that `to` or `from` cuts, which is summed up from its bucket's readings
    /// in the range.
    public func projectedHourly(source: String, sensor: String, from: Int64, to: Int64) throws(StoreError) -> [HourAggregate] {
        guard from < to else { return [] }
        do {
            let firstHour = ReadingBucket.hour(from), lastHour = ReadingBucket.hour(to - 1)
            var out: [HourAggregate] = []
            out.reserveCapacity(Int(min(lastHour - firstHour + 1, EventLog.recentHours)))
            // The sensor's newest hours, in one row, when they cover the range (a screen of now: every map pin);
            // else the hour table. Decoded straight into `out`.
            if try !recentHourly(source: source, sensor: sensor, firstHour: firstHour, lastHour: lastHour, into: &out) {
                let q = try db.cached("SELECT hour, agg FROM proj_readings WHERE source = ? AND sensor = ? AND hour >= ? AND hour <= ? ORDER BY hour")
                defer { q.reset() }
                try q.bind(1, source)
                try q.bind(2, sensor)
                try q.bind(3, firstHour)
                try q.bind(4, lastHour)
                while try q.step() { out.append(try HourAggregate(hour: q.int(0) * 3600, stored: q.blobBytes(1))) }
            }
            // An hour the range cuts (only the first and the last can be) is summed up from its readings inside it.
            var i = 0
            while i < out.count {
                if out[i].firstTime < from || out[i].lastTime >= to {
                    let h = out[i].hour
                    let rows = try projectedReadings(source: source, sensor: sensor, from: max(from, h), to: min(to, h + 3600))
                    if rows.isEmpty { out.remove(at: i); continue }
                    out[i] = HourAggregate(hour: h, readings: rows)
                }
                i += 1
            }
            return out
        } catch let e as StoreError { throw e } catch let e as DecodingError {
            throw projectionDamaged(source, sensor, e)
        } catch { throw StoreError.from(error, path: path) }
    }

    /// The time of a sensor's latest reading at or before `at`, if any.
    public func latestReadingTime(source: String, sensor: String, at: Int64) throws(StoreError) -> Int64? {
        do {
            let q = try db.cached("SELECT hour, agg FROM proj_readings WHERE source = ? AND sensor = ? AND hour <= ? ORDER BY hour DESC")
            defer { q.reset() }
            try q.bind(1, source)
            try q.bind(2, sensor)
            try q.bind(3, ReadingBucket.hour(at))
            // Only the bucket of `at` itself can hold nothing at or before `at`; then the one before it answers. The
            // aggregate tells without decoding the bucket, unless `at` falls between its first and last reading.
            while try q.step() {
                let h = q.int(0)
                let a = try HourAggregate(hour: h * 3600, stored: q.blobBytes(1))
                if a.lastTime <= at { return a.lastTime }
                if a.firstTime <= at {
                    return try projectedReadings(source: source, sensor: sensor, from: h * 3600, to: at + 1).last?.time
                }
            }
            return nil
        } catch let e as DecodingError {
            throw projectionDamaged(source, sensor, e)
        } catch { throw StoreError.from(error, path: path) }
    }

    /// Facts of `kind` (`pollen`, `temperature`, `biomarker`) whose key starts with `prefix`, in key order.
    public func projectedFacts(kind: String, keyPrefix: String) throws(StoreError) -> [EventBody] {
        do {
            let q = try db.cached("SELECT data FROM proj_facts WHERE kind = ? AND key >= ? AND key < ? ORDER BY key")
            try q.bind(1, kind)
            try q.bind(2, keyPrefix)
            try q.bind(3, keyPrefix + "\u{10FFFF}")
            var out: [EventBody] = []
            while try q.step() {
                if let b = try? Event(decoding: q.blob(0), stored: true).body() { out.append(b) }
            }
            return out
        } catch { throw StoreError.from(error, path: path) }
    }

    /// Facts of `kind` with `keyFrom <= key < keyTo`, in key order (greatest key first when `descending`), at
    /// most `limit` of them (all when nil): what a screen reads of a window (a station's days around a date, a
    /// user's readings of one local day) without reading the rest.
    public func projectedFacts(kind: String, keyFrom: String, keyTo: String, limit: Int? = nil,
                               descending: Bool = false) throws(StoreError) -> [EventBody] {
        do {
            let q = try db.cached("SELECT data FROM proj_facts WHERE kind = ? AND key >= ? AND key < ? ORDER BY key \(descending ? "DESC" : "ASC") LIMIT ?")
            try q.bind(1, kind)
            try q.bind(2, keyFrom)
            try q.bind(3, keyTo)
            try q.bind(4, Int64(limit ?? -1))
            var out: [EventBody] = []
            while try q.step() {
                if let b = try? Event(decoding: q.blob(0), stored: true).body() { out.append(b) }
            }
            return out
        } catch { throw StoreError.from(error, path: path) }
    }

    /// The distinct first components of the keys of `kind` under `keyPrefix` (the text after it up to the
    /// next `|`, escaped as keys hold it: `EventBody.factKeyComponent`), sorted: the stations of `temperature`
    /// (prefix ""), a user's reading types of `biomarker` (prefix `"<user>|"`). One index seek per component,
    /// not a read of every fact.
    public func projectedFactGroups(kind: String, keyPrefix: String) throws(StoreError) -> [String] {
        do {
            let q = try db.cached("SELECT key FROM proj_facts WHERE kind = ? AND key >= ? AND key < ? ORDER BY key LIMIT 1")
            var groups: [String] = []
            var from = keyPrefix
            let end = keyPrefix + "\u{10FFFF}"
            while true {
                try q.bind(1, kind)
                try q.bind(2, from)
                try q.bind(3, end)
                guard try q.step() else { q.reset(); break }
                let key = q.text(0)
                q.reset()
                let rest = key.utf8.dropFirst(keyPrefix.utf8.count)
                let group = String(decoding: rest.prefix { $0 != UInt8(ascii: "|") }, as: UTF8.self)
                groups.append(group)
                // Past every key of this group: they all start with `group|` (a group holds no unescaped `|`), and `}`
                // is the byte after `|`, so `group}` is greater than each of them and than nothing of a later group.
                from = keyPrefix + group + "}"
            }
            return groups
        } catch { throw StoreError.from(error, path: path) }
    }

    /// The projection's checkpoint: the last `seq` applied and the mapping version that applied it (read
    /// only; `catchUpProjection` moves it).
    public func projectionCheckpoint() throws(StoreError) -> (seq: Int64, version: Int64) {
        do {
            let seq = try db.cached("SELECT value FROM meta WHERE key = 'proj_seq'").first { $0.int(0) } ?? 0
            let version = try db.cached("SELECT value FROM meta WHERE key = 'proj_version'").first { $0.int(0) } ?? 0
            return (seq, version)
        } catch { throw StoreError.from(error, path: path) }
    }

    /// True when an event the projection reads (a fact: `EventBody.factTypes`) was stored with `afterSeq <
    /// seq <= throughSeq`. Read only, so an observer can tell that catching up would only move the checkpoint
    /// (user edits, which screens read from the log) and leave the write lock alone.
    public func hasFacts(afterSeq: Int64, throughSeq: Int64) throws(StoreError) -> Bool {
        do {
            let q = try db.cached("SELECT 1 FROM events WHERE seq > ? AND seq <= ? AND type IN (\(EventBody.factTypes.sorted().map { "'\($0)'" }.joined(separator: ", "))) LIMIT 1")
            try q.bind(1, afterSeq)
            try q.bind(2, throughSeq)
            return try q.first { _ in true } ?? false
        } catch { throw StoreError.from(error, path: path) }
    }

    /// A digest of the projection tables' contents (values and deciding stamps), for comparing an incremental
    /// projection with a rebuild.
    public func projectionDigest() throws(StoreError) -> String {
        do {
            var w = ByteWriter()
            for (t, order) in [("proj_sensors", "source, sensor"), ("proj_readings", "source, sensor, hour"), ("proj_facts", "kind, key")] {
                let q = try db.prepare("SELECT * FROM \(t) ORDER BY \(order)")
                while try q.step() {
                    for c in 0..<q.columnCount {
                        if q.isNull(c) { w.u8(0) } else if q.isFloat(c) { w.u8(2); w.f64(q.double(c)) } else { w.u8(1); w.blob(q.blob(c)) }
                    }
                }
                w.u8(0xFF)
            }
            return Digest.hex(Digest.blake2b(w.bytes, length: 32))
        } catch { throw StoreError.from(error, path: path) }
    }
}

/// A stored bucket that does not decode: catch-up rebuilds the projection instead of failing for good.
struct ProjectionDamage: Error {}

/// Where a reading's values go: the sensor and the clock hour of its time.
struct BucketKey: Hashable, Comparable {
    let source: String
    let sensor: String
    let hour: Int64

    static func < (a: BucketKey, b: BucketKey) -> Bool { (a.source, a.sensor, a.hour) < (b.source, b.sensor, b.hour) }

    /// The sensor and the hour tell buckets apart well enough: hashing the source too (nearly always the same
    /// few) would only cost time on every reading a page holds.
    func hash(into h: inout Hasher) {
        h.combine(sensor)
        h.combine(hour)
    }
}
