import BreezeCore

/// Frames on the wire (`Protocol/sync.md` section 2):
///
///     u32 length (little-endian; bytes of type + payload, 1 ... maxLength) | u8 type | payload | u32 CRC-32C of type + payload
///
/// except a sealed frame (type 0x30, section 2.1), which has no CRC: its authentication tag covers every byte,
/// the header included. The length is checked against `maxLength` before anything is allocated.
public enum Frame {
    /// The type of a sealed frame.
    public static let sealedType: UInt8 = 0x30

    /// Largest `length` accepted: 4 MiB.
    public static let maxLength = 4 << 20
    /// Largest `length` accepted before authentication (handshake messages are under 200 bytes): 64 KiB.
    public static let handshakeMaxLength = 64 << 10

    /// Encodes one message as a frame.
    public static func encode(_ m: Message) -> [UInt8] {
        var w = ByteWriter(capacity: 64)
        w.u32(0)
        w.u8(m.typeByte)
        m.encodePayload(into: &w)
        var bytes = w.bytes
        let length = UInt32(bytes.count - 4)
        for i in 0..<4 { bytes[i] = UInt8(truncatingIfNeeded: length >> (8 * UInt32(i))) }
        if m.typeByte == sealedType { return bytes }
        let crc = CRC32C.checksum(bytes, 4..<bytes.count)
        for i in 0..<4 { bytes.append(UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i)))) }
        return bytes
    }
}

/// Splits a byte stream into messages. Feed it whatever the socket delivered; it returns the complete
/// messages and keeps the rest. Any violation (oversized length, zero length, checksum mismatch, unknown
/// type, malformed payload) is an error after which the connection must be closed.
public struct FrameDecoder: Sendable {
    /// Largest frame accepted now. A node keeps this small (`Frame.handshakeMaxLength`) until the peer is
    /// authenticated, so unauthenticated sockets cannot make it buffer megabytes.
    public var maxLength = Frame.maxLength
    /// When true, `feed` returns right after a handshake message (`handshake1` to `handshake3`) and keeps
    /// what follows it buffered: the caller acts on the message (raising `maxLength` once the peer is
    /// authenticated), then calls `feed` with no bytes for the rest. A client sends its first sealed frames,
    /// which may be far larger than the handshake's bound (its vectors), right behind `handshake3`, often in
    /// the same read; judged by the bound of before the handshake, they would end a valid session.
    public var stopsAfterHandshake = false
    private var buffer: [UInt8] = []
    private var start = 0
    /// Most buffer capacity kept between frames (an idle session's memory stays small).
    static let idleCapacity = 4096
    /// Bytes received but not yet part of a complete frame.
    public var pending: Int { buffer.count - start }

    public init() {}

    /// Adds bytes and returns the messages now complete.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) throws(FrameError) -> [Message] {
        buffer.append(contentsOf: bytes)
        var out: [Message] = []
        while buffer.count - start >= 4 {
            var length = 0
            for i in 0..<4 { length |= Int(buffer[start + i]) << (8 * i) }
            guard length >= 1 && length <= maxLength else {
                throw FrameError(code: .malformed, "frame length \(length) outside 1...\(maxLength)")
            }
            guard buffer.count - start >= 5 else { break }
            let trailer = buffer[start + 4] == Frame.sealedType ? 0 : 4          // a sealed frame has no CRC
            guard buffer.count - start >= 4 + length + trailer else { break }
            let body = (start + 4)..<(start + 4 + length)
            if trailer == 4 {
                var crc: UInt32 = 0
                for i in 0..<4 { crc |= UInt32(buffer[body.upperBound + i]) << (8 * UInt32(i)) }
                guard crc == CRC32C.checksum(buffer, body) else { throw FrameError(code: .malformed, "frame checksum mismatch") }
            }
            do {
                out.append(try Message.decode(type: buffer[body.lowerBound], payload: buffer,
                                              range: (body.lowerBound + 1)..<body.upperBound))
            } catch let e {
                throw FrameError(code: .malformed, e.description)
            }
            let type = buffer[body.lowerBound]
            start = body.upperBound + trailer
            if stopsAfterHandshake && (0x05...0x07).contains(type) { break }     // handshake1 ... handshake3
        }
        if start > 0 && start == buffer.count {
            // All consumed: an idle connection keeps at most a small buffer, not the largest frame it saw.
            buffer.removeAll(keepingCapacity: buffer.capacity <= Self.idleCapacity)
            start = 0
        } else if start > 65536 {
            buffer.removeFirst(start)
            start = 0
        }
        return out
    }

    /// Adds bytes (from an array) and returns the messages now complete.
    public mutating func feed(_ bytes: [UInt8]) throws(FrameError) -> [Message] {
        try bytes.withUnsafeBytes { b in Result { () throws(FrameError) in try feed(b) } }.get()
    }
}

/// Why a peer's bytes were refused.
public struct FrameError: Error, Sendable, CustomStringConvertible {
    public let code: SyncErrorCode
    public let description: String
    public init(code: SyncErrorCode, _ description: String) {
        self.code = code
        self.description = description
    }
}
