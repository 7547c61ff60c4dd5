import Foundation
@preconcurrency import Glibc

/// A TCP connection to 127.0.0.1 for the tests: plain HTTP requests to the inspector and the metrics, the
/// DevTools WebSocket, and raw bytes to a node's sync port.
public final class TCPConnection {
    public let fd: Int32
    private var buffer: [UInt8] = []

    /// Connects to `host:port` (IPv4); nil when nothing listens there.
    public init?(host: String = "127.0.0.1", port: Int) {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = UInt16(port).bigEndian
        inet_pton(AF_INET, host, &addr.sin_addr)
        let rc = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard rc == 0 else { close(fd); return nil }
        var tv = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    public func send(_ bytes: [UInt8]) {
        var off = 0
        while off < bytes.count {
            let n = bytes[off...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            off += n
        }
    }

    public func send(_ text: String) { send(Array(text.utf8)) }

    /// Reads more into the buffer; false at end of stream or after the receive timeout.
    @discardableResult
    public func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = recv(fd, &chunk, chunk.count, 0)
        if n <= 0 { return false }
        buffer += chunk[0..<n]
        return true
    }

    /// Exactly `n` bytes, or nil if the stream ends first.
    public func read(_ n: Int) -> [UInt8]? {
        while buffer.count < n { if !fill() { return nil } }
        defer { buffer.removeFirst(n) }
        return Array(buffer[0..<n])
    }

    /// Bytes up to and including `delimiter`, or nil.
    public func read(until delimiter: [UInt8]) -> [UInt8]? {
        var from = 0
        while true {
            if buffer.count >= delimiter.count {
                for i in from...(buffer.count - delimiter.count) where Array(buffer[i..<(i + delimiter.count)]) == delimiter {
                    let out = Array(buffer[0..<(i + delimiter.count)])
                    buffer.removeFirst(i + delimiter.count)
                    return out
                }
                from = buffer.count - delimiter.count + 1
            }
            if !fill() { return nil }
        }
    }

    /// Everything until the peer closes.
    public func readToEnd() -> [UInt8] {
        while fill() {}
        defer { buffer = [] }
        return buffer
    }
}

/// One HTTP/1.1 GET (`Connection: close`): the status and the body (a chunked body is decoded).
public func httpGet(port: Int, _ target: String) -> (status: Int, headers: String, body: String) {
    guard let c = TCPConnection(port: port) else { return (0, "", "") }
    c.send("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n")
    let raw = c.readToEnd()
    let text = String(decoding: raw, as: UTF8.self)
    guard let split = text.range(of: "\r\n\r\n") else { return (0, text, "") }
    let head = String(text[..<split.lowerBound])
    var body = String(text[split.upperBound...])
    let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
    if head.lowercased().contains("transfer-encoding: chunked") {
        var out = "", rest = Substring(body)
        while let nl = rest.range(of: "\r\n"), let size = Int(rest[..<nl.lowerBound], radix: 16), size > 0 {
            let start = nl.upperBound
            let bytes = Array(rest[start...].utf8)
            out += String(decoding: bytes.prefix(size), as: UTF8.self)
            rest = Substring(String(decoding: bytes.dropFirst(size + 2), as: UTF8.self))
        }
        body = out
    }
    return (status, head, body)
}

/// Parses JSON text into Foundation values.
public func json(_ text: String) -> Any? { try? JSONSerialization.jsonObject(with: Data(text.utf8)) }
