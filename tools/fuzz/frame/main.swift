// Fuzz target: the frame decoder (`BreezeSync.FrameDecoder`, `Message.decode`).
//
// Input: byte 0 picks the length limit (handshake or full), whether to repair checksums and whether the
// decoder stops after handshake messages (then fed again with no bytes, as a node does); bytes 1-2 pick
// where to cut the stream; the rest is the byte stream a peer sends. Checks, besides "no trap, no hang, no
// leak": the same stream fed whole or in pieces gives the same messages (or fails either way), and every
// decoded message re-encodes to a frame that decodes to the same message. `packed` payloads are also read by
// one `PackedDecoder` in order (batches 1, 2, ...), as a version-2 session would, until one is refused.
import BreezeSync
import FuzzSupport

/// Rewrites the checksum of every complete frame in `stream`, so mutations reach the payload decoders
/// instead of stopping at the CRC.
func repairingChecksums(_ stream: [UInt8]) -> [UInt8] {
    var s = stream
    var p = 0
    while s.count - p >= 4 {
        var length = 0
        for i in 0..<4 { length |= Int(s[p + i]) << (8 * i) }
        guard length >= 1, length <= s.count - p - 8 else { break }
        let crc = CRC32C.checksum(s, (p + 4)..<(p + 4 + length))
        for i in 0..<4 { s[p + 4 + length + i] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i))) }
        p += 8 + length
    }
    return s
}

/// Feeds `stream` in pieces cut every `step` bytes (the whole stream when `step` is 0).
func decode(_ stream: [UInt8], step: Int, maxLength: Int, stopsAfterHandshake: Bool = false) -> (messages: [Message], pending: Int)? {
    var d = FrameDecoder()
    d.maxLength = maxLength
    d.stopsAfterHandshake = stopsAfterHandshake
    var out: [Message] = []
    var i = 0
    repeat {
        let j = step == 0 ? stream.count : min(stream.count, i + step)
        guard var ms = try? d.feed(Array(stream[i..<j])) else { return nil }
        while !ms.isEmpty {
            out += ms
            guard stopsAfterHandshake, d.pending > 0 else { break }
            guard let more = try? d.feed([]) else { return nil }
            ms = more
        }
        i = j
    } while i < stream.count
    return (out, d.pending)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFrame(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let mode = input.byte()
    let step = Int(input.u16() % 257)
    let maxLength = mode & 1 == 0 ? Frame.maxLength : Frame.handshakeMaxLength
    var stream = input.rest()
    if mode & 2 != 0 { stream = repairingChecksums(stream) }

    let stops = mode & 4 != 0
    let whole = decode(stream, step: 0, maxLength: maxLength, stopsAfterHandshake: stops)
    let pieces = decode(stream, step: step, maxLength: maxLength, stopsAfterHandshake: stops)
    if let whole {
        // Cutting the stream anywhere changes nothing.
        require(pieces != nil, "decoding failed only when the stream was cut every \(step) bytes")
        require(pieces!.messages == whole.messages && pieces!.pending == whole.pending,
                "cut every \(step) bytes: \(pieces!.messages.count) messages, \(pieces!.pending) pending; whole: \(whole.messages.count), \(whole.pending)")
        var packed = PackedDecoder()
        var batch: UInt64 = 1
        var spent = false
        for m in whole.messages where !spent {
            switch m {
            case .packed(let payload):
                if let events = try? packed.decode(batch: batch, payload: payload) {
                    require(events.allSatisfy { $0.encoded.count <= 1 << 20 }, "a packed event beyond 1 MiB")
                    batch += 1
                } else { spent = true }
            case .reset: packed.reset()
            default: break
            }
        }
        for m in whole.messages {
            let again = decode(Frame.encode(m), step: 0, maxLength: Frame.maxLength)
            require(again?.messages == [m] && again?.pending == 0, "message \(m.typeByte) does not survive re-encoding")
        }
    } else {
        require(pieces == nil, "decoding failed only when the stream was fed whole")
    }
    return 0
}
