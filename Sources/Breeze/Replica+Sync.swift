import BreezeCore
import BreezeCrypto
import BreezeNet
import BreezeSync
import BreezeStore

/// Sync in the app's process: a node on its own libuv thread, with its own connection to the database.
extension Replica {
    /// Starts a sync node for this replica: it accepts peers on `options.listen` (if given) and dials
    /// `options.peers`, catches up with each and then pushes every new event live. A local write through this
    /// replica reaches connected peers at once (the node is woken, not polled); events from peers reach this
    /// replica's observers as soon as they are committed. Returns once the node listens.
    ///
    /// Every frame on the wire is encrypted and authenticated; peers are authenticated by their certificate
    /// chains (`SyncOptions`), and this replica by its device key beside the database.
    ///
    /// ```swift
    /// let options = try SyncOptions(certificateFile: "phone.cert", authorityFile: "cluster.pub", peers: ["203.0.113.7:7000"])
    /// try replica.startSync(options)
    /// ```
    ///
    /// - Throws: `BreezeError.sync` when a node is already running, or when it cannot start (an address in use
    ///   or malformed); `.invalidArgument` for a certificate that does not verify against the authority or
    ///   does not certify this replica's key, a device key others can read, or a malformed user.
    @discardableResult
    public func startSync(_ options: SyncOptions) throws(BreezeError) -> SyncStatus {
        if let u = options.user { try Validation.user(u, what: "SyncOptions.user") }
        guard options.listen != nil || !options.peers.isEmpty || !options.servers.isEmpty else {
            throw BreezeError(.invalidArgument, "sync needs an address to listen on, peers or servers to dial, or both")
        }
        for address in options.peers + options.servers { try SyncOptions.checkAddress(address) }
        let held = try? withLog { log in try log.certificateText() }
        let credentials = try options.credentials(db: path, replica: id,
                                                  nowMillis: self.nowMillis, held: held ?? nil)
        var config = NodeConfig(dbPath: path, listen: options.listen, credentials: credentials)
        config.peers = options.peers
        config.servers = options.servers
        config.durability = self.options.durability == .full ? .full : .normal
        if let clock = self.options.wallClock { config.wallClock = clock }
        if let log = options.log { config.log = log }
        config.handleSignals = options.stopOnSignals
        if let p = options.pollMillis { config.pollMillis = p }
        config.metrics = options.metrics
        let observers = self.observers, hub = syncStatus
        config.onCommit = { _ in observers.notify() }
        config.onStatus = { hub.update(SyncStatus($0)) }
        // A certificate the node installs is no event: the certificate's observers are told directly.
        let renewed = options.onCertificateRenewed
        config.onCertificate = { text in
            observers.invalidate()
            renewed?(text)
        }
        try locked { () throws(BreezeError) in
            guard node == nil else { throw BreezeError(.sync, "\(path): sync is already running; stop it first") }
            do { node = try NodeHandle.start(config) } catch {
                throw BreezeError(.sync, "\(path): sync could not start: \(error)", underlying: SendableDescription("\(error)"))
            }
        }
        return hub.status
    }

    /// Stops the sync node: what has arrived is committed and acknowledged, peers are told, sockets closed.
    /// Returns once the node has stopped. Does nothing when no node runs.
    ///
    /// ```swift
    /// replica.stopSync()   // e.g. when the app goes to the background
    /// ```
    public func stopSync() {
        guard let n = lock.withLock({ () -> NodeHandle? in defer { node = nil }; return node }) else { return }
        n.stop()
        n.wait()
    }

    /// Blocks until the sync node stops (by `stopSync()` from another thread, or a signal with
    /// `SyncOptions.stopOnSignals`); returns at once when none runs. For a process that only syncs, as
    /// `breeze node` does:
    ///
    /// ```swift
    /// var o = try SyncOptions(certificateFile: "server.cert", authorityFile: "cluster.pub", listen: "0.0.0.0:7000")
    /// o.stopOnSignals = true
    /// try replica.startSync(o)
    /// replica.waitForSync()
    /// ```
    public func waitForSync() {
        guard let n = lock.withLock({ node }) else { return }
        n.wait()
        lock.withLock { if node === n { node = nil } }
    }

    /// The sync node's status now (`SyncStatus.stopped` when none runs).
    ///
    /// ```swift
    /// let online = replica.currentSyncStatus.connectedPeers.count
    /// ```
    public var currentSyncStatus: SyncStatus { syncStatus.status }

    /// The sync status, observed: the current value at once, then every change (peers connecting and
    /// disconnecting, lag moving, the node stopping).
    ///
    /// ```swift
    /// for try await s in replica.observeSyncStatus() {
    ///     badge.text = s.connectedPeers.isEmpty ? "offline" : "synced"
    /// }
    /// ```
    public func observeSyncStatus() -> ValueObservation<SyncStatus> {
        let hub = syncStatus
        return ValueObservation { sink in
            let id = hub.add(sink)
            return { hub.remove(id) }
        }
    }
}

extension Replica {
    /// Records a signed revocation in this replica's log (`device.revoke` in `public`). Every node that holds
    /// it, once it arrives by sync or from this process, closes sessions with a chain that has the revoked key
    /// and refuses it from then on (`Protocol/sync.md` 4.10); the other devices keep syncing.
    ///
    /// ```swift
    /// let r = Revocation.sign(key: lostPhone.key, replica: lostPhone.replica, revokedAtMillis: nowMillis,
    ///                         reason: "lost", signer: clusterAuthority)
    /// try replica.revoke(r)
    /// ```
    ///
    /// - Throws: `.invalidArgument` when the signature does not verify or the reason is too long: such an
    ///   event would be enforced by nobody.
    @discardableResult
    public func revoke(_ revocation: Revocation) throws(BreezeError) -> Event {
        guard revocation.key.count == 32, revocation.signer.count == 32, revocation.signatureHolds else {
            throw BreezeError(.invalidArgument, "revocation of key \(Digest.hex(Array(revocation.key.prefix(8)))): the signature does not verify")
        }
        guard revocation.reason.utf8.count <= Revocation.maxReasonBytes else {
            throw BreezeError(.invalidArgument, "revocation reason: at most \(Revocation.maxReasonBytes) bytes")
        }
        return try commit([(.public, .revocation(revocation))])[0]
    }
}
