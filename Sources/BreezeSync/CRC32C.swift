/// CRC-32C (Castagnoli, polynomial 0x1EDC6F41, reflected 0x82F63B78), the per-frame checksum of the wire
/// protocol (`Protocol/sync.md` section 2). Check value: CRC-32C("123456789") = 0xE3069283 (RFC 3720, B.4).
/// A checksum against line noise and bugs, not an authenticator.
///
/// Computed eight bytes at a time ("slicing-by-8": table `k` holds the CRC of a byte followed by `k` zero
/// bytes, so the eight lookups of one step are independent), several times faster than a byte at a time on
/// frames of hundreds of KiB; `checksumBytewise` is the plain one-table form it must agree with.
public enum CRC32C {
    /// `tables[k * 256 + b]`: the CRC register update for byte `b` followed by `k` zero bytes.
    static let tables: [UInt32] = {
        var t = [UInt32](repeating: 0, count: 8 * 256)
        for i in 0..<256 {
            var c = UInt32(i)
            for _ in 0..<8 { c = c & 1 != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
            t[i] = c
        }
        for k in 1..<8 {
            for i in 0..<256 {
                let prev = t[(k - 1) * 256 + i]
                t[k * 256 + i] = t[Int(prev & 0xff)] ^ (prev >> 8)
            }
        }
        return t
    }()

    /// The CRC-32C of `bytes[range]`.
    public static func checksum(_ bytes: [UInt8], _ range: Range<Int>? = nil) -> UInt32 {
        let r = range ?? 0..<bytes.count
        precondition(r.lowerBound >= 0 && r.upperBound <= bytes.count, "CRC-32C range outside the bytes")
        var c: UInt32 = 0xFFFF_FFFF
        tables.withUnsafeBufferPointer { t in
            bytes.withUnsafeBytes { raw in
                var i = r.lowerBound
                let end = r.upperBound
                while end - i >= 8 {
                    // Eight bytes as a little-endian word (the wire is little-endian; so is every host Breeze runs on).
                    let w = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                    let lo = UInt32(truncatingIfNeeded: w) ^ c, hi = UInt32(truncatingIfNeeded: w >> 32)
                    c = t[7 * 256 + Int(lo & 0xff)] ^ t[6 * 256 + Int((lo >> 8) & 0xff)]
                        ^ t[5 * 256 + Int((lo >> 16) & 0xff)] ^ t[4 * 256 + Int(lo >> 24)]
                        ^ t[3 * 256 + Int(hi & 0xff)] ^ t[2 * 256 + Int((hi >> 8) & 0xff)]
                        ^ t[1 * 256 + Int((hi >> 16) & 0xff)] ^ t[Int(hi >> 24)]
                    i += 8
                }
                while i < end {
                    c = t[Int((c ^ UInt32(raw[i])) & 0xff)] ^ (c >> 8)
                    i += 1
                }
            }
        }
        return c ^ 0xFFFF_FFFF
    }

    /// The same checksum a byte at a time, with one table (the reference the fast form is tested against).
    static func checksumBytewise(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in bytes { c = tables[Int((c ^ UInt32(b)) & 0xff)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }
}
