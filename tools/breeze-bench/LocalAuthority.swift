import BreezeCLI
import BreezeCore
import BreezeCrypto
import BreezeStore
import BreezeSync
import Glibc

/// A cluster authority made for one run of a benchmark that starts its own nodes or sessions. Its private key
/// stays in memory; its public key is written to `<directory>/authority.pub`, and each database it enrols gets
/// its certificate at `<db>.cert` (and its device key at `<db>.key`, as `breeze init` makes it).
struct LocalAuthority {
    static let dayMillis: UInt64 = 86_400_000
    let key = Ed25519.KeyPair.generate()
    let publicKeyPath: String

    init(directory: String) throws(CLIError) {
        publicKeyPath = directory + "/authority.pub"
        try CredentialFiles.writeNew(publicKeyPath, CredentialFiles.authorityText(key.publicKey), option: "bench")
    }

    /// A certificate of scope `scope` for `key` as replica `replica`, valid from a day ago for a year.
    func certificate(for deviceKey: [UInt8], replica: ReplicaID, scope: Scope = .cluster) throws(CLIError) -> Certificate {
        let now = SystemClock.nowMillis()
        do {
            return try Certificate.issue(role: .device, key: deviceKey, replica: replica, scope: scope, notBefore: now - LocalAuthority.dayMillis,
                                         notAfter: now + 365 * LocalAuthority.dayMillis, signer: key)
        } catch { throw .failure("bench: \(error.description)") }
    }

    /// `--cert FILE --authority FILE` for `breeze node` on the existing database `db`, enrolled with scope
    /// `cluster`.
    func nodeArguments(db: String) throws(CLIError) -> [String] {
        let replica: ReplicaID
        let deviceKey: Ed25519.KeyPair
        do {
            let log = try EventLog.openReadOnly(at: db)
            replica = log.replica
            log.close()
            deviceKey = try KeyFile.deviceKey(forDatabase: db, replica: replica, create: true)
        } catch { throw .failure("bench: \(db): \(error)") }
        let certPath = db + ".cert"
        if access(certPath, F_OK) != 0 {
            try CredentialFiles.writeNew(certPath, CertificateChain.text([try certificate(for: deviceKey.publicKey, replica: replica)]), option: "bench")
        }
        return ["--cert", certPath, "--authority", publicKeyPath]
    }

    /// Credentials for an in-process session as replica `replica` of scope `scope` (a fresh device key, nothing
    /// on disk).
    func credentials(replica: ReplicaID, scope: Scope = .cluster) throws(CLIError) -> SyncCredentials {
        let device = Ed25519.KeyPair.generate()
        do {
            return try SyncCredentials(deviceKey: device, chain: [try certificate(for: device.publicKey, replica: replica, scope: scope)],
                                       authority: key.publicKey, nowMillis: SystemClock.nowMillis())
        } catch let e as CLIError { throw e } catch { throw .failure("bench: \(error)") }
    }
}
