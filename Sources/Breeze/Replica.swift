import BreezeCore
import BreezeStore
import BreezeNet
import Dispatch
@preconcurrency import Glibc

/// One replica of a user's Breeze data, in one SQLite database: the library an app embeds.
///
/// A `Replica` is where every intent of the app is written (`addFavourite`, `setAlerts`, `setUnit`, ...),
/// where each screen's read model is computed (`screen(_:_:)`), where those models are observed live
/// (`observe(_:_:)`: a new value after every commit that changes it, whether it came from this process, a
/// peer, or another process using the same database), and where sync runs in the app's own process
/// (`startSync(_:)`).
///
/// ```swift
/// import Breeze
///
/// let replica = try Replica(path: documents + "/breeze.db", options: .init(user: "ana"))
/// try await replica.addFavourite("131075")
/// for try await sheet in replica.observe(SheetScreen.self, replica.parameters(sensor: "131075")) {
///     print(sheet.isFavourite)   // true at once; then again after every change that flips it
/// }
/// ```
///
/// ## Threads
///
/// From async code (the main actor, a `.task`), use the async API (`Replica+Async.swift`: the same names,
/// awaited): reads run on a pool of read connections and never wait for a write, writes on a queue of their
/// own, and the caller's thread never waits on disk. The synchronous API below is for tools and scripts.
///
/// `Replica` is `Sendable`: share one instance between the main actor and background tasks. Its database
/// connection is used under a lock, one call at a time, so calls from several threads are serialised (as
/// GRDB's `DatabaseQueue` does). Observations run on a thread of their own with a second, read-mostly
/// connection, so computing a screen for an observer never holds up a write; an in-process sync node runs on
/// its own libuv thread with a third. Several processes may use one database at once (WAL mode, `BEGIN
/// IMMEDIATE`, a busy timeout). Types that are not `Sendable` say so: `ReplicaSnapshot` is confined to the
/// closure it is handed to.
///
/// Every method that writes returns only after the transaction has committed (with `Durability.full`, after
/// it is on disk), and a write that throws stored nothing.
///
/// `@unchecked Sendable`: the mutable state (the `EventLog`, the user-state cache, the sync node, `closed`) is
/// read and written only under `lock`; `ObservationCenter` and `NodeHandle` are thread-safe themselves.
public final class Replica: @unchecked Sendable {
    /// How a replica is opened.
    public struct Options: Sendable {
        /// The user whose settings the methods read and write when no `user:` is given (default `me`).
        /// 1-64 characters of `A-Z a-z 0-9 . _ -`.
        public var user: String = "me"
        /// Create the database when there is none at the path (default true). With false, opening a missing
        /// file throws `BreezeError.missing`.
        public var create = true
        /// What a commit survives (default `.full`: power loss).
        public var durability: Durability = .full
        /// How long to wait for another process's write lock, in milliseconds (default 5 s).
        public var busyTimeoutMillis: Int32 = 5000
        /// Wall time in milliseconds since 1970 for event timestamps (default the system clock); tests shift it.
        public var wallClock: (@Sendable () -> UInt64)?
        /// The device's IANA time zone, which `parameters(...)` passes to every screen (the user's "today" on
        /// pollen, climate and biomarker): on a phone `TimeZone.current.identifier`. Nil is UTC, the same
        /// everywhere (what tests and servers want). A name the time-zone database does not hold is refused
        /// when the replica opens (`BreezeError.invalidArgument`), not read as UTC.
        public var timeZone: String?
        /// How many read connections the async API may open (default 4): reads beyond that wait for one.
        public var readers = 4

        /// Options with the defaults, for `user`.
        public init(user: String = "me") { self.user = user }
    }

    /// What a commit survives.
    public enum Durability: String, Sendable, CaseIterable {
        /// The write-ahead log is synced at every commit: an acknowledged edit survives power loss (default).
        case full
        /// Survives a crash of the process; the last commits before a power loss may be lost (never corrupted,
        /// and event ids are never reused).
        case normal
    }

    /// The database file.
    public let path: String
    /// This replica's id (its events carry it).
    public let id: ReplicaID
    /// This process's epoch of the replica: its events carry origin (`id`, `epoch`). A new epoch starts when
    /// the machine rebooted since the last one (`Protocol/encoding.md` section 6).
    public let epoch: UInt32
    /// The options it was opened with.
    public let options: Options
    /// True when opening made this replica's device key (a new database, or one made before device keys).
    public let deviceKeyCreated: Bool

    let lock = Lock(checked: true)
    private var log: EventLog?
    let cache = ReadCache()
    var node: NodeHandle?
    var syncStatus = StatusHub()
    /// The observation thread (started by the first observation). Its connection writes only derived tables
    /// (the projection's catch-up), so it commits with `synchronous=NORMAL`.
    let observers: ObservationCenter
    /// The async API's read connections (`Replica+Async.swift`), opened when first used.
    let readers: ReaderPool
    /// The async API's writes, one at a time, off the caller's thread.
    let writeQueue = DispatchQueue(label: "breeze.replica.writes")

    /// Opens the replica at `path`, creating the database (and this replica's identity) when there is none
    /// and `options.create` is true.
    ///
    /// - Throws: `BreezeError.missing` (no file, and `create` is false), `.notBreeze` for a file that is not a
    ///   Breeze database (left untouched), `.newerSchema` for one written by a newer Breeze, `.invalidArgument`
    ///   for a malformed `options.user`, `.corrupt` for a damaged file.
    public init(path: String, options: Options = Options()) throws(BreezeError) {
        self.path = path
        self.options = options
        observers = ObservationCenter(path: path, logOptions: Replica.logOptions(options, durability: .normal))
        readers = ReaderPool(path: path, logOptions: Replica.logOptions(options, durability: .normal), capacity: options.readers)
        try Validation.user(options.user, what: "Options.user")
        try Validation.timeZone(options.timeZone, what: "Options.timeZone")
        do {
            let o = Replica.logOptions(options, durability: options.durability)
            let log = options.create ? try EventLog.create(at: path, options: o) : try EventLog.open(at: path, options: o)
            self.log = log
            id = log.replica
            epoch = log.epoch
        } catch { throw BreezeError.from(error) }
        // The device key sync authenticates with, beside the database: made on the first open, so a database
        // made before keys existed gets one (a key that cannot be made is reported by `devicePublicKey()` and
        // `startSync`).
        let keyPath = KeyFile.devicePath(forDatabase: path)
        if access(keyPath, F_OK) != 0, (try? KeyFile.deviceKey(forDatabase: path, replica: id, create: true)) != nil {
            deviceKeyCreated = true
        } else {
            deviceKeyCreated = false
        }
    }

    deinit { close() }

    static func logOptions(_ options: Options, durability: Durability) -> EventLog.Options {
        var o = EventLog.Options()
        o.durability = durability == .full ? .full : .normal
        o.busyTimeoutMillis = options.busyTimeoutMillis
        if let clock = options.wallClock { o.wallClock = clock }
        return o
    }

    func logOptions(durability: Durability) -> EventLog.Options { Replica.logOptions(options, durability: durability) }

    /// Stops sync and every observation (their sequences end) and closes the database. Further calls throw
    /// `BreezeError.closed`. Called by `deinit`; calling it twice does nothing.
    ///
    /// ```swift
    /// replica.close()   // e.g. when the app signs the user out
    /// ```
    public func close() {
        let (n, l): (NodeHandle?, EventLog?) = lock.withLock {
            defer { node = nil; log = nil }
            return (node, log)
        }
        if let n {
            n.stop()
            n.wait()
        }
        observers.stop()
        readers.close()
        l?.close()
    }

    /// Runs `body` with the log, under the lock, with the store's errors in this module's vocabulary.
    func withLog<T>(_ body: (EventLog) throws -> T) throws(BreezeError) -> T {
        try locked { () throws(BreezeError) -> T in
            guard let log else { throw BreezeError(.closed, "\(path): the replica is closed") }
            do { return try body(log) } catch { throw BreezeError.from(error) }
        }
    }

    /// Runs `body` holding the replica's lock. A call made inside `read { }` (or an observation's fetch) on the
    /// same replica would wait for itself: it is `BreezeError.misuse` instead (GRDB's connections are not
    /// re-entrant either).
    func locked<T>(_ body: () throws(BreezeError) -> T) throws(BreezeError) -> T {
        try lock.withLock(reentry: { () throws(BreezeError) -> Never in
            throw BreezeError(.misuse, "\(path): a Replica method called inside read { } of the same replica (it would wait for itself); use the ReplicaSnapshot the closure is given")
        }, body)
    }

    /// The replica's wall clock (`Options.wallClock`, else the system's), Unix seconds.
    var nowSeconds: Int64 { Int64(nowMillis / 1000) }
    /// The same clock in milliseconds.
    var nowMillis: UInt64 { options.wallClock?() ?? SystemClock.nowMillis() }

    /// Appends events in one transaction, then tells observers and the in-process node (so peers get the
    /// events without waiting for a poll).
    func commit(_ items: [(StreamID, EventBody)]) throws(BreezeError) -> [Event] {
        let events = try withLog { log in try log.append(items) }
        committed()
        return events
    }

    /// After any local commit: wake observers and the node.
    func committed() {
        observers.notify()
        lock.withLock { node }?.wake()
    }

    /// The user `user` names, or `options.user`, checked.
    func resolve(_ user: String?) throws(BreezeError) -> String {
        guard let user else { return options.user }
        try Validation.user(user, what: "user")
        return user
    }

    /// Where this replica's device key is: `<db>.key`, mode 0600, beside the database (not in it: databases
    /// are copied for debugging and bug reports).
    public var deviceKeyPath: String { KeyFile.devicePath(forDatabase: path) }

    /// This replica's device public key (Ed25519, 32 bytes): what an authority certifies to enrol it
    /// (`breeze enrol --device-key`). The key is made if it does not exist yet.
    ///
    /// ```swift
    /// let key = try replica.devicePublicKey()   // send it, with replica.id, to be enrolled
    /// ```
    ///
    /// - Throws: `BreezeError.invalidArgument` when the key file is readable by others, damaged, or made for
    ///   another replica.
    public func devicePublicKey() throws(BreezeError) -> [UInt8] {
        do { return try KeyFile.deviceKey(forDatabase: path, replica: id, create: true).publicKey } catch {
            throw BreezeError(.invalidArgument, error.description, underlying: error)
        }
    }

    // MARK: Reading

    /// The user's settings as merged from every event of their stream: the same on every replica that has
    /// seen the same events, whatever their order.
    ///
    /// ```swift
    /// let unit = try replica.state().effectiveUnit
    /// ```
    ///
    /// - Parameter user: whose (default `options.user`).
    public func state(user: String? = nil) throws(BreezeError) -> UserState {
        let u = try resolve(user)
        return try withLog { log in try cache.state(of: u, in: log) }
    }

    /// The version vector of every stream held: for each origin, how many of its events this replica has.
    /// Two replicas with equal vectors hold the same events.
    ///
    /// ```swift
    /// let held = try replica.versionVectors()[.user("ana")]?.total ?? 0
    /// ```
    public func versionVectors() throws(BreezeError) -> [StreamID: VersionVector] {
        try withLog { log in try log.versionVectors() }
    }

    /// Runs `body` with a read-only view of the replica (the same one observations get), under the lock, so
    /// no other call of this replica runs meanwhile.
    ///
    /// ```swift
    /// let (events, sheet) = try replica.read { (try $0.eventCount(), try $0.screen(SheetScreen.self, p)) }
    /// ```
    public func read<T>(_ body: (ReplicaSnapshot) throws -> T) throws(BreezeError) -> T {
        try withLog { log in
            let snapshot = ReplicaSnapshot(log: log, cache: cache, path: path)
            defer { snapshot.lease.end() }
            return try body(snapshot)
        }
    }

    /// A screen's read model, computed now from the facts projection (brought up to date from its checkpoint
    /// first) and the user's state.
    ///
    /// ```swift
    /// let sheet = try replica.screen(SheetScreen.self, replica.parameters(now: now, sensor: "131075"))
    /// ```
    ///
    /// - Throws: `BreezeError.screen` when the parameters do not name what the screen needs (an unknown
    ///   sensor, a malformed date); a store error when reading fails. (No place is an empty state: nearby,
    ///   pollen and climate say `Location unknown`.)
    public func screen<S: Screen>(_ screen: S.Type, _ parameters: ScreenParameters) throws(BreezeError) -> S.Model {
        try read { try $0.screen(screen, parameters) }
    }

    /// Brings the facts projection (what screens read) up to date now, reporting progress (events applied so
    /// far) on long catch-ups: after a large sync or import, or a new Breeze version whose projection must be
    /// rebuilt. Screens and observations do it themselves when needed; call it to show progress.
    ///
    /// ```swift
    /// try replica.updateProjection { n in progressLabel.text = "\(n) events" }
    /// ```
    public func updateProjection(progress: (Int) -> Void = { _ in }) throws(BreezeError) {
        try read { try $0.catchUpProjection(progress: progress) }
    }

    /// Screen parameters for `options.user` at `now` (Unix seconds; default the wall clock), with the
    /// options screens take (a place, a sensor, the map's box, a date, the map's metric).
    ///
    /// ```swift
    /// let map = try replica.screen(MapScreen.self, replica.parameters(bbox: (42.6, -73.8, 42.8, -73.6), metric: "pm25"))
    /// ```
    public func parameters(now: Int64? = nil, at: (latitude: Double, longitude: Double)? = nil, sensor: String? = nil,
                           bbox: (south: Double, west: Double, north: Double, east: Double)? = nil, date: String? = nil,
                           metric: String = "aqi") -> ScreenParameters {
        var p = ScreenParameters(user: options.user, now: now ?? nowSeconds)
        p.at = at
        p.sensor = sensor
        p.bbox = bbox
        p.date = date
        p.metric = metric
        p.timeZone = options.timeZone
        return p
    }
}
