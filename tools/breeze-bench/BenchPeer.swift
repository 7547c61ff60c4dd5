import BreezeCore
import BreezeCrypto
import BreezeSync
@preconcurrency import Glibc

/// A blocking protocol client over one TCP connection, for `breeze-bench hostile`: a real `SyncSession` (the
/// client side) run by hand, one thread per peer, so a benchmark can play an honest phone or a hostile
/// device with exact control of what goes on the wire.
final class BenchPeer {
    let fd: Int32
    private var session: SyncSession?
    private var decoder = FrameDecoder()
    private var queued: [Message] = []

    /// Connected to `host:port`, or nil; reads time out after `timeoutSeconds`.
    init?(_ address: String, timeoutSeconds: Int = 10) {
        let parts = address.split(separator: ":")
        guard parts.count == 2, let port = UInt16(parts[1]) else { return nil }
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        inet_pton(AF_INET, String(parts[0]), &addr.sin_addr)
        var tv = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        let rc = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard rc == 0 else { close(fd); return nil }
    }

    deinit { close(fd) }

    /// False when the bytes could not all be sent (the peer closed).
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + off, bytes.count - off, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            off += n
        }
        return true
    }

    /// Sends a message, sealed once the handshake is done.
    @discardableResult
    func send(_ m: Message) -> Bool {
        guard var s = session, s.state == .ready else { return send(Frame.encode(m)) }
        let bytes = s.send(m).flatMap { a -> [UInt8] in if case .send(let f) = a { return Frame.encode(f) } else { return [] } }
        session = s
        return send(bytes)
    }

    /// The next message (opened after the handshake), or nil when the peer closed, sent what does not open,
    /// or the read timed out.
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

    /// The client side of the handshake with `credentials`; true once it is complete on this side.
    func handshake(_ credentials: SyncCredentials) -> Bool {
        var s = SyncSession(role: .client, config: SyncSession.Config(credentials: credentials), ephemeralKey: SecureRandom.bytes(32),
                            nowMillis: SystemClock.nowMillis())
        for case .send(let m) in s.start() { send(Frame.encode(m)) }
        while s.state != .ready && s.state != .closed {
            guard let m = receive() else { return false }
            var out: [UInt8] = []
            for case .send(let f) in s.receive(m) { out += Frame.encode(f) }
            if !out.isEmpty { send(out) }
        }
        guard s.state == .ready else { return false }
        session = s
        return true
    }

    /// Waits for the server's `vectors` (what it sends first once it took the handshake), true if they came.
    func awaitVectors() -> Bool {
        while let m = receive() {
            if case .vectors = m { return true }
            if case .error = m { return false }
        }
        return false
    }
}
