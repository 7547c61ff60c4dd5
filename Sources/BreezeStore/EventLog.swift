public import BreezeCore

/// The durable, append-only event log of one replica, in one SQLite database.
///
/// - Local appends (`append`) give each event the next counter of this replica's current origin in its
///   stream and a hybrid-logical-clock timestamp, and return only after the transaction has committed.
/// - Remote ingest (`ingest`) is idempotent: an id already held with the same hash is a duplicate and a
///   no-op; the same id with a different hash is refused and recorded in `conflicts`, and nothing stored is
///   overwritten; an event that would leave a gap in its origin's counters is refused.
/// - Each stream has a version vector (`versionVector(of:)`) that summarises exactly what is held, because
///   counters are contiguous per origin.
/// - Several processes may open one database: WAL mode, `BEGIN IMMEDIATE` writes and a busy timeout;
///   counters and the clock are read inside each write transaction, so two writers never issue one id.
///
/// An `EventLog` is used by one thread at a time.
public final class EventLog {
    /// Where the database is.
    public let path: String
    /// This replica's id.
    public let replica: ReplicaID
    /// This incarnation's epoch (see `Origin`).
    public let epoch: UInt32
    /// The options it was opened with.
    public let options: Options
    let db: Database
    private var streamIDs: [String: Int64] = [:]

    /// This process's origin: replica and epoch.
    public var origin: Origin { Origin(replica: replica, epoch: epoch) }

    /// How much a commit survives.
    public enum Durability: String, Sendable, CaseIterable {
        /// `PRAGMA synchronous=FULL`: the WAL is synced at every commit; a committed append survives power
        /// loss. The default.
        case full
        /// `PRAGMA synchronous=NORMAL`: survives a process crash, but the last commits before a power loss
        /// or OS crash may be lost (never corrupted). Faster for single-event transactions; the epoch rule
        /// keeps ids unique when that happens.
        case normal
    }

    /// Settings for opening a log.
    public struct Options: Sendable {
        /// Durability of commits (default `.full`).
        public var durability: Durability = .full
        /// How long to wait for another process's lock, in milliseconds (default 5 s).
        public var busyTimeoutMillis: Int32 = 5000
        /// How far ahead of local time a remote timestamp may pull the clock (default 5 min).
        public var maxSkewMillis: UInt64 = HybridClock.defaultMaxSkewMillis
        /// Wall time in milliseconds since the epoch.
        public var wallClock: @Sendable () -> UInt64 = { SystemClock.nowMillis() }
        /// The current boot's identity; nil means unknown, in which case every open starts a new epoch.
        public var bootID: @Sendable () -> String? = { SystemClock.bootID() }

        /// Default options.
        public init() {}
    }

    // MARK: Opening

    /// Creates a new database at `path` (or opens the Breeze database already there).
    public static func create(at path: String, options: Options = Options()) throws(StoreError) -> EventLog {
        try EventLog(path: path, create: true, options: options)
    }

    /// Opens an existing Breeze database.
    ///
    /// - Throws: `StoreError.missing` when there is no file, `.notBreeze` for a file that is not a Breeze
    ///   database (left untouched), `.newerSchema` for one written by a newer Breeze.
    public static func open(at path: String, options: Options = Options()) throws(StoreError) -> EventLog {
        try EventLog(path: path, create: false, options: options)
    }

    /// Opens an existing Breeze database for reading only (`SQLITE_OPEN_READONLY`): no migration, no new
    /// epoch, no pragma that writes, so it is safe on a database a running node is using and on a copy
    /// attached to a bug report. Appends and projection catch-up on it fail.
    ///
    /// - Throws: as `open`; a database of an older schema is refused too (reading it would need a migration,
    ///   which writes: any writing command migrates it).
    public static func openReadOnly(at path: String, options: Options = Options()) throws(StoreError) -> EventLog {
        try EventLog(path: path, create: false, options: options, readOnly: true)
    }

    private init(path: String, create: Bool, options: Options, readOnly: Bool = false) throws(StoreError) {
        self.path = path
        self.options = options
        if !create && !FileChecks.exists(path) {
            throw StoreError(.missing, "\(path): no Breeze database here (create one with `breeze init --db \(path)`)")
        }
        if FileChecks.isDirectory(path) {
            throw StoreError(.notBreeze, "\(path): is a directory, not a Breeze database")
        }
        do {
            db = try Database(path: path, create: create, readOnly: readOnly)
        } catch {
            throw StoreError(.missing, "\(path): cannot open (\(error.message))", sqliteCode: error.code)
        }
        db.setBusyTimeout(milliseconds: options.busyTimeoutMillis)
        do {
            // First, damage in the WAL that SQLite would pass over (it could even hide the schema).
            if options.durability == .full { try EventLog.checkWAL(db, path: path) }
            // Inspect before writing anything: a foreign file must stay byte-for-byte as it was.
            let appID = try db.scalarInt("PRAGMA application_id") ?? 0
            let version = try db.scalarInt("PRAGMA user_version") ?? 0
            let objects = try db.scalarInt("SELECT count(*) FROM sqlite_master") ?? 0
            if appID == 0 && version == 0 && objects == 0 {
                guard create else {
                    throw StoreError(.notBreeze, "\(path): empty file, not an initialised Breeze database (run `breeze init --db \(path)`)")
                }
                // Before the first write (and before WAL mode): a new log's page size (`Schema.pageSize`).
                try db.execute("PRAGMA page_size=\(Schema.pageSize)")
            } else if appID != Schema.applicationID {
                throw StoreError(.notBreeze, "\(path): an SQLite database of another application, not Breeze; left untouched")
            } else if version > Schema.current {
                throw StoreError(.newerSchema, "\(path): written by a newer Breeze (schema \(version), this build reads up to \(Schema.current)); upgrade Breeze to open it")
            }
            if readOnly {
                guard version == Schema.current else {
                    throw StoreError(.newerSchema, "\(path): schema \(version), this build reads \(Schema.current) read-only; run a writing command (e.g. `breeze state`) once to migrate it")
                }
                (replica, epoch) = try EventLog.storedIdentity(db)
                return
            }
            _ = try db.scalarInt("PRAGMA journal_mode=WAL")
            try db.execute("PRAGMA synchronous=\(options.durability == .full ? "FULL" : "NORMAL")")
            try db.execute("PRAGMA wal_autocheckpoint=\(Schema.checkpointPages(pageSize: Int(try db.scalarInt("PRAGMA page_size") ?? 4096)))")
            if version < Schema.current { try EventLog.migrate(db, from: version) }
            (replica, epoch) = try EventLog.identity(db, bootID: options.bootID(), durability: options.durability)
        } catch {
            throw StoreError.from(error, path: path)
        }
    }

    /// Refuses a WAL whose damage SQLite would pass over silently (see `WALCheck`). Runs under the write
    /// lock, so no other process appends to or restarts the WAL meanwhile; skipped when another writer holds
    /// the lock past the busy timeout (the next open checks).
    private static func checkWAL(_ db: Database, path: String) throws {
        let wal = path + "-wal"
        guard FileChecks.size(wal) > 32 else { return }
        let pageSize = Int(try db.scalarInt("PRAGMA page_size") ?? 4096)
        do { try db.execute("BEGIN IMMEDIATE") } catch { return }
        defer { try? db.execute("COMMIT") }
        if let damage = WALCheck.damage(walPath: wal, fallbackPageSize: pageSize) {
            throw StoreError(.corrupt, "\(wal): \(damage); \(StoreError.salvageAdvice(path))")
        }
    }

    private static func migrate(_ db: Database, from version: Int64) throws {
        try db.writeTransaction {
            // Re-read inside the lock: another process may have migrated meanwhile.
            let now = try db.scalarInt("PRAGMA user_version") ?? 0
            guard now < Schema.current else { return }
            for v in Int(now)..<Int(Schema.current) { try db.execute(Schema.migrations[v]) }
            if now == 0 {
                let s = try db.prepare("INSERT INTO meta(key, value) VALUES ('replica', ?), ('epoch', 0), ('hlc', 0)")
                try s.bind(1, Int64(bitPattern: ReplicaID.random().rawValue))
                try s.run()
            }
            try db.execute("PRAGMA application_id=\(Schema.applicationID); PRAGMA user_version=\(Schema.current)")
        }
    }

    /// The replica id and current epoch as stored, without starting a new epoch (read-only opens).
    private static func storedIdentity(_ db: Database) throws -> (ReplicaID, UInt32) {
        let s = try db.prepare("SELECT key, value FROM meta WHERE key IN ('replica', 'epoch')")
        var r: Int64 = 0, e: Int64 = 0
        while try s.step() { if s.text(0) == "replica" { r = s.int(1) } else { e = s.int(1) } }
        return (ReplicaID(rawValue: UInt64(bitPattern: r)), UInt32(clamping: e))
    }

    /// Reads the replica id and decides the epoch: a new epoch whenever the boot differs from the one the
    /// current epoch started in (or is unknown), because `synchronous=NORMAL` commits of the previous boot
    /// may have been lost and their counters must not be issued again. The bump is committed with
    /// `synchronous=FULL` before any event uses it.
    private static func identity(_ db: Database, bootID: String?, durability: Durability) throws -> (ReplicaID, UInt32) {
        func read() throws -> (ReplicaID, UInt32, String?) {
            let s = try db.prepare("SELECT key, value FROM meta WHERE key IN ('replica', 'epoch', 'boot')")
            var r: Int64 = 0, e: Int64 = 0, b: String?
            while try s.step() {
                switch s.text(0) {
                case "replica": r = s.int(1)
                case "epoch": e = s.int(1)
                default: b = s.text(1)
                }
            }
            return (ReplicaID(rawValue: UInt64(bitPattern: r)), UInt32(clamping: e), b)
        }
        let (replica, epoch, boot) = try read()
        if epoch > 0, let bootID, boot == bootID { return (replica, epoch) }
        try db.execute("PRAGMA synchronous=FULL")
        defer { try? db.execute("PRAGMA synchronous=\(durability == .full ? "FULL" : "NORMAL")") }
        return try db.writeTransaction {
            let (r, e, b) = try read()
            if e > 0, let bootID, b == bootID { return (r, e) }
            let next = e + 1
            let s = try db.prepare("INSERT OR REPLACE INTO meta(key, value) VALUES ('epoch', ?), ('boot', ?)")
            try s.bind(1, Int64(next))
            if let bootID { try s.bind(2, bootID) } else { try s.bindNull(2) }
            try s.run()
            return (r, next)
        }
    }

    /// Closes the database. Further calls fail.
    public func close() { db.close() }

    // MARK: Streams

    func streamKey(_ stream: StreamID, create: Bool) throws -> Int64? {
        let name = stream.description
        if let id = streamIDs[name] { return id }
        let q = try db.cached("SELECT id FROM streams WHERE name = ?")
        try q.bind(1, name)
        if let id = try q.first({ $0.int(0) }) {
            streamIDs[name] = id
            return id
        }
        guard create else { return nil }
        let ins = try db.cached("INSERT INTO streams(name) VALUES (?)")
        try ins.bind(1, name)
        try ins.run()
        let id = try db.scalarInt("SELECT last_insert_rowid()")!
        // Cached only after commit would be safer; a rolled-back stream row is re-created by name next time.
        return id
    }

    /// Every stream the log holds events of.
    public func streams() throws(StoreError) -> [StreamID] {
        do {
            let s = try db.cached("SELECT name FROM streams ORDER BY name")
            var out: [StreamID] = []
            while try s.step() { if let st = try? StreamID(parsing: s.text(0)) { out.append(st) } }
            return out
        } catch { throw StoreError.from(error, path: path) }
    }

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
        return out
    }

    static let insertSQL =
        "INSERT INTO events(stream, origin, epoch, counter, hlc, type, flags, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"

    private func head(stream: Int64, origin: Origin) throws -> UInt64 {
        let q = try db.cached("SELECT counter FROM heads WHERE stream = ? AND origin = ? AND epoch = ?")
        try q.bind(1, stream)
        try q.bind(2, Int64(bitPattern: origin.replica.rawValue))
        try q.bind(3, Int64(origin.epoch))
        return try q.first { UInt64(bitPattern: $0.int(0)) } ?? 0
    }

    private func setHead(stream: Int64, origin: Origin, counter: UInt64) throws {
        let s = try db.cached("INSERT OR REPLACE INTO heads(stream, origin, epoch, counter) VALUES (?, ?, ?, ?)")
        try s.bind(1, stream)
        try s.bind(2, Int64(bitPattern: origin.replica.rawValue))
        try s.bind(3, Int64(origin.epoch))
        try s.bind(4, Int64(bitPattern: counter))
        try s.run()
    }

    private func readClock() throws -> HLC {
        let q = try db.cached("SELECT value FROM meta WHERE key = 'hlc'")
        return try q.first { HLC(rawValue: UInt64(bitPattern: $0.int(0))) } ?? .zero
    }

    private func writeClock(_ hlc: HLC) throws {
        let s = try db.cached("UPDATE meta SET value = ? WHERE key = 'hlc'")
        try s.bind(1, Int64(bitPattern: hlc.rawValue))
        try s.run()
    }

    /// The greatest timestamp of the events of `stream` that arrived beyond the skew bound (flag 1), which the
    /// clock did not follow; `.zero` if none. Kept in `meta` under `ahead:<stream>`.
    private func aheadFloor(_ stream: StreamID) throws -> HLC {
        let q = try db.cached("SELECT value FROM meta WHERE key = ?")
        try q.bind(1, "ahead:\(stream)")
        return try q.first { HLC(rawValue: UInt64(bitPattern: $0.int(0))) } ?? .zero
    }

    private func raiseAheadFloor(_ stream: StreamID, to hlc: HLC) throws {
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

    /// The database's page size in bytes (`Schema.pageSize` for a log this build created).
    public func pageSize() throws(StoreError) -> Int {
        do { return Int(try db.scalarInt("PRAGMA page_size") ?? 0) } catch { throw StoreError.from(error, path: path) }
    }

    /// The last timestamp this replica issued or observed (shared by every process using the database).
    public func clock() throws(StoreError) -> HLC {
        do { return try readClock() } catch { throw StoreError.from(error, path: path) }
    }

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
        /// The events stored, in order.
        public var stored: [Event] = []
        public init() {}
        public static func == (a: IngestReport, b: IngestReport) -> Bool {
            (a.inserted, a.duplicates, a.conflicts, a.gaps, a.invalid, a.skewed)
                == (b.inserted, b.duplicates, b.conflicts, b.gaps, b.invalid, b.skewed)
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
    public func ingest(groups: [[Event]], source: String? = nil) throws(StoreError) -> [IngestReport] {
        do {
            return try db.writeTransaction { () throws -> [IngestReport] in
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
                for events in groups {
                    var report = IngestReport()
                    report.stored.reserveCapacity(events.count)
                    for e in events {
                        if slot?.stream != e.stream || slot?.origin != e.id.origin {
                            if let s = slot { heads[s] = head }
                            let k = HeadKey(stream: e.stream, origin: e.id.origin)
                            if let h = heads[k] { head = h } else {
                                let key: Int64
                                if let known = keys[e.stream] { key = known } else {
                                    key = try streamKey(e.stream, create: true)!
                                    keys[e.stream] = key
                                }
                                head = Head(key: key, counter: try self.head(stream: key, origin: e.id.origin), dirty: false)
                            }
                            slot = k
                            lastType = nil
                        }
                        if e.id.counter <= head.counter {
                            try insert.flush()   // the stored copy may still be queued
                            let stored = try storedHash(stream: head.key, id: e.id)
                            if stored == e.hash {
                                report.duplicates += 1
                            } else {
                                report.conflicts += 1
                                try recordConflict(e, storedHash: stored ?? [], source: source, wall: wall)
                            }
                            continue
                        }
                        guard e.id.counter == head.counter + 1 else {
                            report.gaps += 1
                            continue
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
                            try raiseAheadFloor(e.stream, to: e.hlc)
                        }
                        if misplaced { report.invalid += 1 }
                        try insert.add(e, stream: head.key, flags: (skewed ? 1 : 0) | (misplaced ? 2 : 0))
                        head.counter = e.id.counter
                        head.dirty = true
                        report.inserted += 1
                        report.stored.append(e)
                    }
                    reports.append(report)
                }
                if let s = slot { heads[s] = head }
                try insert.flush()
                for (k, h) in heads where h.dirty {
                    try setHead(stream: h.key, origin: k.origin, counter: h.counter)
                }
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

    private func storedHash(stream: Int64, id: EventID) throws -> [UInt8]? {
        let q = try db.cached("SELECT data FROM events WHERE stream = ? AND origin = ? AND epoch = ? AND counter = ?")
        try q.bind(1, stream)
        try q.bind(2, Int64(bitPattern: id.origin.replica.rawValue))
        try q.bind(3, Int64(id.origin.epoch))
        try q.bind(4, Int64(bitPattern: id.counter))
        return try q.first { Array($0.blob(0).suffix(Event.hashLength)) }
    }

    private func recordConflict(_ e: Event, storedHash: [UInt8], source: String?, wall: UInt64) throws {
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

    /// Version vectors of every stream held.
    public func versionVectors() throws(StoreError) -> [StreamID: VersionVector] {
        var out: [StreamID: VersionVector] = [:]
        for s in try streams() { out[s] = try versionVector(of: s) }
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
                let e = try Event(decoding: q.blob(1))
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
                    page.append(Entry(seq: q.int(0), event: try Event(decoding: q.blob(1)), skewed: q.int(2) & 1 != 0))
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
    public func withSnapshot<T>(_ body: () throws -> T) throws -> T {
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
                    page.append(try Event(decoding: q.blob(3)))
                }
                for e in page { state.apply(e) }
                if page.count < pageSize { return state }
            }
        } catch let e as DecodingError {
            throw StoreError(.corrupt, "\(path): a stored event of user:\(user) does not decode (\(e)); run `breeze verify`")
        } catch { throw StoreError.from(error, path: path) }
    }

    /// Runs SQLite's `PRAGMA integrity_check`; returns the problems found (empty when the file is sound).
    public func integrityCheck() throws(StoreError) -> [String] {
        do {
            let q = try db.prepare("PRAGMA integrity_check")
            var out: [String] = []
            while try q.step() { out.append(q.text(0)) }
            return out == ["ok"] ? [] : out
        } catch { throw StoreError.from(error, path: path) }
    }
}

// Owns a SQLite connection used by one thread at a time.
@available(*, unavailable)
extension EventLog: Sendable {}
