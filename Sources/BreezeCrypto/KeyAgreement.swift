internal import CSodium

/// X25519 Diffie-Hellman (RFC 7748), libsodium `crypto_scalarmult`: the DH function of the sync handshake
/// (`Noise_XX_25519_...`, `Protocol/sync.md` section 4).
public enum X25519 {
    /// Private keys, public keys and shared secrets are 32 bytes.
    public static let keyLength = 32

    /// The public key of `privateKey` (any 32 bytes: X25519 clamps them itself).
    ///
    /// - Precondition: `privateKey` is 32 bytes.
    public static func publicKey(privateKey: [UInt8]) -> [UInt8] {
        precondition(privateKey.count == keyLength, "an X25519 private key is 32 bytes")
        _ = Digest.ready
        var out = [UInt8](repeating: 0, count: keyLength)
        _ = crypto_scalarmult_base(&out, privateKey)
        return out
    }

    /// DH(privateKey, publicKey), or nil when `publicKey` is not 32 bytes or is of small order (the result
    /// would be all zeros; libsodium refuses it, and so does the handshake).
    public static func sharedSecret(privateKey: [UInt8], publicKey: [UInt8]) -> [UInt8]? {
        precondition(privateKey.count == keyLength, "an X25519 private key is 32 bytes")
        guard publicKey.count == keyLength else { return nil }
        _ = Digest.ready
        var out = [UInt8](repeating: 0, count: keyLength)
        guard crypto_scalarmult(&out, privateKey, publicKey) == 0 else { return nil }
        return out
    }
}

/// Ed25519 signatures (RFC 8032), libsodium `crypto_sign`: certificates are signed with them, and a replica's
/// device key is an Ed25519 key whose X25519 form (`x25519PrivateKey`, `x25519PublicKey`) is its static key
/// in the handshake.
public enum Ed25519 {
    /// Seeds and public keys are 32 bytes; signatures 64.
    public static let seedLength = 32, publicKeyLength = 32, signatureLength = 64

    /// A key pair made from a 32-byte seed (the private key as stored in a key file). Deterministic: the same
    /// seed always gives the same key pair.
    public struct KeyPair: Sendable, Equatable {
        /// The 32-byte seed.
        public let seed: [UInt8]
        /// The 32-byte public key.
        public let publicKey: [UInt8]
        /// libsodium's 64-byte secret key (seed, then public key).
        let secretKey: [UInt8]

        /// The key pair of `seed`.
        ///
        /// - Precondition: `seed` is 32 bytes.
        public init(seed: [UInt8]) {
            precondition(seed.count == Ed25519.seedLength, "an Ed25519 seed is 32 bytes")
            _ = Digest.ready
            var pk = [UInt8](repeating: 0, count: publicKeyLength)
            var sk = [UInt8](repeating: 0, count: 64)
            _ = crypto_sign_seed_keypair(&pk, &sk, seed)
            self.seed = seed
            publicKey = pk
            secretKey = sk
        }

        /// A new key pair from 32 fresh random bytes.
        public static func generate() -> KeyPair { KeyPair(seed: SecureRandom.bytes(seedLength)) }

        /// The 64-byte signature of `message` (deterministic, RFC 8032).
        public func sign(_ message: [UInt8]) -> [UInt8] {
            var sig = [UInt8](repeating: 0, count: signatureLength)
            _ = crypto_sign_detached(&sig, nil, message, UInt64(message.count), secretKey)
            return sig
        }

        /// The X25519 private key of this key pair (libsodium `crypto_sign_ed25519_sk_to_curve25519`).
        public var x25519PrivateKey: [UInt8] {
            var out = [UInt8](repeating: 0, count: X25519.keyLength)
            _ = crypto_sign_ed25519_sk_to_curve25519(&out, secretKey)
            return out
        }
    }

    /// True when `signature` is `publicKey`'s signature of `message`.
    public static func verify(signature: [UInt8], message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard signature.count == signatureLength, publicKey.count == publicKeyLength else { return false }
        _ = Digest.ready
        return crypto_sign_verify_detached(signature, message, UInt64(message.count), publicKey) == 0
    }

    /// The X25519 public key of an Ed25519 public key (libsodium `crypto_sign_ed25519_pk_to_curve25519`), or nil
    /// when it is not a valid Ed25519 point.
    public static func x25519PublicKey(_ publicKey: [UInt8]) -> [UInt8]? {
        guard publicKey.count == publicKeyLength else { return nil }
        _ = Digest.ready
        var out = [UInt8](repeating: 0, count: X25519.keyLength)
        guard crypto_sign_ed25519_pk_to_curve25519(&out, publicKey) == 0 else { return nil }
        return out
    }
}
