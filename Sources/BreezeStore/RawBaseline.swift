internal import CSQLite

/// The benchmark baseline: plain SQLite inserts of already-encoded rows, one transaction per batch, into a
/// table of the same shape (and the same unique index) as the log's `events` table, with the same
/// statements as the log (`EventInserter`: 32 rows per `INSERT`; `rowsPerStatement: 1` gives one
/// execution of a one-row statement per row). Anything the engine does beyond this (encoding, hashing,
/// clocks, counters, version vectors) is its overhead.
public final class RawBaseline {
    let db: Database
    let rowsPerStatement: Int

    /// One row as the log stores it.
    public struct Row: Sendable {
        public var stream: Int64, origin: Int64, epoch: Int64, counter: Int64, hlc: Int64
        public var type: String
        public var data: [UInt8]
        public init(stream: Int64, origin: Int64, epoch: Int64, counter: Int64, hlc: Int64, type: String, data: [UInt8]) {
            self.stream = stream; self.origin = origin; self.epoch = epoch; self.counter = counter
            self.hlc = hlc; self.type = type; self.data = data
        }
    }

    /// The version of the SQLite library linked in (for benchmark reports), e.g. `3.40.1`.
    public static var sqliteVersion: String { String(cString: sqlite3_libversion()) }

    /// Rows per `INSERT` in the log's own writes (`EventLog.append`, `ingest`).
    public static var engineRowsPerStatement: Int { EventInserter.chunk }

    /// Creates the table in a new database at `path`, with the same pragmas as the log; rows are inserted
    /// `rowsPerStatement` per statement (1 to 64).
    public init(path: String, durability: EventLog.Durability,
                rowsPerStatement: Int = RawBaseline.engineRowsPerStatement) throws(StoreError) {
        self.rowsPerStatement = max(1, min(rowsPerStatement, 64))
        db = try RawBaseline.database(at: path, durability: durability)
        do { try db.execute(Schema.migrations[0]) } catch { throw StoreError.from(error, path: path) }
    }

    /// A new database at `path` with the log's pragmas (page size, WAL, checkpoints, durability): what every
    /// baseline measures against.
    static func database(at path: String, durability: EventLog.Durability) throws(StoreError) -> Database {
        do {
            let db = try Database(path: path, create: true)
            try db.execute("PRAGMA page_size=\(Schema.pageSize)")
            _ = try db.scalarInt("PRAGMA journal_mode=WAL")
            try db.execute("PRAGMA synchronous=\(durability == .full ? "FULL" : "NORMAL")")
            try db.execute("PRAGMA wal_autocheckpoint=\(Schema.checkpointPages(pageSize: Schema.pageSize))")
            return db
        } catch { throw StoreError.from(error, path: path) }
    }

    /// Inserts rows in one transaction.
    public func insert(_ rows: [Row]) throws(StoreError) {
        do {
            try db.writeTransaction {
                let inserter = try EventInserter(db: db, chunk: rowsPerStatement)
                for r in rows {
                    try inserter.add(EventInserter.Row(stream: r.stream, origin: r.origin, epoch: r.epoch, counter: r.counter,
                                                       hlc: r.hlc, type: r.type, flags: 0, data: r.data))
                }
                try inserter.flush()
            }
        } catch { throw StoreError.from(error, path: db.path) }
    }

    /// Closes the database.
    public func close() { db.close() }
}

extension EventLog {
    /// The stored rows with `seq` in `range`, as `RawBaseline` takes them (for the benchmark).
    public func rawRows(seq range: ClosedRange<Int64>) throws(StoreError) -> [RawBaseline.Row] {
        do {
            let q = try db.prepare("SELECT stream, origin, epoch, counter, hlc, type, data FROM events WHERE seq BETWEEN ? AND ? ORDER BY seq")
            try q.bind(1, range.lowerBound)
            try q.bind(2, range.upperBound)
            var out: [RawBaseline.Row] = []
            while try q.step() {
                out.append(RawBaseline.Row(stream: q.int(0), origin: q.int(1), epoch: q.int(2), counter: q.int(3),
                                           hlc: q.int(4), type: q.text(5), data: q.blob(6)))
            }
            return out
        } catch { throw StoreError.from(error, path: path) }
    }
}

// Owns a connection used by one thread.
@available(*, unavailable)
extension RawBaseline: Sendable {}
