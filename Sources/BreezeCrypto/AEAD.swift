internal import CSodium

/// ChaCha20-Poly1305 as RFC 8439 specifies it (the IETF variant: 96-bit nonce), libsodium
/// `crypto_aead_chacha20poly1305_ietf`: the cipher of the handshake and of every frame after it.
public enum ChaChaPoly {
    /// Keys are 32 bytes, nonces 12, tags 16.
    public static let keyLength = 32, nonceLength = 12, tagLength = 16

    /// `plaintext` encrypted, followed by the 16-byte tag that authenticates it and `ad`.
    ///
    /// - Precondition: `key` is 32 bytes and `nonce` 12.
    public static func seal(key: [UInt8], nonce: [UInt8], ad: [UInt8], plaintext: [UInt8]) -> [UInt8] {
        precondition(key.count == keyLength && nonce.count == nonceLength, "ChaCha20-Poly1305 takes a 32-byte key and a 12-byte nonce")
        _ = Digest.ready
        var out = [UInt8](repeating: 0, count: plaintext.count + tagLength)
        var written: UInt64 = 0
        _ = crypto_aead_chacha20poly1305_ietf_encrypt(&out, &written, plaintext, UInt64(plaintext.count),
                                                       ad, UInt64(ad.count), nil, nonce, key)
        return out
    }

    /// The plaintext of `ciphertext` (encrypted bytes, then the tag), or nil when the tag does not verify
    /// (any byte of the ciphertext, the tag, `ad`, the key or the nonce differs).
    ///
    /// - Precondition: `key` is 32 bytes and `nonce` 12.
    public static func open(key: [UInt8], nonce: [UInt8], ad: [UInt8], ciphertext: [UInt8]) -> [UInt8]? {
        precondition(key.count == keyLength && nonce.count == nonceLength, "ChaCha20-Poly1305 takes a 32-byte key and a 12-byte nonce")
        guard ciphertext.count >= tagLength else { return nil }
        _ = Digest.ready
        var out = [UInt8](repeating: 0, count: ciphertext.count - tagLength)
        var written: UInt64 = 0
        let rc = crypto_aead_chacha20poly1305_ietf_decrypt(&out, &written, nil, ciphertext, UInt64(ciphertext.count),
                                                            ad, UInt64(ad.count), nonce, key)
        return rc == 0 ? out : nil
    }
}
