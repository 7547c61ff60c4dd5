// The listener, the control socket and the shared state of breeze-proxy.
import BreezeCore
@preconcurrency import Glibc

/// A TCP proxy to one target that injects faults per frame and can cut (partition) and heal.
///
/// Control (one command per connection to the control address, one line back, then closed):
/// `cut` resets every open connection and refuses new ones until `heal`; `faults off` / `faults on`
/// suspend and resume the per-frame faults; `stats` reports the counters. Every answer is
/// `ok <counters>` (or `error ...`).
///
/// With `--attack`, each connection gets exactly one attack (`AttackKind`, in turn from the list) on its
/// `--attack-after`th frame of one direction; the attack counts as detected when the connection is closed within
/// `--attack-window-ms` of it. With `--capture FILE`, every byte forwarded (both directions) is appended to FILE.
///
/// `@unchecked Sendable`: `stats`, `links`, `cut`, `faultsOn`, `attackLog`, `recorded` and the capture file are
/// guarded by `lock`; the rest is immutable.
final class FaultProxy: @unchecked Sendable {
    let target: String
    let seed: UInt64
    let configured: FaultRates
    let attackKinds: [AttackKind]
    let attackAfter: Int
    let attackWindowMillis: Double
    private var lock = pthread_mutex_t()
    private var stats = FaultStats()
    private var links: [Int: Link] = [:]
    private var isCut = false
    private var faultsOn = true
    private var nextID = 0
    private let captureFD: Int32
    /// Each attack fired: its kind, when, and when its connection closed.
    private var attackLog: [Int: (kind: AttackKind, fired: Double, closed: Double?)] = [:]
    /// Sealed frames seen lately, with their link and direction, for `splice`.
    private var recorded: [(link: Int, up: Bool, frame: [UInt8])] = []

    init(target: String, seed: UInt64, rates: FaultRates, attacks: [AttackKind] = [], attackAfter: Int = 3,
         attackWindowMillis: Double = 3000, capture: String? = nil) {
        self.target = target
        self.seed = seed
        self.configured = rates
        attackKinds = attacks
        self.attackAfter = attackAfter
        self.attackWindowMillis = attackWindowMillis
        captureFD = capture.map { open($0, O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0o644) } ?? -1
        pthread_mutex_init(&lock, nil)
    }

    /// Appends forwarded bytes to the capture file.
    func capture(_ bytes: ArraySlice<UInt8>) {
        guard captureFD >= 0, !bytes.isEmpty else { return }
        locked {
            var off = bytes.startIndex
            while off < bytes.endIndex {
                let n = bytes[off...].withUnsafeBytes { write(captureFD, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return }
                off += n
            }
        }
    }

    /// Whether attacks are on now (`faults off` stops them too).
    var attacking: Bool { locked { faultsOn } && !attackKinds.isEmpty }

    /// The attack planned for connection `id`: its kind, direction (true: client to target) and frame index.
    func plan(for id: Int, rng: inout SplitMix) -> AttackPlan? {
        guard !attackKinds.isEmpty else { return nil }
        let kind = attackKinds[(id - 1) % attackKinds.count]
        if kind.onFirstFrame { return AttackPlan(kind: kind, up: true, frame: 0) }
        return AttackPlan(kind: kind, up: rng.next() & 1 == 0, frame: attackAfter)
    }

    /// Records that link `id`'s attack fired now.
    func fired(_ kind: AttackKind, link id: Int) {
        locked {
            attackLog[id] = (kind, Self.now(), nil)
            stats.attacks[kind, default: 0] += 1
        }
    }

    /// Records a sealed frame that passed (for `splice`) and counts it.
    func sawSealed(_ frame: [UInt8], link id: Int, up: Bool) {
        locked {
            stats.sealed += 1
            recorded.append((id, up, frame))
            if recorded.count > 32 { recorded.removeFirst(recorded.count - 32) }
        }
    }

    /// Counts a downgraded connection that carried a sealed frame after its downgrade.
    func downgradeNotRefused() { locked { stats.downgradedSealed += 1 } }

    /// A sealed frame recorded from another connection, same direction, if any.
    func recordedFrame(notFrom id: Int, up: Bool) -> [UInt8]? {
        locked { recorded.last { $0.link != id && $0.up == up }?.frame }
    }

    /// Monotonic milliseconds.
    static func now() -> Double { Double(SystemClock.monotonicNanos()) / 1e6 }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(&lock); defer { pthread_mutex_unlock(&lock) }
        return body()
    }

    /// The rates in force now (none while faults are off).
    var rates: FaultRates { locked { faultsOn ? configured : FaultRates() } }

    /// Updates the counters.
    func count(_ update: (inout FaultStats) -> Void) { locked { update(&stats) } }

    func remove(_ link: Link) {
        locked {
            links.removeValue(forKey: link.id)
            if attackLog[link.id] != nil { attackLog[link.id]!.closed = Self.now() }
        }
    }

    /// The counters with `detected` filled in from the attack log.
    private func currentStats() -> FaultStats {
        var s = stats
        s.detected = [:]
        for (_, a) in attackLog {
            if let c = a.closed, c - a.fired <= attackWindowMillis { s.detected[a.kind, default: 0] += 1 }
        }
        return s
    }

    /// Serves until the process is killed: accepts proxied connections and control commands.
    func serve(listenFD: Int32, controlFD: Int32) -> Never {
        while true {
            var fds = [pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: controlFD, events: Int16(POLLIN), revents: 0)]
            if poll(&fds, 2, 1000) <= 0 { continue }
            if fds[0].revents != 0 { acceptClient(listenFD) }
            if fds[1].revents != 0 { control(controlFD) }
        }
    }

    private func acceptClient(_ listenFD: Int32) {
        let fd = accept(listenFD, nil, nil)
        guard fd >= 0 else { return }
        Sockets.noDelay(fd)
        if locked({ isCut }) {
            count { $0.refused += 1 }
            Sockets.lingerZero(fd)
            close(fd)
            return
        }
        guard let t = Sockets.connect(target) else {
            Sockets.lingerZero(fd)
            close(fd)
            return
        }
        let link: Link = locked {
            nextID += 1
            stats.connections += 1
            var rng = SplitMix(seed: seed ^ UInt64(nextID) &* 0x2545_F491_4F6C_DD1D)
            let l = Link(id: nextID, client: fd, target: t, proxy: self, attack: plan(for: nextID, rng: &rng))
            links[l.id] = l
            return l
        }
        link.start(seed: seed)
    }

    private func control(_ controlFD: Int32) {
        let fd = accept(controlFD, nil, nil)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while line.count < 256, Sockets.readable(fd, millis: 2000), read(fd, &byte, 1) == 1, byte != 10 { line.append(byte) }
        let command = String(decoding: line, as: UTF8.self).trimmingCharacters(in: " \r")
        var answer: String
        switch command {
        case "cut":
            let open: [Link] = locked {
                isCut = true
                stats.cuts += 1
                stats.cutResets += links.count
                return Array(links.values)
            }
            for l in open { l.kill(reset: true) }
            answer = "ok"
        case "heal":
            locked { isCut = false; stats.heals += 1 }
            answer = "ok"
        case "faults off": locked { faultsOn = false }; answer = "ok"
        case "faults on": locked { faultsOn = true }; answer = "ok"
        case "stats": answer = "ok"
        default: answer = "error unknown command '\(command)' (cut, heal, faults on, faults off, stats)"
        }
        if answer == "ok" { answer += " " + locked { currentStats().line } }
        _ = Sockets.writeAll(fd, Array((answer + "\n").utf8)[...])
    }
}

extension String {
    func trimmingCharacters(in set: String) -> String {
        var s = Substring(self)
        while let f = s.first, set.contains(f) { s = s.dropFirst() }
        while let l = s.last, set.contains(l) { s = s.dropLast() }
        return String(s)
    }
}
