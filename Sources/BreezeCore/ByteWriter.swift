/// Appends Breeze's binary encoding to a byte buffer: little-endian fixed-width integers, unsigned LEB128
/// varints, length-prefixed UTF-8 strings and byte strings. The layout is specified in
/// `Protocol/encoding.md`; every multi-byte integer not marked `varint` there is little-endian.
public struct ByteWriter: Sendable {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8]

    /// Starts an empty buffer with room for `capacity` bytes.
    public init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Empties the buffer, keeping its storage for the next use.
    public mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

    /// One byte.
    public mutating func u8(_ v: UInt8) { bytes.append(v) }

    /// Unsigned LEB128: 7 bits per byte, low bits first, high bit set on every byte but the last.
    public mutating func varint(_ v: UInt64) {
        var v = v
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    /// A signed integer as a zig-zag varint (small magnitudes, either sign, stay short).
    public mutating func zigzag(_ v: Int64) {
        varint(UInt64(bitPattern: (v << 1) ^ (v >> 63)))
    }

    /// A little-endian 16-bit integer.
    public mutating func u16(_ v: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: v))
        bytes.append(UInt8(truncatingIfNeeded: v >> 8))
    }

    /// A little-endian 32-bit integer.
    public mutating func u32(_ v: UInt32) {
        for i in 0..<4 { bytes.append(UInt8(truncatingIfNeeded: v >> (8 * UInt32(i)))) }
    }

    /// A little-endian 64-bit integer.
    public mutating func u64(_ v: UInt64) {
        // Byte by byte: cheaper than the generic `append(contentsOf:)` of a raw buffer, and endian-independent.
        for i in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) }
    }

    /// An IEEE 754 binary64 value, little-endian.
    public mutating func f64(_ v: Double) { u64(v.bitPattern) }

    /// A presence byte (0 or 1) followed by the value when present.
    public mutating func optionalF64(_ v: Double?) {
        if let v { u8(1); f64(v) } else { u8(0) }
    }

    /// A boolean as one byte, 0 or 1.
    public mutating func bool(_ v: Bool) { u8(v ? 1 : 0) }

    /// A varint byte count followed by the UTF-8 bytes.
    public mutating func string(_ s: String) {
        var s = s
        s.withUTF8 { utf8 in
            varint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    /// A presence byte followed by the string when present.
    public mutating func optionalString(_ s: String?) {
        if let s { u8(1); string(s) } else { u8(0) }
    }

    /// A varint byte count followed by the bytes.
    public mutating func blob(_ b: [UInt8]) {
        varint(UInt64(b.count))
        bytes.append(contentsOf: b)
    }

    /// Raw bytes with no length prefix.
    public mutating func raw(_ b: [UInt8]) { bytes.append(contentsOf: b) }

    /// A varint byte count followed by the bytes of a slice (`Event.payloadBytes`, say).
    public mutating func blob(_ b: ArraySlice<UInt8>) {
        varint(UInt64(b.count))
        bytes.append(contentsOf: b)
    }

    /// The bytes of a slice with no length prefix.
    public mutating func raw(_ b: ArraySlice<UInt8>) { bytes.append(contentsOf: b) }

    /// The UTF-8 bytes of `s` with no length prefix.
    public mutating func utf8(_ s: String) {
        var s = s
        s.withUTF8 { bytes.append(contentsOf: $0) }
    }

    /// A varint element count followed by each element written by `body`.
    public mutating func array<T>(_ items: [T], _ body: (inout ByteWriter, T) -> Void) {
        varint(UInt64(items.count))
        for item in items { body(&self, item) }
    }
}
