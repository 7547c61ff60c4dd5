import BreezeCore

/// Why the log refused an operation. A struct over a private code (as swift-nio does), so new cases can be
/// added without breaking callers; `description` is one line naming the input and the problem.
public struct StoreError: Error, CustomStringConvertible, Sendable, Equatable {
    enum Code: Equatable, Sendable {
        case missing, notBreeze, newerSchema, invalidAppend, sqlite, busy, diskFull, corrupt, io
    }
    let code: Code
    /// One line for a person: what input, what problem.
    public let description: String
    /// The underlying SQLite result code, when SQLite reported the problem.
    public let sqliteCode: Int32?

    init(_ code: Code, _ description: String, sqliteCode: Int32? = nil) {
        self.code = code
        self.description = description
        self.sqliteCode = sqliteCode
    }

    /// No database file at the path.
    public static let missing = StoreError(.missing, "")
    /// The file is not a Breeze database (or not SQLite at all); it was left untouched.
    public static let notBreeze = StoreError(.notBreeze, "")
    /// The database was written by a newer Breeze.
    public static let newerSchema = StoreError(.newerSchema, "")
    /// An append was refused (wrong stream for the event type, empty batch item, ...).
    public static let invalidAppend = StoreError(.invalidAppend, "")
    /// The disk is full; nothing of the failed transaction was stored.
    public static let diskFull = StoreError(.diskFull, "")
    /// Another process held the database lock longer than the busy timeout.
    public static let busy = StoreError(.busy, "")
    /// SQLite found the file damaged, or a stored event does not match its hash.
    public static let corrupt = StoreError(.corrupt, "")
    /// The disk reported an I/O error (a failed write or fsync); the operation was not acknowledged.
    public static let io = StoreError(.io, "")

    /// What to tell a person whose database is damaged.
    static func salvageAdvice(_ path: String) -> String {
        "the database is damaged: keep the file, run `breeze salvage --db \(path) --out NEW.db` to copy every intact event into a fresh database, then run a node on NEW.db to fetch the rest from a peer"
    }

    /// Errors match by kind, so `catch let e as StoreError where e ~= .missing` works.
    public static func ~= (pattern: StoreError, value: StoreError) -> Bool { pattern.code == value.code }
    public static func == (a: StoreError, b: StoreError) -> Bool { a.code == b.code && a.description == b.description }

    /// Wraps a SQLite error in the store's vocabulary, naming the database.
    static func from(_ e: Error, path: String) -> StoreError {
        if let s = e as? StoreError { return s }
        guard let d = e as? DatabaseError else { return StoreError(.sqlite, "\(path): \(e)") }
        switch d.primaryCode {
        case DatabaseError.full:
            return StoreError(.diskFull, "\(path): disk full; nothing of this write was stored", sqliteCode: d.code)
        case DatabaseError.busy:
            return StoreError(.busy, "\(path): database is locked by another process (busy timeout expired)",
                              sqliteCode: d.code)
        case DatabaseError.corrupt:
            return StoreError(.corrupt, "\(path): \(salvageAdvice(path)) (SQLite: \(d.message))", sqliteCode: d.code)
        case DatabaseError.ioError:
            return StoreError(.io, "\(path): the disk reported an I/O error (\(d.message), SQLite code \(d.code)); this write was not acknowledged: retry, and check the disk",
                              sqliteCode: d.code)
        case DatabaseError.notADatabase:
            return StoreError(.notBreeze, "\(path): not a Breeze database (not an SQLite file, or one whose header is damaged); left untouched",
                              sqliteCode: d.code)
        default:
            return StoreError(.sqlite, "\(path): \(d.message)", sqliteCode: d.code)
        }
    }
}
