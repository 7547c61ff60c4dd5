/// CRC-32C (Castagnoli, polynomial 0x1EDC6F41, reflected 0x82F63B78), the per-frame checksum of the wire
/// protocol (`Protocol/sync.md` section 2). Check value: CRC-32C("123456789") = 0xE3069283 (RFC 3720, B.4).
/// A checksum against line noise and bugs, not an authenticator.
public enum CRC32C {
    static let table: [UInt32] = (0..<256).map { i -> UInt32 in
        var c = UInt32(i)
        for _ in 0..<8 { c = c & 1 != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
        return c
    }

    /// The CRC-32C of `bytes[range]`.
    public static func checksum(_ bytes: [UInt8], _ range: Range<Int>? = nil) -> UInt32 {
        let r = range ?? 0..<bytes.count
        var c: UInt32 = 0xFFFF_FFFF
        table.withUnsafeBufferPointer { t in
            bytes.withUnsafeBufferPointer { b in
                for i in r { c = t[Int((c ^ UInt32(b[i])) & 0xff)] ^ (c >> 8) }
            }
        }
        return c ^ 0xFFFF_FFFF
    }
}
