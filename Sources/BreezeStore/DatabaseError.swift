/// An error reported by SQLite: the result code, SQLite's message and the SQL that failed.
///
/// Statement arguments are never included, so an error can be logged without leaking data.
public struct DatabaseError: Error, CustomStringConvertible, Sendable {
    /// The (extended) SQLite result code, e.g. 5 for SQLITE_BUSY, 13 for SQLITE_FULL, 26 for SQLITE_NOTADB.
    public let code: Int32
    /// SQLite's message.
    public let message: String
    /// The statement, when there was one.
    public let sql: String?

    /// The primary result code (the low byte of the extended code).
    public var primaryCode: Int32 { code & 0xff }

    public var description: String {
        if let sql { return "SQLite error \(code): \(message) (in \(sql))" }
        return "SQLite error \(code): \(message)"
    }

    /// SQLITE_BUSY: another connection holds the lock longer than the busy timeout.
    public static let busy: Int32 = 5
    /// SQLITE_IOERR (extended codes say which call failed: SQLITE_IOERR_WRITE, SQLITE_IOERR_FSYNC, ...).
    public static let ioError: Int32 = 10
    /// SQLITE_CORRUPT.
    public static let corrupt: Int32 = 11
    /// SQLITE_FULL: the disk is full.
    public static let full: Int32 = 13
    /// SQLITE_CANTOPEN.
    public static let cantOpen: Int32 = 14
    /// SQLITE_CONSTRAINT.
    public static let constraint: Int32 = 19
    /// SQLITE_NOTADB: the file is not a database.
    public static let notADatabase: Int32 = 26
}
