// The listener, the control socket and the shared state of breeze-proxy.
@preconcurrency import Glibc

/// A TCP proxy to one target that injects faults per frame and can cut (partition) and heal.
///
/// Control (one command per connection to the control address, one line back, then closed):
/// `cut` resets every open connection and refuses new ones until `heal`; `faults off` / `faults on`
/// suspend and resume the per-frame faults; `stats` reports the counters. Every answer is
/// `ok <counters>` (or `error ...`).
///
/// `@unchecked Sendable`: `stats`, `links`, `cut`, `faultsOn` are guarded by `lock`; the rest is immutable.
final class FaultProxy: @unchecked Sendable {
    let target: String
    let seed: UInt64
    let configured: FaultRates
    private var lock = pthread_mutex_t()
    private var stats = FaultStats()
    private var links: [Int: Link] = [:]
    private var isCut = false
    private var faultsOn = true
    private var nextID = 0

    init(target: String, seed: UInt64, rates: FaultRates) {
        self.target = target
        self.seed = seed
        self.configured = rates
        pthread_mutex_init(&lock, nil)
    }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(&lock); defer { pthread_mutex_unlock(&lock) }
        return body()
    }

    /// The rates in force now (none while faults are off).
    var rates: FaultRates { locked { faultsOn ? configured : FaultRates() } }

    /// Updates the counters.
    func count(_ update: (inout FaultStats) -> Void) { locked { update(&stats) } }

    func remove(_ link: Link) { _ = locked { links.removeValue(forKey: link.id) } }

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
            let l = Link(id: nextID, client: fd, target: t, proxy: self)
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
        if answer == "ok" { answer += " " + locked { stats.line } }
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
