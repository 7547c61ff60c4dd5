import BreezeCore
import BreezeStore
import BreezeProjections
@preconcurrency import Glibc

/// Runs a replica's observations: one thread with its own database connection recomputes every observed
/// value after each commit that added events, and hands on those that changed.
///
/// How a commit is noticed, fastest first:
/// - by this process (a `Replica` write, an import, the in-process sync node's group commit): `notify()`
///   writes a byte to a pipe the thread waits on;
/// - by another process on the same database: inotify on the database's directory reports writes to the
///   write-ahead log (`<db>-wal`). SQLite makes a transaction visible only after writing its frames (and, with
///   `synchronous=FULL`, syncing them), when it updates the shared-memory index, which inotify does not see;
///   so after a write the thread looks again every 0.1 ms for 2 ms (about what a commit's fsync takes), then
///   at 2, 4, 8 ... 256 ms, until the new events are there (each look is one `max(seq)` query);
/// - if inotify is unavailable: polling every 25 ms (and every second as a safety net with it).
///
/// What counts as a change is a new event (the greatest `seq` moved): status tables, the projection's own
/// catch-up and checkpoints do not make anyone recompute. New subscriptions are computed at once.
///
/// Only what a commit can change is recomputed: each value remembers what its last computation read
/// (`ReadFootprint`: the user's stream and the parts of their state its screen reads, the sensors in view,
/// a station's days, a pollen cell ...), and the thread reads the new events once (`CommitChanges`) and
/// recomputes the values whose footprint they touch. A star recomputes the sheet and the lists that show
/// favourites, not the climate chart or the biomarker gauges. The values recomputed go cheapest first (by
/// the time their last computation took), so an expensive screen never delays a cheap one.
///
/// `@unchecked Sendable`: `subscribers`, `fresh`, `state` and the file descriptors are guarded by `lock`; the
/// connection, the user-state cache and the inotify descriptor belong to the observation thread alone.
final class ObservationCenter: @unchecked Sendable {
    private let path: String
    private let logOptions: EventLog.Options
    /// The thread's connection is read-only (`ReadOnlyObserver`: a debugging tool watching a database).
    private let readOnly: Bool
    private let lock = Lock()
    private var subscribers: [UInt64: any Subscriber] = [:]
    private var fresh: [any Subscriber] = []
    private var nextID: UInt64 = 1
    private enum State { case idle, running, stopped }
    private var state = State.idle
    /// Why the thread ended by itself (its connection could not be opened): later subscribers get it at once.
    private var failure: BreezeError?
    private var thread = pthread_t()
    /// A pipe: `notify` writes a byte to `wakeFD`; the thread polls `wakeReadFD` (non-blocking, close-on-exec).
    private var wakeFD: Int32 = -1, wakeReadFD: Int32 = -1

    /// Polling interval without inotify, and the safety-net interval with it (milliseconds).
    static let pollMillis: Int32 = 25, safetyMillis: Int32 = 1000
    /// The safety-net interval in use (tests lengthen it to show that inotify, not polling, noticed a commit).
    var safetyMillis: Int32 {
        get { lock.withLock { safety } }
        set { lock.withLock { safety = newValue } }
    }
    private var safety = ObservationCenter.safetyMillis

    /// The wait before look `n` after a WAL write: 0.1 ms for the first 20 looks, then 2, 4, 8 ... 256 ms.
    static func retryDelayMicros(_ n: Int) -> Int {
        n < 20 ? 100 : 2000 << min(7, n - 20)
    }

    init(path: String, logOptions: EventLog.Options, readOnly: Bool = false) {
        self.path = path
        self.logOptions = logOptions
        self.readOnly = readOnly
    }

    /// Adds a subscriber (computed at once) and returns its id for `remove`. On a stopped center the
    /// subscriber is finished at once.
    func add(_ s: any Subscriber) -> UInt64 {
        if let failure = lock.withLock({ failure }) {
            s.end(failure)
            return 0
        }
        let result: (id: UInt64, started: Bool)? = lock.withLock {
            guard state != .stopped else { return nil }
            let id = nextID
            nextID += 1
            subscribers[id] = s
            fresh.append(s)
            if state == .idle {
                state = .running
                return (id, startThread())
            }
            return (id, true)
        }
        guard let result else {
            s.end(BreezeError(.closed, "\(path): the replica is closed"))
            return 0
        }
        if !result.started { s.end(BreezeError(.storage, "\(path): cannot start the observation thread")) }
        notify()
        return result.id
    }

    /// Removes a subscriber (its consumer went away).
    func remove(_ id: UInt64) {
        _ = lock.withLock { subscribers.removeValue(forKey: id) }
    }

    /// How many subscriptions are registered (for tests and diagnostics).
    var subscriberCount: Int { lock.withLock { subscribers.count } }

    /// Something changed that is not an event (a certificate installed): every value is recomputed at once.
    func invalidate() {
        lock.withLock { forced = true }
        notify()
    }
    private var forced = false

    /// Something committed in this process: look now.
    func notify() {
        lock.withLock {
            guard wakeFD >= 0 else { return }
            var one: UInt8 = 1
            _ = write(wakeFD, &one, 1)   // a full pipe already wakes the thread: EAGAIN is fine
        }
    }

    /// Stops the thread and finishes every subscription. Idempotent.
    func stop() {
        let (wasRunning, t): (Bool, pthread_t) = lock.withLock {
            defer { state = .stopped }
            return (state == .running, thread)
        }
        guard wasRunning else { finishAll(nil); return }
        notify()
        if pthread_equal(t, pthread_self()) != 0 { pthread_detach(t) } else { pthread_join(t, nil) }
        finishAll(nil)
        lock.withLock {
            close(wakeFD)
            close(wakeReadFD)
            wakeFD = -1
            wakeReadFD = -1
        }
    }

    private func finishAll(_ error: BreezeError?) {
        let all: [any Subscriber] = lock.withLock {
            defer { subscribers.removeAll(); fresh.removeAll() }
            return Array(subscribers.values)
        }
        for s in all { s.end(error) }
    }

    /// Under `lock`.
    private func startThread() -> Bool {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return false }
        for f in fds {
            _ = fcntl(f, F_SETFD, FD_CLOEXEC)
            _ = fcntl(f, F_SETFL, fcntl(f, F_GETFL) | O_NONBLOCK)
        }
        wakeReadFD = fds[0]
        wakeFD = fds[1]
        let box = Unmanaged.passRetained(self).toOpaque()
        let rc = pthread_create(&thread, nil, { arg in
            let center = Unmanaged<ObservationCenter>.fromOpaque(arg!).takeRetainedValue()
            center.run()
            return nil
        }, box)
        if rc != 0 {
            Unmanaged<ObservationCenter>.fromOpaque(box).release()
            close(wakeFD)
            close(wakeReadFD)
            wakeFD = -1
            wakeReadFD = -1
            return false
        }
        return true
    }

    // MARK: The observation thread

    private func run() {
        let log: EventLog
        do { log = readOnly ? try EventLog.openReadOnly(at: path, options: logOptions) : try EventLog.open(at: path, options: logOptions) } catch {
            let e = BreezeError.from(error)
            lock.withLock { failure = e }
            finishAll(e)
            return
        }
        defer { log.close() }
        let cache = ReadCache()
        let watch = WALWatch(databasePath: path)
        let fd = lock.withLock { wakeReadFD }
        var lastSeq: Int64 = -1, lastGeneration: Int64 = 0
        // After a WAL write not yet visible: how many looks so far (nil: not looking).
        var retries: Int?
        while true {
            let (all, new, stopped, safety, force): ([any Subscriber], [any Subscriber], Bool, Int32, Bool) = lock.withLock {
                defer { fresh.removeAll(); forced = false }
                return (Array(subscribers.values), fresh, state == .stopped, self.safety, forced)
            }
            if stopped { return }
            let seq = (try? log.lastSeq()) ?? lastSeq
            // Dropped fact streams (interests that no longer name them) change what screens show without a
            // new event: their generation counts as a change too.
            let generation = (try? log.dropGeneration()) ?? lastGeneration
            let changed = seq != lastSeq || generation != lastGeneration || force
            // What the new events touched (read once for every subscriber); without events (dropped fact
            // streams), or when they cannot be read, everything.
            var changes = CommitChanges()
            if changed {
                changes = generation != lastGeneration || force ? .all
                    : (try? CommitChanges.scan(log, after: lastSeq, through: seq)) ?? .all
            }
            lastSeq = seq
            lastGeneration = generation
            var due = changed ? all.filter { $0.mayChange(changes) } : []
            let dueIDs = Set(due.map(ObjectIdentifier.init))
            due += new.filter { !dueIDs.contains(ObjectIdentifier($0)) }
            due.sort { $0.cost < $1.cost }
            let snapshot = ReplicaSnapshot(log: log, cache: cache, path: path, observing: true)
            var gone: [ObjectIdentifier] = []
            for s in due where !s.evaluate(snapshot) { gone.append(ObjectIdentifier(s)) }
            snapshot.lease.end()            // (a fetch that kept it gets a clear error)
            if !gone.isEmpty {
                let set = Set(gone)
                lock.withLock { subscribers = subscribers.filter { !set.contains(ObjectIdentifier($0.value)) } }
            }
            if changed { retries = nil }
            var timeoutMicros = Int(watch.isWatching ? safety : ObservationCenter.pollMillis) * 1000
            if let r = retries {
                timeoutMicros = ObservationCenter.retryDelayMicros(r)
                retries = timeoutMicros >= 256_000 ? nil : r + 1
            }
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: watch.fd, events: Int16(POLLIN), revents: 0)]
            if timeoutMicros < 1000 {
                // `poll` counts in milliseconds: sleep the short looks, then only collect what arrived.
                usleep(UInt32(timeoutMicros))
                timeoutMicros = 0
            }
            let n = poll(&fds, watch.isWatching ? 2 : 1, Int32(timeoutMicros / 1000))
            if n > 0 {
                if fds[0].revents != 0 {
                    var drain = [UInt8](repeating: 0, count: 256)
                    while read(fd, &drain, drain.count) > 0 {}
                }
                if watch.isWatching && fds[1].revents != 0 && watch.drainSawWrite() { retries = 0 }
            }
        }
    }
}

/// One observed value: computes it from a snapshot and hands it to its sink when it changed.
protocol Subscriber: AnyObject {
    /// Computes and delivers; false when the subscriber is done (its consumer went away, or it failed).
    func evaluate(_ snapshot: ReplicaSnapshot) -> Bool
    /// False when `changes` cannot change the value (they touch nothing its last computation read).
    func mayChange(_ changes: CommitChanges) -> Bool
    /// Seconds its last computation took (the order values are recomputed in: cheapest first).
    var cost: Double { get }
    /// Ends it: with an error, or (nil) because the replica closed.
    func end(_ error: BreezeError?)
}

/// A subscriber of a value fetched from the database.
final class ValueSubscriber<Value: Equatable & Sendable>: Subscriber {
    private let fetch: @Sendable (ReplicaSnapshot) throws -> Value
    private weak var sink: (any ObservationSink<Value>)?
    private var last: Value?
    /// What the last computation read (nil: not computed yet, or it failed part-way: recompute after any commit).
    private var footprint: ReadFootprint?
    private(set) var cost = 0.0

    init(fetch: @escaping @Sendable (ReplicaSnapshot) throws -> Value, sink: any ObservationSink<Value>) {
        self.fetch = fetch
        self.sink = sink
    }

    func evaluate(_ snapshot: ReplicaSnapshot) -> Bool {
        guard let sink, !sink.isCancelled else { return false }
        var observed = snapshot
        observed.footprint = ReadFootprint()
        footprint = nil
        let started = SystemClock.monotonicSeconds()
        defer { cost = SystemClock.monotonicSeconds() - started }
        do {
            let v = try fetch(observed)
            footprint = observed.footprint
            if v != last {
                last = v
                sink.send(v)
            }
            return true
        } catch let e where BreezeError.busy ~= e {
            return true   // another process holds the lock: the next commit retries
        } catch let e as BreezeError where (e.underlying as? ScreenError)?.awaitsData == true {
            return true   // what the screen needs has not arrived yet (a sensor before the first sync): a commit may bring it
        } catch {
            sink.fail(BreezeError.from(error))
            return false
        }
    }

    func mayChange(_ changes: CommitChanges) -> Bool { footprint?.isTouched(by: changes) ?? true }

    func end(_ error: BreezeError?) {
        if let error { sink?.fail(error) } else { sink?.finish() }
    }
}

// Confined to the observation thread (and to `add`/`stop`, which the lock orders with it).
@available(*, unavailable)
extension ValueSubscriber: Sendable {}
