import BreezeCore

/// Writes rows of the `events` table inside a write transaction, `chunk` rows per `INSERT` statement.
///
/// SQLite pays a fixed cost per statement execution (starting the VDBE program, a statement journal for the
/// unique index, halting and resetting) that is about as large as inserting the row itself: on SQLite 3.40, a
/// C loop inserting rows of this table's shape in transactions of 1,000 (`synchronous=FULL`) spent 1.4-1.9 µs
/// of CPU per row with 32 rows per statement against 3.0-3.6 µs with one (the same rows, the same machine).
/// Rows are therefore queued and written when `chunk` have accumulated or at `flush()`; the blobs and type
/// names are copied into one buffer owned here and bound without a further copy (`SQLITE_STATIC`).
///
/// The statement is `INSERT OR FAIL`: a multi-row `INSERT` that may abort on the unique index otherwise opens a
/// statement journal (so that it can undo its own earlier rows) and pays for it at every execution. Nothing
/// here needs that undo: any error, a conflict included, propagates out of the write transaction, which rolls
/// back whole. (Measured with callgrind on `bench events`: 300 fewer instructions per appended event.)
///
/// The caller must call `flush()` before anything in the same transaction reads `events` (a queued row is
/// not yet visible) and before committing. Rows are inserted in the order they were added, so their `seq`
/// (arrival order) is unchanged. Used by one transaction of one `EventLog`, on its thread.
final class EventInserter {
    /// Rows per multi-row statement by default. SQLite 3.40 allows 32,766 parameters; 32 rows use 256.
    static let chunk = 32
    /// Parameters per row, in the order of `EventLog.insertSQL`.
    static let columns = 8

    /// One row of `events`, as bound.
    struct Row {
        var stream: Int64, origin: Int64, epoch: Int64, counter: Int64, hlc: Int64
        var type: String
        var flags: Int64
        var data: [UInt8]
    }

    private let db: Database
    /// Rows per statement for this inserter.
    let chunk: Int
    private var rows: [Row] = []
    private var scratch: UnsafeMutableRawPointer
    private var capacity: Int

    /// The statement for a full chunk, prepared (or taken from the cache) once per inserter.
    private let full: Statement

    init(db: Database, chunk: Int = EventInserter.chunk) throws {
        self.db = db
        self.chunk = max(1, chunk)
        full = try db.cached(EventInserter.sql(rows: self.chunk))
        rows.reserveCapacity(self.chunk)
        capacity = 16 * 1024
        scratch = .allocate(byteCount: capacity, alignment: 8)
    }

    deinit { scratch.deallocate() }

    /// The statement inserting `n` rows.
    static func sql(rows n: Int) -> String {
        let one = "(?, ?, ?, ?, ?, ?, ?, ?)"
        return "INSERT OR FAIL INTO events(stream, origin, epoch, counter, hlc, type, flags, data) VALUES "
            + Array(repeating: one, count: n).joined(separator: ", ")
    }

    /// Queues one row: `event` in stream `stream` (its `streams.id`) with `flags`.
    func add(_ e: Event, stream: Int64, flags: Int64) throws {
        try add(Row(stream: stream, origin: Int64(bitPattern: e.id.origin.replica.rawValue), epoch: Int64(e.id.origin.epoch),
                    counter: Int64(bitPattern: e.id.counter), hlc: Int64(bitPattern: e.hlc.rawValue), type: e.type,
                    flags: flags, data: e.encoded))
    }

    /// Queues one row as given.
    func add(_ row: Row) throws {
        rows.append(row)
        if rows.count == chunk { try flush() }
    }

    /// Inserts every queued row.
    func flush() throws {
        guard !rows.isEmpty else { return }
        defer { rows.removeAll(keepingCapacity: true) }
        var need = 0
        for r in rows { need += r.data.count + r.type.utf8.count }
        if need > capacity {
            scratch.deallocate()
            capacity = max(need, 2 * capacity)
            scratch = .allocate(byteCount: capacity, alignment: 8)
        }
        let s = rows.count == chunk ? full : try db.cached(EventInserter.sql(rows: rows.count))
        s.rewind()
        defer { s.reset() }   // clears the bindings too, on every path: none is left pointing into `scratch`
        var offset = 0
        func copy(_ bytes: UnsafeRawBufferPointer) -> (UnsafeRawPointer, Int) {
            let at = scratch + offset
            if let base = bytes.baseAddress, bytes.count > 0 { at.copyMemory(from: base, byteCount: bytes.count) }
            offset += bytes.count
            return (UnsafeRawPointer(at), bytes.count)
        }
        for (i, r) in rows.enumerated() {
            let p = Int32(i * EventInserter.columns)
            try s.bind(p + 1, r.stream)
            try s.bind(p + 2, r.origin)
            try s.bind(p + 3, r.epoch)
            try s.bind(p + 4, r.counter)
            try s.bind(p + 5, r.hlc)
            var type = r.type
            let (tp, tn) = type.withUTF8 { copy(UnsafeRawBufferPointer($0)) }
            try s.bindStaticText(p + 6, tp, count: tn)
            try s.bind(p + 7, r.flags)
            let (dp, dn) = r.data.withUnsafeBytes { copy($0) }
            try s.bindStatic(p + 8, dp, count: dn)
        }
        try s.run()
    }
}

// Belongs to one write transaction of one `EventLog`, on that log's thread.
@available(*, unavailable)
extension EventInserter: Sendable {}
