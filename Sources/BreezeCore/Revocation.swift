public import BreezeCrypto

/// An authority's signed statement that a key no longer authenticates anybody: the body of a `device.revoke`
/// event in the `public` stream (`Protocol/encoding.md` section 5, `Protocol/sync.md` section 4.10). Every
/// node that holds the event and trusts the signer refuses handshakes from a chain with that key and closes
/// sessions already open with one.
///
/// The signer is the cluster authority (`signerChain` empty: the revocation holds for any scope), or a user
/// authority (`signerChain` is its certificate, which the cluster authority signed): it then revokes only a
/// device certificate of that user's scope. Whether the signature and chain hold is checked by
/// `BreezeSync.Revocations`, against each node's own trusted authority; an event that does not verify is
/// stored and relayed like any fact, and enforced by nobody.
///
/// Payload: `raw32 key`, `u64 replica` (0 for an authority key), `varint revokedAtMillis`, `string reason`,
/// `raw32 signer`, `list<bytes> signerChain` (0 or 1 certificate), `raw64 signature`: Ed25519 by `signer`
/// over `signedBytes`.
public struct Revocation: Hashable, Sendable {
    /// The revoked Ed25519 public key (a device key or a user authority's key).
    public var key: [UInt8]
    /// The replica the key belonged to (0 for an authority's key): for people reading the log.
    public var replica: ReplicaID
    /// When it was revoked (milliseconds since 1970): for people; enforcement starts when a node has it.
    public var revokedAtMillis: UInt64
    /// Why (free text, at most 200 bytes: "lost", "stolen", ...).
    public var reason: String
    /// The signer's public key.
    public var signer: [UInt8]
    /// The signer's certificate when it is a user authority (encoded), else empty.
    public var signerChain: [[UInt8]]
    /// Ed25519 by `signer` over `signedBytes`.
    public var signature: [UInt8]

    /// Signed before the fields, so a signature made for something else cannot pass for a revocation.
    public static let signatureContext = "breeze revocation v1"
    /// The longest reason.
    public static let maxReasonBytes = 200

    /// Makes a revocation from its fields, as decoded (the signature is not checked here).
    public init(key: [UInt8], replica: ReplicaID, revokedAtMillis: UInt64, reason: String, signer: [UInt8],
                signerChain: [[UInt8]], signature: [UInt8]) {
        self.key = key
        self.replica = replica
        self.revokedAtMillis = revokedAtMillis
        self.reason = reason
        self.signer = signer
        self.signerChain = signerChain
        self.signature = signature
    }

    /// Signs a revocation of `key` with `signer` (the cluster authority, or a user authority with its
    /// certificate in `signerChain`).
    public static func sign(key: [UInt8], replica: ReplicaID, revokedAtMillis: UInt64, reason: String,
                            signer: Ed25519.KeyPair, signerChain: [[UInt8]] = []) -> Revocation {
        var r = Revocation(key: key, replica: replica, revokedAtMillis: revokedAtMillis, reason: reason,
                           signer: signer.publicKey, signerChain: signerChain, signature: [])
        r.signature = signer.sign(r.signedBytes)
        return r
    }

    /// What the signature covers: the context string, then every field but the signature and the chain.
    public var signedBytes: [UInt8] {
        var w = ByteWriter(capacity: 128)
        w.string(Self.signatureContext)
        w.raw(key); w.u64(replica.rawValue); w.varint(revokedAtMillis); w.string(reason); w.raw(signer)
        return w.bytes
    }

    /// True when `signature` is `signer`'s over `signedBytes` (the chain is the verifier's to check).
    public var signatureHolds: Bool {
        Ed25519.verify(signature: signature, message: signedBytes, publicKey: signer)
    }

    func encode(into w: inout ByteWriter) {
        w.raw(key); w.u64(replica.rawValue); w.varint(revokedAtMillis); w.string(reason); w.raw(signer)
        w.array(signerChain) { w, c in w.blob(c) }
        w.raw(signature)
    }

    static func decode(_ r: inout ByteReader) throws(DecodingError) -> Revocation {
        let key = try r.raw(32), replica = ReplicaID(rawValue: try r.u64()), at = try r.varint(), reason = try r.string()
        guard reason.utf8.count <= maxReasonBytes else { throw DecodingError.malformed("device.revoke reason longer than \(maxReasonBytes) bytes") }
        let signer = try r.raw(32)
        let chain = try r.array { (r: inout ByteReader) throws(DecodingError) in try r.blob() }
        guard chain.count <= 1 else { throw DecodingError.malformed("device.revoke signer chain of \(chain.count) certificates") }
        let signature = try r.raw(64)
        return Revocation(key: key, replica: replica, revokedAtMillis: at, reason: reason, signer: signer, signerChain: chain,
                          signature: signature)
    }
}
