internal import CLibUV
@preconcurrency import Glibc

/// `host:port` parsing and formatting for IPv4 (and `localhost`).
enum SocketAddress {
    /// Parses `HOST:PORT` (HOST an IPv4 address or `localhost`) into a `sockaddr_in`.
    static func parse(_ text: String) throws(UVError) -> sockaddr_in {
        guard let colon = text.lastIndex(of: ":"), let port = Int32(text[text.index(after: colon)...]),
              port >= 0 && port <= 65535 else {
            throw UVError(code: -EINVAL, operation: "address '\(text)' (expected HOST:PORT)")
        }
        var host = String(text[..<colon])
        if host == "localhost" || host.isEmpty { host = "127.0.0.1" }
        var addr = sockaddr_in()
        try UVError.check(uv_ip4_addr(host, port, &addr), "address '\(text)'")
        return addr
    }

    static func describe(_ storage: UnsafeMutablePointer<sockaddr_storage>) -> String {
        storage.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin in
            var name = [CChar](repeating: 0, count: 64)
            uv_ip4_name(sin, &name, 64)
            let host = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return "\(host):\(UInt16(bigEndian: sin.pointee.sin_port))"
        }
    }
}
