internal import CMicroHTTPD
import BreezeCrypto
@preconcurrency import Glibc

/// A small HTTP/1.1 server over libmicrohttpd (GNU, Debian `libmicrohttpd-dev`): the inspector's page and
/// API (`breeze inspect`) and a node's Prometheus metrics (`breeze node --metrics`). HTTP parsing is
/// libmicrohttpd's; this type binds the socket (so a port in use is a clear error), checks the access
/// token, and turns each request into a call of `handler`.
///
/// Threads: libmicrohttpd runs a thread per connection, so `handler` is called concurrently and must be
/// thread-safe; a server-sent event stream (`HTTPResponse.events`) keeps its connection's thread for as long
/// as the client listens.
///
/// The token: when `token` is set, a request whose query has no `token` argument equal to it (compared in
/// constant time) is answered 403 without calling `handler`, so another user of the machine who finds the
/// port cannot read the data. Every answer carries `Cache-Control: no-store` and `Referrer-Policy:
/// no-referrer` (the token is in the URL), and HTML a content security policy that allows nothing from
/// elsewhere.
///
/// ```swift
/// let server = try HTTPServer(listen: "127.0.0.1:0", token: AccessToken.random()) { request in
///     .text("hello \(request.path)")
/// }
/// print(server.address)   // 127.0.0.1:40123
/// server.stop()
/// ```
///
/// `@unchecked Sendable`: `daemon` and `listenFD` are written once in `init` and read in `stop` (which
/// `stopped`, under `stopLock`, makes run once); `handler` and `token` are immutable.
public final class HTTPServer: @unchecked Sendable {
    /// The address bound, `HOST:PORT` (with the port the system chose for port 0).
    public let address: String
    /// The port bound.
    public let port: Int
    private let token: String?
    private let handler: @Sendable (HTTPRequest) -> HTTPResponse
    private var daemon: OpaquePointer?
    private var listenFD: Int32 = -1
    private var stopped = false
    private let stopLock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    /// Streams to end on `stop` (their connections' threads must return before libmicrohttpd can stop).
    private let streams: [EventStream]

    /// Binds `listen` (`HOST:PORT`, IPv4; `localhost` is 127.0.0.1; port 0 picks a free port) and starts
    /// serving.
    ///
    /// - Parameters:
    ///   - token: the access token every request must carry as `?token=`, or nil for none (metrics).
    ///   - streams: event streams that `handler` subscribes clients to; `stop` ends them first.
    /// - Throws: `HTTPServerError` with one line naming the address: malformed, in use, not on this machine.
    public init(listen: String, token: String?, streams: [EventStream] = [],
                handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse) throws(HTTPServerError) {
        self.token = token
        self.handler = handler
        self.streams = streams
        pthread_mutex_init(stopLock, nil)
        let (fd, port) = try HTTPServer.bind(listen)
        listenFD = fd
        self.port = port
        address = "\(HTTPServer.host(of: listen)):\(port)"
        let me = Unmanaged.passUnretained(self).toOpaque()
        daemon = breeze_mhd_start(fd, { cls, connection, url, method, _, _, _, _ in
            let server = Unmanaged<HTTPServer>.fromOpaque(cls!).takeUnretainedValue()
            return server.answer(connection!, path: String(cString: url!), method: String(cString: method!))
        }, me, 64, 120)
        guard daemon != nil else {
            close(fd)
            throw HTTPServerError("\(listen): libmicrohttpd could not start serving")
        }
    }

    deinit {
        stop()
        pthread_mutex_destroy(stopLock)
        stopLock.deallocate()
    }

    /// Stops accepting, ends every event stream, waits for the connections' threads and closes the socket.
    /// Idempotent.
    public func stop() {
        pthread_mutex_lock(stopLock)
        defer { pthread_mutex_unlock(stopLock) }
        guard !stopped else { return }
        stopped = true
        for s in streams { s.close() }
        if let d = daemon {
            _ = MHD_quiesce_daemon(d)
            MHD_stop_daemon(d)
        }
        daemon = nil
        if listenFD >= 0 { close(listenFD) }
        listenFD = -1
    }

    // MARK: Requests

    private func answer(_ connection: OpaquePointer, path: String, method: String) -> MHD_Result {
        let query = HTTPServer.arguments(connection)
        var response: HTTPResponse
        if let token, !AccessToken.matches(query["token"], token) {
            response = .text("403 forbidden: this page needs the token printed by the command that started it (?token=...)\n",
                             status: 403)
        } else if method != "GET" && method != "HEAD" {
            response = .text("405 method not allowed: this server only reads\n", status: 405)
        } else {
            response = handler(HTTPRequest(method: method, path: path, query: query))
        }
        return queue(response, on: connection)
    }

    private func queue(_ r: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
        let response: OpaquePointer?
        if let subscription = r.stream {
            let box = Unmanaged.passRetained(subscription).toOpaque()
            response = MHD_create_response_from_callback(UInt64.max, 4096, { cls, _, buf, max in
                let s = Unmanaged<EventStream.Subscription>.fromOpaque(cls!).takeUnretainedValue()
                guard let bytes = s.read(max: max) else { return breeze_mhd_end_of_stream() }
                bytes.withUnsafeBytes { UnsafeMutableRawPointer(buf!).copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
                return bytes.count
            }, box, { cls in
                let s = Unmanaged<EventStream.Subscription>.fromOpaque(cls!).takeRetainedValue()
                s.cancel()
            })
            if response == nil { Unmanaged<EventStream.Subscription>.fromOpaque(box).release() }
        } else {
            response = r.body.withUnsafeBytes { b in
                MHD_create_response_from_buffer(b.count, UnsafeMutableRawPointer(mutating: b.baseAddress), .RESPMEM_MUST_COPY)
            }
        }
        guard let response else { return .NO }
        defer { MHD_destroy_response(response) }
        var headers = [("Content-Type", r.contentType), ("Cache-Control", "no-store"), ("Referrer-Policy", "no-referrer"),
                       ("X-Content-Type-Options", "nosniff")]
        if r.contentType.hasPrefix("text/html") {
            headers.append(("Content-Security-Policy",
                            "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:; connect-src 'self'"))
        }
        if r.stream != nil { headers.append(("X-Accel-Buffering", "no")) }
        for (k, v) in headers { _ = MHD_add_response_header(response, k, v) }
        return MHD_queue_response(connection, UInt32(r.status), response)
    }

    /// The query's arguments of a request.
    private static func arguments(_ connection: OpaquePointer) -> [String: String] {
        final class Box { var values: [String: String] = [:] }
        let box = Box()
        withExtendedLifetime(box) {
            _ = MHD_get_connection_values(connection, .GET_ARGUMENT_KIND, { cls, _, key, value in
                let b = Unmanaged<Box>.fromOpaque(cls!).takeUnretainedValue()
                if let key { b.values[String(cString: key)] = value.map { String(cString: $0) } ?? "" }
                return .YES
            }, Unmanaged.passUnretained(box).toOpaque())
        }
        return box.values
    }

    // MARK: The socket

    static func host(of listen: String) -> String {
        let h = String(listen[..<(listen.lastIndex(of: ":") ?? listen.endIndex)])
        return h == "localhost" ? "127.0.0.1" : h
    }

    /// True when `listen` names a loopback address (127.0.0.0/8 or localhost).
    public static func isLoopback(_ listen: String) -> Bool {
        host(of: listen).hasPrefix("127.")
    }

    /// A listening TCP socket on `listen` and the port it got.
    static func bind(_ listen: String) throws(HTTPServerError) -> (fd: Int32, port: Int) {
        guard let colon = listen.lastIndex(of: ":"), let port = UInt16(listen[listen.index(after: colon)...]) else {
            throw HTTPServerError("'\(listen)': expected HOST:PORT, e.g. 127.0.0.1:8080 (port 0: any free port)")
        }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host(of: listen), &addr.sin_addr) == 1 else {
            throw HTTPServerError("'\(listen)': expected an IPv4 address such as 127.0.0.1 before the port")
        }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HTTPServerError("\(listen): cannot create a socket (\(String(cString: strerror(errno))))") }
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, Glibc.listen(fd, 64) == 0 else {
            let e = errno
            close(fd)
            switch e {
            case EADDRINUSE: throw HTTPServerError("\(listen): address already in use (another program listens on that port; pick another, or port 0)")
            case EADDRNOTAVAIL: throw HTTPServerError("\(listen): not an address of this machine")
            case EACCES: throw HTTPServerError("\(listen): permission denied (ports below 1024 need privileges)")
            default: throw HTTPServerError("\(listen): cannot listen (\(String(cString: strerror(e))))")
            }
        }
        var got = sockaddr_in()
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &got) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        return (fd, Int(UInt16(bigEndian: got.sin_port)))
    }
}

/// The inspector's access token: 128 random bits as 32 hex digits, new for every run.
public enum AccessToken {
    /// A fresh token from the system's secure random source (libsodium).
    public static func random() -> String {
        Digest.hex(SecureRandom.bytes(16))
    }

    /// True when `given` equals `token`, compared in constant time.
    public static func matches(_ given: String?, _ token: String) -> Bool {
        guard let given else { return false }
        let a = Array(given.utf8), b = Array(token.utf8)
        return a.count == b.count && ConstantTime.equal(a, b)
    }
}
