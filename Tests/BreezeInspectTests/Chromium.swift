import BreezeTestSupport
import Foundation
@preconcurrency import Glibc

/// A real headless Chromium (Debian `chromium`, which `tools/test.sh` installs) driven over the DevTools
/// protocol (https://chromedevtools.github.io/devtools-protocol/) through a WebSocket client written here
/// (RFC 6455: the opening handshake, masked client frames, fragmented server messages).
final class Chromium {
    static let path = "/usr/bin/chromium"
    static var installed: Bool { access(path, X_OK) == 0 }

    private let child: Child
    private let profile: TempDir
    private let socket: TCPConnection
    private var nextID = 0
    private var session: String?

    /// Starts Chromium and opens one page (a new target in the flat session mode).
    init(width: Int = 1400, height: Int = 2200) throws {
        profile = TempDir()
        let log = profile.file("stderr")
        child = Child(Chromium.path, ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
                                      "--remote-debugging-port=0", "--user-data-dir=\(profile.file("profile"))",
                                      "--window-size=\(width),\(height)", "about:blank"], stderrPath: log)
        var endpoint = ""
        _ = waitUntil(seconds: 30) {
            let text = String(decoding: readFileBytes(log), as: UTF8.self)
            guard let r = text.range(of: "DevTools listening on ws://") else { return false }
            endpoint = String(text[r.upperBound...].prefix { $0 != "\n" })
            return true
        }
        guard let slash = endpoint.firstIndex(of: "/"), let colon = endpoint.firstIndex(of: ":"),
              let port = Int(endpoint[endpoint.index(after: colon)..<slash]),
              let s = TCPConnection(port: port) else {
            child.kill9()
            child.wait()
            throw DriverError("chromium did not start: \(String(decoding: readFileBytes(log), as: UTF8.self).suffix(500))")
        }
        socket = s
        let key = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        socket.send("GET \(endpoint[slash...]) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\r\n")
        guard let head = socket.read(until: Array("\r\n\r\n".utf8)), String(decoding: head, as: UTF8.self).hasPrefix("HTTP/1.1 101") else {
            throw DriverError("the DevTools endpoint refused the WebSocket upgrade")
        }
        let target = try call("Target.createTarget", ["url": "about:blank"])
        guard let id = (target["targetId"] as? String) else { throw DriverError("no target: \(target)") }
        let attached = try call("Target.attachToTarget", ["targetId": id, "flatten": true])
        session = attached["sessionId"] as? String
        _ = try call("Page.enable", [:])
    }

    deinit {
        child.signal(SIGTERM)
        if !waitUntil(seconds: 5, { kill(child.pid, 0) != 0 || waitpidNoHang(child.pid) }) { child.kill9() }
        child.wait()
    }

    private func waitpidNoHang(_ pid: pid_t) -> Bool {
        var status: Int32 = 0
        return waitpid(pid, &status, WNOHANG) == pid
    }

    struct DriverError: Error, CustomStringConvertible {
        let description: String
        init(_ d: String) { description = d }
    }

    // MARK: The protocol

    /// Sends a command (to the page's session once attached) and returns its result, skipping events.
    @discardableResult
    func call(_ method: String, _ params: [String: Any]) throws -> [String: Any] {
        nextID += 1
        var message: [String: Any] = ["id": nextID, "method": method, "params": params]
        if let session { message["sessionId"] = session }
        sendText(try JSONSerialization.data(withJSONObject: message))
        while true {
            guard let text = receiveText() else { throw DriverError("the DevTools connection closed during \(method)") }
            guard let m = json(text) as? [String: Any], m["id"] as? Int == nextID else { continue }
            if let e = m["error"] { throw DriverError("\(method): \(e)") }
            return m["result"] as? [String: Any] ?? [:]
        }
    }

    /// Evaluates `expression` in the page (promises awaited) and returns its value as a string.
    func evaluate(_ expression: String) throws -> String {
        let r = try call("Runtime.evaluate", ["expression": expression, "returnByValue": true, "awaitPromise": true])
        if let ex = r["exceptionDetails"] { throw DriverError("exception in \(expression.prefix(80)): \(ex)") }
        let v = (r["result"] as? [String: Any])?["value"]
        if let s = v as? String { return s }
        if let v { return "\(v)" }
        return ""
    }

    /// The value of `expression`, a JSON string, parsed.
    func evaluateJSON(_ expression: String) throws -> Any? { json(try evaluate("JSON.stringify(\(expression))")) }

    /// Loads `url` and waits until the page says it has drawn (`<html data-rendered>`).
    func open(_ url: String) throws {
        try call("Page.navigate", ["url": url])
        guard try waitFor("document.documentElement.dataset.rendered !== undefined", seconds: 20) else {
            throw DriverError("the page at \(url) did not render: \(try evaluate("document.getElementById('live') ? document.getElementById('live').textContent + ' | screens ' + document.querySelectorAll('section.screen').length + ' | ' + JSON.stringify(document.documentElement.dataset) + ' | ' + document.getElementById('cutlabel').textContent : ''"))")
        }
    }

    /// Polls `condition` (a JavaScript expression) every 20 ms until it is true or `seconds` pass.
    func waitFor(_ condition: String, seconds: Double) throws -> Bool {
        let deadline = now() + seconds
        while now() < deadline {
            // (an exception, e.g. while the next document loads, counts as false)
            if (try? evaluate("String(!!(\(condition)))")) == "true" { return true }
            usleep(20_000)
        }
        return false
    }

    /// A PNG of the page (Page.captureScreenshot), its full height.
    func screenshot() throws -> Data {
        let r = try call("Page.captureScreenshot", ["format": "png", "captureBeyondViewport": true])
        return Data(base64Encoded: r["data"] as? String ?? "") ?? Data()
    }

    func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    // MARK: WebSocket frames

    private func sendText(_ payload: Data) {
        var frame: [UInt8] = [0x81]               // FIN, text
        let n = payload.count
        if n < 126 { frame.append(0x80 | UInt8(n)) }
        else if n < 65536 { frame += [0x80 | 126, UInt8(n >> 8), UInt8(n & 0xff)] }
        else { frame.append(0x80 | 127); for i in (0..<8).reversed() { frame.append(UInt8((n >> (8 * i)) & 0xff)) } }
        let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
        frame += mask
        for (i, b) in payload.enumerated() { frame.append(b ^ mask[i % 4]) }
        socket.send(frame)
    }

    /// The next text message (fragments joined; pings answered), or nil when the connection ends.
    private func receiveText() -> String? {
        var message: [UInt8] = []
        while true {
            guard let h = socket.read(2) else { return nil }
            let fin = h[0] & 0x80 != 0, opcode = h[0] & 0x0f
            var length = Int(h[1] & 0x7f)
            if length == 126 { guard let l = socket.read(2) else { return nil }; length = Int(l[0]) << 8 | Int(l[1]) }
            else if length == 127 { guard let l = socket.read(8) else { return nil }; length = l.reduce(0) { $0 << 8 | Int($1) } }
            let mask = h[1] & 0x80 != 0 ? socket.read(4) : nil
            guard var payload = socket.read(length) else { return nil }
            if let mask { for i in payload.indices { payload[i] ^= mask[i % 4] } }
            switch opcode {
            case 0x8: return nil
            case 0x9: socket.send([0x8a, 0x80, 0, 0, 0, 0]); continue      // ping: an empty masked pong
            case 0xa: continue
            default: message += payload
            }
            if fin { return String(decoding: message, as: UTF8.self) }
        }
    }

    /// `chromium --headless --dump-dom` with a virtual time budget: the DOM after the page's scripts ran.
    static func dumpDOM(_ url: String, budgetMillis: Int = 5000) -> String {
        let dir = TempDir()
        return runProgram(path, ["--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=\(dir.file("profile"))",
                                 "--virtual-time-budget=\(budgetMillis)", "--dump-dom", url]).out
    }
}
