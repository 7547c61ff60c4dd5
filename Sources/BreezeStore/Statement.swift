internal import CSQLite

/// A prepared statement (https://www.sqlite.org/c3ref/stmt.html), finalized in `deinit`.
final class Statement {
    private var stmt: OpaquePointer?
    unowned let database: Database
    let sql: String

    init(database: Database, sql: String) throws(DatabaseError) {
        self.database = database
        self.sql = sql
        var s: OpaquePointer?
        let rc = sqlite3_prepare_v3(database.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &s, nil)
        guard rc == SQLITE_OK, let s else { throw database.error(rc, sql: sql) }
        stmt = s
    }

    deinit { sqlite3_finalize(stmt) }

    /// Resets the statement and clears its bindings.
    func reset() {
        sqlite3_reset(stmt)
        sqlite3_clear_bindings(stmt)
    }

    private func check(_ rc: Int32) throws(DatabaseError) {
        if rc != SQLITE_OK { throw database.error(rc, sql: sql) }
    }

    func bind(_ i: Int32, _ v: Int64) throws(DatabaseError) { try check(sqlite3_bind_int64(stmt, i, v)) }
    func bind(_ i: Int32, _ v: Double) throws(DatabaseError) { try check(sqlite3_bind_double(stmt, i, v)) }
    func bindNull(_ i: Int32) throws(DatabaseError) { try check(sqlite3_bind_null(stmt, i)) }
    /// Binds text, copied by SQLite (a Swift string's C pointer is only valid during the call).
    func bind(_ i: Int32, _ v: String) throws(DatabaseError) {
        // Its length in bytes, not up to a NUL: a text holding one (a name from a hostile event) is bound whole.
        try check(sqlite3_bind_text(stmt, i, v, Int32(v.utf8.count), breeze_sqlite_transient()))
    }
    /// Binds a blob, copied by SQLite.
    func bind(_ i: Int32, _ v: [UInt8]) throws(DatabaseError) {
        let rc = v.withUnsafeBytes { b in
            sqlite3_bind_blob(stmt, i, b.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(b.count),
                              breeze_sqlite_transient())
        }
        try check(rc)
    }

    /// Binds `count` bytes at `bytes` as a blob without copying them (`SQLITE_STATIC`): the caller keeps them
    /// valid and unchanged until the statement has been stepped and reset.
    func bindStatic(_ i: Int32, _ bytes: UnsafeRawPointer, count: Int) throws(DatabaseError) {
        try check(sqlite3_bind_blob(stmt, i, bytes, Int32(count), breeze_sqlite_static()))
    }
    /// Binds `count` bytes of UTF-8 at `bytes` as text without copying them, as `bindStatic(_:_:count:)`.
    func bindStaticText(_ i: Int32, _ bytes: UnsafeRawPointer, count: Int) throws(DatabaseError) {
        try check(sqlite3_bind_text(stmt, i, bytes.assumingMemoryBound(to: CChar.self), Int32(count),
                                    breeze_sqlite_static()))
    }

    /// Resets the statement for another step, keeping its bindings (for callers that rebind every parameter).
    func rewind() { sqlite3_reset(stmt) }

    /// Steps once: true when a row is available, false when done.
    @discardableResult
    func step() throws(DatabaseError) -> Bool {
        let rc = sqlite3_step(stmt)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        throw database.error(rc, sql: sql)
    }

    /// Steps once and maps the first row, then resets the statement. Resetting matters: a statement left
    /// on a row keeps its read transaction (and its snapshot) open, and a later `BEGIN IMMEDIATE` on that
    /// connection then fails with SQLITE_BUSY_SNAPSHOT instead of waiting (https://www.sqlite.org/wal.html).
    func first<T>(_ map: (Statement) -> T) throws(DatabaseError) -> T? {
        defer { sqlite3_reset(stmt) }
        return try step() ? map(self) : nil
    }

    /// Steps to completion, for statements with no results.
    func run() throws(DatabaseError) {
        while try step() {}
    }

    func int(_ col: Int32) -> Int64 { sqlite3_column_int64(stmt, col) }
    var columnCount: Int32 { sqlite3_column_count(stmt) }
    func double(_ col: Int32) -> Double { sqlite3_column_double(stmt, col) }
    func isNull(_ col: Int32) -> Bool { sqlite3_column_type(stmt, col) == SQLITE_NULL }
    func isFloat(_ col: Int32) -> Bool { sqlite3_column_type(stmt, col) == SQLITE_FLOAT }
    func text(_ col: Int32) -> String {
        guard let p = sqlite3_column_text(stmt, col) else { return "" }
        // By its length, as `bind` stores it: a text holding a NUL comes back whole.
        return String(decoding: UnsafeRawBufferPointer(start: p, count: Int(sqlite3_column_bytes(stmt, col))), as: UTF8.self)
    }
    /// The column's bytes where SQLite holds them: valid until the statement steps, resets or is finalised,
    /// so read them at once (what `HourAggregate(hour:stored:)` does) and never keep the buffer.
    func blobBytes(_ col: Int32) -> UnsafeRawBufferPointer {
        let n = Int(sqlite3_column_bytes(stmt, col))
        guard n > 0, let p = sqlite3_column_blob(stmt, col) else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: p, count: n)
    }
    func blob(_ col: Int32) -> [UInt8] {
        let n = Int(sqlite3_column_bytes(stmt, col))
        guard n > 0, let p = sqlite3_column_blob(stmt, col) else { return [] }
        return Array(UnsafeRawBufferPointer(start: p, count: n))
    }
}

// Owned by its `Database`, used on the same thread.
@available(*, unavailable)
extension Statement: Sendable {}
