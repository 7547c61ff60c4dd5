internal import CSodium

/// Content hashing for events and state, backed by libsodium's BLAKE2b (`crypto_generichash`).
///
/// This is the only module that imports libsodium, so no C type appears in any public API above it.
/// BLAKE2b is a keyless cryptographic hash; Breeze truncates it to 16 bytes for event hashes (a content
/// checksum that also makes accidental or crafted collisions impractical: 2^64 work for a collision) and
/// uses 32 bytes for state hashes.
public enum Digest {
    /// `sodium_init()` once per process: it picks the fastest implementation for this CPU (BLAKE2b with
    /// AVX2/SSE4.1 instead of the portable code) and seeds the random generator. Thread-safe (Swift's lazy
    /// global initialisation runs it exactly once).
    static let ready: Bool = { sodium_init() >= 0 }()

    /// BLAKE2b of `bytes`, `length` bytes long (16...64).
    ///
    /// - Precondition: `length` is between 16 and 64, as libsodium requires.
    public static func blake2b(_ bytes: UnsafeRawBufferPointer, length: Int) -> [UInt8] {
        precondition(length >= 16 && length <= 64, "BLAKE2b output length must be 16...64")
        _ = ready
        var out = [UInt8](repeating: 0, count: length)
        out.withUnsafeMutableBufferPointer { o in
            _ = crypto_generichash(o.baseAddress!, length,
                                   bytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
                                   UInt64(bytes.count), nil, 0)
        }
        return out
    }

    /// BLAKE2b of `bytes` written to `out`, whose length (16...64) is the digest length: no allocation.
    ///
    /// - Precondition: `out.count` is between 16 and 64.
    public static func blake2b(_ bytes: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) {
        precondition(out.count >= 16 && out.count <= 64, "BLAKE2b output length must be 16...64")
        _ = ready
        _ = crypto_generichash(out.baseAddress!.assumingMemoryBound(to: UInt8.self), out.count,
                               bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count), nil, 0)
    }

    /// BLAKE2b of a byte array.
    public static func blake2b(_ bytes: [UInt8], length: Int) -> [UInt8] {
        bytes.withUnsafeBytes { blake2b($0, length: length) }
    }

    /// The bytes of hexadecimal text (either case, an even number of digits, nothing else), or nil.
    public static func bytes(hex text: some StringProtocol) -> [UInt8]? {
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: return c - 48
            case 97...102: return c - 87
            case 65...70: return c - 55
            default: return nil
            }
        }
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        var i = 0
        while i < digits.count {
            guard let hi = value(digits[i]), let lo = value(digits[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }

    /// Lower-case hexadecimal form of bytes.
    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Cryptographically secure random bytes (libsodium `randombytes_buf`): replica ids, key seeds, ephemeral keys.
public enum SecureRandom {
    /// `count` random bytes.
    public static func bytes(_ count: Int) -> [UInt8] {
        _ = Digest.ready
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, count) }
        return out
    }

    /// A random 64-bit integer.
    public static func uint64() -> UInt64 {
        bytes(8).withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
    }
}

/// Comparison of secret-dependent bytes (tags, keys) in time independent of where they differ.
public enum ConstantTime {
    /// True when `a` and `b` are the same bytes (`sodium_memcmp`); a length difference is not hidden.
    public static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        _ = Digest.ready
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in sodium_memcmp(x.baseAddress!, y.baseAddress!, a.count) == 0 } }
    }
}
