/// Reads Breeze's binary encoding (see `ByteWriter` and `Protocol/encoding.md`), checking every length
/// against the bytes that remain before it allocates or slices, so truncated or hostile input fails with a
/// `DecodingError` instead of trapping.
public struct ByteReader: Sendable {
    let bytes: [UInt8]
    /// Index of the next byte to read.
    public private(set) var offset: Int
    private let end: Int

    /// Reads `bytes[range]` (the whole array by default).
    public init(_ bytes: [UInt8], range: Range<Int>? = nil) {
        self.bytes = bytes
        let r = range ?? 0..<bytes.count
        offset = r.lowerBound
        end = r.upperBound
    }

    /// Bytes left to read.
    public var remaining: Int { end - offset }
    /// True when every byte has been read.
    public var isAtEnd: Bool { offset == end }

    private mutating func need(_ n: Int, _ what: StaticString) throws(DecodingError) {
        guard n >= 0, n <= end - offset else { throw DecodingError.truncated(String(describing: what)) }
    }

    /// One byte.
    public mutating func u8() throws(DecodingError) -> UInt8 {
        try need(1, "byte")
        defer { offset += 1 }
        return bytes[offset]
    }

    /// An unsigned LEB128 varint of at most 10 bytes that fits in 64 bits, in its minimal form only
    /// (`Protocol/encoding.md` 1.1): a last byte of zero after the first (`80 00` for 0) is refused, so every
    /// value has one encoding and what a replica accepts it can export and relay byte for byte.
    /// Takes a varint that is not in its minimal form (a last byte of 0) instead of refusing it: set only to
    /// read what a store already holds, written by an older build before decoding refused such forms
    /// (`Event(decoding:stored:)`). Everything from a peer or a file is read with the default, refusing them.
    public var acceptsLongVarints = false

    public mutating func varint() throws(DecodingError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            try need(1, "varint")
            let b = bytes[offset]
            offset += 1
            if shift == 63 && b > 1 { throw DecodingError.malformed("varint overflows 64 bits") }
            result |= UInt64(b & 0x7f) << shift
            if b & 0x80 == 0 {
                if b == 0 && shift > 0 && !acceptsLongVarints { throw DecodingError.malformed("varint not in its minimal form (a last byte of 0 after \(shift / 7) bytes)") }
                return result
            }
            shift += 7
            if shift > 63 { throw DecodingError.malformed("varint longer than 10 bytes") }
        }
    }

    /// A varint that must fit in `Int` and be at most `limit` (for counts and lengths).
    public mutating func count(limit: Int = Int(Int32.max)) throws(DecodingError) -> Int {
        let v = try varint()
        guard v <= UInt64(limit) else { throw DecodingError.malformed("count \(v) exceeds limit \(limit)") }
        return Int(v)
    }

    /// A zig-zag signed varint.
    public mutating func zigzag() throws(DecodingError) -> Int64 {
        let u = try varint()
        return Int64(bitPattern: (u >> 1) ^ (0 &- (u & 1)))
    }

    /// A little-endian 16-bit integer.
    public mutating func u16() throws(DecodingError) -> UInt16 {
        try need(2, "u16")
        defer { offset += 2 }
        return UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    /// A little-endian 32-bit integer.
    public mutating func u32() throws(DecodingError) -> UInt32 {
        try need(4, "u32")
        var v: UInt32 = 0
        for i in 0..<4 { v |= UInt32(bytes[offset + i]) << (8 * UInt32(i)) }
        offset += 4
        return v
    }

    /// A little-endian 64-bit integer.
    public mutating func u64() throws(DecodingError) -> UInt64 {
        try need(8, "u64")
        var v: UInt64 = 0
        for i in 0..<8 { v |= UInt64(bytes[offset + i]) << (8 * UInt64(i)) }
        offset += 8
        return v
    }

    /// An IEEE 754 binary64 value.
    public mutating func f64() throws(DecodingError) -> Double { Double(bitPattern: try u64()) }

    /// A presence byte and, if present, a binary64 value.
    public mutating func optionalF64() throws(DecodingError) -> Double? {
        try presence() ? try f64() : nil
    }

    /// A boolean byte; anything but 0 or 1 is malformed.
    public mutating func bool() throws(DecodingError) -> Bool {
        switch try u8() {
        case 0: return false
        case 1: return true
        case let b: throw DecodingError.malformed("boolean byte \(b)")
        }
    }

    private mutating func presence() throws(DecodingError) -> Bool {
        switch try u8() {
        case 0: return false
        case 1: return true
        case let b: throw DecodingError.malformed("presence byte \(b)")
        }
    }

    /// A length-prefixed UTF-8 string; invalid UTF-8 is malformed.
    public mutating func string() throws(DecodingError) -> String {
        let n = try count()
        try need(n, "string")
        let start = offset
        offset += n
        // ASCII (every name and id Breeze writes) is valid UTF-8 as it stands: decode it directly; anything else
        // goes through full validation. The generic validating initialiser is several times slower.
        let s: String? = bytes.withUnsafeBufferPointer { all in
            let utf8 = UnsafeBufferPointer(rebasing: all[start..<(start + n)])
            for b in utf8 where b >= 0x80 { return String(validating: utf8, as: UTF8.self) }
            return String(decoding: utf8, as: UTF8.self)
        }
        guard let s else { throw DecodingError.malformed("string is not valid UTF-8") }
        return s
    }

    /// A length-prefixed byte string, as the range of the input it occupies (no copy).
    public mutating func blobRange() throws(DecodingError) -> Range<Int> {
        let n = try count()
        try need(n, "bytes")
        defer { offset += n }
        return offset..<(offset + n)
    }

    /// A presence byte and, if present, a string.
    public mutating func optionalString() throws(DecodingError) -> String? {
        try presence() ? try string() : nil
    }

    /// A length-prefixed byte string.
    public mutating func blob() throws(DecodingError) -> [UInt8] {
        let n = try count()
        return try raw(n)
    }

    /// A length-prefixed byte string, passed to `body` where it lies in the input (no copy; the pointer is
    /// valid only inside `body`).
    public mutating func withBlob<R>(_ body: (UnsafeRawBufferPointer) -> R) throws(DecodingError) -> R {
        let range = try blobRange()
        return bytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }

    /// Exactly `n` bytes.
    public mutating func raw(_ n: Int) throws(DecodingError) -> [UInt8] {
        try need(n, "bytes")
        defer { offset += n }
        return Array(bytes[offset..<(offset + n)])
    }

    /// A varint count followed by that many elements. The count is checked against the bytes left
    /// (every element takes at least one byte) before anything is allocated.
    public mutating func array<T>(_ body: (inout ByteReader) throws(DecodingError) -> T) throws(DecodingError) -> [T] {
        let n = try count(limit: remaining)
        var out: [T] = []
        out.reserveCapacity(n)
        for _ in 0..<n { out.append(try body(&self)) }
        return out
    }

    /// Fails unless every byte was read (trailing garbage is an error, not padding).
    public func expectEnd(_ what: String) throws(DecodingError) {
        guard isAtEnd else { throw DecodingError.malformed("\(remaining) trailing bytes after \(what)") }
    }
}

/// Why bytes could not be decoded.
public enum DecodingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The input ended in the middle of the named item.
    case truncated(String)
    /// The input is complete but not valid (explanation attached).
    case malformed(String)

    public var description: String {
        switch self {
        case .truncated(let what): return "truncated input (ended inside \(what))"
        case .malformed(let why): return "malformed input: \(why)"
        }
    }
}
