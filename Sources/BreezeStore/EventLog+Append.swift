public import BreezeCore

/// Local appends: the next counter of this replica's origin, a hybrid-logical-clock stamp, one transaction.
extension EventLog {
    // MARK: Local append

    /// Appends one event to `stream` and returns it once committed.
    @discardableResult
    public func append(_ body: EventBody, to stream: StreamID) throws(StoreError) -> Event {
        try append([(stream, body)])[0]
    }

    /// Appends a batch in one transaction: all or nothing. Returns the events, committed, in order.
    ///
    /// - Throws: `.invalidAppend` when a body does not belong in its stream (a favourite in `public`, say);
    ///   `.diskFull`, `.busy` or another `StoreError` when SQLite fails, in which case nothing was stored.
    @discardableResult
    public func append(_ items: [(StreamID, EventBody)]) throws(StoreError) -> [Event] {
        var checked: (type: String, stream: StreamID)?
        for (stream, body) in items {
            let type = body.type
            if let c = checked, c.type == type, c.stream == stream { continue }
            guard EventBody.type(type, belongsIn: stream) else {
                throw StoreError(.invalidAppend, "event type '\(type)' cannot be written to stream '\(stream)'")
            }
            checked = (type, stream)
        }
        do {
            return try db.writeTransaction { () throws -> [Event] in try appendInTransaction(items) }
        } catch {
            streamIDs.removeAll()
            throw StoreError.from(error, path: path)
        }
    }

    /// The body of `append`, inside a write transaction the caller holds.
    func appendInTransaction(_ items: [(StreamID, EventBody)]) throws -> [Event] {
        try refreshEpoch()
        var clock = HybridClock(last: try readClock(), maxSkewMillis: options.maxSkewMillis)
        var next: [StreamID: (key: Int64, counter: UInt64, floor: HLC)] = [:]
        var out: [Event] = []
        out.reserveCapacity(items.count)
        let insert = try EventInserter(db: db)
        let wall = options.wallClock()
        // The stream of the previous item and its slot: runs of one stream cost no dictionary lookups.
        var current: StreamID?
        var slot: (key: Int64, counter: UInt64, floor: HLC) = (0, 0, .zero)
        var payload = ByteWriter(capacity: 256)   // reused: one allocation per event (its encoding), not two
        for (stream, body) in items {
            if stream != current {
                if let c = current { next[c] = slot }
                if let s = next[stream] { slot = s } else {
                    let key = try streamKey(stream, create: true)!
                    // Stamped after every event of the stream this replica holds, flagged ones included: a write
                    // that supersedes a value from a replica whose clock is far ahead must still win
                    // (Protocol/encoding.md 6).
                    slot = (key, try head(stream: key, origin: origin), try aheadFloor(stream))
                }
                current = stream
            }
            slot.counter += 1
            payload.removeAll()
            let (type, version) = body.encodePayload(into: &payload)
            let id = EventID(origin: origin, counter: slot.counter), hlc = clock.tick(wallMillis: wall, after: slot.floor)
            let e = payload.bytes.withUnsafeBytes {
                Event(stream: stream, id: id, hlc: hlc, type: type, schemaVersion: version, payloadBytes: $0)
            }
            guard e.encoded.count <= Event.maxEncodedSize else {
                throw StoreError(.invalidAppend, "event type '\(type)' of \(e.encoded.count) bytes exceeds the \(Event.maxEncodedSize)-byte limit")
            }
            try insert.add(e, stream: slot.key, flags: 0)
            out.append(e)
        }
        if let c = current { next[c] = slot }
        try insert.flush()
        for (_, slot) in next { try setHead(stream: slot.key, origin: origin, counter: slot.counter) }
        try writeClock(clock.last)
        // A compaction replaces this replica's events before it, here as on every replica it reaches.
        for e in out where e.type == "reading.compact" || e.type == "reading.rollup" { try applyCompaction(e, stream: try streamKey(e.stream, create: false)!) }
        return out
    }

    static let insertSQL =
        "INSERT INTO events(stream, origin, epoch, counter, hlc, type, flags, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"

    func head(stream: Int64, origin: Origin) throws -> UInt64 {
        let q = try db.cached("SELECT counter FROM heads WHERE stream = ? AND origin = ? AND epoch = ?")
        try q.bind(1, stream)
        try q.bind(2, Int64(bitPattern: origin.replica.rawValue))
        try q.bind(3, Int64(origin.epoch))
        return try q.first { UInt64(bitPattern: $0.int(0)) } ?? 0
    }

    func setHead(stream: Int64, origin: Origin, counter: UInt64) throws {
        let s = try db.cached("INSERT OR REPLACE INTO heads(stream, origin, epoch, counter) VALUES (?, ?, ?, ?)")
        try s.bind(1, stream)
        try s.bind(2, Int64(bitPattern: origin.replica.rawValue))
        try s.bind(3, Int64(origin.epoch))
        try s.bind(4, Int64(bitPattern: counter))
        try s.run()
    }

    func readClock() throws -> HLC {
        let q = try db.cached("SELECT value FROM meta WHERE key = 'hlc'")
        return try q.first { HLC(rawValue: UInt64(bitPattern: $0.int(0))) } ?? .zero
    }

    func writeClock(_ hlc: HLC) throws {
        let s = try db.cached("UPDATE meta SET value = ? WHERE key = 'hlc'")
        try s.bind(1, Int64(bitPattern: hlc.rawValue))
        try s.run()
    }

    /// The greatest timestamp of the events of `stream` that arrived beyond the skew bound (flag 1), which the
    /// clock did not follow; `.zero` if none. Kept in `meta` under `ahead:<stream>`.
    func aheadFloor(_ stream: StreamID) throws -> HLC {
        let q = try db.cached("SELECT value FROM meta WHERE key = ?")
        try q.bind(1, "ahead:\(stream)")
        return try q.first { HLC(rawValue: UInt64(bitPattern: $0.int(0))) } ?? .zero
    }

    func raiseAheadFloor(_ stream: StreamID, to hlc: HLC) throws {
        let s = try db.cached("INSERT INTO meta(key, value) VALUES (?, ?) "
                              + "ON CONFLICT(key) DO UPDATE SET value = max(value, excluded.value)")
        try s.bind(1, "ahead:\(stream)")
        try s.bind(2, Int64(bitPattern: hlc.rawValue))
        try s.run()
    }

    /// The greatest timestamp of a flagged (beyond the skew bound) event of `stream`, or `.zero`: the next
    /// local event of that stream is stamped after it.
    public func aheadOfClock(in stream: StreamID) throws(StoreError) -> HLC {
        do { return try aheadFloor(stream) } catch { throw StoreError.from(error, path: path) }
    }


    /// The last timestamp this replica issued or observed (shared by every process using the database).
    public func clock() throws(StoreError) -> HLC {
        do { return try readClock() } catch { throw StoreError.from(error, path: path) }
    }
}
