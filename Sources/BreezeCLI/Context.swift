public import BreezeStore
import Breeze
import BreezeCore
import Glibc

/// What every command receives: the global options, resolved, and the console.
public struct Context {
    /// The database path (`--db`, else `BREEZE_DB`, else the default file).
    public var dbPath: String
    /// The user (`--user`, else `BREEZE_USER`, else `me`).
    public var user: String
    /// True when `--user` or `BREEZE_USER` was given (the node then runs with a user's scope).
    public var userGiven = false
    /// `--json`: machine-readable output.
    public var json: Bool
    /// `--durability full|normal` (default full).
    public var durability: EventLog.Durability
    /// Where output goes.
    public let console: Console
    /// Added to the wall clock for every timestamp (`BREEZE_CLOCK_OFFSET_MS`, a testing aid for clock skew).
    public var clockOffsetMillis: Int64 = 0
    /// The process's environment (a feed's key may come from it).
    public var environment: [String: String] = [:]

    /// Log options for this invocation: durability and the (possibly offset) wall clock.
    func logOptions() -> EventLog.Options {
        var o = EventLog.Options()
        o.durability = durability
        if clockOffsetMillis != 0 {
            let offset = clockOffsetMillis
            o.wallClock = { SystemClock.nowMillis(offsetMillis: offset) }
        }
        return o
    }

    /// Opens the existing log for writing, mapping store errors to one-line failures. A database without a
    /// device key (made before keys existed) gets one here, so every writing command migrates it; a key that
    /// cannot be made is left to `breeze node` and `breeze key show` to report.
    func openLog() throws(CLIError) -> EventLog {
        let log: EventLog
        do { log = try EventLog.open(at: dbPath, options: logOptions()) } catch { throw .failure(error.description) }
        if access(KeyFile.devicePath(forDatabase: dbPath), F_OK) != 0 {
            _ = try? KeyFile.deviceKey(forDatabase: dbPath, replica: log.replica, create: true)
        }
        return log
    }

    /// Replica options for this invocation: the user, durability and the (possibly offset) wall clock; the
    /// database must exist (only `init` creates one).
    func replicaOptions(create: Bool = false) -> Replica.Options {
        var o = Replica.Options(user: user)
        o.create = create
        o.durability = durability == .full ? .full : .normal
        if clockOffsetMillis != 0 {
            let offset = clockOffsetMillis
            o.wallClock = { SystemClock.nowMillis(offsetMillis: offset) }
        }
        return o
    }

    /// Runs `body` with the replica open (the `Breeze` library: every edit, state and screen goes through
    /// it), closing it afterwards and turning its errors into one-line failures.
    func withReplica<T>(_ body: (Replica) throws -> T) throws(CLIError) -> T {
        _ = try userStream()
        let replica: Replica
        do { replica = try Replica(path: dbPath, options: replicaOptions()) } catch { throw .failure(error.description) }
        defer { replica.close() }
        do { return try body(replica) } catch let e as CLIError { throw e } catch let e as BreezeError {
            throw .failure(e.description)
        } catch { throw .failure("\(dbPath): \(error)") }
    }

    /// Runs `body` with the log open, closing it afterwards and turning store errors into failures.
    func withLog<T>(_ body: (EventLog) throws -> T) throws(CLIError) -> T {
        let log = try openLog()
        defer { log.close() }
        do { return try body(log) } catch let e as CLIError { throw e } catch let e as StoreError {
            throw .failure(e.description)
        } catch { throw .failure("\(dbPath): \(error)") }
    }

    /// Runs `body` with the database at `path` (default: `dbPath`) opened read-only: nothing is written, so
    /// it is safe on a database a running node is using (replay, explain, diff).
    func withReadOnlyLog<T>(at path: String? = nil, _ body: (EventLog) throws -> T) throws(CLIError) -> T {
        let log: EventLog
        do { log = try EventLog.openReadOnly(at: path ?? dbPath) } catch { throw .failure(error.description) }
        defer { log.close() }
        do { return try body(log) } catch let e as CLIError { throw e } catch let e as StoreError {
            throw .failure(e.description)
        } catch { throw .failure("\(path ?? dbPath): \(error)") }
    }

    /// The user's settings stream.
    func userStream() throws(CLIError) -> StreamID {
        do { try StreamID.validateUserID(user) } catch { throw .failure("--user: \(error.description)") }
        return .user(user)
    }

    /// The path used when neither `--db` nor `BREEZE_DB` is given: `$XDG_DATA_HOME/breeze/breeze.db`, else
    /// `~/.local/share/breeze/breeze.db`, else `./breeze.db`.
    public static func defaultDatabasePath(environment: [String: String]) -> String {
        if let x = environment["XDG_DATA_HOME"], !x.isEmpty { return x + "/breeze/breeze.db" }
        if let h = environment["HOME"], !h.isEmpty { return h + "/.local/share/breeze/breeze.db" }
        return "breeze.db"
    }
}
