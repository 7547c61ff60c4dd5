public import BreezeCore

/// Origin signatures (`OriginSignature`, `Protocol/sync.md` 6.9): kept beside the events they sign, in
/// `event_signatures` keyed by event id, with each distinct signer chain once in `signers`. The store does not
/// check them (it knows no authority): `BreezeSync.EventSignatures` did before anything reached `ingest`.
extension EventLog {
    /// The signature held for `e` (the event with that id in its stream), if any.
    public func signature(of e: Event) throws(StoreError) -> OriginSignature? {
        do {
            guard let key = try streamKey(e.stream, create: false) else { return nil }
            let q = try db.cached("""
                SELECT s.chain, e.signature FROM event_signatures e JOIN signers s ON s.id = e.signer
                WHERE e.stream = ? AND e.origin = ? AND e.epoch = ? AND e.counter = ?
                """)
            try q.bind(1, key)
            try q.bind(2, Int64(bitPattern: e.id.origin.replica.rawValue))
            try q.bind(3, Int64(e.id.origin.epoch))
            try q.bind(4, Int64(bitPattern: e.id.counter))
            guard let (chain, signature) = try q.first({ ($0.blob(0), $0.blob(1)) }) else { return nil }
            return OriginSignature(chain: try OriginSignature.decodeChain(chain), signature: signature)
        } catch { throw StoreError.from(error, path: path) }
    }

    /// How many events hold a signature (for `breeze status` and tests).
    public func signatureCount() throws(StoreError) -> Int {
        do { return Int(try db.cached("SELECT count(*) FROM event_signatures").first { $0.int(0) } ?? 0) } catch {
            throw StoreError.from(error, path: path)
        }
    }

    /// The device key `replica` was first seen with (by a peer's handshake or an origin signature), if any.
    public func replicaKey(_ replica: ReplicaID) throws(StoreError) -> [UInt8]? {
        do {
            let q = try db.cached("SELECT key FROM replica_keys WHERE replica = ?")
            try q.bind(1, Int64(bitPattern: replica.rawValue))
            return try q.first { $0.blob(0) }
        } catch { throw StoreError.from(error, path: path) }
    }

    /// Records the device key of `replica` when none is known for it yet (the first stays: a replica id is
    /// bound to one key). Committed at once (no fsync of its own: losing it to a power cut only delays the
    /// binding to the next time the key is seen).
    public func recordReplicaKey(_ replica: ReplicaID, key: [UInt8], atMillis: UInt64) throws(StoreError) {
        do {
            try db.writeTransaction { try insertReplicaKey(replica, key: key, atMillis: atMillis) }
        } catch { throw StoreError.from(error, path: path) }
    }

    func insertReplicaKey(_ replica: ReplicaID, key: [UInt8], atMillis: UInt64) throws {
        let s = try db.cached("INSERT OR IGNORE INTO replica_keys(replica, key, seen_ms) VALUES (?, ?, ?)")
        try s.bind(1, Int64(bitPattern: replica.rawValue))
        try s.bind(2, key)
        try s.bind(3, Int64(bitPattern: atMillis))
        try s.run()
    }

    /// Records `signature` for the event `id` of the stream with row id `stream`, inside the caller's write
    /// transaction; a signature already held for it stays (both sign the same bytes).
    func storeSignature(_ signature: OriginSignature, stream: Int64, id: EventID) throws {
        let chain = signature.encodedChain
        let find = try db.cached("SELECT id FROM signers WHERE chain = ?")
        try find.bind(1, chain)
        let signer: Int64
        if let known = try find.first({ $0.int(0) }) { signer = known } else {
            let add = try db.cached("INSERT INTO signers(chain) VALUES (?)")
            try add.bind(1, chain)
            try add.run()
            signer = db.lastInsertRowID
        }
        let s = try db.cached("INSERT OR IGNORE INTO event_signatures(stream, origin, epoch, counter, signer, signature) VALUES (?, ?, ?, ?, ?, ?)")
        try s.bind(1, stream)
        try s.bind(2, Int64(bitPattern: id.origin.replica.rawValue))
        try s.bind(3, Int64(id.origin.epoch))
        try s.bind(4, Int64(bitPattern: id.counter))
        try s.bind(5, signer)
        try s.bind(6, signature.signature)
        try s.run()
        // The signer's device key is bound to its replica from now on (the first seen stays).
        // Its device certificate (format 1: format, role, then the 32-byte key; `Certificate`, sync.md 4.5).
        if let first = signature.chain.first, first.count >= 34, first[0] == 1 {
            try insertReplicaKey(id.origin.replica, key: Array(first[2..<34]), atMillis: options.wallClock())
        }
    }
}

/// This replica's certificate chain as its node last used it (`meta.certificate`, the text form of
/// `breeze enrol`), and its renewal's state: for `breeze status` and for a node that installed a renewed
/// certificate to start with it again.
extension EventLog {
    /// The chain text the node holds now, if any.
    public func certificateText() throws(StoreError) -> String? { try metaText("certificate") }

    /// Records the chain text the node holds now.
    public func setCertificateText(_ text: String) throws(StoreError) { try setMetaText("certificate", text) }

    /// When this replica last asked for a new certificate, and for which one (its `notAfter`), or nil.
    public func renewalRequested() throws(StoreError) -> (notAfter: UInt64, atMillis: UInt64)? {
        guard let t = try metaText("renewal_requested") else { return nil }
        let f = t.split(separator: " ").compactMap { UInt64($0) }
        return f.count == 2 ? (f[0], f[1]) : nil
    }

    /// Records a request for a new certificate (for the one expiring at `notAfter`).
    public func setRenewalRequested(notAfter: UInt64, atMillis: UInt64) throws(StoreError) {
        try setMetaText("renewal_requested", "\(notAfter) \(atMillis)")
    }

    /// Asks the user's authority for a new certificate (`Protocol/sync.md` 4.11): notes the request first (an
    /// observer woken by the event then sees it in `renewalRequested`), then appends the `device.renew` event to
    /// the user's stream, which sync carries to the authority. What the library's `requestCertificateRenewal`
    /// and a node's renewal window both do.
    public func requestRenewal(_ request: RenewalRequest, user: String, atMillis: UInt64) throws(StoreError) {
        try setRenewalRequested(notAfter: request.notAfterMillis, atMillis: atMillis)
        _ = try append(.renewalRequest(request), to: .user(user))
    }

    func metaText(_ key: String) throws(StoreError) -> String? {
        do {
            let q = try db.cached("SELECT value FROM meta WHERE key = ?")
            defer { q.reset() }
            try q.bind(1, key)
            return try q.first { $0.isNull(0) ? nil : $0.text(0) } ?? nil
        } catch { throw StoreError.from(error, path: path) }
    }

    func setMetaText(_ key: String, _ value: String) throws(StoreError) {
        do {
            try db.writeTransaction {
                let s = try db.cached("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)")
                try s.bind(1, key)
                try s.bind(2, value)
                try s.run()
            }
        } catch { throw StoreError.from(error, path: path) }
    }
}
