// Plain POSIX TCP helpers for breeze-proxy (blocking sockets; each connection has its own threads).
@preconcurrency import Glibc

enum Sockets {
    /// Parses `HOST:PORT` (IPv4 or `localhost`).
    static func address(_ text: String) -> sockaddr_in? {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else { return nil }
        var host = String(text[..<colon])
        if host.isEmpty || host == "localhost" { host = "127.0.0.1" }
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &a.sin_addr) == 1 else { return nil }
        return a
    }

    /// A listening socket on `address`; returns it and the address actually bound (the real port for 0).
    static func listen(_ address: String) -> (fd: Int32, bound: String)? {
        guard var a = self.address(address) else { return nil }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let rc = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard rc == 0, Glibc.listen(fd, 128) == 0 else { close(fd); return nil }
        var b = sockaddr_in()
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &b) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        var name = [CChar](repeating: 0, count: 64)
        inet_ntop(AF_INET, &b.sin_addr, &name, 64)
        let host = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return (fd, "\(host):\(UInt16(bigEndian: b.sin_port))")
    }

    /// A connected socket, or nil.
    static func connect(_ address: String) -> Int32? {
        guard var a = self.address(address) else { return nil }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        let rc = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard rc == 0 else { close(fd); return nil }
        noDelay(fd)
        return fd
    }

    static func noDelay(_ fd: Int32) {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Makes the next `close` send RST instead of FIN.
    static func lingerZero(_ fd: Int32) {
        var l = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, socklen_t(MemoryLayout<linger>.size))
    }

    /// Writes all of `bytes`; false when the socket failed.
    static func writeAll(_ fd: Int32, _ bytes: ArraySlice<UInt8>) -> Bool {
        var off = bytes.startIndex
        while off < bytes.endIndex {
            let n = bytes[off...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            off += n
        }
        return true
    }

    /// Waits up to `millis` for `fd` to be readable; true when it is (or has an error or end of file).
    static func readable(_ fd: Int32, millis: Int32) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, millis) > 0
    }
}
