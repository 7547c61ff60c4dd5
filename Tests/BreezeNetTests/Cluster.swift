import BreezeCore
import BreezeStore
import BreezeSync
import BreezeCrypto
import BreezeTestSupport
@preconcurrency import Glibc

/// Real `breeze node` processes on 127.0.0.1, each with its own database, driven through the built binary.
final class Cluster {
    let dir = TempDir()
    let breeze = productsDirectory() + "/breeze"
    let torture = productsDirectory() + "/breeze-torture"
    let secretFile: String
    private(set) var nodes: [String: (child: Child, address: String)] = [:]

    init() {
        secretFile = dir.file("cluster.key")
        let f = fopen(secretFile, "w")!
        fputs(Digest.hex(SecureRandom.bytes(32)) + "\n", f)
        fclose(f)
    }

    var secret: [UInt8] {
        let text = String(decoding: readFileBytes(secretFile).filter { $0 != 10 }, as: UTF8.self)
        var out: [UInt8] = []
        var i = text.startIndex
        while i < text.endIndex {
            let j = text.index(i, offsetBy: 2)
            out.append(UInt8(text[i..<j], radix: 16)!)
            i = j
        }
        return out
    }

    func db(_ name: String) -> String { dir.file(name + ".db") }

    /// Creates the database (once) and starts a node; returns its listening address. `env` holds extra
    /// `NAME=value` settings for the node's environment (e.g. `BREEZE_CLOCK_OFFSET_MS=...`).
    @discardableResult
    func start(_ name: String, peers: [String] = [], listen: String = "127.0.0.1:0", extra: [String] = [],
               env: [String] = []) -> String {
        if access(db(name), F_OK) != 0 { _ = cli(name, ["init"], env: env) }
        var args = ["node", "--db", db(name), "--listen", listen, "--secret-file", secretFile] + extra
        for p in peers { args += ["--peer", p] }
        let child = env.isEmpty ? Child(breeze, args, stderrPath: dir.file(name + ".log"))
                                : Child("/usr/bin/env", env + [breeze] + args, stderrPath: dir.file(name + ".log"))
        let first = child.readLine() ?? ""
        let address = first.hasPrefix("listening on ") ? String(first.dropFirst("listening on ".count)) : ""
        nodes[name] = (child, address)
        return address
    }

    /// Stops a node with SIGTERM (clean) or SIGKILL.
    func stop(_ name: String, kill: Bool = false) {
        guard let n = nodes.removeValue(forKey: name) else { return }
        n.child.signal(kill ? SIGKILL : SIGTERM)
        while n.child.readLine() != nil {}
        n.child.wait()
    }

    func stopAll() { for name in Array(nodes.keys) { stop(name) } }

    /// Runs `breeze --db <name>.db args...`.
    func cli(_ name: String, _ args: [String], env: [String] = []) -> (code: Int32, out: String) {
        env.isEmpty ? runProgram(breeze, ["--db", db(name)] + args)
                    : runProgram("/usr/bin/env", env + [breeze, "--db", db(name)] + args)
    }

    /// A fingerprint of what a replica holds: its version vectors and the state hash of user `me`.
    func fingerprint(_ name: String) -> String? {
        guard let log = try? EventLog.open(at: db(name)) else { return nil }
        defer { log.close() }
        guard let vv = try? log.versionVectors(), let state = try? log.userState(user: "me") else { return nil }
        return vv.keys.sorted().map { "\($0)=\(vv[$0]!)" }.joined(separator: ";") + "|" + state.stateHash
    }

    func count(_ name: String) -> Int {
        guard let log = try? EventLog.open(at: db(name)) else { return -1 }
        defer { log.close() }
        return (try? log.count()) ?? -1
    }

    /// Runs `breeze verify` (the built binary) on a replica's database: exit status and report.
    func verify(_ name: String) -> (code: Int32, out: String) { cli(name, ["verify"]) }

    func logText(_ name: String) -> String { String(decoding: readFileBytes(dir.file(name + ".log")), as: UTF8.self) }

    deinit { stopAll() }
}

/// A blocking TCP client for speaking the protocol by hand (hostile-peer tests).
final class RawPeer {
    let fd: Int32

    init?(_ address: String) {
        let parts = address.split(separator: ":")
        guard parts.count == 2, let port = UInt16(parts[1]) else { return nil }
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        inet_pton(AF_INET, String(parts[0]), &addr.sin_addr)
        var tv = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        let rc = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard rc == 0 else { close(fd); return nil }
    }

    deinit { close(fd) }

    func send(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }
    }

    func send(_ m: Message) { send(Frame.encode(m)) }

    private var decoder = FrameDecoder()
    private var queued: [Message] = []

    /// The next message, or nil when the peer closed the connection (or 10 s passed).
    func receive() -> Message? {
        while queued.isEmpty {
            var buf = [UInt8](repeating: 0, count: 65536)
            let n = recv(fd, &buf, buf.count, 0)
            if n <= 0 { return nil }
            guard let ms = try? decoder.feed(Array(buf[0..<n])) else { return nil }
            queued += ms
        }
        return queued.removeFirst()
    }

    /// True when the peer closes the connection within the timeout (after any messages it sends first).
    func closedByPeer() -> Bool {
        while true {
            var buf = [UInt8](repeating: 0, count: 4096)
            let n = recv(fd, &buf, buf.count, 0)
            if n == 0 { return true }
            if n < 0 { return false }
        }
    }

    /// Runs the client side of the handshake with a real session; returns it when the server said ready.
    func handshake(replica: ReplicaID, scope: Scope, secret: [UInt8]) -> SyncSession? {
        var s = SyncSession(role: .client, config: SyncSession.Config(replica: replica, scope: scope, secret: secret),
                            nonce: SecureRandom.bytes(32))
        for case .send(let m) in s.start() { send(m) }
        while s.state != .ready && s.state != .closed {
            guard let m = receive() else { return nil }
            for case .send(let out) in s.receive(m) { send(out) }
        }
        return s.state == .ready ? s : nil
    }
}
