import Testing
import BreezeCore
import BreezeCrypto
import BreezeStore
import BreezeSync
@testable import BreezeCLI
@preconcurrency import Glibc
import BreezeTestSupport

/// Device keys, authorities and enrolment from the command line (`breeze init`, `key show`, `authority new`,
/// `enrol`), and what `breeze node` refuses before it starts.
struct EnrolCLITests {
    /// `breeze key show --json` of the harness database: replica and key.
    static func keyShow(_ h: Harness, db: String? = nil) -> (replica: String, key: String) {
        let out = h.run(["--db", db ?? h.db, "key", "show", "--json"]).out.joined()
        let parts = out.split(separator: "\"", omittingEmptySubsequences: false)
        func field(_ f: String) -> String { parts.firstIndex { $0 == f }.map { String(parts[$0 + 2]) } ?? "" }
        return (field("replica"), field("deviceKey"))
    }

    @Test func initMakesAPrivateDeviceKeyBesideTheDatabaseAndKeyShowPrintsItsPublicHalf() throws {
        let h = Harness()
        let created = h.run(["init"])
        #expect(created.code == 0 && created.out.first?.contains("device key \(h.db).key") == true, "\(created.out)")
        #expect(fileMode(h.db + ".key") == 0o600)
        let stored = try KeyFile.read(h.db + ".key")
        let log = try EventLog.open(at: h.db)
        #expect(stored.replica == log.replica)
        log.close()
        let (replica, key) = Self.keyShow(h)
        #expect(replica == stored.replica?.description && key == Digest.hex(stored.key.publicKey))
        let text = h.run(["key", "show"]).out
        #expect(text.count == 3 && text[1].contains(key) && text[2].hasPrefix("enrol it:"), "\(text)")
        // The database file holds no part of the private key.
        #expect(!readFileBytes(h.db).containsBytes(stored.key.seed))
        #expect(h.run(["key", "list"]).code == 2 && h.run(["key"]).code == 2)
    }

    @Test func aDatabaseMadeBeforeKeysGetsOneFromItsFirstWritingCommandOrFromInit() throws {
        let h = Harness()
        try EventLog.create(at: h.db).close()                      // as an older breeze made it: no key
        #expect(access(h.db + ".key", F_OK) != 0)
        #expect(h.run(["favourite", "add", "131075"]).code == 0)
        #expect(fileMode(h.db + ".key") == 0o600)
        let older = h.dir + "/older.db"
        try EventLog.create(at: older).close()
        let again = h.run(["--db", older, "init"])
        #expect(again.code == 0 && again.out.first?.contains("device key created") == true, "\(again.out)")
        #expect(h.run(["--db", older, "init"]).out.first?.contains("nothing changed") == true)
        // A key that belongs to another replica (the database was replaced under it) is refused, not reused.
        unlink(older)
        try EventLog.create(at: older).close()
        let refused = h.run(["--db", older, "key", "show"])
        #expect(refused.code == 1 && refused.err.count == 1 && refused.err[0].contains("move the key away"), "\(refused.err)")
    }

    @Test func authoritiesEnrolDevicesAndUserAuthoritiesAndTheChainsVerify() throws {
        let h = Harness()
        #expect(h.run(["init"]).code == 0)
        let cluster = h.dir + "/cluster.key"
        let made = h.run(["authority", "new", "--out", cluster])
        #expect(made.code == 0 && fileMode(cluster) == 0o600 && fileMode(cluster + ".pub") == 0o644, "\(made)")
        #expect(h.run(["authority", "new", "--out", cluster]).code == 1, "an existing key is never overwritten")
        let authority = try CredentialFiles.readAuthority(cluster + ".pub")
        #expect(authority == (try KeyFile.read(cluster)).key.publicKey)
        let (replica, key) = Self.keyShow(h)

        // A server certificate.
        let serverCert = h.dir + "/server.cert"
        #expect(h.run(["enrol", "--signer", cluster, "--device-key", key, "--replica", replica, "--scope", "cluster",
                       "--out", serverCert]).code == 0)
        let chain = try CertificateChain.parse(text: String(decoding: readFileBytes(serverCert), as: UTF8.self))
        let device = try CertificateChain.verify(chain, authority: authority, nowMillis: SystemClock.nowMillis())
        #expect(device.replica.description == replica && device.scope == .cluster && Digest.hex(device.key) == key)
        #expect(device.notAfter - device.notBefore == 366 * EnrolCommand.dayMillis)

        // ana's user authority, certified by the cluster authority, enrols a device of hers: a chain of two.
        let ana = h.dir + "/ana.key", anaCert = h.dir + "/ana.cert", phoneCert = h.dir + "/phone.cert"
        #expect(h.run(["authority", "new", "--out", ana]).code == 0)
        let anaPublic = Digest.hex(try KeyFile.read(ana).key.publicKey)
        #expect(h.run(["enrol", "--signer", cluster, "--user-authority", anaPublic, "--scope", "user:ana", "--out", anaCert, "--days", "30"]).code == 0)
        #expect(h.run(["enrol", "--signer", ana, "--signer-chain", anaCert, "--device-key", key, "--replica", replica,
                       "--scope", "user:ana", "--out", phoneCert]).code == 0)
        let phone = try CertificateChain.parse(text: String(decoding: readFileBytes(phoneCert), as: UTF8.self))
        #expect(phone.count == 2)
        #expect(try CertificateChain.verify(phone, authority: authority, nowMillis: SystemClock.nowMillis()).scope == .user("ana"))

        // Usage errors (exit 2) and failures (exit 1), each one line naming the input.
        let usage: [[String]] = [
            ["enrol", "--device-key", key, "--replica", replica, "--scope", "cluster", "--out", h.dir + "/x.cert"],
            ["enrol", "--signer", cluster, "--scope", "cluster", "--out", h.dir + "/x.cert"],
            ["enrol", "--signer", cluster, "--device-key", key, "--user-authority", anaPublic, "--scope", "user:ana", "--out", h.dir + "/x.cert"],
            ["enrol", "--signer", cluster, "--device-key", key, "--scope", "cluster", "--out", h.dir + "/x.cert"],
            ["enrol", "--signer", cluster, "--device-key", key, "--replica", replica, "--scope", "everyone", "--out", h.dir + "/x.cert"],
            ["authority", "new"], ["authority", "old", "--out", h.dir + "/y.key"],
        ]
        for args in usage { #expect(h.run(args).code == 2, "\(args)") }
        let failures: [([String], String)] = [
            (["enrol", "--signer", cluster, "--device-key", "abc", "--replica", replica, "--scope", "cluster", "--out", h.dir + "/x.cert"], "--device-key"),
            (["enrol", "--signer", cluster, "--device-key", key, "--replica", "xyz", "--scope", "cluster", "--out", h.dir + "/x.cert"], "--replica 'xyz'"),
            (["enrol", "--signer", h.dir + "/none.key", "--device-key", key, "--replica", replica, "--scope", "cluster", "--out", h.dir + "/x.cert"], "none.key"),
            (["enrol", "--signer", cluster, "--device-key", key, "--replica", replica, "--scope", "cluster", "--out", serverCert], "exists"),
            (["enrol", "--signer", ana, "--signer-chain", anaCert, "--device-key", key, "--replica", replica, "--scope", "cluster", "--out", h.dir + "/x.cert"], "--scope cluster"),
            (["enrol", "--signer", ana, "--signer-chain", anaCert, "--device-key", key, "--replica", replica, "--scope", "user:bo", "--out", h.dir + "/x.cert"], "--scope user:bo"),
            (["enrol", "--signer", cluster, "--signer-chain", anaCert, "--device-key", key, "--replica", replica, "--scope", "user:ana", "--out", h.dir + "/x.cert"], "--signer-chain"),
            (["enrol", "--signer", cluster, "--user-authority", anaPublic, "--scope", "cluster", "--out", h.dir + "/x.cert"], "user:ID"),
        ]
        for (args, named) in failures {
            let r = h.run(args)
            #expect(r.code == 1 && r.err.count == 1 && r.err[0].contains(named), "\(args): \(r.err)")
        }
        #expect(access(h.dir + "/x.cert", F_OK) != 0, "nothing written by a refused enrolment")
        // A private key others may read is refused as a signer too.
        chmod(cluster, 0o644)
        let exposed = h.run(["enrol", "--signer", cluster, "--device-key", key, "--replica", replica, "--scope", "cluster", "--out", h.dir + "/x.cert"])
        #expect(exposed.code == 1 && exposed.err.first?.contains("chmod 600") == true, "\(exposed.err)")
    }

    /// `breeze authority revoke` records a signed revocation; bad input is refused with nothing stored.
    @Test func authorityRevokeRecordsASignedRevocationAndRefusesBadInput() throws {
        let h = Harness()
        #expect(h.run(["init"]).code == 0)
        let cluster = h.dir + "/cluster.key", cert = h.dir + "/phone.cert"
        #expect(h.run(["authority", "new", "--out", cluster]).code == 0)
        let (replica, key) = Self.keyShow(h)
        #expect(h.run(["enrol", "--signer", cluster, "--device-key", key, "--replica", replica, "--scope", "user:ana", "--out", cert]).code == 0)
        let before = try EventLog.open(at: h.db).count(stream: .public)
        // Usage errors (exit 2) and failures (exit 1), each naming the input; nothing stored by any of them.
        for args in [["authority", "revoke", "--cert", cert], ["authority", "revoke", "--signer", cluster],
                     ["authority", "revoke", "--signer", cluster, "--device-key", key]] {
            #expect(h.run(args).code == 2, "\(args)")
        }
        for (args, named) in [(["authority", "revoke", "--signer", h.dir + "/none.key", "--cert", cert], "none.key"),
                              (["authority", "revoke", "--signer", cluster, "--cert", h.dir + "/none.cert"], "--cert"),
                              (["authority", "revoke", "--signer", cluster, "--device-key", "abc", "--replica", replica], "--device-key"),
                              (["authority", "revoke", "--signer", cluster, "--cert", cert, "--reason", String(repeating: "x", count: 201)], "--reason")] {
            let r = h.run(args)
            #expect(r.code == 1 && r.err.count == 1 && r.err[0].contains(named), "\(args): \(r.err)")
        }
        let log = try EventLog.open(at: h.db)
        #expect(try log.count(stream: .public) == before)
        log.close()
        // The real one: a device.revoke in public, signed by the cluster authority, naming the phone's key.
        let r = h.run(["--json", "authority", "revoke", "--signer", cluster, "--cert", cert, "--reason", "lost"])
        #expect(r.code == 0 && r.out.joined().contains(key), "\(r)")
        let revocations = try EventLog.open(at: h.db).revocations(afterSeq: 0)
        #expect(revocations.count == 1)
        let held = try #require(revocations.first).revocation.get()
        let authority = try CredentialFiles.readAuthority(cluster + ".pub")
        #expect(Digest.hex(held.key) == key && held.reason == "lost" && held.replica.description == replica)
        #expect(Revocations(authority: authority).refusal(held) == nil)
    }

    @Test func aNodeRefusesToStartOnAnExposedKeyAForeignAuthorityOrAnotherReplicasCertificate() throws {
        let h = Harness()
        #expect(h.run(["init"]).code == 0)
        let cluster = h.dir + "/cluster.key", other = h.dir + "/other.key", cert = h.dir + "/b.cert"
        #expect(h.run(["authority", "new", "--out", cluster]).code == 0 && h.run(["authority", "new", "--out", other]).code == 0)
        let (replica, key) = Self.keyShow(h)
        #expect(h.run(["enrol", "--signer", cluster, "--device-key", key, "--replica", replica, "--scope", "user:ana", "--out", cert]).code == 0)
        func node(_ extra: [String], db: String? = nil) -> (code: Int32, out: [String], err: [String]) {
            h.run(["--db", db ?? h.db, "node", "--listen", "127.0.0.1:0"] + extra)
        }
        #expect(node(["--secret-file", h.dir + "/cluster.key"]).code == 2, "the cluster secret is gone")
        #expect(node(["--cert", cert]).code == 2 && node(["--authority", cluster + ".pub"]).code == 2)
        let wrongAuthority = node(["--cert", cert, "--authority", other + ".pub"])
        #expect(wrongAuthority.code == 1 && wrongAuthority.err.first?.contains("does not trust") == true, "\(wrongAuthority.err)")
        let wrongUser = h.run(["--user", "bo", "node", "--listen", "127.0.0.1:0", "--cert", cert, "--authority", cluster + ".pub"])
        #expect(wrongUser.code == 1 && wrongUser.err.first?.contains("not user:bo") == true, "\(wrongUser.err)")
        // Another database with this certificate: it certifies another key.
        let second = h.dir + "/second.db"
        #expect(h.run(["--db", second, "init"]).code == 0)
        let stolen = node(["--cert", cert, "--authority", cluster + ".pub"], db: second)
        #expect(stolen.code == 1 && stolen.err.first?.contains("not this replica's key") == true, "\(stolen.err)")
        // The device key readable by others, as ssh refuses it.
        chmod(h.db + ".key", 0o640)
        let exposed = node(["--cert", cert, "--authority", cluster + ".pub"])
        #expect(exposed.code == 1 && exposed.err.count == 1 && exposed.err[0].contains("readable by group or others"), "\(exposed.err)")
    }
}

extension Array where Element == UInt8 {
    func containsBytes(_ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return false }
        for i in 0...(count - needle.count) where self[i] == needle[0] && Array(self[i..<(i + needle.count)]) == needle { return true }
        return false
    }
}
