/// Writes Breeze's binary encoding (the same layout as `ByteWriter`) into memory already allocated to the
/// exact size: no capacity or uniqueness check per byte. `Event` uses it to encode an event straight into its
/// one buffer once the size is known (`ByteWriter.varintSize`).
///
/// Every write checks that it stays inside the buffer (a wrong size is a trap, never a write out of bounds).
struct ByteCursor {
    private let end: UnsafeMutablePointer<UInt8>
    /// The next byte to write.
    private(set) var at: UnsafeMutablePointer<UInt8>

    init(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
        at = buffer.baseAddress!
        end = at + buffer.count
    }

    /// Bytes left to write.
    var remaining: Int { end - at }

    mutating func u8(_ v: UInt8) {
        precondition(at < end, "ByteCursor: write past the end")
        at.pointee = v
        at += 1
    }

    /// A little-endian 64-bit integer.
    mutating func u64(_ v: UInt64) {
        precondition(end - at >= 8, "ByteCursor: write past the end")
        UnsafeMutableRawPointer(at).storeBytes(of: v.littleEndian, as: UInt64.self)
        at += 8
    }

    /// Unsigned LEB128, as `ByteWriter.varint`.
    mutating func varint(_ v: UInt64) {
        var v = v
        while v >= 0x80 {
            u8(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        u8(UInt8(v))
    }

    mutating func raw(_ bytes: UnsafeRawBufferPointer) {
        precondition(end - at >= bytes.count, "ByteCursor: write past the end")
        if let base = bytes.baseAddress, bytes.count > 0 {
            UnsafeMutableRawPointer(at).copyMemory(from: base, byteCount: bytes.count)
            at += bytes.count
        }
    }

    /// The UTF-8 bytes of `s`, no length prefix.
    mutating func utf8(_ s: String) {
        var s = s
        s.withUTF8 { raw(UnsafeRawBufferPointer($0)) }
    }

    /// A varint byte count followed by the UTF-8 bytes, as `ByteWriter.string`.
    mutating func string(_ s: String) {
        var s = s
        s.withUTF8 { b in
            varint(UInt64(b.count))
            raw(UnsafeRawBufferPointer(b))
        }
    }
}

extension ByteWriter {
    /// The number of bytes `varint(v)` writes (1 to 10).
    @inline(__always)
    public static func varintSize(_ v: UInt64) -> Int {
        // 7 bits per byte; 0 still takes one byte.
        (64 - (v | 1).leadingZeroBitCount + 6) / 7
    }
}
