import BreezeCrypto

/// Why a Noise operation failed: a message that does not decrypt (wrong key, altered bytes, wrong
/// transcript), a key of small order, a message of the wrong size, or an exhausted nonce.
public struct NoiseError: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// The functions of The Noise Protocol Framework (revision 34, sections 4 and 5) for
/// `Noise_XX_25519_ChaChaPoly_BLAKE2b`: HASH is BLAKE2b-512 (libsodium `crypto_generichash`, HASHLEN 64,
/// BLOCKLEN 128); HMAC-HASH and HKDF are the constructions section 4.3 defines over it, written here over
/// libsodium's BLAKE2b (no primitive is hand-written).
enum NoiseHash {
    static let length = 64, blockLength = 128

    /// HASH(data): BLAKE2b with a 64-byte output and no key.
    static func hash(_ data: [UInt8]) -> [UInt8] { Digest.blake2b(data, length: length) }

    /// HMAC-HASH(key, data) (RFC 2104 with BLAKE2b-512 and its 128-byte block).
    static func hmac(key: [UInt8], _ data: [UInt8]) -> [UInt8] {
        var k = key.count > blockLength ? hash(key) : key
        k += [UInt8](repeating: 0, count: blockLength - k.count)
        let inner = hash(k.map { $0 ^ 0x36 } + data)
        return hash(k.map { $0 ^ 0x5c } + inner)
    }

    /// HKDF(chaining_key, input_key_material, num_outputs) of Noise section 4.3: `outputs` (2 or 3) values of
    /// 64 bytes.
    static func hkdf(chainingKey: [UInt8], _ inputKeyMaterial: [UInt8], outputs: Int) -> [[UInt8]] {
        let temp = hmac(key: chainingKey, inputKeyMaterial)
        var out: [[UInt8]] = []
        var previous: [UInt8] = []
        for i in 1...outputs {
            previous = hmac(key: temp, previous + [UInt8(i)])
            out.append(previous)
        }
        return out
    }
}

/// A Noise CipherState (section 5.1): a ChaCha20-Poly1305 key and the counter `n` that is its nonce, so no
/// nonce is ever used twice with one key. The 96-bit nonce is 32 zero bits, then `n` little-endian
/// (section 12.3). `n` = 2^64-1 is reserved by Noise and never used: encrypting or decrypting then fails.
public struct CipherState: Sendable {
    private var key: [UInt8]?
    /// The nonce the next encryption (or decryption) uses.
    public private(set) var nonce: UInt64 = 0

    init(key: [UInt8]?, nonce: UInt64 = 0) {
        self.key = key
        self.nonce = nonce
    }

    /// True once a key is set (after the first DH of the handshake).
    var hasKey: Bool { key != nil }

    /// The key itself, for the test vectors of `Protocol/sync.md` section 4.7.
    var keyBytes: [UInt8]? { key }

    /// The 12-byte ChaCha20-Poly1305 nonce of counter `n`.
    static func nonceBytes(_ n: UInt64) -> [UInt8] {
        [0, 0, 0, 0] + (0..<8).map { UInt8(truncatingIfNeeded: n >> (8 * $0)) }
    }

    /// EncryptWithAd: `plaintext` sealed with the next nonce (the plaintext itself while no key is set).
    ///
    /// - Throws: `NoiseError` when the nonce would be 2^64 - 1.
    public mutating func encrypt(ad: [UInt8], _ plaintext: [UInt8]) throws(NoiseError) -> [UInt8] {
        guard let key else { return plaintext }
        guard nonce != .max else { throw NoiseError("nonce counter exhausted") }
        let out = ChaChaPoly.seal(key: key, nonce: Self.nonceBytes(nonce), ad: ad, plaintext: plaintext)
        nonce += 1
        return out
    }

    /// DecryptWithAd: the plaintext of `ciphertext` under the next nonce (which only a success advances).
    ///
    /// - Throws: `NoiseError` when the tag does not verify or the nonce would be 2^64 - 1.
    public mutating func decrypt(ad: [UInt8], _ ciphertext: [UInt8]) throws(NoiseError) -> [UInt8] {
        guard let key else { return ciphertext }
        guard nonce != .max else { throw NoiseError("nonce counter exhausted") }
        guard let plaintext = ChaChaPoly.open(key: key, nonce: Self.nonceBytes(nonce), ad: ad, ciphertext: ciphertext) else {
            throw NoiseError("authentication tag does not verify")
        }
        nonce += 1
        return plaintext
    }
}

/// A Noise SymmetricState (section 5.2): the chaining key `ck`, the handshake hash `h` and a CipherState.
struct SymmetricState: Sendable {
    private(set) var chainingKey: [UInt8]
    private(set) var handshakeHash: [UInt8]
    private var cipher = CipherState(key: nil)

    /// InitializeSymmetric(protocol_name): `h` is the name padded with zeros to 64 bytes (or its hash when
    /// longer), and `ck` = `h`.
    init(protocolName: String) {
        let name = Array(protocolName.utf8)
        handshakeHash = name.count <= NoiseHash.length ? name + [UInt8](repeating: 0, count: NoiseHash.length - name.count)
                                                       : NoiseHash.hash(name)
        chainingKey = handshakeHash
    }

    /// MixKey: `ck`, k = HKDF(ck, ikm, 2), k truncated to 32 bytes; the nonce starts again at 0.
    mutating func mixKey(_ inputKeyMaterial: [UInt8]) {
        let out = NoiseHash.hkdf(chainingKey: chainingKey, inputKeyMaterial, outputs: 2)
        chainingKey = out[0]
        cipher = CipherState(key: Array(out[1].prefix(ChaChaPoly.keyLength)))
    }

    /// MixHash: `h` = HASH(h || data).
    mutating func mixHash(_ data: [UInt8]) { handshakeHash = NoiseHash.hash(handshakeHash + data) }

    /// EncryptAndHash: encrypt with `h` as associated data, then mix the ciphertext into `h`.
    mutating func encryptAndHash(_ plaintext: [UInt8]) throws(NoiseError) -> [UInt8] {
        let c = try cipher.encrypt(ad: handshakeHash, plaintext)
        mixHash(c)
        return c
    }

    /// DecryptAndHash: decrypt with `h` as associated data, then mix the ciphertext into `h`.
    mutating func decryptAndHash(_ ciphertext: [UInt8]) throws(NoiseError) -> [UInt8] {
        let p = try cipher.decrypt(ad: handshakeHash, ciphertext)
        mixHash(ciphertext)
        return p
    }

    /// Split: the two transport CipherStates, initiator-to-responder first.
    func split() -> (CipherState, CipherState) {
        let out = NoiseHash.hkdf(chainingKey: chainingKey, [], outputs: 2)
        return (CipherState(key: Array(out[0].prefix(ChaChaPoly.keyLength))), CipherState(key: Array(out[1].prefix(ChaChaPoly.keyLength))))
    }
}

/// The handshake `Noise_XX_25519_ChaChaPoly_BLAKE2b` for one side (Noise sections 5.3 and 7.5):
///
///     -> e
///     <- e, ee, s, es
///     -> s, se
///
/// Both sides authenticate by static (long-term) X25519 keys and the session keys come from ephemeral keys
/// only both sides hold (forward secrecy). The prologue is mixed into the transcript first, so two sides with
/// different prologues fail at the first encrypted payload. Ephemeral keys are injected (`SecureRandom` in the
/// node, fixed in the test vectors); the type does no I/O.
public struct NoiseXXHandshake: Sendable {
    /// Initiator (the side that sends the first message) or responder.
    public enum Role: Sendable { case initiator, responder }

    /// The protocol name mixed into `h` first.
    public static let protocolName = "Noise_XX_25519_ChaChaPoly_BLAKE2b"
    /// The longest Noise message (section 3).
    public static let maxMessageLength = 65535

    /// This side's role.
    public let role: Role
    private var symmetric: SymmetricState
    private let staticPrivate: [UInt8], staticPublic: [UInt8]
    private let ephemeralPrivate: [UInt8], ephemeralPublic: [UInt8]
    private var remoteEphemeral: [UInt8] = []
    /// The peer's static public key, once its message carrying it has been read.
    public private(set) var remoteStatic: [UInt8]?
    /// Handshake messages written or read so far (0 to 3).
    public private(set) var step = 0

    /// A handshake with this side's static and ephemeral X25519 private keys (32 bytes each).
    public init(role: Role, prologue: [UInt8], staticPrivateKey: [UInt8], ephemeralPrivateKey: [UInt8]) {
        self.role = role
        symmetric = SymmetricState(protocolName: Self.protocolName)
        symmetric.mixHash(prologue)
        staticPrivate = staticPrivateKey
        staticPublic = X25519.publicKey(privateKey: staticPrivateKey)
        ephemeralPrivate = ephemeralPrivateKey
        ephemeralPublic = X25519.publicKey(privateKey: ephemeralPrivateKey)
    }

    /// The handshake hash `h`: once complete, a value both sides share that names this session.
    public var handshakeHash: [UInt8] { symmetric.handshakeHash }
    /// True after the third message.
    public var isComplete: Bool { step == 3 }
    /// True when this side writes the next message (the initiator writes messages 1 and 3).
    public var writesNext: Bool { (step % 2 == 0) == (role == .initiator) && step < 3 }

    private mutating func dh(_ privateKey: [UInt8], _ publicKey: [UInt8]) throws(NoiseError) {
        guard let shared = X25519.sharedSecret(privateKey: privateKey, publicKey: publicKey) else {
            throw NoiseError("a public key of small order")
        }
        symmetric.mixKey(shared)
    }

    /// Writes the next message with `payload` (encrypted in messages 2 and 3, in clear in message 1).
    public mutating func writeMessage(payload: [UInt8]) throws(NoiseError) -> [UInt8] {
        guard writesNext else { throw NoiseError("not this side's turn to write") }
        var out: [UInt8] = []
        switch step {
        case 0:                                             // -> e
            out = ephemeralPublic
            symmetric.mixHash(ephemeralPublic)
        case 1:                                             // <- e, ee, s, es
            out = ephemeralPublic
            symmetric.mixHash(ephemeralPublic)
            try dh(ephemeralPrivate, remoteEphemeral)
            out += try symmetric.encryptAndHash(staticPublic)
            try dh(staticPrivate, remoteEphemeral)
        default:                                            // -> s, se
            out = try symmetric.encryptAndHash(staticPublic)
            try dh(staticPrivate, remoteEphemeral)
        }
        out += try symmetric.encryptAndHash(payload)
        guard out.count <= Self.maxMessageLength else { throw NoiseError("handshake message longer than 65535 bytes") }
        step += 1
        return out
    }

    /// Reads the peer's next message and returns its payload.
    public mutating func readMessage(_ message: [UInt8]) throws(NoiseError) -> [UInt8] {
        guard !writesNext, step < 3 else { throw NoiseError("not the peer's turn to write") }
        guard message.count <= Self.maxMessageLength else { throw NoiseError("handshake message longer than 65535 bytes") }
        let tag = ChaChaPoly.tagLength, key = X25519.keyLength
        let payload: [UInt8]
        switch step {
        case 0:                                             // -> e
            guard message.count >= key else { throw NoiseError("message 1 shorter than an ephemeral key") }
            remoteEphemeral = Array(message[0..<key])
            symmetric.mixHash(remoteEphemeral)
            payload = try symmetric.decryptAndHash(Array(message[key...]))
        case 1:                                             // <- e, ee, s, es
            guard message.count >= 2 * key + 2 * tag else { throw NoiseError("message 2 too short") }
            remoteEphemeral = Array(message[0..<key])
            symmetric.mixHash(remoteEphemeral)
            try dh(ephemeralPrivate, remoteEphemeral)
            let rs = try symmetric.decryptAndHash(Array(message[key..<(2 * key + tag)]))
            remoteStatic = rs
            try dh(ephemeralPrivate, rs)
            payload = try symmetric.decryptAndHash(Array(message[(2 * key + tag)...]))
        default:                                            // -> s, se
            guard message.count >= key + 2 * tag else { throw NoiseError("message 3 too short") }
            let rs = try symmetric.decryptAndHash(Array(message[0..<(key + tag)]))
            remoteStatic = rs
            try dh(ephemeralPrivate, rs)
            payload = try symmetric.decryptAndHash(Array(message[(key + tag)...]))
        }
        step += 1
        return payload
    }

    /// The transport CipherStates of this side once the handshake is complete: (send, receive).
    public func split() -> (send: CipherState, receive: CipherState) {
        precondition(isComplete, "split before the handshake is complete")
        let (c1, c2) = symmetric.split()
        return role == .initiator ? (c1, c2) : (c2, c1)
    }
}
