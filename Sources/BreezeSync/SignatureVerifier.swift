public import BreezeCore
import BreezeCrypto

/// Checks events' origin signatures (`OriginSignature`, `Protocol/sync.md` 6.9) against the cluster authority
/// a replica trusts and the revocations it holds. A value with no I/O, one per session: chains already found
/// valid on the session are remembered by their bytes, so a batch of one device's events checks its chain once
/// and then one Ed25519 signature per event.
public struct SignatureVerifier: Sendable {
    /// The cluster authority's public key.
    public let authority: [UInt8]
    /// The revocations enforced: a chain with a revoked key signs nothing.
    public var revocations: Revocations?
    /// Chains whose shape and signatures were found valid, by their encoding.
    private var verified: [[[UInt8]]: [Certificate]] = [:]
    /// The device key this side knows for a replica (the first it saw; nil: none yet): a chain for the same
    /// replica with another key signs nothing, unless the first was revoked (`Protocol/sync.md` 6.9).
    public var knownKey: (@Sendable (ReplicaID) -> [UInt8]?)?

    public init(authority: [UInt8], revocations: Revocations?) {
        self.authority = authority
        self.revocations = revocations
    }

    /// Why `signature` does not sign `e`, or nil when it does: the chain leads to the authority and was valid
    /// when `e` was made (its stamp: a signature proves authorship at the time of the event, so an event made
    /// while its signer's certificate was valid stays valid after the certificate expires, as Certificate
    /// Transparency judges a certificate by when it was logged) or is valid at `nowMillis` (a renewed
    /// certificate signing its replica's older events); its device certificate names `e`'s replica and
    /// has scope `cluster` or the user of `e`'s stream; no key of it was revoked at or before the event's time
    /// (a revocation cuts what was signed from its `revokedAt` on); and the Ed25519 signature over
    /// `OriginSignature.message(for:)` verifies by the device key.
    public mutating func refusal(_ e: Event, _ signature: OriginSignature, nowMillis: UInt64) -> String? {
        check(e, signature, nowMillis: nowMillis)?.reason
    }

    /// Why a signature does not hold: `forged` when it never could (a chain that does not lead to the authority,
    /// another replica's or another user's certificate, signature bytes that do not verify, a key other than the
    /// one the replica is bound to), not when it did once (a certificate expired or revoked since the event was
    /// made was not valid when it was made: an honest replica may still relay such an event).
    public struct Refusal: Sendable, Equatable {
        public let reason: String
        public let forged: Bool
    }

    /// `refusal`, with its kind.
    public mutating func check(_ e: Event, _ signature: OriginSignature, nowMillis: UInt64) -> Refusal? {
        func forged(_ r: String) -> Refusal { Refusal(reason: r, forged: true) }
        guard OriginSignature.isSigned(e.stream) else { return forged("stream \(e.stream) is not signed by its origins") }
        let chain: [Certificate]
        if let known = verified[signature.chain] { chain = known } else {
            do {
                let certs = try signature.chain.map { b throws(CertificateError) in try Certificate(decoding: b) }
                _ = try CertificateChain.verifySignatures(certs, authority: authority)
                chain = certs
            } catch {
                return forged("the signer's chain of event \(e.id) does not verify: \(error.description)")
            }
            if verified.count > 1024 { verified = [:] }
            verified[signature.chain] = chain
        }
        let device = chain[0]
        guard device.replica == e.id.origin.replica else {
            return forged("event \(e.id) is signed by \(device.subject), not by its origin \(e.id.origin.replica)")
        }
        if case .user(let id) = device.scope, id != e.stream.userID {
            return forged("event \(e.id) of \(e.stream) is signed by \(device.subject), of another user")
        }
        if let known = knownKey?(device.replica), known != device.key {
            return forged("event \(e.id) is signed by key \(CertificateChain.fingerprint(device.key)) for replica \(device.replica), which this side knows by key \(CertificateChain.fingerprint(known)) (a replica id is bound to one key)")
        }
        guard signature.signature.count == Ed25519.signatureLength,
              Ed25519.verify(signature: signature.signature, message: OriginSignature.message(for: e), publicKey: device.key) else {
            return forged("the signature of event \(e.id) by \(device.subject) does not verify")
        }
        let made = e.hlc.physicalMillis
        // Valid when the event was made, or now (a replica signs its own events as it sends them: after a
        // renewal, its older events carry the new certificate, which was not yet valid when they were made).
        if let why = CertificateChain.invalidity(chain, at: made), CertificateChain.invalidity(chain, at: nowMillis) != nil {
            return Refusal(reason: "event \(e.id), made \(ISOTime.format(millis: Int64(clamping: made))), when its signer's chain was not valid (nor is it now): \(why)", forged: false)
        }
        if let r = revocations?.revocation(of: chain), made >= r.revokedAtMillis {
            return Refusal(reason: "event \(e.id) was made after its signer's key was revoked: \(SyncSession.revokedMessage(device, r))", forged: false)
        }
        return nil
    }
}
