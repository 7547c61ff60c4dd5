internal import CLibUV
import BreezeCore
import BreezeStore
import BreezeSync
import BreezeCrypto
@preconcurrency import Glibc

/// Listening, dialling, and each session's input and actions.
extension Node {
    // MARK: Listening

    /// The listen backlog asked of the kernel (it keeps the lower of this and `net.core.somaxconn`): connections
    /// a crowd dials at once wait there while the node works through handshakes, instead of being refused.
    static let listenBacklog: Int32 = 8192

    func startListening(_ address: String) throws {
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
        try UVError.check(uv_listen(UnsafeMutableRawPointer(s).assumingMemoryBound(to: uv_stream_t.self), Node.listenBacklog) { server, status in
            let node = Node.from(server)
            guard status >= 0 else { node.config.log("accept failed: \(String(cString: uv_strerror(status)))"); return }
            node.acceptPending = true
            node.admitPending()
        }, "listen on \(address)")
        var storage = sockaddr_storage()
        var len = Int32(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { uv_tcp_getsockname(s, $0, &len) }
        }
        listenAddress = SocketAddress.describe(&storage)
    }

    /// Accepts the connection waiting, if the handshake queue lets it in now (`HandshakeQueue.admit`). When
    /// it does not, the connection stays in the kernel's queue and libuv stops watching the listening socket
    /// until the next accept, which a handshake ending or the tick (the oldest aging) brings.
    func admitPending() {
        guard acceptPending, let server else { return }
        guard !stopping else { acceptPending = false; return }
        switch handshakes.admit(now: now()) {
        case .wait:
            return
        case .evict(let id):
            // The oldest still in its handshake goes (a real peer finishes in milliseconds; an idle socket
            // sends nothing), with a TCP reset, counted in a summary line.
            handshakes.leave(id)
            if let oldest = peers[id] {
                oldest.evicted = true
                evictedSinceLog += 1
                oldest.conn.close("too many connections still authenticating; oldest dropped", reset: true)
            }
        case .accept:
            break
        }
        acceptPending = false
        let conn = Connection(loop: loop)
        let rc = uv_accept(UnsafeMutableRawPointer(server).assumingMemoryBound(to: uv_stream_t.self), conn.stream)
        guard rc == 0 else { conn.close("accept failed"); return }
        let address = conn.peerName()
        guard let peer = attach(conn, role: .server, address: address, dialer: nil), !conn.closing else { return }
        handshakes.enter(peer.id, now: peer.openedMillis)
    }

    /// Takes a peer out of the handshake queue (it authenticated, or it is closing) and lets the next
    /// connection waiting in the kernel's queue in.
    func leaveHandshake(_ peer: Peer) {
        guard handshakes.contains(peer.id) else { return }
        handshakes.leave(peer.id)
        admitPending()
    }

    // MARK: Dialling

    func dial(_ d: Dialer) {
        guard !stopping else { return }
        let addr: sockaddr_in
        do { addr = try SocketAddress.parse(d.address) } catch {
            d.lastError = error.description
            config.log("peer \(d.address): \(error)")
            if d.addresses.count > 1 { scheduleRedial(d) }
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
            connecting.removeValue(forKey: ObjectIdentifier(conn))
            conn.close("connect failed")
            connected(d, nil, status: rc)
        }
    }

    final class ConnectContext {
        let node: Node, dialer: Dialer, conn: Connection
        init(node: Node, dialer: Dialer, conn: Connection) { self.node = node; self.dialer = dialer; self.conn = conn }
    }

    func connected(_ d: Dialer, _ conn: Connection?, status: Int32) {
        if let conn { connecting.removeValue(forKey: ObjectIdentifier(conn)) }
        defer { finishShutdownIfIdle() }
        guard status >= 0, let conn, !stopping, !conn.closing else {
            conn?.close("connect failed")
            d.lastError = "connect \(d.address): \(String(cString: uv_strerror(status)))"
            scheduleRedial(d)
            return
        }
        attach(conn, role: .client, address: d.address, dialer: d)
    }

    func scheduleRedial(_ d: Dialer) {
        guard !stopping else { return }
        let was = d.address
        let delay = d.failed(minMillis: config.reconnectMinMillis, maxMillis: config.reconnectMaxMillis,
                             unit: Double.random(in: 0..<1, using: &rng))
        if d.address != was { config.log("server \(was) unavailable; next: \(d.address)") }
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

    // MARK: Sessions

    @discardableResult
    func attach(_ conn: Connection, role: SyncSession.Role, address: String, dialer: Dialer?) -> Peer? {
        var sc = SyncSession.Config(credentials: credentials)
        sc.batchEvents = config.batchEvents
        sc.window = config.window
        sc.wallClock = config.wallClock
        sc.revocations = revocations
        sc.aheadFloor = lookups.aheadFloor
        sc.storedSignature = lookups.signature
        sc.countsSentByStream = config.metrics != nil
        sc.knownKey = lookups.knownKey
        sc.heldVector = lookups.heldVector
        sc.retiredRange = lookups.retiredRange
        // Certificates are checked against the real clock (not `wallClock`, which tests shift).
        let session = SyncSession(role: role, config: sc, ephemeralKey: SecureRandom.bytes(32), nowMillis: SystemClock.nowMillis())
        let id = nextPeerID
        nextPeerID += 1
        let peer = Peer(node: self, conn: conn, session: session, address: address, dialer: dialer, id: id, now: now(),
                        controlBudget: config.maxControlPerSecond)
        peers[id] = peer
        dialer?.peer = peer
        peer.sweepIndex = sweepList.count
        sweepList.append(peer)
        conn.onMessages = { [unowned self, unowned peer] result in self.received(peer, result) }
        conn.onClosed = { [unowned self, unowned peer] reason in self.closed(peer, reason) }
        do { try conn.startReading() } catch {
            conn.close(error.description)
            return nil
        }
        perform(peer, peer.session.start())
        return peer
    }

    func received(_ peer: Peer, _ result: Result<[Message], FrameError>) {
        peer.lastReceivedMillis = now()
        handshakes.heard(peer.id)
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
    /// and costs neither side CPU); the tick hands them on as the budget refills and reads again once none
    /// are held. Closing is kept for a peer that goes on flooding for `floodCloseMillis`.
    func deliver(_ peer: Peer, _ messages: ArraySlice<Message>) {
        var rest = messages
        while var m = rest.first {
            guard peers[peer.id] != nil, !peer.conn.closing else { peer.held = []; return }
            // A sealed frame is opened first, so its message counts against the budget like a plain one.
            switch peer.session.unseal(m) {
            case .message(let inner): m = inner; rest[rest.startIndex] = inner
            case .refused(let actions): peer.held = []; perform(peer, actions); return
            }
            switch m {
            case .events, .packed:
                if peer.batchTurn != turn { peer.batchTurn = turn; peer.turnEvents = 0 }
                // A device hands over one batch a turn; a cluster peer (a server, catching up) up to a window's
                // worth, so a catch-up still commits several batches at once (`Node.yielded`).
                let cluster = peer.session.grants?.peerIsCluster ?? false
                if peer.turnEvents > 0 && (!cluster || peer.turnEvents >= Self.clusterEventsPerTurn) {
                    peer.held = rest
                    yielded[peer.id] = peer
                    peer.conn.pauseReading()
                    return
                }
                if case .events(_, let e) = m { peer.turnEvents += max(1, e.count) } else { peer.turnEvents += config.batchEvents }
            case .ping, .pong, .vectors, .vectorsPart, .reset, .subscribe:
                guard peer.budget.take(now: now()) else {
                    peer.held = rest
                    throttled[peer.id] = peer
                    peer.conn.pauseReading()
                    return
                }
            default: break
            }
            rest = rest.dropFirst()
            let taken = peer.session.subscriptionsTaken
            perform(peer, peer.session.receive(m))
            if peer.session.subscriptionsTaken != taken { resubscribed(peer) }
        }
        peer.held = []
        peer.conn.resumeReading()
        if peer.parked && fanout.unpark(peer) { setIdle(true) }
    }

    /// Every tick: peers held back by their control budget get what has refilled; a stretch of flooding
    /// ends once a peer's bucket is full again, and one longer than `floodCloseMillis` closes.
    func serveThrottled(now t: UInt64) {
        for (id, peer) in throttled {
            if !peer.held.isEmpty {
                if peer.budget.flooding(now: t, limit: config.floodCloseMillis) {
                    peer.held = []
                    throttled[id] = nil
                    perform(peer, peer.session.abort(.unexpected, "flood: more than \(config.maxControlPerSecond) ping, pong, vectors or reset messages a second for \(config.floodCloseMillis) ms"))
                } else {
                    deliver(peer, peer.held)
                }
            } else if peer.budget.recover(now: t) || peer.budget.throttledSince == nil {
                throttled[id] = nil
            }
        }
    }

    func perform(_ peer: Peer, _ actions: [SyncSession.Action]) {
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
                peer.conn.decoder.maxLength = Frame.maxLength
                peer.conn.decoder.stopsAfterHandshake = false
                peer.readyMillis = now()
                leaveHandshake(peer)
                if let device = peer.session.peerCertificate, lookups.boundKey(replica) == nil {
                    do { try log.recordReplicaKey(replica, key: device.key, atMillis: SystemClock.nowMillis()) } catch {
                        config.log("recording the key of replica \(replica) failed: \(error)")
                    }
                }
                if peer.isInboundDevice, let refusal = admitDevice(peer, replica) {
                    config.log("peer \(peer.address): \(refusal)")
                    config.metrics?.recordRefused(reason: "reconnects")
                    perform(peer, peer.session.abort(.unexpected, refusal))
                    return
                }
                perform(peer, peer.session.subscribe(subscription))
                sendVectors(peer)
                statusDirty.insert(peer.id)
                statusReportDue = true
            case .ingest(let batch, let events, let signatures, let retired):
                pending.append((peer, batch, events, signatures, retired.keys.sorted().map { i in
                    EventLog.RetiredRange(stream: events[i].stream, origin: events[i].id.origin, range: retired[i]!...(events[i].id.counter - 1), before: i)
                }))
            case .rescan:
                planCatchUp(peer)
                checkRestored(peer)
            case .resendVectors:
                sendVectors(peer)
            case .skipped(let batch, let count, let reason):
                config.log("peer \(peer.address): batch \(batch): \(count) events skipped, the rest stored: \(reason)")
                config.metrics?.recordSkipped(count)
            }
        }
    }

    func sendVectors(_ peer: Peer) {
        guard let grants = peer.session.grants else { return }
        perform(peer, peer.session.sendVectors(local: fanout.router.vectors(for: grants)))
    }

    /// A device's new session: at most one at a time (the newest wins: the one before is closed, a phone that
    /// reconnects before its old connection timed out), and at most `deviceSessionsPerMinute` authentications a
    /// minute, refilled one every 60 / that seconds (a device reconnecting in a loop costs its handshakes and
    /// nothing more). Returns why it is refused, or nil.
    func admitDevice(_ peer: Peer, _ replica: ReplicaID) -> String? {
        let t = now()
        var b = deviceBudgets[replica] ?? DeviceBudget(tokens: Double(config.deviceSessionsPerMinute), at: t)
        b.tokens = min(Double(config.deviceSessionsPerMinute), b.tokens + Double(t - min(t, b.at)) * Double(config.deviceSessionsPerMinute) / 60_000)
        b.at = t
        guard b.tokens >= 1 else {
            deviceBudgets[replica] = b
            return "device \(replica) opened more than \(config.deviceSessionsPerMinute) sessions in a minute; refused until its budget refills"
        }
        b.tokens -= 1
        deviceBudgets[replica] = b
        if let old = deviceSessions[replica], old != peer.id, let o = peers[old] {
            config.log("peer \(o.address): replaced by a newer session of device \(replica) (\(peer.address))")
            perform(o, o.session.abort(.unexpected, "replaced by a newer session of the same device"))
        }
        deviceSessions[replica] = peer.id
        return nil
    }

    func closed(_ peer: Peer, _ reason: String) {
        peers.removeValue(forKey: peer.id)
        if let r = peer.session.peerReplica, deviceSessions[r] == peer.id { deviceSessions[r] = nil }
        throttled.removeValue(forKey: peer.id)
        yielded.removeValue(forKey: peer.id)
        fanout.remove(peer)
        removeFromSweep(peer)
        let wasHandshaking = handshakes.contains(peer.id)
        if wasHandshaking { handshakes.leave(peer.id) }
        if !peer.evicted { config.log("peer \(peer.address): disconnected (\(reason))") }
        if peer.readyMillis == nil { config.metrics?.recordRefused(reason: peer.evicted ? "evicted" : "handshake") }
        if let d = peer.dialer {
            // The backoff starts again only after a session that lasted: one refused or ended soon after
            // its handshake (a grant the peer refuses, a revoked certificate) keeps backing off instead of
            // redialling at once, forever.
            if let ready = peer.readyMillis, now() >= ready + Self.lastingSessionMillis { d.lasted() }
            d.lastStatus = status(of: peer, connected: false)
            d.lastError = reason
            d.peer = nil
            scheduleRedial(d)
        }
        // Status lists authenticated and dialled peers only: an unauthenticated one (an idle socket, a
        // garbage sender) going away changes nothing shown, and costs no database write.
        if stopping {
            finishShutdownIfIdle()
        } else {
            if peer.readyMillis != nil || peer.dialer != nil {
                statusDirty.remove(peer.id)
                if peer.dialer == nil { statusRemoved.append(peer.address) }
                statusReportDue = true
            }
            if wasHandshaking { admitPending() }
        }
    }
}
