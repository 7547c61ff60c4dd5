import BreezeCore
import BreezeCrypto

/// The transport of version 3 after the handshake (`Protocol/sync.md` section 2.1): every message is sealed
/// with ChaCha20-Poly1305 under the key of its direction (from the handshake's Split) and a nonce that counts
/// the frames of that direction from 0, so no nonce repeats under a key. The associated data is the frame's
/// header (`u32 length`, `u8 0x30`), so the length is authenticated too, and the frame carries no CRC (the tag
/// covers every byte). A frame lost, repeated, reordered, altered or injected does not open (the receiver's
/// counter or the bytes differ) and ends the session.
struct SealedChannel: Sendable {
    private(set) var send: CipherState
    private(set) var receive: CipherState

    init(send: CipherState, receive: CipherState) {
        self.send = send
        self.receive = receive
    }

    /// The associated data of a sealed frame whose payload (ciphertext and tag) is `count` bytes: the frame
    /// header as it is on the wire.
    static func associatedData(payloadCount count: Int) -> [UInt8] {
        let length = UInt32(1 + count)
        return (0..<4).map { UInt8(truncatingIfNeeded: length >> (8 * UInt32($0))) } + [Frame.sealedType]
    }

    /// The `sealed` message carrying `m`.
    mutating func seal(_ m: Message) throws(NoiseError) -> Message {
        var w = ByteWriter(capacity: 64)
        w.u8(m.typeByte)
        m.encodePayload(into: &w)
        return .sealed(try send.encrypt(ad: Self.associatedData(payloadCount: w.bytes.count + ChaChaPoly.tagLength), w.bytes))
    }

    /// The message inside a sealed payload.
    mutating func open(_ payload: [UInt8]) throws(FrameError) -> Message {
        let n = receive.nonce
        let plaintext: [UInt8]
        do { plaintext = try receive.decrypt(ad: Self.associatedData(payloadCount: payload.count), payload) } catch {
            throw FrameError(code: .malformed, "sealed frame \(n) does not open (\(error.description)): altered, injected, lost, repeated or reordered on the way")
        }
        guard let type = plaintext.first, Message.isSealable(type) else {
            throw FrameError(code: .malformed, "sealed frame \(n) carries message type 0x\(String(plaintext.first ?? 0, radix: 16)), which is never sealed")
        }
        do { return try Message.decode(type: type, payload: plaintext, range: 1..<plaintext.count) } catch {
            throw FrameError(code: .malformed, "sealed frame \(n): \(error.description)")
        }
    }
}
