public import BreezeCore
import Glibc
import BreezeCrypto

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
    /// This incarnation's epoch (see `Origin`). Read again from the database by every write transaction, so a
    /// new epoch started by another connection (`startNewEpoch`) is used at once.
    public private(set) var epoch: UInt32
    /// The options it was opened with.
    public let options: Options
    let db: Database
    var streamIDs: [String: Int64] = [:]

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
        // A new database holds the user's favourites and health readings: it is made readable by its owner
        // only (mode 0600, whatever the umask), and SQLite gives its WAL and shared-memory files the same mode.
        if create && !FileChecks.exists(path) {
            let fd = Glibc.open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
            let failure = fd >= 0 ? 0 : errno
            if fd >= 0 { Glibc.close(fd) } else if failure != EEXIST {
                // Not "missing": the reason (a directory this process may not write, a full disk) is the answer.
                let reason = String(cString: strerror(failure))
                throw StoreError(failure == ENOSPC ? .diskFull : .io, "\(path): cannot create the database: \(reason)")
            }
        }
        do {
            db = try Database(path: path, create: create, readOnly: readOnly)
        } catch {
            // A file that is there but cannot be opened (no permission to it or to its directory, which
            // holds the write-ahead log) is an I/O error with SQLite's reason, not a missing database.
            throw StoreError(FileChecks.exists(path) ? .io : .missing, "\(path): cannot open (\(error.message))", sqliteCode: error.code)
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
                try EventLog.checkSchema(db, path: path, record: false)
                (replica, epoch) = try EventLog.storedIdentity(db)
                return
            }
            _ = try db.scalarInt("PRAGMA journal_mode=WAL")
            try db.execute("PRAGMA synchronous=\(options.durability == .full ? "FULL" : "NORMAL")")
            try db.execute("PRAGMA wal_autocheckpoint=\(Schema.checkpointPages(pageSize: Int(try db.scalarInt("PRAGMA page_size") ?? 4096)))")
            if version < Schema.current { try EventLog.migrate(db, from: version) }
            try EventLog.checkSchema(db, path: path, record: true)
            (replica, epoch) = try EventLog.identity(db, bootID: options.bootID(), durability: options.durability)
            // Schema 10's `proj_recent` is derived from `proj_readings`: filled once here (a seek a sensor), not by
            // rebuilding the whole projection, which on a server holding a year of readings would take hours.
            if version < 10 { try fillRecentHours() }
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

    /// Refuses a database whose schema text changed since Breeze wrote it. SQLite's integrity check does not
    /// see a damaged `CREATE` statement that still parses: a flipped byte turning `id INTEGER PRIMARY KEY`
    /// into `id INTEGER PRDMARY KEY` makes `streams.id` an ordinary column, NULL in every row, and every
    /// vector and state read empty with no error (found by the byte-flip test). A digest of the schema's
    /// statements (of the log's own tables: the projections' are rebuilt, and renamed, at will) is kept in
    /// `meta` from the migration on and compared at each open; `record` stores it where it is missing (a
    /// database migrated before it existed).
    private static func checkSchema(_ db: Database, path: String, record: Bool) throws {
        let s = try db.prepare("""
            SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_schema
            WHERE name NOT LIKE 'proj\\_%' ESCAPE '\\' AND name NOT LIKE 'verify\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite\\_stat%' ESCAPE '\\'
            ORDER BY name
            """)
        var text: [UInt8] = []
        while try s.step() {
            for i in 0..<4 { text += Array(s.text(Int32(i)).utf8); text.append(0) }
        }
        let digest = Digest.blake2b(text, length: 16)
        let q = try db.prepare("SELECT value FROM meta WHERE key = 'schema_digest'")
        let stored: [UInt8]? = try q.step() ? q.blob(0) : nil
        if let stored {
            guard stored == digest else {
                throw StoreError(.corrupt, "\(path): the schema's statements differ from what Breeze wrote (a damaged sqlite_schema page); \(StoreError.salvageAdvice(path))")
            }
        } else if record {
            let w = try db.prepare("INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_digest', ?)")
            try w.bind(1, digest)
            try w.run()
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
        return try fullySyncedTransaction(db, durability: durability) {
            let (r, e, b) = try read()
            if e > 0, let bootID, b == bootID { return (r, e) }
            let next = try writeFreshEpoch(db, replica: r, current: e)
            let s = try db.prepare("INSERT OR REPLACE INTO meta(key, value) VALUES ('boot', ?)")
            if let bootID { try s.bind(1, bootID) } else { try s.bindNull(1) }
            try s.run()
            return (r, next)
        }
    }

    /// Runs `body` in a write transaction committed with `synchronous=FULL` whatever the durability (then put
    /// back): an epoch must be on disk before any event uses it.
    private static func fullySyncedTransaction<T>(_ db: Database, durability: Durability, _ body: () throws -> T) throws -> T {
        try db.execute("PRAGMA synchronous=FULL")
        defer { try? db.execute("PRAGMA synchronous=\(durability == .full ? "FULL" : "NORMAL")") }
        return try db.writeTransaction(body)
    }

    /// Inside a write transaction: draws a fresh epoch (`freshEpoch`) and records it in `meta`. Returns it.
    private static func writeFreshEpoch(_ db: Database, replica: ReplicaID, current: UInt32) throws -> UInt32 {
        let next = try freshEpoch(db, replica: replica, current: Int64(current))
        let s = try db.prepare("INSERT OR REPLACE INTO meta(key, value) VALUES ('epoch', ?)")
        try s.bind(1, next)
        try s.run()
        return UInt32(next)
    }

    /// A new epoch: random (1 to 2^32-1), and none this database already holds events of. Random rather
    /// than one more than the last, so that a replica restored from a backup made at epoch E, after it had
    /// already run as E+1, does not take E+1 again: its new events would reuse ids the cluster holds with
    /// other content, and the cluster's copies would look forged (`Protocol/sync.md` 6.6). A clash with an
    /// epoch only the cluster holds has odds of 1 in 4 billion per restore.
    private static func freshEpoch(_ db: Database, replica: ReplicaID, current: Int64) throws -> Int64 {
        let held = try db.prepare("SELECT 1 FROM heads WHERE origin = ? AND epoch = ? LIMIT 1")
        var rng = SystemRandomNumberGenerator()
        while true {
            let candidate = Int64(UInt32.random(in: 1...UInt32.max, using: &rng))
            guard candidate != current else { continue }
            held.reset()
            try held.bind(1, Int64(bitPattern: replica.rawValue))
            try held.bind(2, candidate)
            if try held.first({ _ in true }) == nil { return candidate }
        }
    }

    /// Starts a new, random epoch at once (in `meta`, committed with `synchronous=FULL`): for a database found
    /// restored from a backup or copied while its replica ran on (a peer holds counters of the current origin
    /// beyond this database's, `Node`). Without it the next writes would reuse ids the peers hold with other
    /// content; with it, what the peers hold of the old epoch comes back as another incarnation's events.
    /// Every connection's next write uses the new epoch. Returns it.
    @discardableResult
    public func startNewEpoch() throws(StoreError) -> UInt32 {
        do {
            epoch = try EventLog.fullySyncedTransaction(db, durability: options.durability) { () throws -> UInt32 in
                try EventLog.writeFreshEpoch(db, replica: replica, current: try storedEpoch())
            }
            return epoch
        } catch { throw StoreError.from(error, path: path) }
    }

    /// The epoch `meta` holds now.
    func storedEpoch() throws -> UInt32 {
        UInt32(clamping: try db.cached("SELECT value FROM meta WHERE key = 'epoch'").first { $0.int(0) } ?? 0)
    }

    /// Inside a write transaction: takes the epoch `meta` holds (another connection may have started one).
    func refreshEpoch() throws {
        let stored = try storedEpoch()
        if stored != 0 { epoch = stored }
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
}

// Owns a SQLite connection used by one thread at a time.
@available(*, unavailable)
extension EventLog: Sendable {}
