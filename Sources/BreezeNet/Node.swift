internal import CLibUV
import BreezeCore
import BreezeStore
import BreezeSync
import BreezeCrypto
@preconcurrency import Glibc

/// A replica node: one libuv loop on its own thread does all socket work for every peer, runs one
/// `SyncSession` per connection and carries out its actions.
///
/// - Group commit: events received from all peers during one loop iteration are stored in one transaction
///   (`EventLog.ingest(groups:)`, from a `uv_check` handle that runs after each poll); each batch is
///   acknowledged only after that commit.
/// - Sending: each session scans the log from its cursor (`EventLog.page`) and sends what its peer lacks, with
///   at most `window` batches unacknowledged, so memory stays bounded whatever the backlog. Catch-up and live
///   push are the same path: events committed here, by a peer, or by another process (noticed by polling
///   `PRAGMA data_version`) extend the log, and every session scans on.
/// - Peers given with `--peer` are dialled and redialled with exponential backoff and jitter.
/// - What the node knows of its peers is written to the database every second for `breeze status`.
///
/// Everything here runs on the loop thread; `NodeHandle` is the only object other threads touch.
final class Node {
    let config: NodeConfig
    /// A dialled session that stays up this long resets its dialler's backoff (`closed`).
    static let lastingSessionMillis: UInt64 = 5_000
    let loop: UnsafeMutablePointer<uv_loop_t>
    let log: EventLog
    private var server: UnsafeMutablePointer<uv_tcp_t>?
    private(set) var listenAddress: String?
    private var peers: [ObjectIdentifier: Peer] = [:]
    /// Inbound peers in accept order from `handshakingHead` on; those no longer in their handshake (flag
    /// `handshaking` off) are skipped and compacted away lazily, so an accept costs O(1), not a scan of
    /// every peer, during an accept storm. `handshakingCount` counts the live ones.
    private var handshakeQueue: [Peer] = []
    private var handshakingHead = 0
    private var handshakingCount = 0
    /// Connections dropped to make room for newcomers since the last summary line (logged once a second
    /// rather than one line each during an accept storm).
    private var evictedSinceLog = 0
    /// Peers whose session has become ready: the only ones `pump` has to look at.
    private var readyPeers: [ObjectIdentifier: Peer] = [:]
    private var dialers: [Dialer] = []
    private var pending: [(peer: Peer, batch: UInt64, events: [Event], signatures: [Int: OriginSignature])] = []
    /// Outbound connections not yet established, with when they started (closed on timeout or shutdown).
    private var connecting: [ObjectIdentifier: (conn: Connection, started: UInt64)] = [:]
    /// When shutdown began.
    private var stoppingSince: UInt64?
    /// Fires `closeGraceMillis` after shutdown began and closes by force what is still open.
    private var graceTimer: UnsafeMutablePointer<uv_timer_t>?
    private var lastDataVersion: Int64 = -1
    /// The revocations this node enforces (the `device.revoke` events of its log that verify against its
    /// authority) and the log position they were read up to.
    private var revocations: Revocations
    private var revocationsSeq: Int64 = 0
    private let lookups: SessionLookups
    /// This replica's interests, resolved (sync.md 6.7): the fact streams it subscribes to, nil for all.
    private let interests = InterestResolver()
    private var subscription: Set<StreamID>?
    private var stopping = false
    private var handles: [UnsafeMutablePointer<uv_handle_t>] = []
    /// The stop and signal handles, closed last.
    var extraHandles: [UnsafeMutableRawPointer] = []
    private let check: UnsafeMutablePointer<uv_check_t>
    private let idle: UnsafeMutablePointer<uv_idle_t>
    private var idleActive = false
    private let poll: UnsafeMutablePointer<uv_timer_t>
    private let tick: UnsafeMutablePointer<uv_timer_t>
    private let startedMillis: UInt64
    private var rng = SystemRandomNumberGenerator()

    /// One connected (or connecting) peer.
    final class Peer {
        let conn: Connection
        var session: SyncSession
        let address: String
        let dialer: Dialer?
        let openedMillis: UInt64
        var lastReceivedMillis: UInt64
        var lastSentMillis: UInt64
        var note: String?
        /// When the session became ready (for the vectors timeout).
        var readyMillis: UInt64?
        /// An inbound peer still in its handshake and not closing (counted against `maxUnauthenticated`).
        var handshaking = false
        /// Dropped to make room for a newcomer: counted in a summary instead of a log line of its own.
        var evicted = false
        /// Acknowledgements counted at the last check, and when that count last moved (or nothing was in flight).
        var acksSeen = 0
        var ackProgressMillis: UInt64 = 0
        /// The control-message budget (ping, pong, vectors, reset): a token bucket holding at most
        /// `maxControlPerSecond` tokens, refilled at that many a second; each control message takes one.
        var controlTokens: Double
        var controlRefilledMillis: UInt64
        /// Messages decoded but not yet handled because the budget ran out; the socket is not read while
        /// any are held, so a flooding peer's sends block in its own kernel buffers.
        var held: ArraySlice<Message> = []
        /// When the peer ran out of budget first in the current stretch of flooding (nil once its bucket
        /// has filled up again); a stretch longer than `floodCloseMillis` closes the connection.
        var throttledSince: UInt64?
        init(conn: Connection, session: SyncSession, address: String, dialer: Dialer?, now: UInt64, controlBudget: Int) {
            self.conn = conn; self.session = session; self.address = address; self.dialer = dialer
            openedMillis = now; lastReceivedMillis = now; lastSentMillis = now
            controlTokens = Double(controlBudget); controlRefilledMillis = now
        }
    }

    /// A configured peer address that this node keeps dialling.
    final class Dialer {
        let address: String
        var attempt = 0
        var peer: Peer?
        var timer: UnsafeMutablePointer<uv_timer_t>?
        var lastError: String?
        var lastStatus: PeerStatus?
        weak var node: Node?
        init(address: String, node: Node) { self.address = address; self.node = node }
    }

    init(config: NodeConfig, loop: UnsafeMutablePointer<uv_loop_t>) throws {
        self.config = config
        self.loop = loop
        var o = EventLog.Options()
        o.durability = config.durability
        o.wallClock = config.wallClock
        log = try EventLog.open(at: config.dbPath, options: o)
        lookups = SessionLookups(log: log)
        guard config.credentials.replica == log.replica else {
            log.close()
            throw NodeError("the certificate is for replica \(config.credentials.replica), but \(config.dbPath) is replica \(log.replica)")
        }
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
        refreshRevocations()
        refreshSubscription()
        uv_check_start(check) { h in Node.from(h).afterPoll() }
        uv_timer_start(poll, { h in Node.from(h).pollDatabase() }, config.pollMillis, config.pollMillis)
        uv_timer_start(tick, { h in Node.from(h).onTick() }, 100, 100)
        if let listen = config.listen { try startListening(listen) }
        for address in config.peers {
            let d = Dialer(address: address, node: self)
            dialers.append(d)
            dial(d)
        }
        writeStatus()
    }

    static func from<T>(_ h: UnsafeMutablePointer<T>?) -> Node {
        Unmanaged<Node>.fromOpaque(UnsafeMutableRawPointer(h!).assumingMemoryBound(to: uv_handle_t.self).pointee.data)
            .takeUnretainedValue()
    }

    private func raw<T>(_ p: UnsafeMutablePointer<T>) -> UnsafeMutablePointer<uv_handle_t> {
        UnsafeMutableRawPointer(p).assumingMemoryBound(to: uv_handle_t.self)
    }

    /// Monotonic milliseconds (libuv's loop time) for every timeout: a wall clock stepped back by NTP must
    /// not make an elapsed time negative. Wall time (`SystemClock`) is used only for status.
    private func now() -> UInt64 {
        uv_update_time(loop)
        return uv_now(loop)
    }

    // MARK: Listening and dialling

    private func startListening(_ address: String) throws {
        var addr = try SocketAddress.parse(address)
        let s = UnsafeMutablePointer<uv_tcp_t>.allocate(capacity: 1)
        uv_tcp_init(loop, s)
        s.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        server = s
        handles.append(raw(s))
        try withUnsafePointer(to: &addr) { a throws(UVError) in
            try a.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa throws(UVError) in
                try UVError.check(uv_tcp_bind(s, sa, 0), "bind \(address)")
            }
        }
        try UVError.check(uv_listen(UnsafeMutableRawPointer(s).assumingMemoryBound(to: uv_stream_t.self), 128) { server, status in
            let node = Node.from(server)
            guard status >= 0 else { node.config.log("accept failed: \(String(cString: uv_strerror(status)))"); return }
            node.accept()
        }, "listen on \(address)")
        var storage = sockaddr_storage()
        var len = Int32(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { uv_tcp_getsockname(s, $0, &len) }
        }
        listenAddress = SocketAddress.describe(&storage)
    }

    private func accept() {
        guard let server, !stopping else { return }
        let conn = Connection(loop: loop)
        let rc = uv_accept(UnsafeMutableRawPointer(server).assumingMemoryBound(to: uv_stream_t.self), conn.stream)
        guard rc == 0 else { conn.close("accept failed"); return }
        while handshakingCount >= config.maxUnauthenticated && handshakingHead < handshakeQueue.count {
            // Full: drop the connection that has been in its handshake longest (a real peer finishes in
            // milliseconds), rather than refuse every newcomer until the idle ones time out.
            let oldest = handshakeQueue[handshakingHead]
            handshakingHead += 1
            guard oldest.handshaking else { continue }
            leaveHandshake(oldest)
            oldest.evicted = true
            evictedSinceLog += 1
            oldest.conn.close("too many connections still authenticating; oldest dropped", reset: true)
        }
        let address = conn.peerName()
        guard let peer = attach(conn, role: .server, address: address, dialer: nil), !conn.closing else { return }
        peer.handshaking = true
        handshakingCount += 1
        handshakeQueue.append(peer)
        trimHandshakeQueue()
    }

    /// Lets go of the peers the queue no longer needs, so a storm of connections that authenticate or close
    /// quickly does not keep every `Peer` it ever made: those before `handshakingHead` (done with their
    /// handshake, or dropped), and, when most of the rest are done too (behind one slow handshake at the
    /// head), every peer no longer in its handshake.
    private func trimHandshakeQueue() {
        if handshakingHead == handshakeQueue.count {
            handshakeQueue.removeAll(keepingCapacity: handshakeQueue.count <= 4096)
            handshakingHead = 0
        } else if handshakeQueue.count - handshakingHead > 2 * max(handshakingCount, 64) {
            handshakeQueue = handshakeQueue[handshakingHead...].filter(\.handshaking)
            handshakingHead = 0
        } else if handshakingHead > max(64, handshakeQueue.count / 2) {
            handshakeQueue.removeFirst(handshakingHead)
            handshakingHead = 0
        }
    }

    /// Takes an inbound peer out of the handshake count (it authenticated, or it is closing).
    private func leaveHandshake(_ peer: Peer) {
        guard peer.handshaking else { return }
        peer.handshaking = false
        handshakingCount -= 1
    }

    private func dial(_ d: Dialer) {
        guard !stopping else { return }
        let addr: sockaddr_in
        do { addr = try SocketAddress.parse(d.address) } catch {
            d.lastError = error.description
            config.log("peer \(d.address): \(error)")
            return
        }
        let conn = Connection(loop: loop)
        connecting[ObjectIdentifier(conn)] = (conn, now())
        let req = UnsafeMutablePointer<uv_connect_t>.allocate(capacity: 1)
        req.pointee.data = Unmanaged.passRetained(ConnectContext(node: self, dialer: d, conn: conn)).toOpaque()
        var a = addr
        let rc = withUnsafePointer(to: &a) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                uv_tcp_connect(req, conn.handle, sa) { req, status in
                    let ctx = Unmanaged<ConnectContext>.fromOpaque(req!.pointee.data).takeRetainedValue()
                    req!.deallocate()
                    ctx.node.connected(ctx.dialer, ctx.conn, status: status)
                }
            }
        }
        if rc < 0 {
            Unmanaged<ConnectContext>.fromOpaque(req.pointee.data).release()
            req.deallocate()
            conn.close("connect failed")
            connected(d, nil, status: rc)
        }
    }

    private final class ConnectContext {
        let node: Node, dialer: Dialer, conn: Connection
        init(node: Node, dialer: Dialer, conn: Connection) { self.node = node; self.dialer = dialer; self.conn = conn }
    }

    private func connected(_ d: Dialer, _ conn: Connection?, status: Int32) {
        if let conn { connecting.removeValue(forKey: ObjectIdentifier(conn)) }
        defer { finishShutdownIfIdle() }
        guard status >= 0, let conn, !stopping, !conn.closing else {
            conn?.close("connect failed")
            d.lastError = "connect: \(String(cString: uv_strerror(status)))"
            scheduleRedial(d)
            return
        }
        attach(conn, role: .client, address: d.address, dialer: d)
    }

    private func scheduleRedial(_ d: Dialer) {
        guard !stopping else { return }
        let base = min(config.reconnectMaxMillis, config.reconnectMinMillis << UInt64(min(d.attempt, 20)))
        let delay = UInt64(Double(base) * Double.random(in: 0.5...1.0, using: &rng))
        d.attempt += 1
        if d.timer == nil {
            let t = UnsafeMutablePointer<uv_timer_t>.allocate(capacity: 1)
            uv_timer_init(loop, t)
            t.pointee.data = Unmanaged.passUnretained(d).toOpaque()   // `dialers` keeps it alive
            d.timer = t
            handles.append(raw(t))
        }
        uv_timer_start(d.timer!, { t in
            let d = Unmanaged<Dialer>.fromOpaque(t!.pointee.data).takeUnretainedValue()
            d.node?.dial(d)
        }, delay, 0)
    }

    @discardableResult
    private func attach(_ conn: Connection, role: SyncSession.Role, address: String, dialer: Dialer?) -> Peer? {
        var sc = SyncSession.Config(credentials: config.credentials)
        sc.batchEvents = config.batchEvents
        sc.window = config.window
        sc.wallClock = config.wallClock
        sc.revocations = revocations
        sc.aheadFloor = lookups.aheadFloor
        sc.storedSignature = lookups.signature
        // Certificates are checked against the real clock (not `wallClock`, which tests shift).
        let session = SyncSession(role: role, config: sc, ephemeralKey: SecureRandom.bytes(32), nowMillis: SystemClock.nowMillis())
        let peer = Peer(conn: conn, session: session,
                        address: address, dialer: dialer, now: now(), controlBudget: config.maxControlPerSecond)
        peers[ObjectIdentifier(peer)] = peer
        dialer?.peer = peer
        conn.onMessages = { [unowned self, unowned peer] result in self.received(peer, result) }
        conn.onClosed = { [unowned self, unowned peer] reason in self.closed(peer, reason) }
        do { try conn.startReading() } catch {
            conn.close(error.description)
            return nil
        }
        perform(peer, peer.session.start())
        return peer
    }

    // MARK: Session I/O

    private func received(_ peer: Peer, _ result: Result<[Message], FrameError>) {
        peer.lastReceivedMillis = now()
        switch result {
        case .success(let messages):
            // A peer that keeps sending but never reads its replies (acknowledgements) is dropped before
            // what waits for it outgrows twice the bound on log data queued for a peer.
            if peer.conn.queuedBytes > 2 * config.maxQueuedBytes {
                peer.conn.close("peer does not read its replies (\(peer.conn.queuedBytes) bytes queued)")
                return
            }
            if !peer.held.isEmpty {                 // (reading is paused, so this is only a safeguard)
                peer.held.append(contentsOf: messages)
                return
            }
            deliver(peer, messages[...])
        case .failure(let e):
            perform(peer, peer.session.receiveGarbage(e))
        }
    }

    /// Hands messages to the session in order while the peer's control budget lasts. When it runs out, the
    /// rest are held and the socket is no longer read (backpressure: the flood blocks in the peer's `send`
    /// and costs neither side CPU); `onTick` hands them on as the budget refills and reads again once none
    /// are held. Closing is kept for a peer that goes on flooding for `floodCloseMillis`.
    private func deliver(_ peer: Peer, _ messages: ArraySlice<Message>) {
        var rest = messages
        while var m = rest.first {
            guard peers[ObjectIdentifier(peer)] != nil, !peer.conn.closing else { peer.held = []; return }
            // A sealed frame is opened first, so its message counts against the budget like a plain one.
            switch peer.session.unseal(m) {
            case .message(let inner): m = inner; rest[rest.startIndex] = inner
            case .refused(let actions): peer.held = []; perform(peer, actions); return
            }
            switch m {
            case .ping, .pong, .vectors, .vectorsPart, .reset, .subscribe:
                let t = now()
                refillControlBudget(peer, now: t)
                guard peer.controlTokens >= 1 else {
                    peer.held = rest
                    if peer.throttledSince == nil { peer.throttledSince = t }
                    peer.conn.pauseReading()
                    return
                }
                peer.controlTokens -= 1
            default: break
            }
            rest = rest.dropFirst()
            perform(peer, peer.session.receive(m))
        }
        peer.held = []
        peer.conn.resumeReading()
    }

    private func refillControlBudget(_ peer: Peer, now t: UInt64) {
        let budget = Double(config.maxControlPerSecond)
        peer.controlTokens = min(budget, peer.controlTokens + Double(t > peer.controlRefilledMillis ? t - peer.controlRefilledMillis : 0) * budget / 1000)
        peer.controlRefilledMillis = t
    }

    /// Every tick: peers held back by their control budget get what has refilled; a stretch of flooding
    /// ends once a peer's bucket is full again, and one longer than `floodCloseMillis` closes.
    private func serveThrottled(now t: UInt64) {
        for peer in Array(peers.values) {
            guard let since = peer.throttledSince else { continue }
            if !peer.held.isEmpty {
                if t - since > config.floodCloseMillis {
                    peer.held = []
                    perform(peer, peer.session.abort(.unexpected, "flood: more than \(config.maxControlPerSecond) ping, pong, vectors or reset messages a second for \(config.floodCloseMillis) ms"))
                } else {
                    deliver(peer, peer.held)
                }
            } else {
                refillControlBudget(peer, now: t)
                if peer.controlTokens >= Double(config.maxControlPerSecond) { peer.throttledSince = nil }
            }
        }
    }

    private func perform(_ peer: Peer, _ actions: [SyncSession.Action]) {
        for a in actions {
            switch a {
            case .send(let m):
                peer.conn.send(Frame.encode(m))
                peer.lastSentMillis = now()
            case .close(let reason):
                leaveHandshake(peer)
                peer.note = reason
                peer.conn.closeAfterWriting(reason, now: now())
            case .authenticated(let replica, let scope):
                config.log("peer \(peer.address): authenticated replica \(replica), scope \(scope)")
                leaveHandshake(peer)
                readyPeers[ObjectIdentifier(peer)] = peer
                peer.conn.decoder.maxLength = Frame.maxLength
                peer.conn.decoder.stopsAfterHandshake = false
                peer.readyMillis = now()
                perform(peer, peer.session.subscribe(subscription))
                sendVectors(peer)
                statusChanged = true
            case .ingest(let batch, let events, let signatures):
                pending.append((peer, batch, events, signatures))
            case .rescan:
                checkRestored(peer)
                wake()
            case .resendVectors:
                sendVectors(peer)
            }
        }
    }

    /// A cluster peer's vectors say it holds counters of this replica's current origin beyond what this
    /// database holds: the database was restored from a backup (or copied) while the replica ran on, in the
    /// same boot (a later boot starts a new epoch anyway). Its next writes would take ids the cluster holds
    /// with other content, so a new epoch starts at once (`EventLog.startNewEpoch`), and what the peer holds
    /// of the old one comes back as another incarnation's events (sync.md 6.6). Only the cluster is believed:
    /// a device could make this replica start epochs at will.
    private func checkRestored(_ peer: Peer) {
        guard peer.session.grants?.peerIsCluster == true else { return }
        let origin = log.origin
        let ahead = peer.session.peerVectors.lazy.map { ($0.key, $0.value[origin]) }.filter { $0.1 > 0 }
        guard !ahead.isEmpty else { return }
        do {
            let held = try log.heads(of: origin)
            guard let (stream, theirs) = ahead.first(where: { $0.1 > held[$0.0, default: 0] }) else { return }
            let epoch = try log.startNewEpoch()
            config.log("peer \(peer.address) holds \(stream) of this replica's origin \(origin) up to counter \(theirs), this database only up to \(held[stream, default: 0]): restored from a backup or copied; new epoch \(epoch), so no id is issued twice")
        } catch {
            config.log("checking the peer's vectors against this database failed: \(error)")
        }
    }

    private func sendVectors(_ peer: Peer) {
        do {
            perform(peer, peer.session.sendVectors(local: try log.versionVectors()))
        } catch {
            perform(peer, peer.session.storageFailed("\(error)"))
        }
    }

    private func closed(_ peer: Peer, _ reason: String) {
        peers.removeValue(forKey: ObjectIdentifier(peer))
        leaveHandshake(peer)
        readyPeers.removeValue(forKey: ObjectIdentifier(peer))
        if !peer.evicted { config.log("peer \(peer.address): disconnected (\(reason))") }
        if peer.readyMillis == nil { config.metrics?.recordRefused(reason: peer.evicted ? "evicted" : "handshake") }
        if let d = peer.dialer {
            // The backoff starts again only after a session that lasted: one refused or ended soon after
            // its handshake (a grant the peer refuses, a revoked certificate) keeps backing off instead of
            // redialling at once, forever.
            if let ready = peer.readyMillis, now() >= ready + Self.lastingSessionMillis { d.attempt = 0 }
            d.lastStatus = status(of: peer, connected: false)
            d.lastError = reason
            d.peer = nil
            scheduleRedial(d)
        }
        // Status lists authenticated and dialled peers only: an unauthenticated one (an idle socket, a
        // garbage sender) going away changes nothing shown, and costs no database write.
        if stopping { finishShutdownIfIdle() } else if peer.readyMillis != nil || peer.dialer != nil { statusChanged = true }
    }

    /// During shutdown, once every connection is closed the grace timer is not needed: close it so the
    /// loop can end at once.
    private func finishShutdownIfIdle() {
        guard stopping, peers.isEmpty, connecting.isEmpty, let g = graceTimer else { return }
        let h = UnsafeMutableRawPointer(g).assumingMemoryBound(to: uv_handle_t.self)
        if uv_is_closing(h) == 0 { uv_close(h, nil) }
    }

    // MARK: The loop's work

    /// After each poll: commit what arrived (group commit), acknowledge, then let sessions send.
    private func afterPoll() {
        commitPending()
        if !stopping { pump() }
    }

    /// Group commit: stores every batch received since the last call in one transaction, then acknowledges.
    ///
    /// Relay before sync: the transaction commits without its fsync, so the new events are visible to this
    /// node's other sessions, which send them on at once (the next replica of a chain need not wait for this
    /// one's disk); then the write-ahead log is synced, and only then is anything acknowledged or an
    /// in-process observer told. A power cut in between loses at most events no peer was told are stored
    /// here (a peer that received them keeps them; the sender still holds them unacknowledged).
    private func commitPending() {
        if !pending.isEmpty {
            let work = pending
            pending = []
            let started = SystemClock.monotonicNanos()
            do {
                // A device's session may start only so many incarnations of one replica, and lifts no
                // ahead floor beyond a day (sync.md 6.6); the cluster's are not bounded.
                let reports = try log.ingest(groups: work.map(\.events), source: work.count == 1 ? work[0].peer.address : "peers",
                                             syncLater: true,
                                             fromDevice: work.map { !($0.peer.session.grants?.peerIsCluster ?? false) },
                                             signatures: work.map(\.signatures))
                let inserted = reports.reduce(0) { $0 + $1.inserted }
                skipOwnEvents(work.map(\.peer), reports)
                if inserted > 0 {
                    refreshRevocations()
                    refreshSubscription()
                    applyHorizon()
                    if !stopping { pump() }
                    try log.syncWAL()
                    config.onCommit?(inserted)
                }
                config.metrics?.recordCommit(work.map(\.events), reports, seconds: Double(SystemClock.monotonicNanos() - started) / 1e9)
                for (w, r) in zip(work, reports) where peers[ObjectIdentifier(w.peer)] != nil {
                    if r.conflicts > 0 || r.invalid > 0 {
                        config.log("peer \(w.peer.address): batch \(w.batch): \(r.conflicts) conflicting events refused, \(r.invalid) misplaced events stored flagged")
                    }
                    if r.refusedHostile {
                        // Events under this replica's own origin that it never wrote, or one incarnation too
                        // many of some replica: the sender is forging or broken. Nothing of those was stored.
                        perform(w.peer, w.peer.session.abort(.forbidden, "batch \(w.batch): \(r.forged) events under this replica's own origin that it never wrote, \(r.overOriginLimit) events starting an origin beyond \(EventLog.maxOriginsPerReplica) of one replica in a stream; refused"))
                        continue
                    }
                    perform(w.peer, w.peer.session.committed(batch: w.batch, inserted: r.inserted,
                                                             duplicates: r.duplicates, gaps: r.gaps))
                }
            } catch {
                config.log("storing received events failed: \(error)")
                for w in work where peers[ObjectIdentifier(w.peer)] != nil {
                    perform(w.peer, w.peer.session.storageFailed("\(error)"))
                }
            }
        }
    }

    /// When every event a commit stored came from one peer, that peer's scan steps over them rather than
    /// read them back to find it holds them all (a catch-up's receiver otherwise reads its whole log twice).
    private func skipOwnEvents(_ senders: [Peer], _ reports: [EventLog.IngestReport]) {
        var from: Peer?, lower = Int64.max, upper = Int64.min
        for (peer, r) in zip(senders, reports) {
            guard let seqs = r.seqs else {
                if r.inserted > 0 { return }    // stored, with seqs unknown
                continue
            }
            if let f = from, f !== peer { return }
            from = peer
            lower = min(lower, seqs.lowerBound)
            upper = max(upper, seqs.upperBound)
        }
        guard let peer = from, readyPeers[ObjectIdentifier(peer)] != nil else { return }
        peer.session.storedFromPeer(lower...upper)
    }

    /// Reads the revocations that reached the log since the last look (from a peer, or written by another
    /// process on this database, such as `breeze authority revoke`). One that holds ends at once every session
    /// whose peer chain it revokes, and every later handshake of that chain fails; one that does not verify
    /// against this node's authority is logged and not enforced.
    private func refreshRevocations() {
        let rows: [(seq: Int64, revocation: Result<Revocation, DecodingError>)]
        do { rows = try log.revocations(afterSeq: revocationsSeq) } catch {
            config.log("reading revocations failed: \(error)")
            return
        }
        var added = false
        for (seq, read) in rows {
            revocationsSeq = seq
            let r: Revocation
            switch read {
            case .success(let held): r = held
            case .failure(let error):
                config.log("revocation (seq \(seq)) not enforced: its payload does not decode (\(error))")
                continue
            }
            if let why = revocations.refusal(r) {
                config.log("revocation of key \(CertificateChain.fingerprint(r.key)) (seq \(seq)) not enforced: \(why)")
            } else if revocations.add(r) {
                added = true
                config.log("revocation of key \(CertificateChain.fingerprint(r.key)) (replica \(r.replica)) enforced from now")
            }
        }
        guard added else { return }
        for peer in Array(peers.values) {
            peer.session.revocationsChanged(revocations)
            guard let device = peer.session.peerCertificate, let r = revocations.revocation(of: peer.session.peerChain) else { continue }
            let why = SyncSession.revokedMessage(device, r)
            config.log("peer \(peer.address): closing: \(why)")
            perform(peer, peer.session.abort(.authentication, why))
        }
    }

    /// Resolves this replica's interests again (sync.md 6.7: a favourite starred, a sensor registered in a
    /// circle, `breeze interest add` by another process) and, when they name other streams, drops the fact
    /// streams no longer named and tells every peer. Cheap when nothing changed: the interests are one row,
    /// registrations are read only when new ones arrived.
    private func refreshSubscription() {
        let user: String?
        if case .user(let id) = config.credentials.scope { user = id } else { user = nil }
        let next: Set<StreamID>?
        do { next = try interests.subscription(log, user: user) } catch {
            config.log("resolving this replica's interests failed: \(error)")
            // Fail closed: a device whose interests cannot be resolved asks for no fact stream rather than
            // the whole city (nothing it holds is dropped for it).
            if subscription == nil, (try? log.interests().isEmpty) == false {
                subscription = []
                for peer in readyPeers.values { perform(peer, peer.session.subscribe([])) }
            }
            return
        }
        guard next != subscription || dropPending else { return }
        let changed = next != subscription
        subscription = next
        dropPending = false
        if let next {
            do {
                let unwanted = try log.heldFactStreams().filter { !next.contains($0) }
                if !unwanted.isEmpty {
                    let n = try log.dropFactStreams(unwanted)
                    config.log("interests: \(next.count) streams wanted; dropped \(unwanted.count) no longer wanted (\(n) events)")
                    config.onCommit?(0)
                } else if changed {
                    config.log("interests: \(next.count) streams wanted")
                }
            } catch {
                dropPending = true     // tried again at the next commit or poll
                config.log("dropping the streams the interests no longer name failed: \(error)")
            }
        } else if changed {
            config.log("interests: none, every stream wanted")
        }
        if changed { for peer in readyPeers.values { perform(peer, peer.session.subscribe(next)) } }
    }
    /// A drop of streams no longer named failed (a busy database): `refreshSubscription` tries again.
    private var dropPending = false

    /// Lets every session with room in its window read the log and send.
    private func pump() {
        var more = false
        for peer in readyPeers.values {
            var rounds = 0, reads = 0
            // Streams the peer subscribed to after its scan began: read by stream first (sync.md 6.7), at
            // most 64 reads per pump (a peer may name thousands of streams, most empty here), the rest at
            // the next turn of the loop.
            while peer.session.wantsEvents, let s = peer.session.catchingUp.first,
                  peer.conn.queuedBytes < config.maxQueuedBytes && rounds < 4 && reads < 64 {
                reads += 1
                let rows: [Event]
                do { rows = try log.streamEvents(s, beyond: peer.session.peerVectors[s] ?? VersionVector(), limit: peer.session.readLimit) } catch {
                    config.log("reading stream \(s) failed: \(error)")
                    perform(peer, peer.session.storageFailed("reading stream \(s) failed"))
                    break
                }
                let actions = rows.isEmpty ? [] : peer.session.offer(stream: s, rows)
                if actions.isEmpty { peer.session.caughtUp(s); continue }
                perform(peer, actions)
                rounds += 1
            }
            if (rounds == 4 || reads == 64) && peer.session.wantsEvents { more = true }
            while peer.session.wantsEvents && peer.conn.queuedBytes < config.maxQueuedBytes && rounds < 4 {
                let limit = peer.session.readLimit
                let rows: [EventLog.Entry]
                do { rows = try log.page(afterSeq: peer.session.cursor, limit: limit) } catch {
                    config.log("reading the log failed: \(error)")
                    // A damaged row is never sent; end the session (the peer redials with backoff) rather
                    // than retry the same read at every poll.
                    if let e = error as? StoreError, e ~= .corrupt {
                        perform(peer, peer.session.storageFailed("the sending replica's database is damaged"))
                    }
                    break
                }
                guard let last = rows.last else { break }
                let before = config.metrics == nil ? [:] : peer.session.peerVectors
                perform(peer, peer.session.offer(rows.map { ($0.seq, $0.event) }, scannedTo: last.seq))
                config.metrics?.recordSent(before: before, after: peer.session.peerVectors)
                rounds += 1
                if rounds == 4 && peer.session.wantsEvents { more = true }
            }
        }
        setIdle(more)
    }

    /// Keeps the loop spinning (an active idle handle makes poll return at once) while sessions have more to send.
    private func setIdle(_ on: Bool) {
        if on && !idleActive {
            uv_idle_start(idle) { _ in }
            idleActive = true
        } else if !on && idleActive {
            uv_idle_stop(idle)
            idleActive = false
        }
    }

    private func wake() { setIdle(true) }

    /// `NodeHandle.wake()`: this process committed events (through another connection), so scan now.
    func localCommit() {
        guard !stopping else { return }
        refreshSubscription()
        pump()
    }

    /// Notices commits by other processes (the CLI writing to this database).
    private func pollDatabase() {
        guard let v = try? log.dataVersion() else { return }
        if v != lastDataVersion {
            lastDataVersion = v
            refreshRevocations()
            refreshSubscription()
            pump()
        }
    }

    private var lastSecondMillis: UInt64 = 0
    /// Set when what `breeze status` shows has changed; written at the next tick, so peers coming and going
    /// cost at most ten status transactions a second whatever their rate.
    private var statusChanged = false

    /// Every 100 ms: a handshake past its timeout is ended at once (a slow sender is gone within 0.1 s of
    /// the timeout, not up to a second later); the rest of the housekeeping runs once a second.
    private func onTick() {
        let t = now()
        serveThrottled(now: t)
        // Inbound handshakes are queued in accept order, so only the expired head of the queue is looked at
        // (not every peer, ten times a second, while hundreds of idle sockets wait).
        while handshakingHead < handshakeQueue.count {
            let peer = handshakeQueue[handshakingHead]
            if peer.handshaking {
                guard t - peer.openedMillis > config.handshakeTimeoutMillis else { break }
                perform(peer, peer.session.abort(.timeout, "no handshake within \(config.handshakeTimeoutMillis) ms"))
                if peer.handshaking {           // (the session was already closed: close the socket here)
                    leaveHandshake(peer)
                    peer.conn.close("no handshake within \(config.handshakeTimeoutMillis) ms")
                }
            }
            handshakingHead += 1
        }
        trimHandshakeQueue()
        for d in dialers {
            guard let peer = d.peer, peer.readyMillis == nil, t - peer.openedMillis > config.handshakeTimeoutMillis,
                  peer.session.state != .ready && peer.session.state != .closed else { continue }
            perform(peer, peer.session.abort(.timeout, "no handshake within \(config.handshakeTimeoutMillis) ms"))
        }
        if t - lastSecondMillis >= 1000 {
            lastSecondMillis = t
            everySecond()
        } else if statusChanged {
            writeStatus()
        }
    }

    /// Applies this replica's horizon (sync.md 6.8): after commits that brought readings, and once a
    /// minute as the cutoff moves. Nothing without a horizon (a server keeps everything unless told).
    private func applyHorizon() {
        // A cluster replica keeps everything: one with gaps could not give a new peer what it lacks.
        guard config.credentials.scope != .cluster else {
            if !horizonRefusalLogged, (try? log.horizonSetting()).flatMap({ $0 }).map({ $0 > 0 }) == true {
                horizonRefusalLogged = true
                config.log("horizon: not applied on a cluster replica (it keeps every reading for its peers); set it on devices")
            }
            return
        }
        do {
            let r = try log.applyHorizon(nowSeconds: Int64(config.wallClock() / 1000))
            if r.dropped > 0, let c = r.cutoff {
                config.log("horizon: dropped \(r.dropped) reading events older than \(ISOTime.format(millis: c * 1000))")
                config.onCommit?(0)
            }
        } catch {
            config.log("applying the horizon failed: \(error)")
        }
    }
    private var lastHorizonMillis: UInt64 = 0
    private var horizonRefusalLogged = false

    private func everySecond() {
        let t = now()
        if t - lastHorizonMillis >= 60_000 {
            lastHorizonMillis = t
            applyHorizon()
        }
        if evictedSinceLog > 0 {
            config.log("\(evictedSinceLog) connections still authenticating dropped (at most \(config.maxUnauthenticated) at once; the oldest go first)")
            evictedSinceLog = 0
        }
        for (_, c) in connecting where t - c.started > config.handshakeTimeoutMillis {
            c.conn.close("connect timed out after \(config.handshakeTimeoutMillis) ms")
        }
        for peer in Array(peers.values) {
            if let since = peer.conn.closeRequestedMillis {
                // A peer that stopped reading keeps a write pending forever: close it by force.
                if t - since > config.closeGraceMillis { peer.conn.close("peer stopped reading; closed by force") }
                continue
            }
            if peer.session.state != .ready {
                if t - peer.openedMillis > config.handshakeTimeoutMillis {
                    perform(peer, peer.session.abort(.timeout, "no handshake within \(config.handshakeTimeoutMillis) ms"))
                }
            } else if t - peer.lastReceivedMillis > config.idleTimeoutMillis {
                perform(peer, peer.session.abort(.timeout, "nothing received for \(config.idleTimeoutMillis) ms"))
            } else if peer.session.awaitingVectors, let r = peer.readyMillis, t - r > config.handshakeTimeoutMillis {
                perform(peer, peer.session.abort(.timeout, "no vectors within \(config.handshakeTimeoutMillis) ms of ready"))
            } else if ackOverdue(peer, now: t) {
                perform(peer, peer.session.abort(.timeout, "no acknowledgement for \(config.ackTimeoutMillis) ms"))
            } else {
                // Gaps refused too soon after the last vectors: their resync is due now.
                perform(peer, peer.session.resyncIfDue())
                if t - peer.lastSentMillis >= config.pingIntervalMillis { perform(peer, peer.session.send(.ping(t))) }
            }
        }
        writeStatus()
    }

    /// True when batches have been waiting for an acknowledgement for longer than `ackTimeoutMillis`.
    private func ackOverdue(_ peer: Peer, now t: UInt64) -> Bool {
        if peer.session.acksReceived != peer.acksSeen || peer.session.unacknowledged == 0 || peer.ackProgressMillis == 0 {
            peer.acksSeen = peer.session.acksReceived
            peer.ackProgressMillis = t
            return false
        }
        return t - peer.ackProgressMillis > config.ackTimeoutMillis
    }

    /// The wall-clock time of a loop (monotonic) time, for display.
    private func wallTime(ofLoopTime t: UInt64) -> UInt64 {
        let wall = SystemClock.nowMillis(), n = now()
        return wall - min(wall, n - min(n, t))
    }

    private func status(of peer: Peer, connected: Bool) -> PeerStatus {
        PeerStatus(address: peer.address, direction: peer.dialer == nil ? "inbound" : "outbound",
                   replica: peer.session.peerReplica?.description, scope: peer.session.grants?.scope.description,
                   connected: connected && peer.session.state == .ready,
                   lastContactMillis: wallTime(ofLoopTime: peer.lastReceivedMillis),
                   vectors: peer.session.peerVectors, sent: peer.session.sentEvents,
                   received: peer.session.receivedEvents, note: peer.note)
    }

    func writeStatus(stopped: Bool = false) {
        statusChanged = false
        var list: [PeerStatus] = []
        for peer in peers.values where peer.session.state == .ready || peer.dialer != nil {
            list.append(status(of: peer, connected: true))
        }
        for d in dialers where d.peer == nil {
            var s = d.lastStatus ?? PeerStatus(address: d.address, direction: "outbound", connected: false)
            s.connected = false
            s.note = d.lastError
            list.append(s)
        }
        let wall = SystemClock.nowMillis()
        let hb = NodeHeartbeat(pid: getpid(), listen: listenAddress ?? "", startedMillis: startedMillis,
                               heartbeatMillis: wall, stoppedMillis: stopped ? wall : nil)
        do { try log.recordPeers(list, heartbeat: hb) } catch { config.log("writing peer status failed: \(error)") }
        guard config.onStatus != nil || config.metrics != nil else { return }
        let local = (try? log.versionVectors()) ?? [:]
        config.onStatus?(NodeStatus(listenAddress: listenAddress, running: !stopped, peers: list, localVectors: local))
        config.metrics?.recordPeers(peers.values.compactMap { p in
            guard p.session.state == .ready, let grants = p.session.grants else { return nil }
            let lag = local.reduce(0) { n, s in grants.peerMayRead(s.key) ? n + (p.session.peerVectors[s.key] ?? VersionVector()).missing(from: s.value) : n }
            return NodeMetrics.Peer(address: p.address, direction: p.dialer == nil ? "inbound" : "outbound",
                                    replica: p.session.peerReplica?.description, lagEvents: lag)
        })
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
