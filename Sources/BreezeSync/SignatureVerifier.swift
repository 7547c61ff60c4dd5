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
    /// Device certificates of chains found valid, by the chain's encoding.
    private var verified: [[[UInt8]]: [Certificate]] = [:]

    public init(authority: [UInt8], revocations: Revocations?) {
        self.authority = authority
        self.revocations = revocations
    }

    /// Why `signature` does not sign `e`, or nil when it does: the chain leads to the authority and is valid at
    /// `nowMillis`; its device certificate names `e`'s replica and has scope `cluster` or the user of `e`'s
    /// stream; no key of it is revoked; the Ed25519 signature over `OriginSignature.message(for:)` verifies by
    /// the device key.
    public mutating func refusal(_ e: Event, _ signature: OriginSignature, nowMillis: UInt64) -> String? {
        guard OriginSignature.isSigned(e.stream) else { return "stream \(e.stream) is not signed by its origins" }
        let chain: [Certificate]
        if let known = verified[signature.chain] { chain = known } else {
            do {
                let certs = try signature.chain.map { b throws(CertificateError) in try Certificate(decoding: b) }
                _ = try CertificateChain.verify(certs, authority: authority, nowMillis: nowMillis)
                chain = certs
            } catch {
                return "the signer's chain of event \(e.id) does not verify: \(error.description)"
            }
            if verified.count > 1024 { verified = [:] }
            verified[signature.chain] = chain
        }
        let device = chain[0]
        guard device.replica == e.id.origin.replica else {
            return "event \(e.id) is signed by \(device.subject), not by its origin \(e.id.origin.replica)"
        }
        if case .user(let id) = device.scope, id != e.stream.userID {
            return "event \(e.id) of \(e.stream) is signed by \(device.subject), of another user"
        }
        if let r = revocations?.revocation(of: chain) {
            return "event \(e.id) is signed by a revoked key: \(SyncSession.revokedMessage(device, r))"
        }
        guard signature.signature.count == Ed25519.signatureLength,
              Ed25519.verify(signature: signature.signature, message: OriginSignature.message(for: e), publicKey: device.key) else {
            return "the signature of event \(e.id) by \(device.subject) does not verify"
        }
        return nil
    }
}
