public import BreezeCrypto

/// The cluster's retention policy, signed by the cluster authority: the body of a `retention.policy` event in
/// `public` (`Protocol/encoding.md` section 5). Set once for the whole cluster (`breeze authority retention`), it
/// reaches every server as any event does, so every server keeps the same: raw readings for `rawDays` days, then
/// each sensor's hours as `reading.rollup` events for good (`EventLog.rollUpReadings`).
///
/// Of several, the one a server follows is the newest (`issuedAtMillis`, then the signature's bytes) among those
/// whose signature holds under the authority that server trusts; one that does not verify is stored, relayed and
/// followed by nobody. Without one, nothing is rolled up: dropping raw readings is the operator's decision.
///
/// Payload: `varint rawDays` (0: raw readings are kept for good), `varint issuedAtMillis`, `raw32 signer`,
/// `raw64 signature`: Ed25519 by `signer` over `signedBytes`.
public struct RetentionPolicy: Hashable, Sendable {
    /// Days of raw readings a server keeps (0: all of them).
    public var rawDays: UInt32
    /// When it was signed (milliseconds since 1970): the newest holds.
    public var issuedAtMillis: UInt64
    /// The cluster authority's public key.
    public var signer: [UInt8]
    /// Ed25519 by `signer` over `signedBytes`.
    public var signature: [UInt8]

    /// The days a policy keeps when `breeze authority retention` is not told otherwise (issue 28).
    public static let defaultRawDays: UInt32 = 30
    /// The longest raw window a policy may set (100 years).
    public static let maxRawDays: UInt32 = 36_500
    /// Signed before the fields, so a signature made for something else cannot pass for a policy.
    public static let signatureContext = "breeze retention v1"

    public init(rawDays: UInt32, issuedAtMillis: UInt64, signer: [UInt8], signature: [UInt8]) {
        self.rawDays = rawDays
        self.issuedAtMillis = issuedAtMillis
        self.signer = signer
        self.signature = signature
    }

    /// Signs a policy with the cluster authority's key.
    public static func sign(rawDays: UInt32, issuedAtMillis: UInt64, authority: Ed25519.KeyPair) -> RetentionPolicy {
        var p = RetentionPolicy(rawDays: rawDays, issuedAtMillis: issuedAtMillis, signer: authority.publicKey, signature: [])
        p.signature = authority.sign(p.signedBytes)
        return p
    }

    /// What the signature covers: the context string, then every field but the signature.
    public var signedBytes: [UInt8] {
        var w = ByteWriter(capacity: 64)
        w.string(Self.signatureContext)
        w.varint(UInt64(rawDays)); w.varint(issuedAtMillis); w.raw(signer)
        return w.bytes
    }

    /// True when it is signed by `authority` (the cluster authority a server trusts).
    public func holds(under authority: [UInt8]) -> Bool {
        signer == authority && Ed25519.verify(signature: signature, message: signedBytes, publicKey: signer)
    }

    /// The newest of `policies` that holds under `authority`, if any.
    public static func inForce(_ policies: [RetentionPolicy], authority: [UInt8]) -> RetentionPolicy? {
        policies.filter { $0.holds(under: authority) }
            .max { a, b in a.issuedAtMillis != b.issuedAtMillis ? a.issuedAtMillis < b.issuedAtMillis : a.signature.lexicographicallyPrecedes(b.signature) }
    }

    func encode(into w: inout ByteWriter) {
        w.varint(UInt64(rawDays)); w.varint(issuedAtMillis); w.raw(signer); w.raw(signature)
    }

    static func decode(_ r: inout ByteReader) throws(DecodingError) -> RetentionPolicy {
        let days = try r.varint(), at = try r.varint()
        guard days <= UInt64(maxRawDays) else { throw DecodingError.malformed("retention.policy of \(days) days, more than \(maxRawDays)") }
        return RetentionPolicy(rawDays: UInt32(days), issuedAtMillis: at, signer: try r.raw(32), signature: try r.raw(64))
    }
}
