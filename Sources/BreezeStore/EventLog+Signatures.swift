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
    }
}
