internal import CLibUV
public import BreezeCore
public import BreezeSync
import BreezeCrypto
@preconcurrency import Glibc

/// Many devices in one process, for load tests and the `fanout` benchmark: each a `SyncSession` (client) over
/// its own TCP connection, all on one libuv loop thread, holding what they receive in memory (a version vector
/// per stream, as a device's log would) rather than in a database. Each has its own certificate, subscribes
/// to its own fact streams (`Protocol/sync.md` 6.7), acknowledges every batch as it "stores" it, and redials
/// with backoff when its session ends, resuming from what it holds, as `breeze node` on a phone does.
///
/// It measures what a device sees: when each authenticated, when each held everything it was told to expect
/// (`expect(_:)`), and how long after a commit each event announced with `committed(_:atMillis:)` arrived.
///
/// ```swift
/// let swarm = DeviceSwarm(devices: devices, settings: .init(servers: ["127.0.0.1:7000"]))
/// try swarm.start()
/// while swarm.snapshot().authenticated < devices.count { usleep(100_000) }
/// swarm.stop()
/// ```
///
/// `@unchecked Sendable`: the devices and connections live on the loop thread; what other threads read or set
/// (`shared`) is guarded by `lock`, and they reach the loop only through `uv_async_send`.
public final class DeviceSwarm: @unchecked Sendable {
    /// One device.
    public struct Device: Sendable {
        public var credentials: SyncCredentials
        /// The fact streams it subscribes to; nil: all of them.
        public var subscription: Set<StreamID>?
        public init(credentials: SyncCredentials, subscription: Set<StreamID>?) {
            self.credentials = credentials
            self.subscription = subscription
        }
    }

    /// How the devices connect.
    public struct Settings: Sendable {
        /// Server addresses; device i dials `servers[i % count]` and fails over to the next.
        public var servers: [String]
        /// Most events in one batch and unacknowledged batches (as a device's node).
        public var batchEvents = 2048
        public var window = 4
        /// Backoff between dials of one device after a failure or a close: min, max (milliseconds).
        public var redialMinMillis: UInt64 = 100
        public var redialMaxMillis: UInt64 = 5_000
        /// A connect or handshake that takes longer is abandoned and redialled.
        public var connectTimeoutMillis: UInt64 = 15_000
        public init(servers: [String]) { self.servers = servers }
    }

    /// What the devices saw, at one moment.
    public struct Snapshot: Sendable {
        /// Devices with a session up now.
        public var authenticated = 0
        /// Handshakes completed since the start, and dials that failed (refused, reset, timed out, handshake failed).
        public var handshakes = 0, failedDials = 0
        /// Sessions that ended after authenticating.
        public var sessionsEnded = 0
        /// Devices that held what `expect` asked for, and when the last of them did (ms since `start` or `expect`).
        public var caughtUp = 0
        public var lastCaughtUpMillis: UInt64?
        /// When the first and the last device authenticated (ms since `start`), per session generation.
        public var firstAuthenticatedMillis: UInt64?, lastAuthenticatedMillis: UInt64?
        /// Events received (duplicates included), batches, and bytes read from the sockets (sealed frames, as
        /// on the wire without TCP/IP headers).
        public var events = 0, batches = 0, bytes = 0
        /// Delivery latencies of announced events (ms from the commit to a device receiving it), in the
        /// order they arrived, since the last `takeLatencies`.
        public var pendingLatencies = 0
    }

    private let devices: [Device]
    private let settings: Settings
    private var lock = pthread_mutex_t()
    private var shared = Snapshot()
    private var latencies: [Double] = []
    /// Announced events: stream and id -> commit time (monotonic ms).
    private var announced: [AnnouncedKey: UInt64] = [:]
    private struct AnnouncedKey: Hashable { let stream: StreamID; let id: EventID }
    /// What each device must hold to count as caught up (set by `expect`), and since when (monotonic ms).
    private var expected: [[StreamID: VersionVector]] = []
    private var expectedSince: UInt64 = 0
    private var startedMillis: UInt64 = 0

    // Loop thread only.
    private var loop: UnsafeMutablePointer<uv_loop_t>?
    private var thread: pthread_t?
    private var stopAsync: UnsafeMutablePointer<uv_async_t>?
    private var tick: UnsafeMutablePointer<uv_timer_t>?
    private var states: [State] = []
    /// Devices not in a session: dialling, or waiting to redial.
    private var waiting = Set<Int>()
    private var stopping = false

    private final class State {
        let index: Int
        var held: [StreamID: VersionVector] = [:]
        var session: SyncSession?
        var conn: Connection?
        var server: Int
        var attempt = 0
        var dialedMillis: UInt64 = 0
        var redialAt: UInt64?
        var authenticated = false
        var caughtUp = false
        /// Bytes of the current connection already added to the snapshot.
        var countedBytes = 0
        init(index: Int, server: Int) { self.index = index; self.server = server }
    }

    public init(devices: [Device], settings: Settings) {
        precondition(!settings.servers.isEmpty)
        self.devices = devices
        self.settings = settings
        pthread_mutex_init(&lock, nil)
    }

    deinit { pthread_mutex_destroy(&lock) }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        return body()
    }

    // MARK: From any thread

    /// Starts the loop thread; every device dials at once.
    public func start() throws(NodeError) {
        signal(SIGPIPE, SIG_IGN)
        Node.raiseFileLimit(log: { _ in })
        startedMillis = SystemClock.monotonicMillis()
        let box = Unmanaged.passRetained(self).toOpaque()
        var tid = pthread_t()
        let rc = pthread_create(&tid, nil, { arg in
            let swarm = Unmanaged<DeviceSwarm>.fromOpaque(arg!).takeRetainedValue()
            swarm.run()
            return nil
        }, box)
        guard rc == 0 else {
            Unmanaged<DeviceSwarm>.fromOpaque(box).release()
            throw NodeError("cannot start the swarm's loop thread (error \(rc))")
        }
        thread = tid
    }

    /// Stops every device and waits for the loop thread.
    public func stop() {
        locked { if let a = stopAsync { uv_async_send(a) } }
        if let t = thread { pthread_join(t, nil) }
        thread = nil
    }

    /// The counters now.
    public func snapshot() -> Snapshot {
        locked {
            var s = shared
            s.pendingLatencies = latencies.count
            return s
        }
    }

    /// The latencies recorded since the last call (ms from a commit to a device having the event).
    public func takeLatencies() -> [Double] {
        locked {
            defer { latencies = [] }
            return latencies
        }
    }

    /// From now on, device i counts as caught up once it holds `vectors[i]` (every counter of every stream).
    public func expect(_ vectors: [[StreamID: VersionVector]]) {
        precondition(vectors.count == devices.count)
        locked {
            expected = vectors
            expectedSince = SystemClock.monotonicMillis()
            shared.caughtUp = 0
            shared.lastCaughtUpMillis = nil
            recheck = true          // the loop thread counts those that hold it already, at its next tick
        }
    }
    private var recheck = false

    /// An event committed at `atMillis` (monotonic): each device that receives it records the delay.
    public func committed(_ events: [Event], atMillis: UInt64) {
        locked { for e in events { announced[AnnouncedKey(stream: e.stream, id: e.id)] = atMillis } }
    }

    /// Resets the authentication times (before a restart of the server, say).
    public func resetAuthenticationTimes() {
        locked {
            shared.firstAuthenticatedMillis = nil
            shared.lastAuthenticatedMillis = nil
            startedMillis = SystemClock.monotonicMillis()
        }
    }

    static func covers(_ held: [StreamID: VersionVector], _ want: [StreamID: VersionVector]) -> Bool {
        for (s, v) in want where (held[s] ?? VersionVector()).missing(from: v) > 0 { return false }
        return true
    }

    // MARK: The loop thread

    private func run() {
        let loop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
        uv_loop_init(loop)
        self.loop = loop
        let me = Unmanaged.passUnretained(self).toOpaque()
        let a = UnsafeMutablePointer<uv_async_t>.allocate(capacity: 1)
        uv_async_init(loop, a) { a in
            let s = Unmanaged<DeviceSwarm>.fromOpaque(a!.pointee.data).takeUnretainedValue()
            s.shutdown()
        }
        a.pointee.data = me
        let t = UnsafeMutablePointer<uv_timer_t>.allocate(capacity: 1)
        uv_timer_init(loop, t)
        t.pointee.data = me
        tick = t
        locked { stopAsync = a }
        states = (0..<devices.count).map { State(index: $0, server: $0 % settings.servers.count) }
        waiting = Set(states.indices)
        for s in states { dial(s) }
        uv_timer_start(t, { t in
            Unmanaged<DeviceSwarm>.fromOpaque(t!.pointee.data).takeUnretainedValue().onTick()
        }, 50, 50)
        uv_run(loop, UV_RUN_DEFAULT)
        locked { stopAsync = nil }
        uv_walk(loop, { h, _ in if uv_is_closing(h) == 0 { uv_close(h, nil) } }, nil)
        uv_run(loop, UV_RUN_DEFAULT)
        uv_loop_close(loop)
        loop.deallocate()
        a.deallocate()
        t.deallocate()
    }

    private func now() -> UInt64 {
        uv_update_time(loop!)
        return uv_now(loop!)
    }

    private func shutdown() {
        stopping = true
        for s in states { s.conn?.close("swarm stopping") }
        if let t = tick { uv_timer_stop(t); uv_close(UnsafeMutableRawPointer(t).assumingMemoryBound(to: uv_handle_t.self), nil) }
        locked {
            if let a = stopAsync { uv_close(UnsafeMutableRawPointer(a).assumingMemoryBound(to: uv_handle_t.self), nil) }
        }
    }

    private func onTick() {
        let t = now()
        locked {
            guard recheck else { return }
            recheck = false
            shared.caughtUp = 0
            for st in states {
                st.caughtUp = st.index < expected.count && Self.covers(st.held, expected[st.index])
                if st.caughtUp { shared.caughtUp += 1 }
            }
            if shared.caughtUp == devices.count { shared.lastCaughtUpMillis = SystemClock.monotonicMillis() - expectedSince }
        }
        // Only the devices not in a session are looked at (waiting to redial, or dialling).
        for i in Array(waiting) {
            let s = states[i]
            if s.authenticated { waiting.remove(i); continue }
            if let due = s.redialAt, due <= t {
                s.redialAt = nil
                dial(s)
            } else if let c = s.conn, t > s.dialedMillis, t - s.dialedMillis > settings.connectTimeoutMillis {
                c.close("connect or handshake timed out")
            }
        }
    }

    private func dial(_ s: State) {
        guard !stopping else { return }
        let address = settings.servers[s.server]
        guard let addr = try? SocketAddress.parse(address) else { return }
        let conn = Connection(loop: loop!)
        s.conn = conn
        s.dialedMillis = now()
        s.authenticated = false
        conn.onClosed = { [unowned self, unowned s, unowned conn] reason in self.closed(s, conn, reason) }
        let req = UnsafeMutablePointer<uv_connect_t>.allocate(capacity: 1)
        req.pointee.data = Unmanaged.passRetained(DialContext(swarm: self, state: s, conn: conn)).toOpaque()
        var a = addr
        let rc = withUnsafePointer(to: &a) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                uv_tcp_connect(req, conn.handle, sa) { req, status in
                    let ctx = Unmanaged<DialContext>.fromOpaque(req!.pointee.data).takeRetainedValue()
                    req!.deallocate()
                    ctx.swarm.connected(ctx.state, ctx.conn, status: status)
                }
            }
        }
        if rc < 0 {
            Unmanaged<DialContext>.fromOpaque(req.pointee.data).release()
            req.deallocate()
            conn.close("connect failed")
        }
    }

    private final class DialContext {
        let swarm: DeviceSwarm, state: State, conn: Connection
        init(swarm: DeviceSwarm, state: State, conn: Connection) { self.swarm = swarm; self.state = state; self.conn = conn }
    }

    private func connected(_ s: State, _ conn: Connection, status: Int32) {
        guard status >= 0, !conn.closing, s.conn === conn else {
            conn.close("connect failed")
            return
        }
        var config = SyncSession.Config(credentials: devices[s.index].credentials)
        config.batchEvents = settings.batchEvents
        config.window = settings.window
        var session = SyncSession(role: .client, config: config, ephemeralKey: SecureRandom.bytes(32), nowMillis: SystemClock.nowMillis())
        let first = session.start()
        s.session = session
        conn.onMessages = { [unowned self, unowned s] result in self.received(s, result) }
        do { try conn.startReading() } catch {
            conn.close(error.description)
            return
        }
        perform(s, first)
    }

    private func received(_ s: State, _ result: Result<[Message], FrameError>) {
        guard s.session != nil else { return }
        if let c = s.conn {
            let read = c.bytesReceived - s.countedBytes
            s.countedBytes += read
            locked { shared.bytes += read }
        }
        switch result {
        case .success(let messages):
            for m in messages {
                guard let conn = s.conn, !conn.closing else { return }
                let actions = s.session!.receive(m)
                perform(s, actions)
            }
        case .failure(let e):
            perform(s, s.session!.receiveGarbage(e))
        }
    }

    private func perform(_ s: State, _ actions: [SyncSession.Action]) {
        for a in actions {
            guard let conn = s.conn else { return }
            switch a {
            case .send(let m):
                conn.send(Frame.encode(m))
            case .close(let reason):
                conn.closeAfterWriting(reason, now: now())
            case .authenticated:
                conn.decoder.maxLength = Frame.maxLength
                conn.decoder.stopsAfterHandshake = false
                s.authenticated = true
                s.attempt = 0
                let t = SystemClock.monotonicMillis()
                locked {
                    shared.authenticated += 1
                    shared.handshakes += 1
                    let at = t - startedMillis
                    if shared.firstAuthenticatedMillis == nil { shared.firstAuthenticatedMillis = at }
                    shared.lastAuthenticatedMillis = at
                }
                if s.session != nil { perform(s, s.session!.subscribe(devices[s.index].subscription)) }
                if s.session != nil { perform(s, s.session!.sendVectors(local: s.held)) }
            case .ingest(let batch, let events, _, let retired):
                store(s, batch: batch, events, retired: retired)
            case .rescan, .skipped:
                break           // a device with nothing of its own to send; skipped events are not stored
            case .resendVectors:
                if s.session != nil { perform(s, s.session!.sendVectors(local: s.held)) }
            }
        }
    }

    /// "Stores" a batch as a device's log would (each event must be the next of its origin), acknowledges it,
    /// and records what the measurements need.
    private func store(_ s: State, batch: UInt64, _ events: [Event], retired: [Int: UInt64] = [:]) {
        var inserted = 0, duplicates = 0, gaps = 0
        for (i, e) in events.enumerated() {
            var have = s.held[e.stream]?[e.id.origin] ?? 0
            // Counters the server compacted away before this event (sync.md 6.10): held, as a device's log takes them.
            if let first = retired[i], first <= have &+ 1, e.id.counter &- 1 > have, e.id.counter > 0 {
                s.held[e.stream, default: VersionVector()].advance(to: EventID(origin: e.id.origin, counter: e.id.counter - 1))
                have = e.id.counter - 1
            }
            if e.id.counter == have + 1 {
                s.held[e.stream, default: VersionVector()].advance(to: e.id)
                inserted += 1
            } else if e.id.counter <= have {
                duplicates += 1
            } else {
                gaps += 1
            }
        }
        let t = SystemClock.monotonicMillis()
        locked {
            shared.events += events.count
            shared.batches += 1
            if !announced.isEmpty {
                for e in events {
                    if let c = announced[AnnouncedKey(stream: e.stream, id: e.id)] { latencies.append(Double(t >= c ? t - c : 0)) }
                }
            }
            if !s.caughtUp, s.index < expected.count, Self.covers(s.held, expected[s.index]) {
                s.caughtUp = true
                shared.caughtUp += 1
                shared.lastCaughtUpMillis = t - expectedSince
            }
        }
        if s.session != nil { perform(s, s.session!.committed(batch: batch, inserted: inserted, duplicates: duplicates, gaps: gaps)) }
    }

    private func closed(_ s: State, _ conn: Connection, _ reason: String) {
        guard s.conn === conn else { return }
        let read = conn.bytesReceived - s.countedBytes
        locked { shared.bytes += read }
        s.countedBytes = 0
        s.conn = nil
        s.session = nil
        if s.authenticated {
            locked {
                shared.authenticated -= 1
                shared.sessionsEnded += 1
            }
        } else {
            locked { shared.failedDials += 1 }
        }
        s.authenticated = false
        guard !stopping else { return }
        // Back off, and move to the next server (failover) when there are several.
        let base = min(settings.redialMaxMillis, settings.redialMinMillis << UInt64(min(s.attempt, 20)))
        s.attempt += 1
        if settings.servers.count > 1 { s.server = (s.server + 1) % settings.servers.count }
        s.redialAt = now() + UInt64(Double(base) * Double.random(in: 0.5...1.0))
        waiting.insert(s.index)
    }
}
