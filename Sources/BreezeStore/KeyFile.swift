public import BreezeCore
public import BreezeCrypto
@preconcurrency import Glibc

/// Why a key file could not be read or written: one line naming the file and the problem.
public struct KeyFileError: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// Private key files: a replica's device key, beside its database, and the keys of authorities.
///
/// The device key lives **next to** the database (`<db>.key`), not inside it: databases are copied to debug
/// them (`breeze diff`, `replay` and `explain` on a copy from a bug report, `salvage`), so a key inside would
/// travel with every copy. (Breeze creates databases mode 0600, but a copy is as readable as its maker lets it.) A key file is created with mode 0600
/// and nothing else, and is refused when group or others may read it or another user owns it, as ssh refuses
/// an unprotected private key.
///
/// Layout (text): `#` comment lines, `replica <16 hex digits>` (device keys only: the replica the key was made
/// for) and `ed25519-seed <64 hex digits>` (the 32-byte Ed25519 seed).
public enum KeyFile {
    /// What a key file holds.
    public struct Contents: Sendable, Equatable {
        /// The replica a device key belongs to (nil for an authority key).
        public var replica: ReplicaID?
        /// The Ed25519 key pair.
        public var key: Ed25519.KeyPair

        public init(replica: ReplicaID?, key: Ed25519.KeyPair) {
            self.replica = replica
            self.key = key
        }
    }

    /// The device key file of the database at `db`: `<db>.key`.
    public static func devicePath(forDatabase db: String) -> String { db + ".key" }

    /// Creates `path` with mode 0600 holding `contents`; false (and nothing written) when the file exists.
    /// The bytes go to a temporary file in the same directory first (created 0600, synced) and are linked into
    /// place, so a reader never sees half a key and two processes creating one at once end with a single key.
    @discardableResult
    public static func create(_ path: String, _ contents: Contents, comment: String) throws(KeyFileError) -> Bool {
        var text = "# \(comment)\n# Private: keep this file mode 0600 and never copy it to another device.\n"
        if let r = contents.replica { text += "replica \(r)\n" }
        text += "ed25519-seed \(Digest.hex(contents.key.seed))\n"
        let temporary = path + ".tmp-" + Digest.hex(SecureRandom.bytes(8))
        let fd = open(temporary, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw KeyFileError("\(path): cannot create (\(String(cString: strerror(errno))))") }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        defer { unlink(temporary) }
        guard written == bytes.count, synced else { throw KeyFileError("\(path): cannot write (\(String(cString: strerror(errno))))") }
        if link(temporary, path) != 0 {
            if errno == EEXIST { return false }
            throw KeyFileError("\(path): cannot create (\(String(cString: strerror(errno))))")
        }
        syncDirectory(of: path)
        return true
    }

    /// Reads a private key file. Refuses one that is not a regular file, that group or others may read or
    /// write, or that another user owns.
    public static func read(_ path: String) throws(KeyFileError) -> Contents {
        let raw = try readSecretFile(path, limit: 4096, what: "private key")
        var replica: ReplicaID?, seed: [UInt8]?
        for (n, line) in String(decoding: raw, as: UTF8.self).split(separator: "\n").enumerated() {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if fields.isEmpty || fields[0].hasPrefix("#") { continue }
            switch (fields[0], fields.count) {
            case ("replica", 2):
                guard let r = ReplicaID(hex: String(fields[1])) else { throw KeyFileError("\(path): line \(n + 1): not a replica id") }
                replica = r
            case ("ed25519-seed", 2):
                guard let s = Digest.bytes(hex: fields[1]), s.count == Ed25519.seedLength else {
                    throw KeyFileError("\(path): line \(n + 1): expected 64 hex digits")
                }
                // A seed of one repeated byte (32 zero bytes, say) is a placeholder or a test value anyone can
                // guess, never the output of a random generator: such a key authenticates nobody.
                guard Set(s).count > 1 else {
                    throw KeyFileError("\(path): line \(n + 1): a seed of 32 identical bytes (\(Digest.hex([s[0]]))) is not a secret: make a key with `breeze init` or `breeze authority new`")
                }
                seed = s
            default:
                throw KeyFileError("\(path): line \(n + 1): expected `replica ID` or `ed25519-seed HEX`")
            }
        }
        guard let seed else { throw KeyFileError("\(path): no ed25519-seed line: not a Breeze key file") }
        return Contents(replica: replica, key: Ed25519.KeyPair(seed: seed))
    }

    /// The device key of the database at `db`, whose replica is `replica`: read from `<db>.key`, or, when the
    /// file does not exist and `create` is true, made (a new random key) and written. This is also the
    /// migration path of a database made before keys existed: its first writing command gives it one.
    /// Refuses a key file made for another replica (a database replaced under its key).
    public static func deviceKey(forDatabase db: String, replica: ReplicaID, create: Bool) throws(KeyFileError) -> Ed25519.KeyPair {
        let path = devicePath(forDatabase: db)
        if create && access(path, F_OK) != 0 {
            try self.create(path, Contents(replica: replica, key: .generate()), comment: "Breeze device key of replica \(replica) (database \(db))")
        }
        let contents = try read(path)
        guard contents.replica == replica else {
            throw KeyFileError("\(path): the key of replica \(contents.replica?.description ?? "(none)"), but \(db) is replica \(replica); move the key away (a database needs its own key)")
        }
        return contents.key
    }

    /// The bytes of a file holding a secret (a private key, a provider's API key), as ssh reads one: refused
    /// when it is not a regular file, when group or others may read or write it, or when another user owns it;
    /// `what` names the secret in the errors.
    public static func readSecretFile(_ path: String, limit: Int, what: String) throws(KeyFileError) -> [UInt8] {
        var st = stat()
        guard stat(path, &st) == 0 else { throw KeyFileError("\(path): cannot read (\(String(cString: strerror(errno))))") }
        guard (st.st_mode & S_IFMT) == S_IFREG else { throw KeyFileError("\(path): not a regular file") }
        guard st.st_mode & 0o077 == 0 else {
            throw KeyFileError("\(path): \(what) readable by group or others (mode \(String(st.st_mode & 0o777, radix: 8))); run chmod 600 \(path)")
        }
        guard st.st_uid == geteuid() else { throw KeyFileError("\(path): \(what) owned by uid \(st.st_uid), not by this user") }
        return try readSmallFile(path, limit: limit, what: "a \(what) file")
    }

    /// The bytes of a file of at most `limit` bytes (key files, and the public files beside them: authority
    /// keys, certificate chains); `what` names the kind of file in the error of a larger one.
    public static func readSmallFile(_ path: String, limit: Int, what: String) throws(KeyFileError) -> [UInt8] {
        guard let f = fopen(path, "r") else { throw KeyFileError("\(path): cannot read (\(String(cString: strerror(errno))))") }
        defer { fclose(f) }
        var raw = [UInt8]()
        var buf = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = fread(&buf, 1, buf.count, f)
            if n <= 0 { break }
            raw += buf[0..<n]
            guard raw.count <= limit else { throw KeyFileError("\(path): too large for \(what)") }
        }
        return raw
    }

    private static func syncDirectory(of path: String) {
        let dir = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let fd = open(dir.isEmpty ? "/" : dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }
}
