import BreezeCore
import BreezeStore
import BreezeSync

/// What this replica decides about its log and its peers: revocations, its interests and horizon, a backup
/// restored in the same boot.
extension Node {
    /// Reads the revocations that reached the log since the last look (from a peer, or written by another
    /// process on this database, such as `breeze authority revoke`). One that holds ends at once every session
    /// whose peer chain it revokes, and every later handshake of that chain fails; one that does not verify
    /// against this node's authority is logged and not enforced.
    func refreshRevocations() {
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
                lookups.revokedKeys.insert(r.key)
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
    func refreshSubscription() {
        let user: String?
        if case .user(let id) = credentials.scope { user = id } else { user = nil }
        let next: Set<StreamID>?
        do { next = try interests.subscription(log, user: user) } catch {
            config.log("resolving this replica's interests failed: \(error)")
            // Fail closed: a device whose interests cannot be resolved asks for no fact stream rather than
            // the whole city (nothing it holds is dropped for it).
            if subscription == nil, (try? log.interests().isEmpty) == false {
                subscription = []
                for peer in peers.values where peer.session.state == .ready { perform(peer, peer.session.subscribe([])) }
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
                    reloadRouter()
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
        if changed { for peer in peers.values where peer.session.state == .ready { perform(peer, peer.session.subscribe(next)) } }
    }

    /// Rows were dropped (streams no longer wanted): the router reads what the log holds again.
    func reloadRouter() {
        do {
            fanout.reload(heads: try log.versionVectors())
        } catch {
            config.log("reading the version vectors failed: \(error)")
        }
    }

    /// Applies this replica's horizon (sync.md 6.8): after commits that brought readings, and once a
    /// minute as the cutoff moves. Nothing without a horizon (a server keeps everything unless told).
    func applyHorizon() {
        // A cluster replica keeps everything: one with gaps could not give a new peer what it lacks.
        guard credentials.scope != .cluster else {
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

    /// Compaction on a cluster replica (`NodeConfig.compaction`): once a minute the streams due are queued, and
    /// each second a few are compacted, one transaction each. What a compaction writes is routed at once: a
    /// peer that holds the events it replaces takes it as the next of their origin and drops them (sync.md 6.10).
    func compactSome(now t: UInt64) {
        guard credentials.scope == .cluster else { return }
        var wrote = rollUpSome(now: t)
        guard let policy = config.compaction else {
            if wrote > 0 { committedOwnWrites() }
            return
        }
        if compactionQueue.isEmpty, KeepAlive.elapsed(from: lastCompactionScanMillis, to: t) >= 60_000 {
            lastCompactionScanMillis = t
            do { compactionQueue = try log.streamsDueForCompaction(policy: policy).reversed() } catch {
                config.log("looking for streams to compact failed: \(error)")
            }
        }
        for _ in 0..<config.compactStreamsPerSecond {
            guard let stream = compactionQueue.popLast() else { break }
            do {
                let r = try log.compactStream(stream, policy: policy)
                wrote += r.eventsWritten
                compactedSinceLog.add(r)
                config.metrics?.recordRetired(kind: "compact", retired: r.eventsRetired, written: r.eventsWritten)
            } catch {
                config.log("compacting \(stream) failed: \(error)")
            }
        }
        if wrote > 0 { committedOwnWrites() }
        if compactionQueue.isEmpty, compactedSinceLog.streams > 0 {
            let c = compactedSinceLog
            config.log("compaction: \(c.eventsRetired) small reading events of \(c.streams) streams merged into \(c.eventsWritten) reading.compact events (\(c.rows) rows)")
            compactedSinceLog = CompactionReport()
        }
    }

    /// What this node's own maintenance wrote (compactions, rollups) goes out at once, and observers are told.
    func committedOwnWrites() {
        if !stopping {
            route()
            pump()
        }
        config.onCommit?(0)
    }

    /// Retention on a cluster replica: once an hour the policy in force is read (the newest `retention.policy`
    /// of `public` signed by the cluster authority this node trusts; none: nothing is rolled up) and the streams
    /// due are queued; each second a few are rolled up (`EventLog.rollUpStream`), as compactions are. Returns the
    /// events written.
    func rollUpSome(now t: UInt64) -> Int {
        if rollupQueue.isEmpty, KeepAlive.elapsed(from: lastRollupScanMillis, to: t) >= 3_600_000 || lastRollupScanMillis == 0 {
            lastRollupScanMillis = max(t, 1)
            do {
                rollupDays = try log.retentionPolicy(authority: credentials.authority).map { Int($0.rawDays) } ?? 0
                if rollupDays > 0 {
                    rollupQueue = try log.streamsDueForRollup(rawDays: rollupDays, nowSeconds: Int64(config.wallClock() / 1000)).reversed()
                }
            } catch {
                config.log("looking for streams to roll up failed: \(error)")
            }
        }
        guard rollupDays > 0 else { return 0 }
        var wrote = 0
        for _ in 0..<config.compactStreamsPerSecond {
            guard let stream = rollupQueue.popLast() else { break }
            do {
                let r = try log.rollUpStream(stream, rawDays: rollupDays, nowSeconds: Int64(config.wallClock() / 1000))
                wrote += r.eventsWritten
                rolledSinceLog.add(r)
                config.metrics?.recordRetired(kind: "rollup", retired: r.eventsRetired, written: r.eventsWritten)
            } catch {
                config.log("rolling up \(stream) failed: \(error)")
            }
        }
        if rollupQueue.isEmpty, rolledSinceLog.streams > 0 {
            let r = rolledSinceLog
            config.log("retention (\(rollupDays) days of raw readings): \(r.eventsRetired) reading events of \(r.streams) streams replaced by \(r.eventsWritten) reading.rollup events (\(r.hours) hours)")
            rolledSinceLog = RollupReport()
        }
        return wrote
    }

    /// A cluster peer's vectors say it holds counters of this replica's current origin beyond what this
    /// database holds: the database was restored from a backup (or copied) while the replica ran on, in the
    /// same boot (a later boot starts a new epoch anyway). Its next writes would take ids the cluster holds
    /// with other content, so a new epoch starts at once (`EventLog.startNewEpoch`), and what the peer holds
    /// of the old one comes back as another incarnation's events (sync.md 6.6). Only the cluster is believed:
    /// a device could make this replica start epochs at will.
    func checkRestored(_ peer: Peer) {
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
}
