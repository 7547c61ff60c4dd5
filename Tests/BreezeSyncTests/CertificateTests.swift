import Testing
import BreezeCore
import BreezeCrypto
@testable import BreezeSync

/// Certificates and chains (`Protocol/sync.md` section 4.5): the layout round-trips, every altered byte is
/// caught, and only the two chain shapes the protocol allows verify.
struct CertificateTests {
    typealias F = Fixtures
    static let auth = F.authority.publicKey

    @Test func aCertificateRoundTripsThroughItsBytesAndItsTextForm() throws {
        let chain = F.chain(F.phone, .user("ana"))
        #expect(chain.count == 2 && chain[0].role == .device && chain[1].role == .userAuthority)
        for c in chain { #expect(try Certificate(decoding: c.encoded) == c) }
        #expect(try CertificateChain.parse(text: CertificateChain.text(chain)) == chain)
        let device = chain[0]
        #expect(device.key == F.deviceKey(F.phone).publicKey && device.replica == F.phone && device.scope == .user("ana"))
        #expect(device.issuer == F.anaAuthority.publicKey && device.signed(by: F.anaAuthority.publicKey))
        #expect(!device.signed(by: F.authority.publicKey))
        #expect(try CertificateChain.verify(chain, authority: Self.auth, nowMillis: F.now) == device)
    }

    @Test func everyAlteredByteOfACertificateIsRefused() {
        let chain = F.chain(F.server, .cluster)
        let bytes = chain[0].encoded
        for i in 0..<bytes.count {
            var b = bytes
            b[i] ^= 0x01
            // Either it does not decode, or it decodes into something the authority did not sign.
            if let altered = try? Certificate(decoding: b) {
                #expect(throws: CertificateError.self, "byte \(i)") { try CertificateChain.verify([altered], authority: Self.auth, nowMillis: F.now) }
            }
        }
        #expect(throws: CertificateError.self) { try Certificate(decoding: bytes + [0]) }
        #expect(throws: CertificateError.self) { try Certificate(decoding: Array(bytes.dropLast())) }
    }

    @Test func onlyTheAllowedChainShapesVerify() throws {
        func refused(_ chain: [Certificate], _ why: String, sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(throws: CertificateError.self, "\(why)", sourceLocation: sourceLocation) {
                try CertificateChain.verify(chain, authority: Self.auth, nowMillis: F.now)
            }
        }
        let phoneKey = F.deviceKey(F.phone).publicKey
        // Allowed: a server certified by the cluster authority; a user's device certified by that user's
        // authority; a user's device certified by the cluster authority directly.
        _ = try CertificateChain.verify(F.chain(F.server, .cluster), authority: Self.auth, nowMillis: F.now)
        _ = try CertificateChain.verify(F.chain(F.phone, .user("ana")), authority: Self.auth, nowMillis: F.now)
        _ = try CertificateChain.verify(F.chain(F.phone, .user("ana"), viaUserAuthority: false), authority: Self.auth, nowMillis: F.now)
        // Refused:
        refused(F.chain(F.server, .cluster, signer: F.foreignAuthority), "a foreign cluster authority")
        refused(F.chain(F.phone, .user("ana"), signer: F.foreignAuthority), "a user authority certified by a foreign authority")
        let clusterByUser = F.certificate(key: phoneKey, replica: F.phone, scope: .cluster, signer: F.anaAuthority)
        refused([clusterByUser, F.anaAuthorityCertificate], "a cluster certificate from a user authority")
        let boByAna = F.certificate(key: phoneKey, replica: F.phone, scope: .user("bo"), signer: F.anaAuthority)
        refused([boByAna, F.anaAuthorityCertificate], "bo's device certified by ana's authority")
        let notByAna = F.certificate(key: phoneKey, replica: F.phone, scope: .user("ana"), signer: F.foreignAuthority)
        refused([notByAna, F.anaAuthorityCertificate], "a device certificate not signed by the user authority that follows it")
        refused([F.anaAuthorityCertificate], "an authority certificate in the device's place")
        let chain = F.chain(F.phone, .user("ana"))
        refused([chain[0], chain[0]], "a device certificate in the authority's place")
        refused(chain + [F.anaAuthorityCertificate], "a chain of three")
        refused([], "an empty chain")
        let expiredAuthority = F.certificate(.userAuthority, key: F.anaAuthority.publicKey, replica: ReplicaID(rawValue: 0), scope: .user("ana"),
                                             signer: F.authority, notBefore: F.notBefore, notAfter: F.now - 1)
        refused([chain[0], expiredAuthority], "an expired user authority")
        refused(F.chain(F.server, .cluster, notBefore: F.now + 1), "not valid yet")
    }

    @Test func certificatesNoChainWouldAcceptCannotBeIssued() {
        let key = F.deviceKey(F.phone).publicKey
        #expect(throws: CertificateError.self) {
            try Certificate.issue(role: .device, key: key, replica: ReplicaID(rawValue: 0), scope: .cluster, notBefore: 0, notAfter: 1, signer: F.authority)
        }
        #expect(throws: CertificateError.self) {
            try Certificate.issue(role: .userAuthority, key: key, replica: ReplicaID(rawValue: 0), scope: .cluster, notBefore: 0, notAfter: 1, signer: F.authority)
        }
        #expect(throws: CertificateError.self) {
            try Certificate.issue(role: .userAuthority, key: key, replica: F.phone, scope: .user("ana"), notBefore: 0, notAfter: 1, signer: F.authority)
        }
        #expect(throws: CertificateError.self) {
            try Certificate.issue(role: .device, key: key, replica: F.phone, scope: .cluster, notBefore: 2, notAfter: 1, signer: F.authority)
        }
        #expect(throws: CertificateError.self) {
            try Certificate.issue(role: .device, key: [UInt8](repeating: 0, count: 31), replica: F.phone, scope: .cluster, notBefore: 0, notAfter: 1, signer: F.authority)
        }
    }

    @Test func credentialsMustCertifyTheirOwnKey() {
        #expect(throws: CertificateError.self) {
            try SyncCredentials(deviceKey: F.deviceKey(F.server), chain: F.chain(F.phone, .cluster), authority: Self.auth, nowMillis: F.now)
        }
        #expect(throws: CertificateError.self) {
            try SyncCredentials(deviceKey: F.deviceKey(F.server), chain: F.chain(F.server, .cluster), authority: F.foreignAuthority.publicKey, nowMillis: F.now)
        }
        #expect((try? SyncCredentials(deviceKey: F.deviceKey(F.server), chain: F.chain(F.server, .cluster), authority: Self.auth, nowMillis: F.now))?.replica == F.server)
    }
}
