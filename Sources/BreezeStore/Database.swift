internal import CSQLite

/// One SQLite connection, in the manner of GRDB's `Database`: it owns the `sqlite3*`, prepares statements,
/// keeps a cache of the hot ones, and runs transactions that roll back on a thrown error.
///
/// Not thread-safe: one thread (or one serial owner) uses a connection at a time; SQLite itself is opened in
/// multi-thread mode, so separate connections on separate threads are fine.
final class Database {
    private(set) var handle: OpaquePointer?
    let path: String
    private var cache: [String: Statement] = [:]

    /// Opens `path`. With `create`, a missing file is created; otherwise it must exist.
    /// See https://www.sqlite.org/c3ref/open.html.
    init(path: String, create: Bool, readOnly: Bool = false) throws(DatabaseError) {
        self.path = path
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        if readOnly { flags |= SQLITE_OPEN_READONLY } else { flags |= SQLITE_OPEN_READWRITE }
        if create && !readOnly { flags |= SQLITE_OPEN_CREATE }
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        handle = db
        if rc != SQLITE_OK {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close_v2(db)
            handle = nil
            throw DatabaseError(code: rc, message: message, sql: nil)
        }
    }

    deinit { close() }

    /// Finalizes cached statements and closes the connection.
    func close() {
        cache.removeAll()
        if let h = handle {
            sqlite3_close_v2(h)
            handle = nil
        }
    }

    /// True inside a transaction (`sqlite3_get_autocommit` is 0: https://www.sqlite.org/c3ref/get_autocommit.html).
    var inTransaction: Bool { handle.map { sqlite3_get_autocommit($0) == 0 } ?? false }

    /// Waits up to `milliseconds` for locks held by other connections, retrying every 50 us at first
    /// (`breeze_busy_wait` in `shim.h`; https://www.sqlite.org/c3ref/busy_handler.html). SQLite's own
    /// `sqlite3_busy_timeout` sleeps 1, 2, 5, 10 ... ms between tries, which adds a millisecond or more to a
    /// write that waited for another connection's short transaction (an observer's projection catch-up, a
    /// node's group commit).
    func setBusyTimeout(milliseconds: Int32) {
        breeze_set_busy_handler(handle, milliseconds)
    }

    /// Syncs the write-ahead log now, through the VFS (`breeze_sync_wal`): what a `synchronous=FULL` commit
    /// does at its end, for a transaction committed with `synchronous=NORMAL` (see `EventLog.ingest(groups:source:syncLater:)`).
    func syncWAL() throws(DatabaseError) {
        let rc = breeze_sync_wal(handle)
        if rc != SQLITE_OK { throw error(rc, sql: "sync of the write-ahead log") }
    }

    func error(_ rc: Int32, sql: String?) -> DatabaseError {
        let code = handle.map { sqlite3_extended_errcode($0) } ?? rc
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "error \(rc)"
        return DatabaseError(code: code == 0 ? rc : code, message: message, sql: sql)
    }

    /// Runs one or more statements with no results.
    func execute(_ sql: String) throws(DatabaseError) {
        var err: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &err)
        if rc != SQLITE_OK {
            let message = err.map { String(cString: $0) } ?? "error \(rc)"
            sqlite3_free(err)
            let code = handle.map { sqlite3_extended_errcode($0) } ?? rc
            throw DatabaseError(code: code == 0 ? rc : code, message: message, sql: sql)
        }
    }

    /// A new prepared statement.
    func prepare(_ sql: String) throws(DatabaseError) -> Statement {
        try Statement(database: self, sql: sql)
    }

    /// A prepared statement kept for reuse (reset before it is returned).
    func cached(_ sql: String) throws(DatabaseError) -> Statement {
        if let s = cache[sql] {
            s.reset()
            return s
        }
        let s = try prepare(sql)
        cache[sql] = s
        return s
    }

    /// The first column of the first row, as an integer (nil when there is no row or it is NULL).
    func scalarInt(_ sql: String) throws(DatabaseError) -> Int64? {
        let s = try prepare(sql)
        guard try s.step() else { return nil }
        return s.isNull(0) ? nil : s.int(0)
    }

    /// Runs `body` inside `BEGIN IMMEDIATE ... COMMIT` (taking the write lock up front, so a busy database
    /// waits at BEGIN rather than failing at the first write), and rolls back if `body` or COMMIT throws.
    /// The first error is the one rethrown. See https://www.sqlite.org/lang_transaction.html.
    func writeTransaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Runs `body` inside a read transaction (`BEGIN DEFERRED`), so it sees one consistent snapshot.
    func readTransaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN DEFERRED")
        defer { try? execute("COMMIT") }
        return try body()
    }

    /// Rows changed by the last statement.
    var changes: Int { Int(sqlite3_changes(handle)) }
    /// The row id of the last row this connection inserted.
    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }
}

// A connection belongs to one thread at a time: the `EventLog` that owns it.
@available(*, unavailable)
extension Database: Sendable {}
