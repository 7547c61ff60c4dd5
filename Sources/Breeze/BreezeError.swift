import BreezeStore
import BreezeImport

/// Why a `Replica` operation failed. A struct over a private code (as swift-nio's errors are), so new kinds
/// can be added without breaking callers: match a kind as a pattern, e.g. `catch BreezeError.notPresent { }`
/// (or `BreezeError.notPresent ~= error`).
///
/// `description` is one line for a person, naming the input and the problem; `underlying` keeps the error
/// of the layer below (the store's SQLite error, an importer's parse error, the node's start failure) for a
/// caller that wants it. Nothing already stored is lost or changed by an operation that throws.
///
/// ```swift
/// do { try replica.removeFavourite("131075") }
/// catch BreezeError.notPresent { /* already gone: nothing to do */ }
/// catch { showAlert(error.description) }
/// ```
public struct BreezeError: Error, CustomStringConvertible, Sendable {
    enum Code: Sendable, Equatable {
        case missing, notBreeze, newerSchema, invalidArgument, notPresent, storage, diskFull, busy, corrupt,
             screen, importRefused, sync, closed, misuse
    }
    let code: Code
    /// One line: what input, what problem.
    public let description: String
    /// The error of the layer below, when there was one.
    public let underlying: (any Error & Sendable)?

    init(_ code: Code, _ description: String, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.description = description
        self.underlying = underlying
    }

    /// No database at the path (and `Replica.Options.create` was false).
    public static let missing = BreezeError(.missing, "")
    /// The file is not a Breeze database; it was left untouched.
    public static let notBreeze = BreezeError(.notBreeze, "")
    /// The database was written by a newer Breeze.
    public static let newerSchema = BreezeError(.newerSchema, "")
    /// An argument was refused: a malformed sensor or user id, an unknown source or correction, an empty change.
    public static let invalidArgument = BreezeError(.invalidArgument, "")
    /// A remove of something the user does not have (a sensor that is not a favourite).
    public static let notPresent = BreezeError(.notPresent, "")
    /// SQLite failed (see `underlying`); nothing of the failed write was stored.
    public static let storage = BreezeError(.storage, "")
    /// The disk is full; nothing of the failed write was stored.
    public static let diskFull = BreezeError(.diskFull, "")
    /// Another process held the database lock longer than the busy timeout; retry.
    public static let busy = BreezeError(.busy, "")
    /// The database is damaged (`breeze salvage` copies what is intact).
    public static let corrupt = BreezeError(.corrupt, "")
    /// A screen could not be built from its parameters (an unknown sensor, a missing place).
    public static let screen = BreezeError(.screen, "")
    /// A file was refused by its importer (not in the named format, unreadable); nothing from it was stored.
    public static let importRefused = BreezeError(.importRefused, "")
    /// Sync could not start (an address in use, a bad peer address) or is not running.
    public static let sync = BreezeError(.sync, "")
    /// The replica was closed.
    public static let closed = BreezeError(.closed, "")
    /// The library used in a way that cannot work: a `Replica` call inside `read { }` of the same replica, a
    /// `ReplicaSnapshot` used after the closure that was given it returned.
    public static let misuse = BreezeError(.misuse, "")

    /// Errors match by kind.
    public static func ~= (pattern: BreezeError, value: any Error) -> Bool {
        (value as? BreezeError)?.code == pattern.code
    }

    /// The store's error in this vocabulary, keeping it as `underlying`.
    static func from(_ error: any Error) -> BreezeError {
        if let e = error as? BreezeError { return e }
        if let s = error as? StoreError {
            let code: Code
            switch s {
            case StoreError.missing: code = .missing
            case StoreError.notBreeze: code = .notBreeze
            case StoreError.newerSchema: code = .newerSchema
            case StoreError.invalidAppend: code = .invalidArgument
            case StoreError.diskFull: code = .diskFull
            case StoreError.busy: code = .busy
            case StoreError.corrupt: code = .corrupt
            default: code = .storage
            }
            return BreezeError(code, s.description, underlying: s)
        }
        if let s = error as? ScreenError { return BreezeError(.screen, s.description, underlying: s) }
        if let i = error as? ImportError { return BreezeError(.importRefused, i.description, underlying: i) }
        return BreezeError(.storage, "\(error)", underlying: SendableDescription(String(describing: error)))
    }
}

/// An error of a type that is not `Sendable`, kept as its description.
struct SendableDescription: Error, Sendable, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
