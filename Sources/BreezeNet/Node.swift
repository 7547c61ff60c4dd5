internal import CLibUV
import BreezeCore
import BreezeStore
import BreezeSync
import BreezeCrypto
@preconcurrency import Glibc

/// A replica node: one libuv loop on its own thread does all socket work for every peer, runs one
/// `SyncSession` per connection and carries out its actions. This file is the shell (the loop's handles,
/// shutdown); its jobs live beside it:
///
/// - `Node+Connections.swift`: listening (at most `maxUnauthenticated` handshakes at once, `HandshakeQueue`),
///   dialling (with backoff and server failover, `Dialer`), and each session's input and actions, with the
///   control-message budget (`FloodBudget`).
/// - `Node+Fanout.swift`: group commit of what peers sent, and sending: each commit's new rows are read once
///   and routed to the sessions that want them (`Router`); a session behind the tail catches up by itself,
///   by stream (a device that subscribed) or in log order (a cluster peer), within a budget per loop turn.
/// - `Node+Housekeeping.swift`: timeouts and keep-alives (`KeepAlive`), visited a slice of peers per tick;
///   the status table and metrics, written from what changed.
/// - `Node+Policy.swift`: revocations, this replica's interests and horizon, a restored backup.
///
/// Everything here runs on the loop thread; `NodeHandle` is the only object other threads touch.
final class Node {
    let config: NodeConfig
    /// This replica's key, chain and trusted authority: `config.credentials` until a renewed certificate is
    /// installed (`Node+Certificates.swift`); each new session takes the current one.
    var credentials: SyncCredentials
    /// Where the last look for issued certificates ended (log position).
    var certificateSeq: Int64 = 0
    /// A dialled session that stays up this long resets its dialler's backoff (`closed`).
    static let lastingSessionMillis: UInt64 = 5_000
    let loop: UnsafeMutablePointer<uv_loop_t>
    let log: EventLog
    var server: UnsafeMutablePointer<uv_tcp_t>?
    var listenAddress: String?
    /// Every connection with a session, by its number.
    var peers: [Int: Peer] = [:]
    var nextPeerID = 1
    /// Inbound connections still in their handshake, and the rule for one more.
    var handshakes: HandshakeQueue
    /// A connection waits in the kernel's accept queue (`HandshakeQueue.admit` said wait).
    var acceptPending = false
    /// Connections dropped to make room for newcomers since the last summary line (logged once a second
    /// rather than one line each during an accept storm).
    var evictedSinceLog = 0
    /// Sending: which sessions want each new row (its `Router`, which also knows what the log holds), and
    /// the sessions that catch up by themselves.
    var fanout: Fanout<Peer>
    /// Rows may have been committed since the router's tail (a turn's bound was reached, or the node just
    /// started): `afterPoll` routes.
    var routePending = true
    var dialers: [Dialer] = []
    var pending: [(peer: Peer, batch: UInt64, events: [Event], signatures: [Int: OriginSignature], retired: [EventLog.RetiredRange])] = []
    /// Outbound connections not yet established, with when they started (closed on timeout or shutdown).
    var connecting: [ObjectIdentifier: (conn: Connection, started: UInt64)] = [:]
    /// When shutdown began.
    var stoppingSince: UInt64?
    /// Fires `closeGraceMillis` after shutdown began and closes by force what is still open.
    var graceTimer: UnsafeMutablePointer<uv_timer_t>?
    var lastDataVersion: Int64 = -1
    /// The revocations this node enforces (the `device.revoke` events of its log that verify against its
    /// authority) and the log position they were read up to.
    var revocations: Revocations
    var revocationsSeq: Int64 = 0
    let lookups: SessionLookups
    /// This replica's interests, resolved (sync.md 6.7): the fact streams it subscribes to, nil for all.
    let interests = InterestResolver()
    var subscription: Set<StreamID>?
    /// A drop of streams no longer named failed (a busy database): `refreshSubscription` tries again.
    var dropPending = false
    var stopping = false
    var handles: [UnsafeMutablePointer<uv_handle_t>] = []
    /// The stop and signal handles, closed last.
    var extraHandles: [UnsafeMutableRawPointer] = []
    let check: UnsafeMutablePointer<uv_check_t>
    let idle: UnsafeMutablePointer<uv_idle_t>
    var idleActive = false
    let poll: UnsafeMutablePointer<uv_timer_t>
    let tick: UnsafeMutablePointer<uv_timer_t>
    let startedMillis: UInt64
    var rng = SystemRandomNumberGenerator()
    /// Peers visited by the housekeeping sweep, a slice per tick (`Node+Housekeeping.swift`).
    var sweepList: [Peer] = []
    var sweepNext = 0
    /// Each device's current session (the newest: `admitDevice`), and its budget of authentications.
    var deviceSessions: [ReplicaID: Int] = [:]
    var deviceBudgets: [ReplicaID: DeviceBudget] = [:]
    struct DeviceBudget { var tokens: Double; var at: UInt64 }
    var lastBudgetSweepMillis: UInt64 = 0
    /// Peers held back by their control budget (only these are looked at every tick).
    var throttled: [Int: Peer] = [:]
    /// Fairness between peers: a device hands over at most one batch of events per turn of the loop (a cluster
    /// peer at most `clusterEventsPerTurn` events); one with more waits here (its socket not read) until the
    /// next turn (`afterPoll`), so a device flooding batches costs every other peer, and every handshake, one
    /// batch of its work per turn, not all it managed to send.
    var yielded: [Int: Peer] = [:]
    /// The turn of the loop (counted in `afterPoll`).
    var turn: UInt64 = 0
    /// Events a cluster peer may hand over in one turn (a device: one batch): four default batches, the window.
    static let clusterEventsPerTurn = 4 * SyncSession.defaultBatchEvents
    /// When the loop last finished polling for I/O: a timeout is never judged on a clock that ran while the
    /// node itself kept the loop busy (the peer's answer may be waiting unread in its socket).
    var lastIOMillis: UInt64 = 0
    var lastSecondMillis: UInt64 = 0
    var lastHorizonMillis: UInt64 = 0
    /// Streams due for compaction, found once a minute and taken a few a second (`compactSome`).
    var compactionQueue: [StreamID] = []
    var lastCompactionScanMillis: UInt64 = 0
    var compactedSinceLog = CompactionReport()
    /// Streams due for a rollup under the retention policy (`rollUpSome`), and the policy's days (0: none).
    var rollupQueue: [StreamID] = []
    var lastRollupScanMillis: UInt64 = 0
    var rollupDays = 0
    var rolledSinceLog = RollupReport()
    var horizonRefusalLogged = false
    /// Status rows to write at the next tick (peers by number) and to delete (addresses).
    var statusDirty = Set<Int>()
    var statusRemoved: [String] = []
    /// The status table was written once (the first write replaces what an earlier run left).
    var statusWritten = false
    /// When `onStatus` was last called.
    var lastStatusReportMillis: UInt64 = 0
    var statusReportDue = true

    /// One connected (or connecting) peer.
    final class Peer: FanoutMember {
        unowned let node: Node
        let conn: Connection
        var session: SyncSession
        let address: String
        let dialer: Dialer?
        /// This connection's number (the handshake queue's and the router's).
        let id: Int
        let openedMillis: UInt64
        var lastReceivedMillis: UInt64
        var lastSentMillis: UInt64
        var note: String?
        /// When the session became ready (for the vectors timeout).
        var readyMillis: UInt64?
        /// Dropped to make room for a newcomer: counted in a summary instead of a log line of its own.
        var evicted = false
        /// Acknowledgements counted at the last check, and when that count last moved (or nothing was in flight).
        var acksSeen = 0
        var ackProgressMillis: UInt64 = 0
        /// The control-message budget (ping, pong, vectors, reset, subscribe).
        var budget: FloodBudget
        /// Messages decoded but not yet handled because the budget ran out; the socket is not read while
        /// any are held, so a flooding peer's sends block in its own kernel buffers.
        var held: ArraySlice<Message> = []
        /// The loop turn in which this peer last handed over a batch of events, and how many events it handed
        /// over in that turn (`Node.yielded`).
        var batchTurn: UInt64 = .max
        var turnEvents = 0
        /// Every routed row up to the router's tail was offered to it: it takes its events from the tail.
        var live = false
        /// Has something to read for itself (`Fanout`), and whether it waits for acknowledgements or room.
        var busy = false
        var parked = false
        /// Index in the node's sweep list (-1: not in it).
        var sweepIndex = -1
        /// When this peer's status row was last written, and the counts it showed.
        var statusWrittenMillis: UInt64 = 0
        var statusCounts: (sent: Int, received: Int) = (-1, -1)

        init(node: Node, conn: Connection, session: SyncSession, address: String, dialer: Dialer?, id: Int, now: UInt64, controlBudget: Int) {
            self.node = node
            self.conn = conn; self.session = session; self.address = address; self.dialer = dialer; self.id = id
            openedMillis = now; lastReceivedMillis = now; lastSentMillis = now
            budget = FloodBudget(perSecond: controlBudget, now: now)
        }

        var hasRoom: Bool { conn.queuedBytes < node.config.maxQueuedBytes }

        func perform(_ actions: [SyncSession.Action]) { node.perform(self, actions) }

        /// True for an inbound peer of `user:` scope (a device): many of them, summed up in status and metrics.
        var isInboundDevice: Bool {
            guard dialer == nil, let g = session.grants else { return false }
            return !g.peerIsCluster
        }
    }

    init(config: NodeConfig, loop: UnsafeMutablePointer<uv_loop_t>) throws {
        self.config = config
        self.credentials = config.credentials
        self.loop = loop
        var o = EventLog.Options()
        o.durability = config.durability
        o.wallClock = config.wallClock
        let log = try EventLog.open(at: config.dbPath, options: o)
        self.log = log
        lookups = SessionLookups(log: log)
        guard config.credentials.replica == log.replica else {
            log.close()
            throw NodeError("the certificate is for replica \(config.credentials.replica), but \(config.dbPath) is replica \(log.replica)")
        }
        // What the log holds and where it ends, in one snapshot: the router's starting point.
        let start: (tail: Int64, heads: [StreamID: VersionVector])
        do { start = try log.withSnapshot { (try log.lastSeq(), try log.versionVectors()) } } catch {
            log.close()
            throw NodeError("\(config.dbPath): reading the version vectors failed: \(error)")
        }
        fanout = Fanout(router: Router(tail: start.tail, heads: start.heads), routeRowsPerTurn: config.routeRowsPerTurn,
                        catchUpReadsPerTurn: config.catchUpReadsPerTurn)
        lookups.fanout = fanout
        handshakes = HandshakeQueue(limit: config.maxUnauthenticated, silentGraceMillis: config.silentHandshakeGraceMillis,
                                    evictAfterMillis: config.handshakeEvictAfterMillis)
        startedMillis = SystemClock.nowMillis()
        revocations = Revocations(authority: config.credentials.authority)
        check = .allocate(capacity: 1)
        idle = .allocate(capacity: 1)
        poll = .allocate(capacity: 1)
        tick = .allocate(capacity: 1)
        let me = Unmanaged.passUnretained(self).toOpaque()
        uv_check_init(loop, check); check.pointee.data = me
        uv_idle_init(loop, idle); idle.pointee.data = me
        uv_timer_init(loop, poll); poll.pointee.data = me
        uv_timer_init(loop, tick); tick.pointee.data = me
        handles = [raw(check), raw(idle), raw(poll), raw(tick)]
        Node.raiseFileLimit(log: config.log)
        Node.warnIfReadableByOthers(config.dbPath, log: config.log)
        let say = config.log, metrics = config.metrics
        fanout.onError = { say($0) }
        if let metrics { fanout.onSent = { metrics.recordSent($0.session.takeSentCounts()) } }
        refreshRevocations()
        refreshSubscription()
        do { try log.setCertificateText(CertificateChain.text(config.credentials.chain)) } catch {
            config.log("recording this replica's certificate failed: \(error)")
        }
        checkCertificate()
        lastIOMillis = now()
        uv_check_start(check) { h in Node.from(h).afterPoll() }
        uv_timer_start(poll, { h in Node.from(h).pollDatabase() }, config.pollMillis, config.pollMillis)
        uv_timer_start(tick, { h in Node.from(h).onTick() }, 100, 100)
        if let listen = config.listen { try startListening(listen) }
        for address in config.peers {
            let d = Dialer(addresses: [address], node: self)
            dialers.append(d)
            dial(d)
        }
        if !config.servers.isEmpty {
            // A device spreads over its servers by its replica id, and fails over in order from there.
            let d = Dialer(addresses: config.servers, start: Int(log.replica.rawValue % UInt64(config.servers.count)), node: self)
            dialers.append(d)
            dial(d)
        }
        writeStatus()
        reportStatus(now: now(), force: true)
    }

    static func from<T>(_ h: UnsafeMutablePointer<T>?) -> Node {
        Unmanaged<Node>.fromOpaque(UnsafeMutableRawPointer(h!).assumingMemoryBound(to: uv_handle_t.self).pointee.data)
            .takeUnretainedValue()
    }

    func raw<T>(_ p: UnsafeMutablePointer<T>) -> UnsafeMutablePointer<uv_handle_t> {
        UnsafeMutableRawPointer(p).assumingMemoryBound(to: uv_handle_t.self)
    }

    /// Monotonic milliseconds (libuv's loop time) for every timeout: a wall clock stepped back by NTP must
    /// not make an elapsed time negative. Wall time (`SystemClock`) is used only for status.
    func now() -> UInt64 {
        uv_update_time(loop)
        return uv_now(loop)
    }

    /// A server holds a socket per device: the soft limit on open files is raised to the hard one (tens of
    /// thousands where the system allows), so the node is not cut off at 1,024 devices.
    static func raiseFileLimit(log: (String) -> Void) {
        var l = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &l) == 0, l.rlim_cur < l.rlim_max else { return }
        let old = l.rlim_cur
        l.rlim_cur = l.rlim_max
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &l) != 0 {
            log("open-file limit stays at \(old) (raising it to \(l.rlim_max) failed): at most about that many peers")
        }
    }

    /// A database others on the machine can read holds every user's data for them to copy: the node says so
    /// at start (a new database is made 0600; an older one, or one copied with another mode, may not be).
    static func warnIfReadableByOthers(_ path: String, log: (String) -> Void) {
        var st = stat()
        guard stat(path, &st) == 0, st.st_mode & 0o077 != 0 else { return }
        let mode = String(st.st_mode & 0o777, radix: 8)
        log("warning: \(path) is readable by other users of this machine (mode \(mode)); it holds users' data: chmod 600 \(path) \(path)-wal \(path)-shm")
    }

    /// Keeps the loop spinning (an active idle handle makes poll return at once) while there is more to do.
    func setIdle(_ on: Bool) {
        if on && !idleActive {
            uv_idle_start(idle) { _ in }
            idleActive = true
        } else if !on && idleActive {
            uv_idle_stop(idle)
            idleActive = false
        }
    }

    // MARK: Shutdown

    /// Stops accepting, commits what has arrived, tells peers, closes every handle; the loop then ends.
    func shutdown() {
        guard !stopping else { return }
        stopping = true
        stoppingSince = now()
        commitPending()                     // what has arrived is stored and acknowledged; nothing new is sent
        for peer in Array(peers.values) { perform(peer, peer.session.abort(.shutdown, "node shutting down")) }
        for (_, c) in connecting { c.conn.close("node shutting down") }
        writeStatus(stopped: true)
        // Peers that do not read their error frame are closed by force after the grace period.
        let grace = UnsafeMutablePointer<uv_timer_t>.allocate(capacity: 1)
        uv_timer_init(loop, grace)
        grace.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        graceTimer = grace
        uv_timer_start(grace, { t in
            let node = Node.from(t)
            for peer in Array(node.peers.values) { peer.conn.close("shutdown: closed by force") }
            uv_close(UnsafeMutableRawPointer(t!).assumingMemoryBound(to: uv_handle_t.self), nil)
        }, config.closeGraceMillis, 0)
        finishShutdownIfIdle()
        for h in handles where uv_is_closing(h) == 0 {
            uv_close(h) { h in
                // The node owns these handles; memory is freed after the loop ends (see `release`).
                _ = h
            }
        }
    }

    /// During shutdown, once every connection is closed the grace timer is not needed: close it so the
    /// loop can end at once.
    func finishShutdownIfIdle() {
        guard stopping, peers.isEmpty, connecting.isEmpty, let g = graceTimer else { return }
        let h = UnsafeMutableRawPointer(g).assumingMemoryBound(to: uv_handle_t.self)
        if uv_is_closing(h) == 0 { uv_close(h, nil) }
    }

    /// Frees handle memory once the loop has stopped running.
    func release() {
        graceTimer?.deallocate()
        for h in handles { UnsafeMutableRawPointer(h).deallocate() }
        handles = []
        log.close()
    }
}

// Confined to the loop thread.
@available(*, unavailable)
extension Node: Sendable {}
