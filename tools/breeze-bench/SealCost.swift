import BreezeCLI
import BreezeCore
import BreezeCrypto
import BreezeStore
import BreezeSync

/// What sealing costs `breeze bench sync`, measured in the same run on the same events: the frames a
/// catch-up of the log sends (its events packed in batches as `SyncSession.offer` cuts them, and one `ack` a
/// batch back), then the ChaCha20-Poly1305 work on frames of exactly those sizes, each sealed once (by the
/// sender) and opened once (by the receiver), in this process. That is all the work sealing adds to the
/// catch-up (the handshake is a few milliseconds once per connection), so subtracting it from the catch-up
/// time bounds from above what the ratio would be without encryption (in the real run the two sides seal and
/// open in parallel, on two cores). Nothing here switches encryption off: nodes cannot run without it.
enum SealCost {
    struct Figures {
        /// Seconds of AEAD work (seal and open) for every frame of the catch-up.
        var seconds = 0.0
        var frames = 0
        /// Plaintext bytes sealed (type byte and payload of every message).
        var bytes = 0
    }

    static func measure(db: String, batchEvents: Int = SyncSession.defaultBatchEvents, batchBytes: Int = 512 * 1024) throws -> Figures {
        // 1. The sizes of the messages the catch-up seals.
        var sizes: [Int] = []
        var encoder = PackedEncoder()
        let log = try EventLog.openReadOnly(at: db)
        defer { log.close() }
        var batch: [Event] = [], bytes = 0, number: UInt64 = 0, after: Int64 = 0
        func flush() {
            guard !batch.isEmpty else { return }
            number += 1
            let messages = encoder.encode(batch: number, events: batch) ?? [.events(batch: number, events: batch)]
            for m in messages + [.ack(batch: number, inserted: UInt32(batch.count), duplicates: 0)] {
                var w = ByteWriter(capacity: 64)
                w.u8(m.typeByte)
                m.encodePayload(into: &w)
                sizes.append(w.bytes.count)
            }
            batch = []
            bytes = 0
        }
        while true {
            let rows = try log.page(afterSeq: after, limit: 10_000)
            guard let last = rows.last else { break }
            after = last.seq
            for r in rows {
                if batch.count == batchEvents || bytes + r.event.encoded.count > batchBytes { flush() }
                batch.append(r.event)
                bytes += r.event.encoded.count
            }
        }
        flush()
        // 2. Seal and open frames of those sizes, with a counter nonce as the channel uses.
        let key = SecureRandom.bytes(ChaChaPoly.keyLength)
        let source = SecureRandom.bytes((sizes.max() ?? 0) + 1)
        var f = Figures(frames: sizes.count, bytes: sizes.reduce(0, +))
        let t0 = SystemClock.monotonicSeconds()
        for (n, size) in sizes.enumerated() {
            let nonce: [UInt8] = [0, 0, 0, 0] + (0..<8).map { UInt8(truncatingIfNeeded: UInt64(n) >> (8 * $0)) }
            let ad: [UInt8] = [UInt8(truncatingIfNeeded: size + 17), UInt8(truncatingIfNeeded: (size + 17) >> 8),
                               UInt8(truncatingIfNeeded: (size + 17) >> 16), 0, 0x30]
            let sealed = ChaChaPoly.seal(key: key, nonce: nonce, ad: ad, plaintext: Array(source[0..<size]))
            guard ChaChaPoly.open(key: key, nonce: nonce, ad: ad, ciphertext: sealed)?.count == size else {
                throw CLIError.failure("bench sync: a sealed frame did not open")
            }
        }
        f.seconds = SystemClock.monotonicSeconds() - t0
        return f
    }
}
