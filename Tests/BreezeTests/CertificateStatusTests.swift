import Testing
@testable import Breeze
import BreezeTestSupport
@preconcurrency import Glibc

/// Issue 29, point 7: an app follows its certificate's lifetime through the library (`certificateStatus`) and
/// installs one its authority renewed out of band (`installCertificate`); one for another key is refused.
struct CertificateStatusTests {
    @Test func anAppReadsItsCertificatesExpiryAndInstallsARenewedOne() throws {
        let dir = TempDir()
        let cluster = authority(in: dir)
        let replica = try Replica(path: dir.file("phone.db"), options: .init(user: "ana"))
        defer { replica.close() }
        #expect(try replica.certificateStatus() == nil, "no certificate before the first sync or installation")
        // Its authority certifies its key (as `breeze enrol` does); the app installs the chain.
        let args = cluster.nodeArguments(db: dir.file("phone.db"), scope: "user:ana")
        let text = String(decoding: readFileBytes(args[1]), as: UTF8.self)
        try replica.installCertificate(text)
        let status = try #require(try replica.certificateStatus())
        let now = UInt64(time(nil)) * 1000
        #expect(status.subject.contains(replica.id.description) && status.subject.contains("user:ana"), "\(status.subject)")
        #expect(status.notBefore < now && status.notAfter > now + 300 * 86_400_000, "a year's certificate: \(status)")
        #expect(status.renewalRequestedMillis == nil)
        // Another replica's certificate is refused, naming the problem, and the installed one stays.
        let other = try Replica(path: dir.file("tablet.db"), options: .init(user: "ana"))
        other.close()
        let otherText = String(decoding: readFileBytes(cluster.nodeArguments(db: dir.file("tablet.db"), scope: "user:ana")[1]), as: UTF8.self)
        do { try replica.installCertificate(otherText); Issue.record("another replica's certificate was installed") } catch {
            #expect(BreezeError.invalidArgument ~= error && "\(error)".contains("not for this replica"), "\(error)")
        }
        do { try replica.installCertificate("not a certificate"); Issue.record("garbage was installed") } catch {
            #expect(BreezeError.invalidArgument ~= error, "\(error)")
        }
        #expect(try replica.certificateStatus() == status)
    }
}
