import Breeze
import BreezeCore
import BreezeCrypto
import BreezeStore
public import BreezeSync
@preconcurrency import Glibc

/// The public files of sealed sync, read and written for `breeze node`, `breeze enrol` and `breeze authority`:
/// an authority's public key (`#` comment lines, then 64 hex digits) and certificate chains (`CertificateChain`
/// text). Private keys are `BreezeStore.KeyFile`s.
public enum CredentialFiles {
    /// The text of a small file, or a failure naming the option and the file.
    public static func readText(_ path: String, option: String) throws(CLIError) -> String {
        do { return String(decoding: try KeyFile.readSmallFile(path, limit: 65536, what: "a key or certificate file"), as: UTF8.self) } catch {
            throw .failure("\(option) \(error.description)")
        }
    }

    /// A 32-byte Ed25519 public key given as 64 hex digits (`SyncOptions.publicKey`).
    public static func publicKey(hexText: String, what: String) throws(CLIError) -> [UInt8] {
        do { return try SyncOptions.publicKey(hexText: hexText, what: what) } catch { throw .failure(error.description) }
    }

    /// The cluster authority's public key from its `.pub` file.
    public static func readAuthority(_ path: String, option: String = "--authority") throws(CLIError) -> [UInt8] {
        try publicKey(hexText: try readText(path, option: option), what: "\(option) \(path)")
    }

    /// A certificate chain file.
    public static func readChain(_ path: String, option: String) throws(CLIError) -> [Certificate] {
        do { return try CertificateChain.parse(text: try readText(path, option: option)) } catch let e as CLIError { throw e } catch {
            throw .failure("\(option) \(path): \(error)")
        }
    }

    /// Writes a new public file (mode 0644); refuses to replace one.
    public static func writeNew(_ path: String, _ text: String, option: String) throws(CLIError) {
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

    /// Replaces `path` with `text` atomically (a file beside it, synced, then renamed over it), mode 0644 (a
    /// certificate chain is public).
    public static func replace(_ path: String, _ text: String, option: String) throws(CLIError) {
        let partial = path + ".partial"
        unlink(partial)
        try writeNew(partial, text, option: option)
        guard rename(partial, path) == 0 else {
            unlink(partial)
            throw .failure("\(option) \(path): cannot replace (\(String(cString: strerror(errno))))")
        }
    }

    /// The authority public key file's text.
    public static func authorityText(_ key: [UInt8]) -> String {
        "# Breeze authority public key: give it to every replica that trusts this authority (breeze node --authority)\n\(Digest.hex(key))\n"
    }
}
