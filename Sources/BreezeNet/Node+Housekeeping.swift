internal import CLibUV
import BreezeCore
import BreezeStore
import BreezeSync
@preconcurrency import Glibc

/// Timeouts, keep-alives, status and metrics: work that must not cost an idle node a visit to every peer
/// ten times a second.
extension Node {
    /// Every 100 ms: handshakes past their timeout end at once (only the head of the accept-ordered queue is
    /// looked at), throttled peers get their refilled budget (only those), a tenth of the peers get their
    /// once-a-second visit (`sweep`), and the status rows that changed are written.
    func onTick() {
        let t = now()
        serveThrottled(now: t)
        // Inbound handshakes are queued in accept order, so only the expired head of the queue is looked at
        // (not every peer, ten times a second, while hundreds of idle sockets wait).
        for id in handshakes.expired(openedBefore: t >= config.handshakeTimeoutMillis ? t - config.handshakeTimeoutMillis : 0) {
            guard let peer = peers[id] else { handshakes.leave(id); continue }
            perform(peer, peer.session.abort(.timeout, "no handshake within \(config.handshakeTimeoutMillis) ms"))
            if handshakes.contains(id) {            // (the session was already closed: close the socket here)
                handshakes.leave(id)
                peer.conn.close("no handshake within \(config.handshakeTimeoutMillis) ms")
            }
        }
        admitPending()          // the oldest handshake may have aged enough to make room
        for d in dialers {
            guard let peer = d.peer, peer.readyMillis == nil, KeepAlive.elapsed(from: peer.openedMillis, to: t) > config.handshakeTimeoutMillis,
                  peer.session.state != .ready && peer.session.state != .closed else { continue }
            perform(peer, peer.session.abort(.timeout, "no handshake within \(config.handshakeTimeoutMillis) ms"))
        }
        // A timeout is judged only when the loop has just read its sockets: after a turn the node itself kept
        // busy, the acknowledgements and pings it is waiting for may be unread in them.
        if KeepAlive.elapsed(from: lastIOMillis, to: t) <= Node.stallMillis { sweep(now: t) }
        if KeepAlive.elapsed(from: lastSecondMillis, to: t) >= 1000 {
            lastSecondMillis = t
            everySecond(now: t)
        } else if !statusDirty.isEmpty || !statusRemoved.isEmpty {
            writeStatus(dialled: false)
        }
    }

    /// A turn of the loop longer than this (the node's own work) defers the timeouts to after the next poll.
    static let stallMillis: UInt64 = 250

    /// Visits about a tenth of the peers (each about once a second): timeouts, keep-alive pings, the resync
    /// owed after gaps, and a status row now and then (`statusRefresh`).
    func sweep(now t: UInt64) {
        let n = sweepList.count
        guard n > 0 else { return }
        let limits = KeepAlive.Limits(handshake: config.handshakeTimeoutMillis, idle: config.idleTimeoutMillis,
                                      ack: config.ackTimeoutMillis, ping: config.pingIntervalMillis)
        var visits = (n + 9) / 10
        while visits > 0 && !sweepList.isEmpty {
            visits -= 1
            if sweepNext >= sweepList.count { sweepNext = 0 }
            let peer = sweepList[sweepNext]
            sweepNext += 1
            if let since = peer.conn.closeRequestedMillis {
                // A peer that stopped reading keeps a write pending forever: close it by force.
                if KeepAlive.elapsed(from: since, to: t) > config.closeGraceMillis { peer.conn.close("peer stopped reading; closed by force") }
                continue
            }
            // The ack clock runs only while batches wait and no acknowledgement arrives.
            if peer.session.acksReceived != peer.acksSeen || peer.session.unacknowledged == 0 || peer.ackProgressMillis == 0 {
                peer.acksSeen = peer.session.acksReceived
                peer.ackProgressMillis = t
            }
            let clocks = KeepAlive.Clocks(opened: peer.openedMillis, lastReceived: peer.lastReceivedMillis, lastSent: peer.lastSentMillis,
                                          ready: peer.session.state == .ready ? (peer.readyMillis ?? peer.openedMillis) : nil,
                                          awaitingVectors: peer.session.awaitingVectors,
                                          unacknowledged: peer.session.unacknowledged, ackProgress: peer.ackProgressMillis)
            switch KeepAlive.decide(clocks, now: t, limits: limits) {
            case .timeout(let why):
                perform(peer, peer.session.abort(.timeout, why))
                continue
            case .ping:
                perform(peer, peer.session.send(.ping(t)))
            case .none:
                break
            }
            // Gaps refused too soon after the last vectors: their resync is due now; a subscription that came
            // too soon after the last is taken now.
            perform(peer, peer.session.resyncIfDue())
            if peer.session.holdsSubscription {
                let taken = peer.session.subscriptionsTaken
                perform(peer, peer.session.subscriptionIfDue())
                if peer.session.subscriptionsTaken != taken { resubscribed(peer) }
            }
            // A session parked for room on its socket gets it back here (acknowledgements unpark at once).
            if peer.parked && fanout.unpark(peer) { setIdle(true) }
            if peer.session.state == .ready, KeepAlive.elapsed(from: peer.statusWrittenMillis, to: t) >= statusRefresh(peer) { statusDirty.insert(peer.id) }
        }
    }

    /// How often an authenticated peer's status row is rewritten while nothing else changes: every second for
    /// the few peers an operator watches (cluster and dialled ones), every 60-120 s for devices, of which a
    /// server has thousands (their row is written when they connect and goes when they leave). A device's
    /// period is spread by its number, so thousands that connected together (a restart) are not rewritten in
    /// one wave a minute later.
    func statusRefresh(_ peer: Peer) -> UInt64 { peer.isInboundDevice ? 60_000 + UInt64(peer.id % 60) * 1_000 : 1_000 }

    /// Takes a closed peer out of the sweep (swapping the last one into its place).
    func removeFromSweep(_ peer: Peer) {
        let i = peer.sweepIndex
        guard i >= 0, i < sweepList.count, sweepList[i] === peer else { return }
        let last = sweepList.removeLast()
        if i < sweepList.count {
            sweepList[i] = last
            last.sweepIndex = i
        }
        peer.sweepIndex = -1
    }

    func everySecond(now t: UInt64) {
        if KeepAlive.elapsed(from: lastHorizonMillis, to: t) >= 60_000 {
            lastHorizonMillis = t
            applyHorizon()
            checkCertificate()
        }
        compactSome(now: t)
        if deviceBudgets.count > 1024 && t - lastBudgetSweepMillis >= 60_000 {
            // Devices whose budget has refilled need no entry (a full budget is the default).
            lastBudgetSweepMillis = t
            deviceBudgets = deviceBudgets.filter { t - min(t, $0.value.at) < 60_000 }
        }
        if evictedSinceLog > 0 {
            config.log("\(evictedSinceLog) connections still authenticating dropped (at most \(config.maxUnauthenticated) at once; the oldest go first)")
            evictedSinceLog = 0
        }
        for (_, c) in connecting where KeepAlive.elapsed(from: c.started, to: t) > config.handshakeTimeoutMillis {
            c.conn.close("connect timed out after \(config.handshakeTimeoutMillis) ms")
        }
        writeStatus()
        reportStatus(now: t)
        recordMetrics()
    }

    // MARK: Status

    /// The wall-clock time of a loop (monotonic) time, for display.
    func wallTime(ofLoopTime t: UInt64) -> UInt64 {
        let wall = SystemClock.nowMillis(), n = now()
        return wall - min(wall, n - min(n, t))
    }

    func status(of peer: Peer, connected: Bool) -> PeerStatus {
        var note = peer.note
        if let d = peer.dialer, d.addresses.count > 1 { note = "server \(d.address)" + (note.map { "; \($0)" } ?? "") }
        return PeerStatus(address: peer.dialer?.label ?? peer.address, direction: peer.dialer == nil ? "inbound" : "outbound",
                          replica: peer.session.peerReplica?.description, scope: peer.session.grants?.scope.description,
                          connected: connected && peer.session.state == .ready,
                          lastContactMillis: wallTime(ofLoopTime: peer.lastReceivedMillis),
                          vectors: peer.session.peerVectors, sent: peer.session.sentEvents,
                          received: peer.session.receivedEvents, note: note)
    }

    /// The status of a dialler with no session now.
    func status(of d: Dialer) -> PeerStatus {
        var s = d.lastStatus ?? PeerStatus(address: d.label, direction: "outbound", connected: false)
        s.address = d.label
        s.connected = false
        s.note = d.lastError
        return s
    }

    /// Writes what changed for `breeze status`: the rows of peers that connected or are due a refresh, the
    /// deletion of those that left, the dialled peers, and the heartbeat, in one transaction without an fsync.
    /// At the first write (and when stopping) the table is replaced whole.
    func writeStatus(stopped: Bool = false, dialled: Bool = true) {
        let t = now()
        var upserts: [PeerStatus] = []
        for id in statusDirty {
            guard let peer = peers[id], peer.dialer == nil, peer.session.state == .ready else { continue }
            upserts.append(status(of: peer, connected: true))
            peer.statusWrittenMillis = t
        }
        // The peers this node dials (few; a cluster peer's vectors name every stream): once a second.
        if dialled {
            for d in dialers {
                if let peer = d.peer { upserts.append(status(of: peer, connected: true)) } else { upserts.append(status(of: d)) }
            }
        }
        let dirty = statusDirty, removed = statusRemoved
        statusDirty.removeAll(keepingCapacity: true)
        statusRemoved = []
        let wall = SystemClock.nowMillis()
        let hb = NodeHeartbeat(pid: getpid(), listen: listenAddress ?? "", startedMillis: startedMillis,
                               heartbeatMillis: wall, stoppedMillis: stopped ? wall : nil)
        let replaceAll = !statusWritten || stopped
        if replaceAll {
            upserts = []
            for peer in peers.values where peer.session.state == .ready && peer.dialer == nil {
                upserts.append(status(of: peer, connected: true))
            }
            for d in dialers { upserts.append(d.peer.map { status(of: $0, connected: !stopped) } ?? status(of: d)) }
        }
        do {
            try log.updatePeers(upserts, removing: removed, heartbeat: hb, replacingAll: replaceAll)
            statusWritten = true
        } catch {
            // Kept for the next write (a busy database): rows of peers that left must still go.
            statusDirty.formUnion(dirty)
            statusRemoved += removed
            config.log("writing peer status failed: \(error)")
        }
        if stopped { reportStatus(now: t, force: true, stopped: true) }
    }

    /// Tells an embedding process (`NodeConfig.onStatus`) what the node knows: when peers came or went, and at
    /// least every 5 s. Devices connected to a server are listed while there are at most
    /// `NodeConfig.statusListsDevices` of them, else only counted.
    func reportStatus(now t: UInt64, force: Bool = false, stopped: Bool = false) {
        guard let onStatus = config.onStatus else { return }
        guard force || statusReportDue || KeepAlive.elapsed(from: lastStatusReportMillis, to: t) >= 5_000 else { return }
        statusReportDue = false
        lastStatusReportMillis = t
        var list: [PeerStatus] = []
        var devices = 0
        for peer in peers.values where peer.session.state == .ready && peer.isInboundDevice { devices += 1 }
        for peer in peers.values where peer.session.state == .ready || peer.dialer != nil {
            if peer.isInboundDevice && devices > config.statusListsDevices { continue }
            list.append(status(of: peer, connected: !stopped))
        }
        for d in dialers where d.peer == nil { list.append(status(of: d)) }
        var status = NodeStatus(listenAddress: listenAddress, running: !stopped, peers: list, localVectors: fanout.router.heads,
                                inboundDevices: devices)
        status.certificateNotAfter = credentials.chain[0].notAfter
        onStatus(status)
    }

    /// The metrics' view of the peers: each cluster and dialled peer with its lag, and the devices summed up
    /// (how many, how many behind, what they lack in all). A peer's lag is what it lacks of the streams it
    /// wants, from the router's heads: a session at the tail lacks nothing but what is in flight.
    func recordMetrics() {
        guard let metrics = config.metrics else { return }
        var list: [NodeMetrics.Peer] = []
        var devices = NodeMetrics.Devices()
        for peer in peers.values {
            guard peer.session.state == .ready, let grants = peer.session.grants else { continue }
            let lag: UInt64
            if !peer.session.sending {
                lag = 0
            } else if peer.session.readsByStream {
                lag = peer.live && peer.session.catchingUp.isEmpty ? 0 : fanout.router.lag(of: peer.session, over: peer.session.catchingUp)
            } else if peer.live {
                lag = 0
            } else if peer.isInboundDevice {
                // A device scanning the log behind the tail (it wants everything): at most the rows between.
                lag = UInt64(max(0, fanout.router.tail - peer.session.cursor))
            } else {
                // A cluster or dialled peer behind the tail (a few): exact, over the streams it may read.
                lag = fanout.router.lag(of: peer.session, over: fanout.router.streams.lazy.filter { grants.peerMayRead($0) && peer.session.wants($0) })
            }
            if peer.isInboundDevice {
                devices.connected += 1
                if lag > 0 { devices.behind += 1 }
                devices.lagEvents += lag
            } else {
                list.append(NodeMetrics.Peer(address: peer.dialer?.address ?? peer.address, direction: peer.dialer == nil ? "inbound" : "outbound",
                                             replica: peer.session.peerReplica?.description, lagEvents: lag))
            }
        }
        metrics.recordPeers(list, devices: devices)
    }
}
