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

/// Cryptographically secure random bytes (libsodium `randombytes_buf`), for replica ids and, later, nonces.
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

/// Message authentication for the peer handshake: HMAC-SHA-256 (RFC 2104, libsodium
/// `crypto_auth_hmacsha256`) with keys of any length, and a constant-time comparison.
public enum HMAC {
    /// HMAC-SHA-256 of `message` under `key`: 32 bytes.
    public static func sha256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        _ = Digest.ready
        var state = [UInt8](repeating: 0, count: crypto_auth_hmacsha256_statebytes())
        var out = [UInt8](repeating: 0, count: 32)
        state.withUnsafeMutableBytes { s in
            let st = s.baseAddress!.assumingMemoryBound(to: crypto_auth_hmacsha256_state.self)
            _ = crypto_auth_hmacsha256_init(st, key, key.count)
            _ = crypto_auth_hmacsha256_update(st, message, UInt64(message.count))
            _ = crypto_auth_hmacsha256_final(st, &out)
        }
        return out
    }

    /// Compares two byte strings in time independent of where they differ (`sodium_memcmp`).
    public static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in sodium_memcmp(x.baseAddress!, y.baseAddress!, a.count) == 0 } }
    }
}
