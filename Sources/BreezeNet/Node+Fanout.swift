internal import CLibUV
import BreezeCore
import BreezeStore
import BreezeSync

/// Storing what peers send (group commit) and sending: each commit's new rows are read once and routed to
/// the sessions that want them; a session behind the tail catches up by itself.
extension Node {
    /// After each poll: commit what arrived (group commit), acknowledge, route new rows, let sessions
    /// behind the tail read.
    func afterPoll() {
        lastIOMillis = now()
        commitPending()
        guard !stopping else { return }
        turn &+= 1
        if !yielded.isEmpty {
            // Each peer that had more than one batch this turn hands over its next now (`yielded`); reading
            // its socket resumes once nothing is held.
            let waiting = yielded
            yielded = [:]
            for (id, peer) in waiting where peers[id] != nil && throttled[id] == nil { deliver(peer, peer.held) }
        }
        if routePending { route() }
        pump()
    }

    /// Group commit: stores every batch received since the last call in one transaction, then acknowledges.
    ///
    /// Relay before sync: the transaction commits without its fsync, so the new events are visible to this
    /// node's other sessions, which are handed them at once (the next replica of a chain need not wait for
    /// this one's disk); then the write-ahead log is synced, and only then is anything acknowledged or an
    /// in-process observer told. A power cut in between loses at most events no peer was told are stored
    /// here (a peer that received them keeps them; the sender still holds them unacknowledged).
    func commitPending() {
        guard !pending.isEmpty else { return }
        let work = pending
        pending = []
        let started = SystemClock.monotonicNanos()
        do {
            // A device's session may start only so many incarnations of one replica, and lifts no
            // ahead floor beyond a day (sync.md 6.6); the cluster's are not bounded.
            let reports = try log.ingest(groups: work.map(\.events), source: work.count == 1 ? work[0].peer.address : "peers",
                                         syncLater: true,
                                         fromDevice: work.map { !($0.peer.session.grants?.peerIsCluster ?? false) },
                                         signatures: work.map(\.signatures), retired: work.map(\.retired))
            let inserted = reports.reduce(0) { $0 + $1.inserted }
            skipOwnEvents(work.map(\.peer), reports)
            if inserted > 0 {
                refreshRevocations()
                refreshSubscription()
                checkCertificate()
                applyHorizon()
                if !stopping {
                    route()
                    pump()
                }
                try log.syncWAL()
                config.onCommit?(inserted)
            }
            config.metrics?.recordCommit(work.map(\.events), reports, seconds: Double(SystemClock.monotonicNanos() - started) / 1e9)
            for (w, r) in zip(work, reports) where peers[w.peer.id] != nil {
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
            for w in work where peers[w.peer.id] != nil {
                perform(w.peer, w.peer.session.storageFailed("\(error)"))
            }
        }
    }

    /// When every event a commit stored came from one peer, that peer's scan steps over them rather than
    /// read them back to find it holds them all (a catch-up's receiver otherwise reads its whole log twice).
    func skipOwnEvents(_ senders: [Peer], _ reports: [EventLog.IngestReport]) {
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
        guard let peer = from, peers[peer.id] != nil, peer.session.sending else { return }
        peer.session.storedFromPeer(lower...upper)
    }

    // MARK: Routing and catching up (`Fanout`)

    /// Routes the rows committed since the router's tail to the sessions that want them, at most
    /// `routeRowsPerTurn` a call (`routePending` asks for more at the next turn of the loop).
    func route() {
        routePending = false
        guard !stopping else { return }
        switch fanout.route(log) {
        case .done: break
        case .more:
            routePending = true
            setIdle(true)
        case .failed:
            routePending = true         // read again at the next turn of the loop (the tick comes within 0.1 s)
        }
    }

    /// A session's vectors arrived, changed, or it subscribed anew: the fan-out plans its catch-up.
    func planCatchUp(_ peer: Peer) {
        guard peers[peer.id] != nil else { return }
        fanout.planCatchUp(peer)
        setIdle(true)
    }

    /// The peer sent `subscribe`.
    func resubscribed(_ peer: Peer) {
        fanout.resubscribed(peer)
    }

    /// Sessions behind the tail read for themselves, in turn, within a budget per turn of the loop.
    func pump() {
        setIdle(fanout.pump(log) || routePending || !yielded.isEmpty)
    }

    /// `NodeHandle.wake()`: this process committed events (through another connection), so route now.
    func localCommit() {
        guard !stopping else { return }
        refreshSubscription()
        route()
        pump()
    }

    /// Notices commits by other processes (the CLI writing to this database).
    func pollDatabase() {
        guard let v = try? log.dataVersion() else { return }
        if v != lastDataVersion {
            lastDataVersion = v
            refreshRevocations()
            refreshSubscription()
            checkCertificate()
            route()
            pump()
        }
    }
}
