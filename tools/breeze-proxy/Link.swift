// One proxied connection of breeze-proxy: two sockets and one thread per direction.
import BreezeSync
@preconcurrency import Glibc

/// A client connection and its connection to the target. Each direction runs on its own thread, splits the
/// byte stream into frames (`Protocol/sync.md` section 2: u32 length, type, payload, CRC-32C) and applies the
/// proxy's faults frame by frame. The sockets are closed by the last thread to finish.
///
/// `@unchecked Sendable`: `dead` and `running` are guarded by `lock`; the file descriptors never change after
/// `init`, and each direction's buffers live on its own thread.
final class Link: @unchecked Sendable {
    let id: Int
    let client: Int32
    let target: Int32
    private unowned let proxy: FaultProxy
    private var lock = pthread_mutex_t()
    private var dead = false
    private var running = 2

    init(id: Int, client: Int32, target: Int32, proxy: FaultProxy) {
        self.id = id
        self.client = client
        self.target = target
        self.proxy = proxy
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
        spawnThread { [self] in pump(from: client, to: target, rng: up) }
        spawnThread { [self] in pump(from: target, to: client, rng: down) }
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

    /// One direction: read, frame, fault, write, until either side closes or the link dies.
    private func pump(from src: Int32, to dst: Int32, rng: SplitMix) {
        defer { finished() }
        var rng = rng
        var buffer: [UInt8] = []
        var held: [UInt8]?          // a frame waiting to be sent after the next one (reorder)
        var framing = true
        var chunk = [UInt8](repeating: 0, count: 65536)
        func send(_ bytes: [UInt8]) -> Bool { Sockets.writeAll(dst, bytes[...]) }
        while !isDead {
            guard Sockets.readable(src, millis: held == nil ? 100 : 20) else {
                // Nothing came to swap with: the held frame goes on alone (no reorder fired).
                if let h = held { held = nil; if !send(h) { break } }
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
                guard buffer.count - start >= 8 + length else { break }
                let frame = Array(buffer[start..<(start + 8 + length)])
                start += 8 + length
                var crc: UInt32 = 0
                for i in 0..<4 { crc |= UInt32(frame[4 + length + i]) << (8 * UInt32(i)) }
                let badCRC = crc != CRC32C.checksum(frame, 4..<(4 + length))
                if let h = held {
                    // Reorder fires: this frame overtakes the held one.
                    held = nil
                    proxy.count { $0.frames += 1; $0.bytes += frame.count; $0.reordered += 1; if badCRC { $0.badCRC += 1 } }
                    ok = send(frame) && send(h)
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
