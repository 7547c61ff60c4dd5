public import BreezeCore
import BreezeCrypto

extension EventLog {
    /// What `appendFacts` did with a batch.
    public struct FactAppendReport: Sendable, Equatable {
        /// Events stored (a reading keeps only its quantities not already held).
        public var storedEvents = 0
        /// Facts (values) stored.
        public var storedFacts = 0
        /// Facts already held (in the log, or earlier in the same batch): not stored again.
        public var duplicateFacts = 0
        public init() {}
    }

    /// Appends fact events (readings, sensors, pollen, temperatures, biomarker readings) keeping only facts
    /// whose natural key (`EventBody.naturalKeys`) is not held yet, in one transaction: importing a file twice,
    /// or overlapping files, stores each fact once. Non-fact bodies are refused.
    ///
    /// The key index (`fact_keys`) is brought up to date first with every event appended or received since
    /// the last import (`indexFacts`), so facts that arrived by sync count as held too.
    public func appendFacts(_ items: [(StreamID, EventBody)]) throws(StoreError) -> FactAppendReport {
        for (stream, body) in items where !EventBody.factTypes.contains(body.type) || !body.belongs(in: stream) {
            throw StoreError(.invalidAppend, "event type '\(body.type)' is not a fact for stream '\(stream)'")
        }
        try indexFacts()
        var report = FactAppendReport()
        var kept: [(StreamID, EventBody)] = []
        do {
            try db.writeTransaction {
                // Whatever another process committed since `indexFacts` above is indexed under this lock.
                while try indexPending(limit: 20000) == 20000 {}
                let insert = try db.cached("INSERT OR IGNORE INTO fact_keys(key) VALUES (?)")
                func isNew(_ stream: StreamID, _ key: NaturalKey) throws -> Bool {
                    insert.reset()
                    try insert.bind(1, EventLog.factKey(stream, key))
                    try insert.run()
                    return db.changes == 1
                }
                for (stream, body) in items {
                    let keys = body.naturalKeys
                    if case .reading(var r) = body {
                        var values: [Measurement] = []
                        for (k, m) in zip(keys, r.values) {
                            if try isNew(stream, k) { values.append(m) } else { report.duplicateFacts += 1 }
                        }
                        guard !values.isEmpty else { continue }
                        report.storedFacts += values.count
                        r.values = values
                        kept.append((stream, .reading(r)))
                    } else if try isNew(stream, keys[0]) {
                        report.storedFacts += 1
                        kept.append((stream, body))
                    } else {
                        report.duplicateFacts += 1
                    }
                }
                if !kept.isEmpty { _ = try appendInTransaction(kept) }
                try db.execute("UPDATE meta SET value = (SELECT coalesce(max(seq), 0) FROM events) WHERE key = 'facts_seq'")
            }
        } catch {
            throw StoreError.from(error, path: path)
        }
        report.storedEvents = kept.count
        return report
    }

    /// Adds the natural keys of every fact event after the `facts_seq` watermark to `fact_keys`, in chunks
    /// (one transaction each), calling `progress` with the number of events indexed so far.
    public func indexFacts(progress: (Int) -> Void = { _ in }) throws(StoreError) {
        var done = 0
        do {
            while true {
                let n = try db.writeTransaction { () throws -> Int in try indexPending(limit: 20000) }
                done += n
                progress(done)
                if n < 20000 { return }
            }
        } catch {
            throw StoreError.from(error, path: path)
        }
    }

    /// Inside a write transaction: indexes up to `limit` fact events after the watermark and moves it.
    /// Returns how many events were read.
    func indexPending(limit: Int) throws -> Int {
        let from = try db.cached("SELECT value FROM meta WHERE key = 'facts_seq'").first { $0.int(0) } ?? 0
        let q = try db.cached("""
            SELECT seq, data FROM events WHERE seq > ? AND type IN
            ('reading', 'sensor.register', 'pollen.forecast', 'temperature.daily', 'biomarker.reading')
            ORDER BY seq LIMIT ?
            """)
        defer { q.reset() }
        try q.bind(1, from)
        try q.bind(2, Int64(limit))
        var events: [(Int64, [UInt8])] = []
        while try q.step() { events.append((q.int(0), q.blob(1))) }
        let insert = try db.cached("INSERT OR IGNORE INTO fact_keys(key) VALUES (?)")
        for (_, data) in events {
            guard let e = try? Event(decoding: data), let body = try? e.body() else { continue }
            for k in body.naturalKeys {
                insert.reset()
                try insert.bind(1, EventLog.factKey(e.stream, k))
                try insert.run()
            }
        }
        // Below a full page, everything up to the newest row (fact or not) is indexed.
        let top = events.count < limit ? (try db.scalarInt("SELECT coalesce(max(seq), 0) FROM events") ?? from)
                                       : events.last!.0
        let up = try db.cached("UPDATE meta SET value = ? WHERE key = 'facts_seq'")
        try up.bind(1, max(top, from))
        try up.run()
        return events.count
    }

    /// 24 bytes: 8 of BLAKE2b(stream, group), the time big-endian (sign bit flipped so order is numeric),
    /// 8 of BLAKE2b(item). Keys of one sensor sort by time, so importing a time series appends near the end
    /// of each sensor's range instead of writing random pages of the index.
    static func factKey(_ stream: StreamID, _ key: NaturalKey) -> [UInt8] {
        var out = Array(Digest.blake2b(Array((stream.description + "\u{0}" + key.group).utf8), length: 16).prefix(8))
        let t = UInt64(bitPattern: key.time) ^ (1 << 63)
        for i in (0..<8).reversed() { out.append(UInt8(truncatingIfNeeded: t >> (8 * UInt64(i)))) }
        out += Digest.blake2b(Array(key.item.utf8), length: 16).prefix(8)
        return out
    }
}
