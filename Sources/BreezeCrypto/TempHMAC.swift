internal import CSodium
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
