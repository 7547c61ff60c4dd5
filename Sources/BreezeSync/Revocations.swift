public import BreezeCore
import BreezeCrypto

/// The revocations a replica enforces (`Protocol/sync.md` section 4.10): those of its log whose signature
/// and signer verify against the cluster authority it trusts. A value with no I/O: the node feeds it the
/// `device.revoke` events of its log as they arrive, and every session checks peer chains against it.
public struct Revocations: Sendable, Equatable {
    /// The cluster authority's public key.
    public let authority: [UInt8]
    /// Revoked keys, each with the scope it is revoked in: nil for every scope (the cluster authority
    /// signed it), else only in that user's scope (that user's authority signed it).
    private var revoked: [[UInt8]: [(scope: Scope?, revocation: Revocation)]] = [:]
    /// How many revocations hold.
    public private(set) var count = 0

    /// No revocations yet, against `authority`.
    public init(authority: [UInt8]) { self.authority = authority }

    public static func == (a: Revocations, b: Revocations) -> Bool {
        a.authority == b.authority && a.count == b.count
            && a.revoked.mapValues { $0.map(\.revocation) } == b.revoked.mapValues { $0.map(\.revocation) }
    }

    /// Why `r` does not hold, or nil when it does: its signature, and its signer (the cluster authority, or a
    /// user authority whose certificate the cluster authority signed).
    public func refusal(_ r: Revocation) -> String? {
        guard r.key.count == Ed25519.publicKeyLength, r.signer.count == Ed25519.publicKeyLength else { return "malformed keys" }
        guard r.signatureHolds else { return "the signature does not verify" }
        if r.signerChain.isEmpty {
            return r.signer == authority ? nil : "signed by \(CertificateChain.fingerprint(r.signer)), not the cluster authority"
        }
        guard let c = try? Certificate(decoding: r.signerChain[0]), c.role == .userAuthority else {
            return "the signer's certificate is not a user authority's"
        }
        guard c.key == r.signer else { return "the signer's certificate is for another key" }
        guard c.issuer == authority, c.signed(by: authority) else { return "the signer's certificate is not the cluster authority's" }
        guard r.revokedAtMillis >= c.notBefore && r.revokedAtMillis <= c.notAfter else {
            return "the signer's certificate was not valid at the revocation's time"
        }
        return nil
    }

    /// Takes `r` in if it holds; returns whether it did (a revocation already held counts as taken).
    @discardableResult
    public mutating func add(_ r: Revocation) -> Bool {
        guard refusal(r) == nil else { return false }
        let scope: Scope? = r.signerChain.isEmpty ? nil : (try? Certificate(decoding: r.signerChain[0]))?.scope
        if revoked[r.key]?.contains(where: { $0.revocation == r }) == true { return true }
        revoked[r.key, default: []].append((scope, r))
        count += 1
        return true
    }

    /// True when the cluster authority revoked `key`.
    private func clusterRevoked(_ key: [UInt8]) -> Bool {
        revoked[key]?.contains(where: { $0.scope == nil }) == true
    }

    /// The revocation that refuses `chain` (a device certificate, then its signer's if a user authority
    /// signed it), if any: a key of the chain revoked by the cluster authority, or the device's key revoked
    /// by the authority of the device's own user scope.
    public func revocation(of chain: [Certificate]) -> Revocation? {
        guard count > 0 else { return nil }
        for (i, c) in chain.enumerated() {
            for entry in revoked[c.key] ?? [] {
                if entry.scope == nil { return entry.revocation }
                // A user authority the cluster authority revoked signs nothing any more; checked here, not
                // when the revocation is taken in, so that the outcome does not depend on which of the two
                // revocations a node read first.
                if i == 0, c.role == .device, entry.scope == c.scope, !clusterRevoked(entry.revocation.signer) {
                    return entry.revocation
                }
            }
        }
        return nil
    }
}
