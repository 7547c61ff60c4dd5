import Testing
import BreezeCore
import BreezeCrypto
@testable import BreezeSync

/// Revocations (`Protocol/sync.md` 4.10): which hold, what they refuse, and the handshake that fails.
struct RevocationTests {
    typealias F = Fixtures
    static let tablet = ReplicaID(rawValue: 0x7AB0_0000_0000_0002)

    static func revoke(_ replica: ReplicaID, by signer: Ed25519.KeyPair = F.authority, chain: [[UInt8]] = [], key: [UInt8]? = nil) -> Revocation {
        Revocation.sign(key: key ?? F.deviceKey(replica).publicKey, replica: replica, revokedAtMillis: F.now, reason: "lost",
                        signer: signer, signerChain: chain)
    }

    @Test func onlyRevocationsTheClusterAuthorityOrAUserAuthorityItCertifiedSignedHold() {
        var set = Revocations(authority: F.authority.publicKey)
        #expect(set.refusal(Self.revoke(F.phone)) == nil)
        #expect(set.refusal(Self.revoke(F.phone, by: F.foreignAuthority)) != nil, "another cluster's authority")
        var tampered = Self.revoke(F.phone)
        tampered.key = F.deviceKey(F.server).publicKey
        #expect(set.refusal(tampered) == "the signature does not verify", "the signed key rewritten")
        #expect(set.refusal(Self.revoke(F.phone, by: F.anaAuthority)) != nil, "a user authority without its certificate")
        #expect(set.refusal(Self.revoke(F.phone, by: F.anaAuthority, chain: [F.anaAuthorityCertificate.encoded])) == nil)
        let selfMade = F.certificate(.userAuthority, key: F.anaAuthority.publicKey, replica: ReplicaID(rawValue: 0), scope: .user("ana"),
                                     signer: F.foreignAuthority)
        #expect(set.refusal(Self.revoke(F.phone, by: F.anaAuthority, chain: [selfMade.encoded])) != nil, "a user authority certified elsewhere")
        #expect(!set.add(Self.revoke(F.phone, by: F.foreignAuthority)) && set.count == 0)
        #expect(set.add(Self.revoke(F.phone)) && set.add(Self.revoke(F.phone)) && set.count == 1, "held once")
    }

    @Test func aRevocationRefusesTheChainsWithItsKeyInTheScopeOfItsSigner() {
        var set = Revocations(authority: F.authority.publicKey)
        let phone = F.chain(F.phone, .user("ana")), tablet = F.chain(Self.tablet, .user("ana")), server = F.chain(F.server, .cluster)
        #expect(set.revocation(of: phone) == nil)
        // ana's authority revokes her phone: the phone's chain is refused, her tablet's and the server's are not.
        set.add(Self.revoke(F.phone, by: F.anaAuthority, chain: [F.anaAuthorityCertificate.encoded]))
        #expect(set.revocation(of: phone) != nil && set.revocation(of: tablet) == nil && set.revocation(of: server) == nil)
        // ana's authority cannot revoke the server (another scope) ...
        set.add(Self.revoke(F.server, by: F.anaAuthority, chain: [F.anaAuthorityCertificate.encoded]))
        #expect(set.revocation(of: server) == nil)
        // ... the cluster authority can, and can revoke ana's authority itself, which refuses every chain through it.
        set.add(Self.revoke(F.server))
        #expect(set.revocation(of: server) != nil)
        set.add(Self.revoke(ReplicaID(rawValue: 0), key: F.anaAuthority.publicKey))
        #expect(set.revocation(of: tablet) != nil)
    }

    /// A user authority's signature counts only while it holds: its certificate valid at the revocation's
    /// time, and the authority not itself revoked by the cluster, whichever of the two a node read first.
    @Test func aRevokedOrExpiredUserAuthorityRevokesNothing() {
        let direct = F.certificate(.device, key: F.deviceKey(Self.tablet).publicKey, replica: Self.tablet, scope: .user("ana"),
                                   signer: F.authority)
        let byAna = Self.revoke(Self.tablet, by: F.anaAuthority, chain: [F.anaAuthorityCertificate.encoded])
        let anaRevoked = Self.revoke(ReplicaID(rawValue: 0), key: F.anaAuthority.publicKey)
        for order in [[byAna, anaRevoked], [anaRevoked, byAna]] {
            var set = Revocations(authority: F.authority.publicKey)
            for r in order { set.add(r) }
            #expect(set.revocation(of: [direct]) == nil, "a revoked authority's revocation held")
        }
        var set = Revocations(authority: F.authority.publicKey)
        set.add(byAna)
        #expect(set.revocation(of: [direct]) != nil, "the same revocation holds while ana's authority does")
        let late = Revocation.sign(key: F.deviceKey(Self.tablet).publicKey, replica: Self.tablet,
                                   revokedAtMillis: F.anaAuthorityCertificate.notAfter + 1, reason: "lost",
                                   signer: F.anaAuthority, signerChain: [F.anaAuthorityCertificate.encoded])
        #expect(set.refusal(late) == "the signer's certificate was not valid at the revocation's time")
    }

    @Test func aRevokedPeerFailsTheHandshakeWhicheverSideItIsOn() {
        var set = Revocations(authority: F.authority.publicKey)
        set.add(Self.revoke(F.phone))
        var server = F.config(F.server)
        server.revocations = set
        // The revoked phone dials the server: refused with an authentication error naming the revocation.
        let (_, s, wire) = F.handshake(F.client(F.config(F.phone, .user("ana"))), F.server(server))
        #expect(s.state == .closed)
        // In clear the refusal names nobody (the phone's identity goes only to a verified server, and an
        // observer learns nothing of the revocation); the server's reason names it.
        #expect(F.refusedInClear(wire), "\(wire)")
        let reasons = F.closeReasons(F.client(F.config(F.phone, .user("ana"))), F.server(server))
        #expect(reasons.contains { $0.contains("revoked") && $0.contains("(lost)") }, "\(reasons)")
        // The server dials the revoked phone: refused too.
        let (c2, _, _) = F.handshake(F.client(server), F.server(F.config(F.phone, .user("ana"))))
        #expect(c2.state == .closed)
        // Another of ana's devices is not affected.
        let (c3, s3, _) = F.handshake(F.client(F.config(Self.tablet, .user("ana"))), F.server(server))
        #expect(c3.state == .ready && s3.state == .ready)
    }

    /// A revocation that reaches the node while a handshake runs (after `handshake1`, before the peer's
    /// certificate): the handshake fails when the certificate arrives, on the server's side and the client's.
    @Test func aRevocationArrivingDuringTheHandshakeFailsIt() {
        var set = Revocations(authority: F.authority.publicKey)
        set.add(Self.revoke(F.phone))
        // The revoked phone dials; the revocation reaches the server between handshake1 and handshake3.
        var c = F.client(F.config(F.phone, .user("ana"))), s = F.server(F.config(F.server))
        _ = s.start()
        let h1 = F.sent(c.start())
        let h2 = h1.flatMap { F.sent(s.receive($0)) }
        s.revocationsChanged(set)
        let h3 = h2.flatMap { F.sent(c.receive($0)) }
        let answer = h3.flatMap { s.receive($0) }
        #expect(s.state == .closed && F.closed(answer) == .authentication, "\(answer)")
        #expect(!answer.contains { if case .authenticated = $0 { return true } else { return false } })
        // The server dials the revoked phone; the revocation reaches the server before handshake2 arrives.
        var c2 = F.client(F.config(F.server)), s2 = F.server(F.config(F.phone, .user("ana")))
        _ = s2.start()
        let h1b = F.sent(c2.start())
        let h2b = h1b.flatMap { F.sent(s2.receive($0)) }
        c2.revocationsChanged(set)
        let out = h2b.flatMap { c2.receive($0) }
        #expect(c2.state == .closed && F.closed(out) == .authentication, "\(out)")
        // Without the revocation the same steps authenticate (the test drives a handshake that can succeed).
        var c3 = F.client(F.config(F.phone, .user("ana"))), s3 = F.server(F.config(F.server))
        _ = s3.start()
        let h2c = F.sent(c3.start()).flatMap { F.sent(s3.receive($0)) }
        _ = h2c.flatMap { F.sent(c3.receive($0)) }.flatMap { s3.receive($0) }
        #expect(s3.state == .ready)
    }
}
