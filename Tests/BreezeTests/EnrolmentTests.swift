import Testing
import Foundation
import Breeze
import BreezeTestSupport
@preconcurrency import Glibc

/// Issue 30, "enrolment is CLI-only": an app makes an enrolment request through the library, its backend
/// certifies it (`breeze enrol --request`), the app installs the certificate, observes it, and asks for its
/// renewal; a request altered on the way is refused.
struct EnrolmentTests {
    @Test(.timeLimit(.minutes(5)))
    func anAppIsEnrolledFromItsRequestAndObservesItsCertificate() throws {
        let dir = TempDir()
        let cluster = authority(in: dir)
        let r = try Replica(path: dir.file("phone.db"), options: .init(user: "ana"))
        defer { r.close() }
        let observed = Collected(r.observeCertificate())
        defer { observed.cancel() }
        #expect(observed.wait(count: 1).first == .some(nil))

        // The request, as JSON the app posts to its backend.
        let request = try r.enrolmentRequest()
        #expect(request.user == "ana" && request.replica == r.id.description)
        #expect(try request.verify().key == r.devicePublicKey())
        try JSONEncoder().encode(request).write(to: URL(fileURLWithPath: dir.file("request.json")))

        // The backend certifies it.
        let enrol = runBreeze(["enrol", "--request", dir.file("request.json"), "--signer", cluster.keyFile, "--out", dir.file("phone.cert")])
        #expect(enrol.code == 0, "\(enrol.out)")
        let chain = String(decoding: readFileBytes(dir.file("phone.cert")), as: UTF8.self)
        try r.installCertificate(chain)
        let status = try #require(try r.certificateStatus())
        #expect(status.subject.contains(r.id.description) && status.subject.contains("user:ana"), "\(status.subject)")
        #expect(observed.wait { $0?.notAfter == status.notAfter }, "the installed certificate was not observed")
        #expect(!status.expires(withinMillis: 30 * 86_400_000, atMillis: UInt64(Date().timeIntervalSince1970 * 1000)))

        // A renewal asked for: a device.renew event in the user's stream, and the status says when.
        let before = try r.read { try $0.eventCount(stream: .user("ana")) }
        #expect(try r.requestCertificateRenewal())
        #expect(try r.read { try $0.eventCount(stream: .user("ana")) } == before + 1)
        #expect(observed.wait { $0?.renewalRequestedMillis != nil })

        // The certificate syncs: a node started with it and the authority accepts it (its chain checks).
        let options = try SyncOptions(certificateFile: dir.file("phone.cert"), authorityFile: cluster.publicKeyFile, listen: "127.0.0.1:0")
        let sync = try r.startSync(options)
        #expect(sync.listenAddress != nil)
        r.stopSync()
    }

    /// A request whose user (or key) was changed on the way fails its proof: the CLI refuses it naming the
    /// file and writes no certificate; a request that is not JSON says so.
    @Test func anAlteredRequestIsRefused() throws {
        let dir = TempDir()
        let cluster = authority(in: dir)
        let r = try Replica(path: dir.file("phone.db"), options: .init(user: "ana"))
        defer { r.close() }
        var request = try r.enrolmentRequest()
        request.user = "mallory"
        let verified = Result { () throws(BreezeError) in try request.verify() }
        if case .failure(let e) = verified {
            #expect(BreezeError.invalidArgument ~= e && e.description.contains("proof"), "\(e)")
        } else {
            Issue.record("an altered request verified")
        }
        try JSONEncoder().encode(request).write(to: URL(fileURLWithPath: dir.file("altered.json")))
        let refused = runProgramWithErrors(breeze, ["enrol", "--request", dir.file("altered.json"), "--signer", cluster.keyFile, "--out", dir.file("x.cert")])
        #expect(refused.code != 0 && refused.err.contains("altered.json") && refused.err.contains("proof"), "\(refused.err)")
        #expect(access(dir.file("x.cert"), F_OK) != 0)
        try Data("not json".utf8).write(to: URL(fileURLWithPath: dir.file("bad.json")))
        let bad = runProgramWithErrors(breeze, ["enrol", "--request", dir.file("bad.json"), "--signer", cluster.keyFile, "--out", dir.file("y.cert")])
        #expect(bad.code != 0 && bad.err.contains("not JSON"), "\(bad.err)")
    }

    /// `import Breeze` alone gives the key type an app signs with (a revocation's signer).
    @Test func theSigningKeyTypeComesWithImportBreeze() throws {
        let authorityKey = Ed25519.KeyPair.generate()
        let lost = Ed25519.KeyPair.generate()
        let revocation = Revocation.sign(key: lost.publicKey, replica: ReplicaID(rawValue: 7), revokedAtMillis: 1_700_000_000_000,
                                         reason: "lost", signer: authorityKey)
        #expect(revocation.key == lost.publicKey)
    }
}
