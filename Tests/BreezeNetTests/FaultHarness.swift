import BreezeCore
import BreezeStore
import BreezeTestSupport
@preconcurrency import Glibc

/// Shared conventions of the fault tests (issue 7): a seed that is logged and can be given back with
/// `BREEZE_SEED`, soak sizes behind `BREEZE_SOAK=1`, and one `FAULT scenario=...` line per scenario.
enum FaultRun {
    /// The run's seed: `BREEZE_SEED` if set, else a fresh random one. Printed so a failure can be replayed.
    static func seed(scenario: Int) -> UInt64 {
        let s: UInt64
        if let text = getenv("BREEZE_SEED").map({ String(cString: $0) }), let v = UInt64(text) { s = v } else {
            s = UInt64.random(in: 0...(UInt64.max >> 1))
        }
        print("FAULT scenario=\(scenario) seed=\(s) (reproduce with BREEZE_SEED=\(s))")
        return s
    }

    /// True with `BREEZE_SOAK=1`: longer runs.
    static var soak: Bool { getenv("BREEZE_SOAK").map { String(cString: $0) == "1" } ?? false }

    /// Monotonic seconds.
    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    static func report(_ line: String) {
        print("FAULT " + line)
        fflush(stdout)
    }
}

/// A running `breeze-proxy` in front of one node, with its control address.
final class ProxyProcess {
    let child: Child
    let address: String
    let control: String

    init(target: String, seed: UInt64, faults: [String: String] = [:], log: String) {
        var args = ["--target", target, "--seed", String(seed)]
        for (k, v) in faults.sorted(by: { $0.key < $1.key }) { args += ["--\(k)", v] }
        let child = Child(productsDirectory() + "/breeze-proxy", args, stderrPath: log)
        self.child = child
        func field(_ prefix: String) -> String {
            let line = child.readLine() ?? ""
            return line.hasPrefix(prefix) ? String(line.dropFirst(prefix.count)) : ""
        }
        address = field("listening on ")
        control = field("control on ")
        _ = child.readLine()   // seed
    }

    /// Sends one control command; returns the answer line ("ok counters...").
    @discardableResult
    func command(_ text: String) -> String {
        guard let peer = RawPeer(control) else { return "error: no control connection" }
        peer.send(Array((text + "\n").utf8))
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 1024)
        while true {
            let n = recv(peer.fd, &buf, buf.count, 0)
            if n <= 0 { break }
            out += buf[0..<n]
            if out.last == 10 { break }
        }
        return String(decoding: out.filter { $0 != 10 }, as: UTF8.self)
    }

    /// The counters, parsed from `stats`.
    func stats() -> [String: Int] {
        var out: [String: Int] = [:]
        for part in command("stats").split(separator: " ").dropFirst() {
            let kv = part.split(separator: "=")
            if kv.count == 2, let v = Int(kv[1]) { out[String(kv[0])] = v }
        }
        return out
    }

    private var stopped = false

    func stop() {
        guard !stopped else { return }
        stopped = true
        child.signal(SIGTERM)
        while child.readLine() != nil {}
        child.wait()
    }

    deinit { stop() }
}

extension Cluster {
    /// Starts `names.count` nodes in a full mesh where every link goes through its own proxy: node i listens
    /// and dials, through a proxy, every node before it. Returns the proxies by link name ("a-b").
    func startMesh(_ names: [String], seed: UInt64, faults: [String: String] = [:],
                   env: (String) -> [String] = { _ in [] }) -> [String: ProxyProcess] {
        var proxies: [String: ProxyProcess] = [:]
        var addresses: [String: String] = [:]
        for (i, name) in names.enumerated() {
            var peers: [String] = []
            for earlier in names[..<i] {
                let link = earlier + "-" + name
                let p = ProxyProcess(target: addresses[earlier]!, seed: seed &+ UInt64(proxies.count + 1) &* 0x9E37_79B9,
                                     faults: faults, log: dir.file("proxy-\(link).log"))
                proxies[link] = p
                peers.append(p.address)
            }
            addresses[name] = start(name, peers: peers, env: env(name))
        }
        return proxies
    }

    /// Every event of a replica: "stream id" to hash, with the number of rows per key (to count duplicates).
    func events(_ name: String) -> [String: (hash: String, rows: Int)] {
        guard let log = try? EventLog.open(at: db(name)) else { return [:] }
        defer { log.close() }
        var out: [String: (hash: String, rows: Int)] = [:]
        try? log.forEach { entry in
            let key = "\(entry.event.stream) \(entry.event.id)"
            out[key] = (entry.event.hashHex, (out[key]?.rows ?? 0) + 1)
            return true
        }
        return out
    }
}

/// Acknowledged writes and the Jepsen-style check of every replica against them.
struct AckedWrites {
    /// "stream id" to hash (nil when the writer printed only the id).
    private(set) var acked: [String: String?] = [:]

    /// Records the "ack STREAM ID HASH" lines of `breeze-torture`.
    mutating func addTorture(_ lines: [String]) {
        for l in lines {
            let f = l.split(separator: " ")
            if f.count == 4 && f[0] == "ack" { acked["\(f[1]) \(f[2])"] = String(f[3]) }
        }
    }

    /// Records one CLI write from its output "... (event ID)".
    mutating func addCLI(_ output: String, stream: String) {
        guard let open = output.range(of: "(event "), let close = output[open.upperBound...].firstIndex(of: ")") else { return }
        acked["\(stream) \(output[open.upperBound..<close])"] = .some(nil)
    }

    var count: Int { acked.count }

    /// Acknowledged events missing from a replica, rows beyond one per event id, and events nobody wrote
    /// (or whose bytes differ from what was acknowledged).
    func check(_ held: [String: (hash: String, rows: Int)]) -> (lost: Int, duplicated: Int, unexpected: Int) {
        var lost = 0, duplicated = 0, unexpected = 0
        for (key, hash) in acked {
            guard let h = held[key] else { lost += 1; continue }
            if let hash, hash != h.hash { unexpected += 1 }
        }
        for (key, h) in held {
            duplicated += h.rows - 1
            if acked[key] == nil { unexpected += 1 }
        }
        return (lost, duplicated, unexpected)
    }
}

/// Runs processes at once and collects each one's output lines.
func runConcurrently(_ commands: [(path: String, args: [String])]) -> [(code: Int32, lines: [String])] {
    let children = commands.map { Child($0.path, $0.args, stderrPath: "/dev/null") }
    return children.map { c in
        var lines: [String] = []
        while let l = c.readLine() { lines.append(l) }
        return (c.wait(), lines)
    }
}

extension Array where Element == Double {
    var median: Double {
        guard !isEmpty else { return 0 }
        let s = sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }
}
