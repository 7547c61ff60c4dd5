import BreezeCore
import BreezeCrypto
import BreezeStore
import BreezeSync
@preconcurrency import Glibc

/// The public files of sealed sync, read and written for `breeze node`, `breeze enrol` and `breeze authority`:
/// an authority's public key (`#` comment lines, then 64 hex digits) and certificate chains (`CertificateChain`
/// text). Private keys are `BreezeStore.KeyFile`s.
enum CredentialFiles {
    /// The text of a small file, or a failure naming the option and the file.
    static func readText(_ path: String, option: String) throws(CLIError) -> String {
        do { return String(decoding: try KeyFile.readSmallFile(path, limit: 65536, what: "a key or certificate file"), as: UTF8.self) } catch {
            throw .failure("\(option) \(error.description)")
        }
    }

    /// A 32-byte Ed25519 public key given as 64 hex digits (on the command line or as the one line of a file
    /// that is not a comment).
    static func publicKey(hexText: String, what: String) throws(CLIError) -> [UInt8] {
        let lines = hexText.split(separator: "\n").map { $0.filter { $0 != " " && $0 != "\t" && $0 != "\r" } }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
        guard lines.count == 1, let key = Digest.bytes(hex: lines[0]), key.count == Ed25519.publicKeyLength,
              Ed25519.x25519PublicKey(key) != nil else {
            throw .failure("\(what): expected an Ed25519 public key (64 hex digits)")
        }
        return key
    }

    /// The cluster authority's public key from its `.pub` file.
    static func readAuthority(_ path: String, option: String = "--authority") throws(CLIError) -> [UInt8] {
        try publicKey(hexText: try readText(path, option: option), what: "\(option) \(path)")
    }

    /// A certificate chain file.
    static func readChain(_ path: String, option: String) throws(CLIError) -> [Certificate] {
        do { return try CertificateChain.parse(text: try readText(path, option: option)) } catch let e as CLIError { throw e } catch {
            throw .failure("\(option) \(path): \(error)")
        }
    }

    /// Writes a new public file (mode 0644); refuses to replace one.
    static func writeNew(_ path: String, _ text: String, option: String) throws(CLIError) {
        let fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            if errno == EEXIST { throw .failure("\(option) \(path): exists; not overwritten") }
            throw .failure("\(option) \(path): cannot create (\(String(cString: strerror(errno))))")
        }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        guard bytes.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == bytes.count, fsync(fd) == 0 else {
            throw .failure("\(option) \(path): cannot write (\(String(cString: strerror(errno))))")
        }
    }

    /// The authority public key file's text.
    static func authorityText(_ key: [UInt8]) -> String {
        "# Breeze authority public key: give it to every replica that trusts this authority (breeze node --authority)\n\(Digest.hex(key))\n"
    }

    /// What `breeze node` syncs with: the device key beside `db` (made if missing), the chain in `certPath`
    /// and the authority in `authorityPath`, checked together now.
    static func credentials(db: String, replica: ReplicaID, certPath: String, authorityPath: String) throws(CLIError) -> SyncCredentials {
        let key: Ed25519.KeyPair
        do { key = try KeyFile.deviceKey(forDatabase: db, replica: replica, create: true) } catch { throw .failure(error.description) }
        let chain = try readChain(certPath, option: "--cert")
        let authority = try readAuthority(authorityPath)
        do { return try SyncCredentials(deviceKey: key, chain: chain, authority: authority, nowMillis: SystemClock.nowMillis()) } catch {
            throw .failure("--cert \(certPath): \(error.description)")
        }
    }
}
