public import BreezeCore

/// Reading the log: version vectors, pages of events, counts, snapshots, a user's state.
extension EventLog {
    // MARK: Reading

    /// The version vector of one stream: for each origin, the highest counter held (all below it are held).
    public func versionVector(of stream: StreamID) throws(StoreError) -> VersionVector {
        do {
            guard let key = try streamKey(stream, create: false) else { return VersionVector() }
            let q = try db.cached("SELECT origin, epoch, counter FROM heads WHERE stream = ?")
            try q.bind(1, key)
            var vv = VersionVector()
            while try q.step() {
                let o = Origin(replica: ReplicaID(rawValue: UInt64(bitPattern: q.int(0))), epoch: UInt32(q.int(1)))
                vv[o] = UInt64(bitPattern: q.int(2))
            }
            return vv
        } catch { throw StoreError.from(error, path: path) }
    }

    /// The highest counter held of `origin` in each stream where it has events: one query, for a check of
    /// one origin across every stream (`Node.checkRestored`) without reading every stream's vector.
    public func heads(of origin: Origin) throws(StoreError) -> [StreamID: UInt64] {
        do {
            let q = try db.cached("SELECT s.name, h.counter FROM heads h JOIN streams s ON s.id = h.stream WHERE h.origin = ? AND h.epoch = ?")
            try q.bind(1, Int64(bitPattern: origin.replica.rawValue))
            try q.bind(2, Int64(origin.epoch))
            var out: [StreamID: UInt64] = [:]
            while try q.step() {
                if let s = try? StreamID(parsing: q.text(0)) { out[s] = UInt64(bitPattern: q.int(1)) }
            }
            return out
        } catch { throw StoreError.from(error, path: path) }
    }

    /// Version vectors of every stream held.
    public func versionVectors() throws(StoreError) -> [StreamID: VersionVector] {
        var out: [StreamID: VersionVector] = [:]
        // A stream with nothing held (dropped, `dropFactStreams`) is left out: absent and empty mean the same.
        for s in try streams() {
            let v = try versionVector(of: s)
            if !v.counters.isEmpty { out[s] = v }
        }
        return out
    }

    /// A page of a stream's events that `vector` does not cover, in log order, starting after local sequence
    /// number `afterSeq`. At most `limit` rows are read, so memory stays bounded however long the log is;
    /// pass the returned `nextSeq` to continue, until it is nil.
    public func events(in stream: StreamID, notIn vector: VersionVector = VersionVector(), afterSeq: Int64 = 0,
                       limit: Int = 1000) throws(StoreError) -> (events: [Event], nextSeq: Int64?) {
        do {
            guard let key = try streamKey(stream, create: false) else { return ([], nil) }
            let q = try db.cached("""
                SELECT seq, data, origin, epoch, counter FROM events WHERE stream = ? AND seq > ? ORDER BY seq LIMIT ?
                """)
            defer { q.reset() }   // a decoding error must not leave the read snapshot open
            try q.bind(1, key)
            try q.bind(2, afterSeq)
            try q.bind(3, Int64(limit))
            var out: [Event] = []
            var last = afterSeq, rows = 0
            while try q.step() {
                rows += 1
                last = q.int(0)
                // Decoding checks the hash; the row's columns must name the same event, or the index that
                // found it (and the version vector) no longer describe what is stored.
                let e = try Event(decoding: q.blob(1), stored: true)
                guard e.stream == stream, e.id.origin.replica.rawValue == UInt64(bitPattern: q.int(2)),
                      Int64(e.id.origin.epoch) == q.int(3), e.id.counter == UInt64(bitPattern: q.int(4)) else {
                    throw StoreError(.corrupt, "\(path): the row at seq \(last) holds event \(e.stream) \(e.id) but is filed as another; \(StoreError.salvageAdvice(path))")
                }
                if !vector.contains(e.id) { out.append(e) }
            }
            return (out, rows < limit ? nil : last)
        } catch let e as DecodingError {
            throw StoreError(.corrupt, "\(path): a stored event does not decode or match its hash (\(e)); \(StoreError.salvageAdvice(path))")
        } catch { throw StoreError.from(error, path: path) }
    }

    /// A row of the log with its local position.
    public struct Entry: Sendable {
        /// Local arrival order (1, 2, ...); differs between replicas.
        public let seq: Int64
        /// The event.
        public let event: Event
        /// True when the timestamp was beyond the skew bound when it arrived.
        public let skewed: Bool
    }

    /// Calls `body` for each event in log order (optionally of one stream), reading in pages of `pageSize`
    /// rows so the whole log is never in memory. Return false from `body` to stop early.
    public func forEach(stream: StreamID? = nil, afterSeq: Int64 = 0, pageSize: Int = 2048,
                        _ body: (Entry) throws -> Bool) throws {
        var after = afterSeq
        var key: Int64?
        if let stream {
            do { key = try streamKey(stream, create: false) } catch { throw StoreError.from(error, path: path) }
            if key == nil { return }
        }
        while true {
            var page: [Entry] = []
            do {
                let q = try db.cached(key == nil
                    ? "SELECT seq, data, flags FROM events WHERE seq > ? ORDER BY seq LIMIT ?"
                    : "SELECT seq, data, flags FROM events WHERE seq > ? AND stream = ? ORDER BY seq LIMIT ?")
                defer { q.reset() }
                try q.bind(1, after)
                if let key {
                    try q.bind(2, key)
                    try q.bind(3, Int64(pageSize))
                } else {
                    try q.bind(2, Int64(pageSize))
                }
                while try q.step() {
                    page.append(Entry(seq: q.int(0), event: try Event(decoding: q.blob(1), stored: true), skewed: q.int(2) & 1 != 0))
                }
            } catch let e as DecodingError {
                throw StoreError(.corrupt, "\(path): a stored event after seq \(after) does not decode or match its hash (\(e)); \(StoreError.salvageAdvice(path))")
            } catch { throw StoreError.from(error, path: path) }
            for entry in page {
                if try !body(entry) { return }
            }
            guard page.count == pageSize, let last = page.last else { return }
            after = last.seq
        }
    }

    /// The `device.revoke` events of `public` after `afterSeq`, in log order, as (sequence number, revocation or
    /// why it cannot be read), through the partial index `events_revocations` (schema 6): cheap enough to ask
    /// at every commit. Misplaced ones (flag 2, another stream) are passed over; one whose payload does not
    /// decode, or of a schema version this build does not know, comes as a failure for the caller to report,
    /// so no event a peer can write stops the revocations after it. Whether each one holds is for the caller
    /// to check (`BreezeSync.Revocations`).
    public func revocations(afterSeq: Int64) throws(StoreError) -> [(seq: Int64, revocation: Result<Revocation, DecodingError>)] {
        do {
            guard let key = try streamKey(.public, create: false) else { return [] }
            // Only the type is in the WHERE clause, so that SQLite reads the partial index: with the stream
            // there too it chose `events_id` and read the whole of `public` at every commit (measured: sync
            // catch-up at half its rate). Stream and flags are checked here.
            let q = try db.cached("SELECT seq, data, stream, flags FROM events WHERE type = 'device.revoke' AND seq > ? ORDER BY seq")
            defer { q.reset() }
            try q.bind(1, afterSeq)
            var out: [(seq: Int64, revocation: Result<Revocation, DecodingError>)] = []
            while try q.step() {
                guard q.int(2) == key, q.int(3) & 2 == 0 else { continue }
                let read: Result<Revocation, DecodingError>
                do {
                    switch try Event(decoding: q.blob(1), stored: true).body() {
                    case .revocation(let r): read = .success(r)
                    case .unknown(_, let version, _): read = .failure(.malformed("schema version \(version), which this build does not know"))
                    default: continue
                    }
                } catch { read = .failure(error) }
                out.append((q.int(0), read))
            }
            return out
        } catch { throw StoreError.from(error, path: path) }
    }

    /// Number of events held (optionally of one stream).
    public func count(stream: StreamID? = nil) throws(StoreError) -> Int {
        do {
            if let stream {
                guard let key = try streamKey(stream, create: false) else { return 0 }
                let q = try db.cached("SELECT count(*) FROM events WHERE stream = ?")
                try q.bind(1, key)
                return Int(try q.first { $0.int(0) } ?? 0)
            }
            return Int(try db.scalarInt("SELECT count(*) FROM events") ?? 0)
        } catch { throw StoreError.from(error, path: path) }
    }

    /// Runs `body` inside one read transaction, so every query in it reads the same snapshot of the database
    /// while other processes go on writing (WAL). `breeze diff` uses it to compare a live database consistently.
    /// Inside a transaction already, it runs `body` in that one.
    public func withSnapshot<T>(_ body: () throws -> T) throws -> T {
        if db.inTransaction { return try body() }
        do { try db.execute("BEGIN") } catch { throw StoreError.from(error, path: path) }
        defer { try? db.execute("COMMIT") }
        return try body()
    }

    /// The greatest local sequence number held (0 for an empty log).
    public func lastSeq() throws(StoreError) -> Int64 {
        do { return try db.scalarInt("SELECT max(seq) FROM events") ?? 0 } catch { throw StoreError.from(error, path: path) }
    }

    /// The user's state, reduced from every event of `user:<id>`.
    ///
    /// The stream is read in pages along its id index (origin, epoch, counter), not in arrival order: the
    /// state does not depend on the order (`UserState` is a join-semilattice), and each page is then a range
    /// of the index, where a page in arrival order (`forEach(stream:)`) makes SQLite sort what is left of
    /// the stream again, quadratic in its length.
    public func userState(user: String, pageSize: Int = 2048) throws -> UserState {
        var state = UserState()
        do {
            guard let key = try streamKey(.user(user), create: false) else { return state }
            var last = (origin: Int64.min, epoch: Int64.min, counter: Int64.min)
            while true {
                var page: [Event] = []
                let q = try db.cached("""
                    SELECT origin, epoch, counter, data FROM events WHERE stream = ? AND (origin, epoch, counter) > (?, ?, ?)
                    ORDER BY origin, epoch, counter LIMIT ?
                    """)
                defer { q.reset() }
                try q.bind(1, key)
                try q.bind(2, last.origin)
                try q.bind(3, last.epoch)
                try q.bind(4, last.counter)
                try q.bind(5, Int64(pageSize))
                while try q.step() {
                    last = (q.int(0), q.int(1), q.int(2))
                    page.append(try Event(decoding: q.blob(3), stored: true))
                }
                for e in page { state.apply(e) }
                if page.count < pageSize { return state }
            }
        } catch let e as DecodingError {
            throw StoreError(.corrupt, "\(path): a stored event of user:\(user) does not decode (\(e)); run `breeze verify`")
        } catch { throw StoreError.from(error, path: path) }
    }

    /// SQLite's `PRAGMA data_version`: changes whenever another connection commits to the database
    /// (https://www.sqlite.org/pragma.html#pragma_data_version). Cheap enough to poll.
    public func dataVersion() throws(StoreError) -> Int64 {
        do { return try db.cached("PRAGMA data_version").first { $0.int(0) } ?? 0 } catch { throw StoreError.from(error, path: path) }
    }

    /// Up to `limit` rows after sequence number `afterSeq`, in log order, stopping early once `maxBytes` of
    /// encoded events have been read (at least one row is returned when there is one).
    public func page(afterSeq: Int64, limit: Int, maxBytes: Int = 4 << 20) throws -> [Entry] {
        var out: [Entry] = []
        var bytes = 0
        try forEach(afterSeq: afterSeq, pageSize: max(1, min(limit, 512))) { e in
            out.append(e)
            bytes += e.event.encoded.count
            return out.count < limit && bytes < maxBytes
        }
        return out
    }
}
