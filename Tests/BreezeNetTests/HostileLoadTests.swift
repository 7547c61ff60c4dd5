import Testing
import BreezeCore
import BreezeStore
import BreezeSync
import BreezeCrypto
import BreezeTestSupport
import Foundation
@preconcurrency import Glibc

/// Fault scenario 7 (issue 7): hostile peers against a real `breeze node`, measured. `ReplicationTests`
/// checks that foreign certificates, replays, garbage, oversized and truncated frames are refused; these tests
/// measure what they cost the node: the memory an oversized length prefix or a flood makes it hold (peak
/// RSS from /proc), how soon it drops slow senders and idle sockets, and how much sync throughput an
/// authenticated pair keeps while all of that goes on at once.
@Suite(.serialized)
struct HostileLoadTests {
    @Test func oversizedLengthPrefixesAreRefusedBeforeAnyLargeAllocation() throws {
        let c = Cluster()
        let a = c.start("a")
        let pid = c.nodes["a"]!.child.pid
        let before = ProcStatus(pid)
        var fired = 0, closedFast = 0, closedAll = 0
        let lengths: [UInt32] = [0xFFFF_FFFF, 0x7FFF_FFFF, UInt32(Frame.maxLength + 1), UInt32(Frame.handshakeMaxLength + 1)]
        // Before authentication (the 64 KiB handshake limit) and after it (the 4 MiB limit).
        for round in 0..<25 {
            for (i, length) in lengths.enumerated() {
                guard let p = RawPeer(a) else { Issue.record("connect failed"); continue }
                if round % 2 == 1 && i < 3 {
                    guard p.handshake(replica: ReplicaID(rawValue: 0xF00 + UInt64(round * 8 + i)), scope: .cluster, authority: c.authority) != nil else {
                        Issue.record("handshake failed"); continue
                    }
                } else if round % 2 == 1 {
                    continue                    // 64 KiB + 1 is allowed after authentication
                }
                let t0 = monotonic()
                let header = (0..<4).map { UInt8(truncatingIfNeeded: length >> (8 * UInt32($0))) }
                p.send(header + [0x10] + [UInt8](repeating: 0xAB, count: 256 << 10))   // and 256 KiB of payload
                fired += 1
                if p.closedOrReset() {
                    closedAll += 1
                    if monotonic() - t0 < 1 { closedFast += 1 }
                }
            }
        }
        let after = ProcStatus(pid)
        let grewKiB = after.peakKiB - before.peakKiB
        print("FAULT scenario=7 part=oversized fired=\(fired) lost=0 duplicated=0 unexpected=\(fired - closedAll) "
              + "closed_within_1s=\(closedFast) peak_rss_before_kib=\(before.peakKiB) peak_rss_after_kib=\(after.peakKiB)")
        // (How soon is a figure for the printout above, not an assertion: on a busy machine a second is not a bound.)
        #expect(fired == 88 && closedAll == fired, "every oversized prefix closes its connection")
        #expect(grewKiB < 16 << 10, "peak RSS grew by \(grewKiB) KiB")
        #expect(c.cli("a", ["favourite", "add", "still-serving"]).code == 0)
    }

    @Test func slowSendersAreClosedByTheHandshakeTimeout() throws {
        let c = Cluster()
        let a = c.start("a")
        // 20 peers each trickle a valid hello frame one byte every 100 ms (it would take ~6 s to finish).
        let hello = Frame.encode(.handshake1(minVersion: 3, maxVersion: 3, ephemeral: X25519.publicKey(privateKey: [UInt8](repeating: 7, count: 32))))
        var peers = (0..<20).compactMap { _ in RawPeer(a).map { (peer: $0, opened: monotonic(), closedAfter: Double?.none) } }
        var sent = 0
        let start = monotonic()
        while peers.contains(where: { $0.closedAfter == nil }) && monotonic() - start < 15 {
            for i in peers.indices where peers[i].closedAfter == nil {
                if sent / peers.count < hello.count { peers[i].peer.send([hello[min(sent / peers.count, hello.count - 1)]]) }
                var b = [UInt8](repeating: 0, count: 256)
                let n = recv(peers[i].peer.fd, &b, b.count, Int32(MSG_DONTWAIT))
                if n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) { peers[i].closedAfter = monotonic() - peers[i].opened }
            }
            sent += peers.count
            usleep(100_000)
        }
        let times = peers.compactMap(\.closedAfter)
        let worst = times.max() ?? 99
        print("FAULT scenario=7 part=slow-senders fired=\(peers.count) lost=0 duplicated=0 unexpected=\(peers.count - times.count) "
              + "closed=\(times.count) first_close_s=\(fmt(times.min() ?? 99)) last_close_s=\(fmt(worst))")
        #expect(times.count == peers.count, "every slow sender is closed")
        // Closed by the handshake timeout (5 s), not before it; how soon after it is for the printout (a busy
        // machine delays it), with a hang guard.
        #expect((times.min() ?? 0) >= 4.9 && worst <= 60, "closed \(fmt(times.min() ?? 0))-\(fmt(worst)) s after connecting (handshake timeout 5 s)")
        #expect(c.cli("a", ["favourite", "add", "still-serving"]).code == 0)
    }

    @Test func aThousandIdleSocketsLeaveAuthenticatedPeersSyncing() throws {
        raiseFileLimit(to: 4096)
        let c = Cluster()
        let a = c.start("a")
        c.start("b", peers: [a])
        #expect(c.cli("a", ["favourite", "add", "before"]).code == 0)
        #expect(waitUntil(seconds: 10) { c.fingerprint("b") == c.fingerprint("a") })
        let pid = c.nodes["a"]!.child.pid
        let idle = IdleSockets(a, count: 1000)
        let opened = idle.fds.count
        _ = waitUntil(seconds: 3) { idle.closedCount() >= opened - 256 }     // the node accepts them all
        let closedAtOnce = idle.closedCount()
        let fdsWhileFlooded = openFileCount(pid)
        // The authenticated pair keeps syncing, both ways.
        let t0 = monotonic()
        #expect(c.cli("a", ["favourite", "add", "during"]).code == 0)
        #expect(c.cli("b", ["unit", "set", "fahrenheit"]).code == 0)
        let synced = waitUntil(seconds: 10) { c.fingerprint("b") == c.fingerprint("a") }
        let syncSeconds = monotonic() - t0
        #expect(synced, "authenticated peers sync while 1,000 idle sockets are open")
        // The idle ones the node kept are dropped by the handshake timeout; then new peers get in again.
        let allClosed = waitUntil(seconds: 8) { idle.closedCount() == opened }
        let fresh = RawPeer(a)
        let newPeerOK = fresh?.handshake(replica: ReplicaID(rawValue: 0x1D1E), scope: .cluster, authority: c.authority) != nil
        let status = ProcStatus(pid)
        print("FAULT scenario=7 part=idle-sockets fired=\(opened) lost=0 duplicated=0 unexpected=\(synced && allClosed && newPeerOK ? 0 : 1) "
              + "refused_at_once=\(closedAtOnce) node_fds=\(fdsWhileFlooded) sync_s=\(fmt(syncSeconds)) "
              + "all_closed=\(allClosed) new_peer_after=\(newPeerOK) peak_rss_kib=\(status.peakKiB)")
        #expect(opened == 1000)
        #expect(closedAtOnce >= opened - 256 - 8, "the node holds at most 256 unauthenticated connections")
        #expect(fdsWhileFlooded < 256 + 64, "node fds: \(fdsWhileFlooded)")
        #expect(allClosed, "\(opened - idle.closedCount()) idle sockets still open after the handshake timeout")
        #expect(newPeerOK)
        idle.closeAll()
    }

    @Test func aFloodOfPackedResetsIsThrottledAndClosedLikePings() throws {
        // `reset` carries nothing and costs the node a little work each, so it shares
        // the control budget: beyond 20 a second the node stops reading, and closes after 5 s of it.
        let c = Cluster()
        _ = c.cli("a", ["init"])
        let a = c.start("a")
        let peer = RawPeer(a)!
        let session = peer.handshake(replica: ReplicaID(rawValue: 0xF100F), scope: .cluster, authority: c.authority)
        #expect(session?.version == 3, "the raw peer speaks the sealed protocol")
        let resets = peer.sealed(Array(repeating: .reset, count: 4096))
        var sent = 0
        let t0 = monotonic()
        while monotonic() - t0 < 15 && peer.sendAll(resets) { sent += 4096 }
        let seconds = monotonic() - t0
        let closed = peer.closedOrReset()
        print("FAULT scenario=7 part=reset-flood fired=\(sent) lost=0 duplicated=0 unexpected=0 resets_sent=\(sent) stalled_after_s=\(fmt(seconds)) closed=\(closed)")
        #expect(seconds < 60, "a reset flood is throttled, then closed (more than 20 a second for 5 s): after \(fmt(seconds)) s")
        #expect(seconds > 4, "resets are valid: the peer is throttled first, not dropped at once")
        #expect(closed)
        #expect(c.cli("a", ["favourite", "add", "still-serving"]).code == 0)
    }

    @Test func aFloodOfValidFramesKeepsTheNodesMemoryBounded() throws {
        let c = Cluster()
        _ = c.cli("a", ["init"])
        let a = c.start("a")
        let pid = c.nodes["a"]!.child.pid
        let before = ProcStatus(pid)
        // 1. An authenticated peer sends pings as fast as it can and never reads the pongs. The node answers
        // 20 a second and stops reading the rest (the sender stalls once the kernel's buffers are full), and
        // closes the connection after 5 s of flooding.
        let pinger = RawPeer(a)!
        #expect(pinger.handshake(replica: ReplicaID(rawValue: 0xF100D), scope: .cluster, authority: c.authority) != nil)
        var pingBytes = 0, pingsSent = 0
        let t0 = monotonic()
        while monotonic() - t0 < 15 {
            let pings = pinger.sealed((0..<4096).map { .ping(UInt64(pingsSent + $0)) })
            guard pinger.sendAll(pings) else { break }
            pingBytes += pings.count
            pingsSent += 4096
        }
        let pingSeconds = monotonic() - t0
        let pingerClosed = pinger.closedOrReset()
        let pingerClosedAfter = monotonic() - t0
        let pingPeak = ProcStatus(pid)
        // 2. An authenticated peer sends valid event batches without waiting for acknowledgements.
        let writer = RawPeer(a)!
        let origin = Origin(replica: ReplicaID(rawValue: 0xF100E), epoch: 1)
        #expect(writer.handshake(replica: origin.replica, scope: .cluster, authority: c.authority) != nil)
        var counter: UInt64 = 0, batches = 0
        let t1 = monotonic()
        while monotonic() - t1 < 5 {
            let events = (0..<256).map { _ -> Event in
                counter += 1
                return Event(stream: .public, id: EventID(origin: origin, counter: counter), hlc: HLC(rawValue: counter << 16),
                             body: .reading(Reading(source: "flood", sensor: "f", time: Int64(counter), values: [Measurement("pm25", 1)])))
            }
            batches += 1
            guard writer.sendAll(writer.sealed([.events(batch: UInt64(batches), events: events)])) else { break }
        }
        usleep(500_000)
        let after = ProcStatus(pid)
        let stored = c.count("a")
        print("FAULT scenario=7 part=flood fired=\(pingsSent + Int(counter)) lost=0 duplicated=0 unexpected=0 "
              + "pings_sent=\(pingsSent) pinger_stalled_after_s=\(fmt(pingSeconds)) pinger_closed_after_s=\(fmt(pingerClosedAfter)) events_sent=\(counter) events_stored=\(stored) rss_before_kib=\(before.rssKiB) "
              + "peak_rss_after_pings_kib=\(pingPeak.peakKiB) peak_rss_kib=\(after.peakKiB)")
        #expect(pingSeconds < 60, "a ping flood is throttled, then closed (more than 20 a second for 5 s)")
        #expect(pingerClosed && pingerClosedAfter < 60, "the flooding peer is closed \(fmt(pingerClosedAfter)) s after it began")
        #expect(pingerClosedAfter > 4.5, "pings are valid: the flooding peer is throttled for 5 s before it is closed")
        #expect(pingBytes < 32 << 20, "the node stops reading a flood: \(pingBytes >> 20) MiB went into the kernel's buffers")
        #expect(after.peakKiB - before.peakKiB < 64 << 10, "peak RSS grew by \((after.peakKiB - before.peakKiB) >> 10) MiB")
        #expect(c.cli("a", ["favourite", "add", "still-serving"]).code == 0)
    }

    @Test func authenticatedPeersKeepSyncingUnderHostileLoadAndItsCostIsMeasured() throws {
        raiseFileLimit(to: 4096)
        let c = Cluster()
        let a = c.start("a")
        c.start("b", peers: [a])
        #expect(c.cli("a", ["favourite", "add", "first"]).code == 0)
        #expect(waitUntil(seconds: 10) { c.fingerprint("b") == c.fingerprint("a") })
        // One trial: a writer commits `burst` events to A in one transaction; the time until the
        // authenticated peer B holds them all gives events per second over the established connection.
        let burst = 40_000
        let pidA = c.nodes["a"]!.child.pid, pidB = c.nodes["b"]!.child.pid
        // B's progress is read through a read-only handle (no write lock, no WAL check, unlike `EventLog.open`)
        // from its greatest sequence number, every 2 ms: the probe must not slow the node it measures.
        guard let probe = try? EventLog.openReadOnly(at: c.db("b")) else { Issue.record("cannot open b read-only"); return }
        defer { probe.close() }
        func progress() -> Int64 { (try? probe.lastSeq()) ?? -1 }
        func trial() -> Double {
            let target = progress() + Int64(burst)
            #expect(runProgram(c.torture, ["append", "--db", c.db("a"), "--count", String(burst), "--batch", String(burst),
                                           "--stream", "public"]).code == 0)
            let t0 = monotonic()
            while progress() < target && monotonic() - t0 < 120 { usleep(2_000) }
            return progress() >= target ? Double(burst) / (monotonic() - t0) : 0
        }
        _ = trial()                                 // warm up (page cache, statements)
        let soak = getenv("BREEZE_SOAK").map { String(cString: $0) == "1" } ?? false
        let trials = soak ? 15 : 7
        let load = HostileLoad(address: a, authority: c.authority)
        // CPU seconds of node A, node B and this process (the attacker threads and the probe) per kind of trial.
        var cpuQuiet = [0.0, 0.0, 0.0], cpuLoaded = [0.0, 0.0, 0.0]
        func measured(loaded: Bool) -> Double {
            let before = [cpuSeconds(pidA), cpuSeconds(pidB), cpuSeconds(getpid())]
            let rate = trial()
            let used = zip([cpuSeconds(pidA), cpuSeconds(pidB), cpuSeconds(getpid())], before).map { $0 - $1 }
            if loaded { cpuLoaded = zip(cpuLoaded, used).map { $0 + $1 } } else { cpuQuiet = zip(cpuQuiet, used).map { $0 + $1 } }
            return rate
        }
        // Quiet and loaded trials alternate, quiet first and last (Q L Q ... L Q); each loaded trial is set
        // against the mean of the quiet trials either side of it, so drift in the machine's load (other jobs
        // building) cancels out, and the figure is the median of those ratios.
        var quiet = [measured(loaded: false)], loaded: [Double] = []
        for _ in 0..<trials {
            load.start()
            usleep(500_000)
            loaded.append(measured(loaded: true))
            load.stop()
            quiet.append(measured(loaded: false))
        }
        let ratios = loaded.indices.map { loaded[$0] / max(1, (quiet[$0] + quiet[$0 + 1]) / 2) }
        let ratio = median(ratios)
        let mq = median(quiet), ml = median(loaded)
        // Node CPU per 1,000 events synced: the cost the attack adds to the nodes, whatever the machine's load.
        let perK = { (s: Double, n: Int) in fmt(s * 1000 / Double(n * burst / 1000)) }
        // The same as a ratio: quiet node CPU per event over loaded (1.00 when the attack costs the nodes nothing).
        let cpuRatio = (cpuQuiet[0] + cpuQuiet[1]) / Double(quiet.count) / max(0.001, (cpuLoaded[0] + cpuLoaded[1]) / Double(loaded.count))
        let counts = load.counts
        print("FAULT scenario=7 part=throughput fired=\(counts.values.reduce(0, +)) lost=0 duplicated=0 unexpected=0 "
              + "quiet_events_per_s=\(Int(mq)) loaded_events_per_s=\(Int(ml)) ratio=\(fmt(ratio)) ratios=\(ratios.map(fmt)) cpu_ratio=\(fmt(cpuRatio)) "
              + "node_cpu_ms_per_kevent_quiet=\(perK(cpuQuiet[0], quiet.count))+\(perK(cpuQuiet[1], quiet.count)) "
              + "node_cpu_ms_per_kevent_loaded=\(perK(cpuLoaded[0], loaded.count))+\(perK(cpuLoaded[1], loaded.count)) "
              + "test_process_cpu_s_per_trial_quiet=\(fmt(cpuQuiet[2] / Double(quiet.count))) loaded=\(fmt(cpuLoaded[2] / Double(loaded.count))) "
              + "quiet=\(quiet.map { Int($0) }) loaded=\(loaded.map { Int($0) }) load=\(counts.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" })")
        // The ratios are figures (printed above, and `breeze-bench` measures throughput), not assertions: a test
        // asserts behaviour, and on a machine busy with other work a ratio says more about the machine than the
        // node (issue 29). What must hold under the attack: the authenticated pair keeps syncing, every event
        // arrives, and the attack did not make the nodes spend many times the CPU per event (a node starved or
        // spinning: 0.2 is far below every measured run, 0.74 to 1.05).
        #expect(cpuRatio >= 0.2, "the attack made the nodes spend \(fmt(1 / cpuRatio))x the CPU per event")
        #expect(c.fingerprint("b") == c.fingerprint("a"))
        #expect(c.cli("a", ["favourite", "add", "still-serving"]).code == 0)
    }
}

// MARK: - Helpers

/// VmRSS and VmHWM (peak) of a process, in KiB, from /proc/PID/status.
struct ProcStatus {
    var rssKiB = 0, peakKiB = 0
    init(_ pid: pid_t) {
        let text = String(decoding: readFileBytes("/proc/\(pid)/status"), as: UTF8.self)
        for line in text.split(separator: "\n") {
            let f = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard f.count >= 2, let v = Int(f[1]) else { continue }
            if f[0] == "VmRSS:" { rssKiB = v }
            if f[0] == "VmHWM:" { peakKiB = v }
        }
    }
}

/// User plus system CPU seconds a process has used, from /proc/PID/stat.
func cpuSeconds(_ pid: pid_t) -> Double {
    let text = String(decoding: readFileBytes("/proc/\(pid)/stat"), as: UTF8.self)
    guard let close = text.lastIndex(of: ")") else { return 0 }
    let f = text[text.index(after: close)...].split(separator: " ")
    guard f.count > 13, let u = Double(f[11]), let s = Double(f[12]) else { return 0 }
    return (u + s) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

func openFileCount(_ pid: pid_t) -> Int {
    guard let d = opendir("/proc/\(pid)/fd") else { return -1 }
    defer { closedir(d) }
    var n = 0
    while readdir(d) != nil { n += 1 }
    return n - 2
}

func raiseFileLimit(to n: rlim_t) {
    var l = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &l)
    if l.rlim_cur < n {
        l.rlim_cur = min(n, l.rlim_max)
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &l)
    }
}

func monotonic() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

func median(_ xs: [Double]) -> Double {
    let s = xs.sorted()
    return s.isEmpty ? 0 : s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

// `fmt` (seconds with two decimals) is FaultTests.swift's.

func connectTCP(_ address: String) -> Int32? {
    let parts = address.split(separator: ":")
    guard parts.count == 2, let port = UInt16(parts[1]) else { return nil }
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_port = port.bigEndian
    inet_pton(AF_INET, String(parts[0]), &addr.sin_addr)
    let rc = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    guard rc == 0 else { close(fd); return nil }
    return fd
}

extension RawPeer {
    /// True when the node closes the connection (end of file, or a reset because it closed with our bytes
    /// unread) before the receive timeout; messages it sends first are skipped.
    func closedOrReset() -> Bool {
        while true {
            var buf = [UInt8](repeating: 0, count: 4096)
            let n = recv(fd, &buf, buf.count, 0)
            if n == 0 { return true }
            if n < 0 { return errno == ECONNRESET || errno == EPIPE }
        }
    }

    /// Sends everything unless the peer closed or stopped reading for 2 s; returns whether it all went out.
    func sendAll(_ bytes: [UInt8]) -> Bool {
        var tv = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + off, bytes.count - off, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            off += n
        }
        return true
    }
}

/// Sockets that connect and then say nothing.
final class IdleSockets {
    private(set) var fds: [Int32] = []
    init(_ address: String, count: Int) {
        for _ in 0..<count { if let fd = connectTCP(address) { fds.append(fd) } }
    }
    /// How many the node has closed (read returns end of file or an error).
    func closedCount() -> Int {
        var n = 0
        for fd in fds {
            var b = [UInt8](repeating: 0, count: 64)
            let r = recv(fd, &b, b.count, Int32(MSG_DONTWAIT))
            if r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK) { n += 1 }
        }
        return n
    }
    func closeAll() { fds.forEach { close($0) }; fds = [] }
    deinit { closeAll() }
}

/// Every kind of hostile peer at once, on background threads, until `stop()`: 1,000 idle unauthenticated
/// sockets (re-opened as the node drops them), slow senders trickling a hello, oversized length prefixes,
/// and an authenticated peer flooding pings (100,000 a second) without reading, reconnecting when dropped. `counts` says how often each fired.
/// The threads sleep between rounds (they do not spin), so what they cost is the attack, not a busy loop; for
/// diagnosis, `BREEZE_HOSTILE_ONLY=idle,slow,oversized,flood` (any subset) runs only those kinds.
// Its mutable state is guarded by `lock`; the threads read `stopping` under it too.
final class HostileLoad: @unchecked Sendable {
    let address: String
    let authority: TestAuthority
    private let lock = NSLock()
    private var stopping = false
    private var threads: [Thread] = []
    private var tallies: [String: Int] = [:]
    private let done = DispatchGroup()

    init(address: String, authority: TestAuthority) {
        self.address = address
        self.authority = authority
    }

    var counts: [String: Int] { lock.lock(); defer { lock.unlock() }; return tallies }
    private var stopped: Bool { lock.lock(); defer { lock.unlock() }; return stopping }
    private func count(_ k: String, _ n: Int = 1) { lock.lock(); tallies[k, default: 0] += n; lock.unlock() }

    func start() {
        lock.lock(); stopping = false; lock.unlock()
        let only = getenv("BREEZE_HOSTILE_ONLY").map { Set(String(cString: $0).split(separator: ",").map(String.init)) }
        func on(_ kind: String) -> Bool { only?.contains(kind) ?? true }
        if on("idle") { spawn { [self] in
            // Idle sockets: keep 1,000 open, re-opening those the node dropped every 5 s (its handshake timeout).
            var idle: [Int32] = []
            while !stopped {
                idle.removeAll { fd in
                    var b = [UInt8](repeating: 0, count: 16)
                    let r = recv(fd, &b, b.count, Int32(MSG_DONTWAIT))
                    if r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK) { close(fd); return true }
                    return false
                }
                while idle.count < 1000, !stopped, let fd = connectTCP(address) { idle.append(fd); count("idle") }
                for _ in 0..<50 where !stopped { usleep(100_000) }
            }
            idle.forEach { close($0) }
        } }
        if on("slow") { spawn { [self] in
            // Slow senders: 10 sockets trickling a hello one byte every 50 ms.
            let hello = Frame.encode(.handshake1(minVersion: 3, maxVersion: 3, ephemeral: X25519.publicKey(privateKey: [UInt8](repeating: 7, count: 32))))
            var slow: [(fd: Int32, sent: Int)] = []
            while !stopped {
                while slow.count < 10, let fd = connectTCP(address) { slow.append((fd, 0)); count("slow") }
                for i in slow.indices {
                    let b = [hello[slow[i].sent % hello.count]]
                    if Glibc.send(slow[i].fd, b, 1, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) == 1 { slow[i].sent += 1 } else { slow[i].sent = -1 }
                }
                slow.removeAll { if $0.sent < 0 { close($0.fd); return true }; return false }
                usleep(50_000)
            }
            slow.forEach { close($0.fd) }
        } }
        if on("oversized") { spawn { [self] in
            // Oversized length prefixes, 20 a second.
            while !stopped {
                if let fd = connectTCP(address) {
                    let b: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF, 0x10]
                    _ = Glibc.send(fd, b, b.count, Int32(MSG_NOSIGNAL))
                    close(fd)
                    count("oversized")
                }
                usleep(50_000)
            }
        } }
        if on("flood") { spawn { [self] in
            // An authenticated flood of pings that never reads the pongs; reconnects when dropped.
            var n: UInt64 = 0
            while !stopped {
                guard let p = RawPeer(address) else { usleep(50_000); continue }
                n += 1
                guard p.handshake(replica: ReplicaID(rawValue: 0xF1_0000 + n), scope: .cluster, authority: authority) != nil else {
                    usleep(50_000); continue
                }
                count("flood-sessions")
                while !stopped && p.sendAll(p.sealed((0..<1024).map { .ping(UInt64($0)) })) { count("flood-pings", 1024); usleep(10_000) }
                usleep(50_000)                   // then it comes back, up to 20 times a second
            }
        } }
    }

    private func spawn(_ body: @escaping @Sendable () -> Void) {
        done.enter()
        let t = Thread { [done] in body(); done.leave() }
        t.start()
        threads.append(t)
    }

    func stop() {
        lock.lock(); stopping = true; lock.unlock()
        done.wait()
    }
}
