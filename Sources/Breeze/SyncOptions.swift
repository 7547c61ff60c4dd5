import BreezeCrypto
@preconcurrency import Glibc

/// How `Replica.startSync(_:)` runs a node in the app's process.
public struct SyncOptions: Sendable {
    /// `HOST:PORT` to accept peers on (port 0: any free port), or nil for a device that only dials.
    public var listen: String?
    /// Peers to dial and keep dialling (with backoff), `HOST:PORT`.
    public var peers: [String]
    /// The cluster secret, or a user's key (`breeze secret derive`) when `user` is set.
    public var secret: [UInt8]
    /// Sync only this user's streams (and read `public`) with the user's key; nil: the cluster scope.
    public var user: String?
    /// Diagnostics from the node, one line each (default: none).
    public var log: (@Sendable (String) -> Void)?
    /// Stop the node on SIGINT and SIGTERM (for a command-line node, such as `breeze node`; an app leaves
    /// signals alone). Default false.
    public var stopOnSignals = false
    /// How often the node looks for commits made by other processes (`NodeConfig.pollMillis`); nil keeps the
    /// node's default. Commits through this replica wake the node and do not wait for it (tests set it long
    /// to show that).
    var pollMillis: UInt64?

    /// Options for a node holding `secret`.
    public init(secret: [UInt8], user: String? = nil, listen: String? = nil, peers: [String] = []) {
        self.secret = secret
        self.user = user
        self.listen = listen
        self.peers = peers
    }

    /// Reads a secret file: hex digits (whitespace ignored), at least 16 bytes.
    ///
    /// ```swift
    /// let options = SyncOptions(secret: try SyncOptions.readSecret(file: "ana.key"), user: "ana", peers: ["10.0.0.2:7000"])
    /// ```
    ///
    /// - Throws: `BreezeError.invalidArgument` naming the file and what is wrong.
    public static func readSecret(file path: String) throws(BreezeError) -> [UInt8] {
        guard let f = fopen(path, "r") else {
            throw BreezeError(.invalidArgument, "secret file \(path): cannot read (\(String(cString: strerror(errno))))")
        }
        defer { fclose(f) }
        var text = [UInt8]()
        var buf = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = fread(&buf, 1, buf.count, f)
            if n <= 0 { break }
            text += buf[0..<n]
            if text.count > 4096 { throw BreezeError(.invalidArgument, "secret file \(path): too large for a secret") }
        }
        let digits = text.filter { !($0 == 32 || $0 == 10 || $0 == 13 || $0 == 9) }
        guard digits.count % 2 == 0, digits.count >= 32, let bytes = Hex.bytes(digits) else {
            throw BreezeError(.invalidArgument, "secret file \(path): expected at least 32 hex digits (make one with `breeze secret new`)")
        }
        return bytes
    }
}

/// Hex digits to bytes.
enum Hex {
    static func bytes(_ digits: [UInt8]) -> [UInt8]? {
        func v(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: return c - 48
            case 97...102: return c - 87
            case 65...70: return c - 55
            default: return nil
            }
        }
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        var i = 0
        while i < digits.count {
            guard let hi = v(digits[i]), let lo = v(digits[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }
}
