import BreezeCore
import BreezeStore
import BreezeSync
import BreezeCrypto
import BreezeTestSupport
@preconcurrency import Glibc

/// The cluster authority of a test cluster: made with `breeze authority new` (`CLIAuthority`) and read back, so a
/// test can also enrol peers it runs in-process (`RawPeer`).
struct TestAuthority: Sendable {
    let cli: CLIAuthority
    let key: Ed25519.KeyPair
    var keyFile: String { cli.keyFile }
    var publicKeyFile: String { cli.publicKeyFile }

    /// Credentials for an in-process peer: a fresh device key certified as `replica` with `scope`.
    func credentials(replica: ReplicaID, scope: Scope = .cluster) -> SyncCredentials {
        let device = Ed25519.KeyPair.generate()
        let now = SystemClock.nowMillis()
        let cert = try! Certificate.issue(role: .device, key: device.publicKey, replica: replica, scope: scope, notBefore: now - 86_400_000,
                                          notAfter: now + 86_400_000, signer: key)
        return try! SyncCredentials(deviceKey: device, chain: [cert], authority: key.publicKey, nowMillis: now)
    }
}

/// Real `breeze node` processes on 127.0.0.1, each with its own database, driven through the built binary.
/// Every node is enrolled by the cluster's authority (`breeze key show`, `breeze enrol`) before it starts.
final class Cluster {
    let dir = TempDir()
    let breeze = productsDirectory() + "/breeze"
    let torture = productsDirectory() + "/breeze-torture"
    let authority: TestAuthority
    private(set) var nodes: [String: (child: Child, address: String)] = [:]

    init() {
        let cli = CLIAuthority(keyFile: dir.file("cluster-authority.key"))
        authority = TestAuthority(cli: cli, key: try! KeyFile.read(cli.keyFile).key)
    }

    func db(_ name: String) -> String { dir.file(name + ".db") }
    func cert(_ name: String) -> String { dir.file(name + ".cert") }

    /// The replica id and device key `breeze key show --json` prints for a replica.
    func deviceKey(_ name: String) -> (replica: String, key: String) { authority.cli.deviceKey(db: db(name)) }

    /// Enrols a replica (once) with `breeze enrol`, signed by the cluster authority; returns the certificate file.
    @discardableResult
    func enrol(_ name: String, scope: Scope = .cluster) -> String {
        _ = authority.cli.nodeArguments(db: db(name), cert: cert(name), scope: scope.description)
        return cert(name)
    }

    /// Creates the database (once), enrols it (once) and starts a node; returns its listening address. `env`
    /// holds extra `NAME=value` settings for the node's environment (e.g. `BREEZE_CLOCK_OFFSET_MS=...`).
    @discardableResult
    func start(_ name: String, peers: [String] = [], listen: String = "127.0.0.1:0", extra: [String] = [],
               env: [String] = [], scope: Scope = .cluster) -> String {
        if access(db(name), F_OK) != 0 { _ = cli(name, ["init"], env: env) }
        var args = ["node", "--db", db(name), "--listen", listen, "--cert", enrol(name, scope: scope),
                    "--authority", authority.publicKeyFile] + extra
        for p in peers { args += ["--peer", p] }
        let child = env.isEmpty ? Child(breeze, args, stderrPath: dir.file(name + ".log"))
                                : Child("/usr/bin/env", env + [breeze] + args, stderrPath: dir.file(name + ".log"))
        let first = child.readLine() ?? ""
        let address = first.hasPrefix("listening on ") ? String(first.dropFirst("listening on ".count)) : ""
        nodes[name] = (child, address)
        return address
    }

    /// The port a node started with `--metrics 127.0.0.1:0` serves on (read from its output), or 0.
    func metricsPort(_ name: String) -> Int {
        guard let child = nodes[name]?.child else { return 0 }
        while let l = child.readLine() {
            if l.hasPrefix("metrics on http://127.0.0.1:") { return Int(l.dropFirst(28).prefix { $0.isNumber }) ?? 0 }
        }
        return 0
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

    /// False when the bytes could not be sent whole (the peer closed the connection).
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// The session once `handshake` succeeded: messages are then sealed and opened with it.
    private(set) var session: SyncSession?

    /// Sends a message: sealed after the handshake, in a plain frame before it.
    @discardableResult
    func send(_ m: Message) -> Bool { send(sealed([m])) }

    /// Sends a message in a plain frame whatever the state (an attacker's injection).
    func sendPlain(_ m: Message) { send(Frame.encode(m)) }

    /// The frames of `messages` as this peer would send them: sealed after the handshake (each with the next
    /// nonce), plain before it.
    func sealed(_ messages: [Message]) -> [UInt8] {
        guard var s = session, s.state == .ready else { return messages.flatMap { Frame.encode($0) } }
        defer { session = s }
        return messages.flatMap { m in s.send(m).flatMap { a -> [UInt8] in if case .send(let f) = a { return Frame.encode(f) } else { return [] } } }
    }

    private var decoder = FrameDecoder()
    private var queued: [Message] = []

    /// The next message (opened, after the handshake), or nil when the peer closed the connection, sent what
    /// does not open, or 10 s passed.
    func receive() -> Message? {
        while queued.isEmpty {
            var buf = [UInt8](repeating: 0, count: 65536)
            let n = recv(fd, &buf, buf.count, 0)
            if n <= 0 { return nil }
            guard let ms = try? decoder.feed(Array(buf[0..<n])) else { return nil }
            queued += ms
        }
        let m = queued.removeFirst()
        guard var s = session, s.state == .ready else { return m }
        defer { session = s }
        switch s.unseal(m) {
        case .message(let inner): _ = s.receive(inner); return inner
        case .refused: return nil
        }
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

    /// Runs the client side of the handshake with a real session, enrolled by `authority` as `replica` with
    /// `scope`; returns it once the handshake is complete (the server's answer to `handshake3` is not awaited).
    @discardableResult
    func handshake(replica: ReplicaID, scope: Scope, authority: TestAuthority) -> SyncSession? {
        handshake(credentials: authority.credentials(replica: replica, scope: scope))
    }

    /// The same with credentials of the test's own making. `beforeHandshake3` runs once `handshake3` is made
    /// and before it is sent (the server is then waiting for it); `handshake3` goes in one write with the sealed
    /// `thenAtOnce` behind it, as a node sends its first frames right after it.
    @discardableResult
    func handshake(credentials: SyncCredentials, beforeHandshake3: () -> Void = {}, thenAtOnce messages: [Message] = []) -> SyncSession? {
        var s = SyncSession(role: .client, config: SyncSession.Config(credentials: credentials), ephemeralKey: SecureRandom.bytes(32),
                            nowMillis: SystemClock.nowMillis())
        for case .send(let m) in s.start() { send(Frame.encode(m)) }
        while s.state != .ready && s.state != .closed {
            guard let m = receive() else { return nil }
            var out: [UInt8] = []
            for case .send(let f) in s.receive(m) { out += Frame.encode(f) }
            if s.state == .ready {
                beforeHandshake3()
                for m in messages { for case .send(let f) in s.send(m) { out += Frame.encode(f) } }
            }
            send(out)
        }
        guard s.state == .ready else { return nil }
        session = s
        return s
    }
}
