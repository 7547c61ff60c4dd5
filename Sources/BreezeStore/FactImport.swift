public import BreezeCore

/// Imports of facts: each fact is a last-writer-wins register by its natural key (`EventBody.naturalKeys`),
/// and an import stores only what changes a register. It compares each fact with the value the projection
/// holds for its key (brought up to date first, in the same transaction): the same value is a duplicate
/// (nothing stored: importing a file twice stores nothing the second time), a different one is an update
/// (stored, and since a local write is stamped after every event this replica holds, it wins on every
/// replica that receives it: a sensor that moved, a newer forecast for a day already held), a key not held
/// is new. The projection is the index, so there is no separate one to keep (schema 4's `fact_keys`, as large
/// as the events themselves, is dropped by schema 5).
///
/// Readings are stored as `reading.block` events, one per sensor and batch (up to 1,000 rows): a row of
/// nine values then costs about 25 bytes in the log.
extension EventLog {
    /// What `appendFacts` did with a batch.
    public struct FactAppendReport: Sendable, Equatable {
        /// Events stored (readings of one sensor share a block event).
        public var storedEvents = 0
        /// Facts (values) new to this replica.
        public var storedFacts = 0
        /// Facts whose key was held with another value: stored, replacing it.
        public var updatedFacts = 0
        /// Facts already held with the same value: not stored again.
        public var duplicateFacts = 0
        /// Per item of the batch: what happened to it (an item with any updated fact is `updated`, else one
        /// with any new fact is `stored`, else `duplicate`).
        public var outcomes: [Outcome] = []
        public init() {}
    }

    /// What happened to one item of a batch.
    public enum Outcome: Sendable, Equatable { case stored, updated, duplicate }

    /// Appends fact events (readings, sensors, pollen, temperatures, biomarker readings), keeping only facts
    /// that are new or change the value held for their key, in one transaction. Non-fact bodies are refused.
    ///
    /// A registration that leaves a field empty (an air-quality archive names a site but not its time zone)
    /// keeps the value held for that field: it updates only what it says.
    ///
    /// A fact given for `public` that has a partition (`EventBody.partition`: readings, pollen forecasts,
    /// daily temperatures) is written to its fact stream instead (`Protocol/sync.md` 6.7), so that a device can
    /// choose which of them it holds; registrations stay in `public`.
    public func appendFacts(_ given: [(StreamID, EventBody)]) throws(StoreError) -> FactAppendReport {
        for (stream, body) in given where !EventBody.factTypes.contains(body.type) || !body.belongs(in: stream) {
            throw StoreError(.invalidAppend, "event type '\(body.type)' is not a fact for stream '\(stream)'")
        }
        let items = given.map { (stream, body) in (stream == .public ? body.partition ?? stream : stream, body) }
        try catchUpProjection()   // outside the write lock: the first one after an upgrade may rebuild
        var report = FactAppendReport()
        report.outcomes.reserveCapacity(items.count)
        do {
            try db.writeTransaction {
                try catchUpInTransaction()     // whatever arrived since, under the lock
                var held = HeldFacts(log: self)
                // A key given twice in the batch counts once, with its last value (a file that repeats a time with
                // another value would otherwise store both each time it is imported): the earlier ones are
                // duplicates of the file itself.
                var last: [BatchKey: Int] = [:]
                for (i, (stream, body)) in items.enumerated() { for k in BatchKey.keys(stream, body) { last[k] = i } }
                var kept: [(StreamID, EventBody)] = []
                var readings: [ReadingKey: [Reading]] = [:]
                var readingOrder: [ReadingKey] = []
                for (i, (stream, body)) in items.enumerated() {
                    var outcome = Outcome.duplicate
                    let superseded = { (k: BatchKey) in last[k] != i }
                    func count(_ o: Outcome) {
                        switch o {
                        case .stored: report.storedFacts += 1; if outcome == .duplicate { outcome = .stored }
                        case .updated: report.updatedFacts += 1; outcome = .updated
                        case .duplicate: report.duplicateFacts += 1
                        }
                    }
                    // A reading's values, or a block's rows: each value superseded later in the batch is a
                    // duplicate of the file itself, the rest are compared with what is held.
                    func take(_ reading: Reading) throws {
                        var r = reading
                        r.values = r.values.filter { m in
                            guard superseded(.reading(stream, r.source, r.sensor, r.time, m.quantity)) else { return true }
                            count(.duplicate)
                            return false
                        }
                        let kept = try held.changed(stream, r, count: count)
                        guard !kept.values.isEmpty else { return }
                        let k = ReadingKey(stream: stream, source: r.source, sensor: r.sensor)
                        if readings[k] == nil { readingOrder.append(k) }
                        readings[k, default: []].append(kept)
                    }
                    switch body {
                    case .reading(let r):
                        try take(r)
                    case .readingBlock(let b):
                        for r in b.readings { try take(r) }
                    case .sensorRegistered(let s) where superseded(.sensor(s.source, s.sensor)):
                        count(.duplicate)
                    case .sensorRegistered(let s):
                        let (o, merged) = try held.registration(s)
                        count(o)
                        if o != .duplicate { kept.append((stream, .sensorRegistered(merged))) }
                    default:
                        if let k = body.projectionFactKey(stream: stream), superseded(.fact(k.kind, k.key)) {
                            count(.duplicate)
                            break
                        }
                        let o = try held.fact(stream, body)
                        count(o)
                        if o != .duplicate { kept.append((stream, body)) }
                    }
                    report.outcomes.append(outcome)
                }
                for k in readingOrder {
                    for b in ReadingBlock.blocks(source: k.source, sensor: k.sensor, readings: readings[k]!) {
                        kept.append((k.stream, .readingBlock(b)))
                    }
                }
                if !kept.isEmpty {
                    _ = try appendInTransaction(kept)
                    try catchUpInTransaction()   // the next batch compares with these
                }
                report.storedEvents = kept.count
            }
        } catch {
            throw StoreError.from(error, path: path)
        }
        return report
    }

    private struct ReadingKey: Hashable { let stream: StreamID; let source: String; let sensor: String }

    /// A fact's key within one batch.
    private enum BatchKey: Hashable {
        case reading(StreamID, String, String, Int64, String)
        case sensor(String, String)
        case fact(String, String)

        static func keys(_ stream: StreamID, _ body: EventBody) -> [BatchKey] {
            switch body {
            case .reading(let r): return r.values.map { .reading(stream, r.source, r.sensor, r.time, $0.quantity) }
            case .readingBlock(let b):
                return b.rows.flatMap { row in row.values.map { .reading(stream, b.source, b.sensor, row.time, $0.quantity) } }
            case .sensorRegistered(let s): return [.sensor(s.source, s.sensor)]
            default: return body.projectionFactKey(stream: stream).map { [.fact($0.kind, $0.key)] } ?? []
            }
        }
    }
}

/// The values the projection holds for facts' keys, read once per batch (a bucket of readings, a sensor
/// row, a fact row), with what the batch itself has written over them.
private struct HeldFacts {
    let log: EventLog
    private var buckets: [BucketKey: [Int64: [String: Double]]] = [:]
    /// Hours a rollup holds (sync.md 6.11).
    var rolledUp = Set<BucketKey>()
    private var sensors: [String: SensorRegistration?] = [:]
    private var facts: [String: EventBody?] = [:]

    init(log: EventLog) { self.log = log }

    /// The values of `r` that are new or differ from what is held (non-finite values are never shown and not
    /// kept), counting each fact; the batch then holds them.
    mutating func changed(_ stream: StreamID, _ r: Reading, count: (EventLog.Outcome) -> Void) throws -> Reading {
        let key = BucketKey(source: r.source, sensor: r.sensor, hour: ReadingBucket.hour(r.time))
        if buckets[key] == nil, rolledUp.contains(key) == false {
            if let held = try log.heldReadings(key) { buckets[key] = held } else { rolledUp.insert(key) }
        }
        var out = r
        out.values = []
        // An hour a rollup holds takes no raw reading any more (sync.md 6.11): what comes for it is held.
        if rolledUp.contains(key) {
            for m in r.values where m.value.isFinite { count(.duplicate) }
            return out
        }
        for m in r.values where m.value.isFinite {
            if let v = buckets[key]![r.time]?[m.quantity] {
                if v.bitPattern == m.value.bitPattern { count(.duplicate); continue }
                count(.updated)
            } else {
                count(.stored)
            }
            buckets[key]![r.time, default: [:]][m.quantity] = m.value
            out.values.removeAll { $0.quantity == m.quantity }
            out.values.append(m)
        }
        return out
    }

    /// A registration merged over the one held (fields it leaves empty keep their value), and whether that
    /// changes anything.
    mutating func registration(_ s: SensorRegistration) throws -> (EventLog.Outcome, SensorRegistration) {
        let k = s.source + "\u{0}" + s.sensor
        if sensors[k] == nil { sensors[k] = .some(try log.heldSensor(source: s.source, sensor: s.sensor)) }
        guard let current = sensors[k]! else {
            sensors[k] = .some(s)
            return (.stored, s)
        }
        var merged = s
        if merged.latitude == nil { merged.latitude = current.latitude }
        if merged.longitude == nil { merged.longitude = current.longitude }
        if merged.timeZone == nil { merged.timeZone = current.timeZone }
        // A fixed-offset zone a monitor file implies (`Etc/GMT+5` from an AirNow-Tech "Offset (LST)") never
        // replaces a region zone already held (`America/New_York` has that standard offset and its daylight
        // saving too).
        if let z = merged.timeZone, z.hasPrefix("Etc/GMT"), let held = current.timeZone, !held.hasPrefix("Etc/"), held != "UTC" {
            merged.timeZone = held
        }
        if merged == current { return (.duplicate, current) }
        sensors[k] = .some(merged)
        return (.updated, merged)
    }

    /// A pollen forecast, daily temperature or biomarker reading against the one held for its key.
    mutating func fact(_ stream: StreamID, _ body: EventBody) throws -> EventLog.Outcome {
        guard let (kind, key) = body.projectionFactKey(stream: stream) else { return .stored }
        let k = kind + "\u{0}" + key
        if facts[k] == nil { facts[k] = .some(try log.heldFact(kind: kind, key: key)) }
        let current = facts[k]!
        facts[k] = .some(body)
        guard let current else { return .stored }
        return current == body ? .duplicate : .updated
    }
}

extension EventLog {
    /// The winning values of one bucket, by time and quantity (empty when none is held; nil when a rollup holds
    /// the hour).
    fileprivate func heldReadings(_ key: BucketKey) throws -> [Int64: [String: Double]]? {
        let q = try db.cached("SELECT data FROM proj_readings WHERE source = ? AND sensor = ? AND hour = ?")
        defer { q.reset() }
        try q.bind(1, key.source)
        try q.bind(2, key.sensor)
        try q.bind(3, key.hour)
        guard let data = try q.first({ $0.blob(0) }) else { return [:] }
        if ReadingBucket.rollupStamp(data) != nil { return nil }
        var out: [Int64: [String: Double]] = [:]
        for row in try ReadingBucket(decoding: data).rows { out[row.time] = row.values }
        return out
    }

    /// The registration the projection holds for a sensor.
    fileprivate func heldSensor(source: String, sensor: String) throws -> SensorRegistration? {
        let q = try db.cached("SELECT \(EventLog.sensorColumns) FROM proj_sensors WHERE source = ? AND sensor = ?")
        defer { q.reset() }
        try q.bind(1, source)
        try q.bind(2, sensor)
        return try q.first(EventLog.sensorRow)
    }

    /// The fact body the projection holds for (kind, key).
    fileprivate func heldFact(kind: String, key: String) throws -> EventBody? {
        let q = try db.cached("SELECT data FROM proj_facts WHERE kind = ? AND key = ?")
        defer { q.reset() }
        try q.bind(1, kind)
        try q.bind(2, key)
        guard let data = try q.first({ $0.blob(0) }) else { return nil }
        return try Event(decoding: data, stored: true).body()
    }
}
