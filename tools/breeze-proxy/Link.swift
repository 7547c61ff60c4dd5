// One proxied connection of breeze-proxy: two sockets and one thread per direction.
import BreezeCore
import BreezeSync
@preconcurrency import Glibc

/// A client connection and its connection to the target. Each direction runs on its own thread, splits the
/// byte stream into frames (`Protocol/sync.md` section 2: u32 length, type, payload, CRC-32C, which sealed
/// frames leave out) and applies the proxy's faults frame by frame. The sockets are closed by the last thread to finish.
///
/// `@unchecked Sendable`: `dead`, `running`, `attackFired`, `downgraded` and `downgradeCounted` are guarded by
/// `lock`; the file descriptors and the plan never change after `init`, and each direction's buffers live on
/// its own thread.
final class Link: @unchecked Sendable {
    let id: Int
    let client: Int32
    let target: Int32
    let attack: AttackPlan?
    private unowned let proxy: FaultProxy
    private var lock = pthread_mutex_t()
    private var dead = false
    private var running = 2
    private var attackFired = false
    private var downgraded = false, downgradeCounted = false

    init(id: Int, client: Int32, target: Int32, proxy: FaultProxy, attack: AttackPlan? = nil) {
        self.id = id
        self.client = client
        self.target = target
        self.proxy = proxy
        self.attack = attack
        pthread_mutex_init(&lock, nil)
        var tv = timeval(tv_sec: 2, tv_usec: 0)
        for fd in [client, target] {
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        }
    }

    /// Starts both directions; each has its own generator derived from the seed, the link and the direction.
    func start(seed: UInt64) {
        let up = SplitMix(seed: seed ^ (UInt64(id) &* 0x1000_0000_01B3) ^ 0x5555)
        let down = SplitMix(seed: seed ^ (UInt64(id) &* 0x1000_0000_01B3) ^ 0xAAAA)
        spawnThread { [self] in pump(from: client, to: target, rng: up, up: true) }
        spawnThread { [self] in pump(from: target, to: client, rng: down, up: false) }
    }

    var isDead: Bool {
        pthread_mutex_lock(&lock); defer { pthread_mutex_unlock(&lock) }
        return dead
    }

    /// Ends the link; with `reset`, both sockets are closed with RST rather than FIN.
    func kill(reset: Bool) {
        pthread_mutex_lock(&lock); defer { pthread_mutex_unlock(&lock) }
        guard !dead else { return }
        dead = true
        if reset { Sockets.lingerZero(client); Sockets.lingerZero(target) }
    }

    private func finished() {
        pthread_mutex_lock(&lock)
        running -= 1
        let last = running == 0
        dead = true
        pthread_mutex_unlock(&lock)
        if last {
            close(client)
            close(target)
            proxy.remove(self)
        }
    }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(&lock); defer { pthread_mutex_unlock(&lock) }
        return body()
    }

    /// True once for the direction that makes this link's attack (when attacks are on).
    private func claimAttack(up: Bool, index: Int) -> AttackKind? {
        guard let a = attack, a.up == up, index >= a.frame, proxy.attacking else { return nil }
        return locked { attackFired ? nil : { attackFired = true; return a.kind }() }
    }

    /// Counts a sealed frame, and a downgraded link that still carries one (once).
    private func sealedPassed(_ frame: [UInt8], up: Bool) {
        proxy.sawSealed(frame, link: id, up: up)
        let notRefused = locked { downgraded && !downgradeCounted ? { downgradeCounted = true; return true }() : false }
        if notRefused { proxy.downgradeNotRefused() }
    }

    /// What the attacker forges for `inject`: a plain `events` frame with a favourite 999999 for ana and a
    /// PurpleAir reading of 250 µg/m³ from an origin nobody enrolled.
    static func forgedEvents() -> [UInt8] {
        let origin = Origin(replica: ReplicaID(rawValue: 0xA77A_C4E5), epoch: 1)
        let millis = SystemClock.nowMillis() / 1000 * 1000
        let events = [
            Event(stream: .user("ana"), id: EventID(origin: origin, counter: 1), hlc: HLC(physicalMillis: millis, logical: 0),
                  body: .favouriteAdd(sensor: "999999")),
            Event(stream: .public, id: EventID(origin: origin, counter: 1), hlc: HLC(physicalMillis: millis, logical: 0),
                  body: .reading(Reading(source: "purpleair", sensor: "131075", time: Int64(millis / 1000), values: [Measurement("pm25", 250)]))),
        ]
        return Frame.encode(.events(batch: 1, events: events))
    }

    /// Makes attack `kind` on `frame` (direction `up`, frame `index` of it, `history` the earlier ones); returns
    /// what to send instead, and whether the attack fired (a reorder fires only when the next frame comes).
    private func attacked(_ kind: AttackKind, _ frame: [UInt8], up: Bool, history: [[UInt8]], rng: inout SplitMix) -> (bytes: [UInt8], hold: Bool) {
        switch kind {
        case .flip:
            // One bit of the payload, with the checksum of a plain frame recomputed (the CRC is no obstacle to
            // an attacker; a sealed frame has none): only the authentication tag can tell.
            var f = frame
            let sealed = f[4] == Frame.sealedType
            f[5 + Int(rng.next() % UInt64(max(1, f.count - (sealed ? 5 : 9))))] ^= 0x01
            if !sealed {
                let crc = CRC32C.checksum(f, 4..<(f.count - 4))
                for i in 0..<4 { f[f.count - 4 + i] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i))) }
            }
            return (f, false)
        case .drop: return ([], false)
        case .duplicate: return (frame + frame, false)
        case .reorder: return ([], true)
        case .replay: return (frame + (history.first ?? frame), false)
        case .splice: return ((proxy.recordedFrame(notFrom: id, up: up) ?? []) + frame, false)
        case .inject: return (Self.forgedEvents() + frame, false)
        case .injectSealed: return (Frame.encode(.sealed((0..<48).map { _ in UInt8(truncatingIfNeeded: rng.next()) })) + frame, false)
        case .downgrade:
            guard frame.count == 45, frame[4] == 0x05 else { return (frame, false) }
            var f = frame
            f[5] = 1; f[6] = 0; f[7] = 3; f[8] = 0                 // offers versions 1 ... 3
            let crc = CRC32C.checksum(f, 4..<41)
            for i in 0..<4 { f[41 + i] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i))) }
            locked { downgraded = true }
            return (f, false)
        case .downgradeHello:
            locked { downgraded = true }
            return (Frame.encode(.hello(minVersion: 1, maxVersion: 2, replica: ReplicaID(rawValue: 0xD0), scope: .cluster,
                                        nonce: Array(frame.dropFirst(9).prefix(32)))), false)
        }
    }

    /// One direction: read, frame, fault, write, until either side closes or the link dies.
    private func pump(from src: Int32, to dst: Int32, rng: SplitMix, up: Bool) {
        defer { finished() }
        var rng = rng
        var buffer: [UInt8] = []
        var held: [UInt8]?          // a frame waiting to be sent after the next one (reorder)
        var heldByAttack = false
        var framing = true
        var index = 0
        var history: [[UInt8]] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        func send(_ bytes: [UInt8]) -> Bool {
            proxy.capture(bytes[...])
            return Sockets.writeAll(dst, bytes[...])
        }
        while !isDead {
            // (An attack's reorder waits longer for a frame to swap with than a random fault's does.)
            guard Sockets.readable(src, millis: held == nil ? 100 : heldByAttack ? 500 : 20) else {
                // Nothing came to swap with: the held frame goes on alone (no reorder fired).
                if let h = held { held = nil; heldByAttack = false; if !send(h) { break } }
                continue
            }
            let n = read(src, &chunk, chunk.count)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            buffer += chunk[0..<n]
            var start = 0
            var ok = true
            while framing && buffer.count - start >= 4 {
                var length = 0
                for i in 0..<4 { length |= Int(buffer[start + i]) << (8 * i) }
                guard length >= 1 && length <= Frame.maxLength else { framing = false; break }
                guard buffer.count - start >= 5 else { break }
                let trailer = buffer[start + 4] == Frame.sealedType ? 0 : 4      // sealed frames have no CRC
                guard buffer.count - start >= 4 + length + trailer else { break }
                let frame = Array(buffer[start..<(start + 4 + length + trailer)])
                start += 4 + length + trailer
                var crc: UInt32 = 0
                for i in 0..<trailer { crc |= UInt32(frame[4 + length + i]) << (8 * UInt32(i)) }
                let badCRC = trailer == 4 && crc != CRC32C.checksum(frame, 4..<(4 + length))
                defer {
                    index += 1
                    history.append(frame)
                    if history.count > 8 { history.removeFirst() }
                }
                if frame[4] == Frame.sealedType { sealedPassed(frame, up: up) }
                if let h = held {
                    // Reorder fires: this frame overtakes the held one.
                    held = nil
                    proxy.count { $0.frames += 1; $0.bytes += frame.count; $0.reordered += 1; if badCRC { $0.badCRC += 1 } }
                    if heldByAttack { proxy.fired(.reorder, link: id); heldByAttack = false }
                    ok = send(frame) && send(h)
                    if !ok { break }
                    continue
                }
                if let kind = claimAttack(up: up, index: index) {
                    let (bytes, hold) = attacked(kind, frame, up: up, history: history, rng: &rng)
                    proxy.count { $0.frames += 1; $0.bytes += frame.count }
                    if hold {
                        held = frame
                        heldByAttack = true
                    } else {
                        if kind != .splice || bytes.count > frame.count { proxy.fired(kind, link: id) }
                        else { locked { attackFired = false } }      // nothing recorded to splice yet: the next frame
                        ok = bytes.isEmpty || send(bytes)
                    }
                    if !ok { break }
                    continue
                }
                let action = rng.decide(proxy.rates)
                proxy.count { $0.frames += 1; $0.bytes += frame.count; if badCRC { $0.badCRC += 1 } }
                switch action {
                case .forward:
                    ok = send(frame)
                case .reset:
                    proxy.count { $0.resets += 1 }
                    kill(reset: true)
                    ok = false
                case .drop:
                    proxy.count { $0.dropped += 1 }
                case .duplicate:
                    proxy.count { $0.duplicated += 1 }
                    ok = send(frame) && send(frame)
                case .reorder:
                    held = frame
                case .delay(let ms):
                    usleep(UInt32(ms) * 1000)
                    proxy.count { $0.delayed += 1 }
                    ok = send(frame)
                }
                if !ok { break }
            }
            if !ok { break }
            if !framing {
                // Not Breeze frames (or a hostile length): pass the rest through untouched.
                let rest = buffer.count - start
                proxy.count { $0.unframed += rest }
                proxy.capture(buffer[start...])
                if !Sockets.writeAll(dst, buffer[start...]) { break }
                start = buffer.count
            }
            buffer.removeFirst(start)
        }
        kill(reset: false)
    }
}

/// Runs `body` on a new detached thread.
func spawnThread(_ body: @escaping @Sendable () -> Void) {
    final class Box: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    var tid = pthread_t()
    let arg = Unmanaged.passRetained(Box(body)).toOpaque()
    let rc = pthread_create(&tid, nil, { p in
        Unmanaged<Box>.fromOpaque(p!).takeRetainedValue().body()
        return nil
    }, arg)
    precondition(rc == 0, "pthread_create failed: \(rc)")
    pthread_detach(tid)
}
