public import BreezeCore
public import BreezeCrypto

/// Why a certificate, a chain or a replica's credentials were refused: one line naming what is wrong.
public struct CertificateError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// An authority's signed statement about a key (`Protocol/sync.md` section 4.5): that it is the device key of
/// one replica with a scope (`device`), or the key of the authority that enrols the devices of one user
/// (`userAuthority`). The cluster authority is not described by a certificate: every replica is given its
/// public key and trusts it.
///
/// Layout (`encoded`): `u8 format (1)`, `u8 role`, `raw32 key`, `u64 replica` (0 for an authority),
/// `string scope`, `u64 notBefore`, `u64 notAfter` (milliseconds since 1970, UTC, inclusive), `raw32 issuer`
/// (the signer's public key), `raw64 signature`: Ed25519 by the issuer over `string "breeze certificate v1"`
/// followed by every byte before the signature.
public struct Certificate: Sendable, Equatable {
    /// What the key is.
    public enum Role: UInt8, Sendable {
        /// A replica's device key, bound to its replica id.
        case device = 1
        /// The key of a user authority, which signs that user's device certificates.
        case userAuthority = 2
    }

    /// The layout version.
    public static let format: UInt8 = 1
    /// Signed before the certificate's bytes, so a signature made for something else cannot pass for one.
    static let signatureContext = "breeze certificate v1"

    /// Device or user authority.
    public let role: Role
    /// The subject's Ed25519 public key.
    public let key: [UInt8]
    /// The device's replica id (an authority's is 0).
    public let replica: ReplicaID
    /// `cluster` or `user:<id>` (an authority's is always a user's).
    public let scope: Scope
    /// Valid from this instant to `notAfter`, both included (milliseconds since 1970).
    public let notBefore: UInt64, notAfter: UInt64
    /// The issuer's Ed25519 public key.
    public let issuer: [UInt8]
    /// The issuer's signature.
    public let signature: [UInt8]
    /// The certificate as it travels and is stored.
    public let encoded: [UInt8]

    /// A certificate signed by `signer`. Roles and scopes that no chain accepts are refused here already: a
    /// device needs a replica id, an authority a user scope and no replica id.
    public static func issue(role: Role, key: [UInt8], replica: ReplicaID, scope: Scope, notBefore: UInt64,
                             notAfter: UInt64, signer: Ed25519.KeyPair) throws(CertificateError) -> Certificate {
        guard key.count == Ed25519.publicKeyLength, Ed25519.x25519PublicKey(key) != nil else {
            throw CertificateError("the subject key is not an Ed25519 public key")
        }
        var w = ByteWriter(capacity: 256)
        w.u8(format); w.u8(role.rawValue); w.raw(key); w.u64(replica.rawValue); w.string(scope.description)
        w.u64(notBefore); w.u64(notAfter); w.raw(signer.publicKey)
        let body = w.bytes
        w.raw(signer.sign(signedMessage(body)))
        return try Certificate(decoding: w.bytes)
    }

    /// The bytes an issuer signs: the context string, then the certificate up to its signature.
    static func signedMessage(_ body: ArraySlice<UInt8>) -> [UInt8] {
        var w = ByteWriter(capacity: body.count + 32)
        w.string(signatureContext)
        w.raw(body)
        return w.bytes
    }

    static func signedMessage(_ body: [UInt8]) -> [UInt8] { signedMessage(body[...]) }

    /// Decodes a certificate and checks its layout and its rules (not its signature: `signed(by:)`).
    public init(decoding bytes: [UInt8]) throws(CertificateError) {
        var r = ByteReader(bytes)
        do {
            guard try r.u8() == Self.format else { throw CertificateError("certificate format is not 1") }
            guard let role = Role(rawValue: try r.u8()) else { throw CertificateError("unknown certificate role") }
            self.role = role
            key = try r.raw(Ed25519.publicKeyLength)
            replica = ReplicaID(rawValue: try r.u64())
            let s = try r.string()
            guard let scope = Scope(s) else { throw CertificateError("certificate scope '\(s)' is not cluster or user:<id>") }
            self.scope = scope
            notBefore = try r.u64()
            notAfter = try r.u64()
            issuer = try r.raw(Ed25519.publicKeyLength)
            signature = try r.raw(Ed25519.signatureLength)
            try r.expectEnd("certificate")
        } catch let e as CertificateError {
            throw e
        } catch {
            throw CertificateError("certificate does not decode: \(error)")
        }
        switch role {
        case .device:
            guard replica.rawValue != 0 else { throw CertificateError("device certificate without a replica id") }
        case .userAuthority:
            guard replica.rawValue == 0, case .user = scope else {
                throw CertificateError("an authority certificate must have a user scope and no replica id")
            }
        }
        guard notBefore <= notAfter else { throw CertificateError("certificate valid from after it expires") }
        encoded = bytes
    }

    /// True when `issuerKey` is the issuer named and its signature verifies.
    public func signed(by issuerKey: [UInt8]) -> Bool {
        issuer == issuerKey
            && Ed25519.verify(signature: signature, message: Self.signedMessage(encoded[..<(encoded.count - Ed25519.signatureLength)]),
                              publicKey: issuerKey)
    }

    /// A short text for errors and `breeze enrol`: role, replica, scope.
    public var subject: String {
        role == .device ? "device \(replica) (\(scope))" : "user authority for \(scope)"
    }
}

/// A chain of certificates as a peer presents it: its device certificate, then (for a device enrolled by a
/// user authority) that authority's certificate, which the cluster authority signed. At most two links.
public enum CertificateChain {
    /// Most certificates in a chain.
    public static let maxLength = 2

    /// Checks `chain` against the cluster authority's public key `authority` at `nowMillis`, and returns its
    /// device certificate. Rules (`Protocol/sync.md` section 4.5): one device certificate signed by the
    /// cluster authority (scope `cluster` or `user:<id>`), or a device certificate of scope `user:<id>` signed
    /// by a user authority for that same user whose certificate the cluster authority signed; every
    /// certificate valid at `nowMillis`.
    public static func verify(_ chain: [Certificate], authority: [UInt8], nowMillis: UInt64) throws(CertificateError) -> Certificate {
        let device = try verifySignatures(chain, authority: authority)
        if let why = invalidity(chain, at: nowMillis) { throw CertificateError(why) }
        return device
    }

    /// Why `chain` was not valid at `millis` (a certificate not yet valid, or expired), or nil when every
    /// certificate of it was.
    public static func invalidity(_ chain: [Certificate], at millis: UInt64) -> String? {
        for c in chain {
            guard millis >= c.notBefore else {
                return "\(c.subject): certificate not valid before \(ISOTime.format(millis: Int64(clamping: c.notBefore)))"
            }
            guard millis <= c.notAfter else {
                return "\(c.subject): certificate expired at \(ISOTime.format(millis: Int64(clamping: c.notAfter)))"
            }
        }
        return nil
    }

    /// Checks `chain`'s shape and signatures against the cluster authority `authority` (every rule of `verify`
    /// but the validity times), and returns its device certificate.
    public static func verifySignatures(_ chain: [Certificate], authority: [UInt8]) throws(CertificateError) -> Certificate {
        guard (1...maxLength).contains(chain.count) else {
            throw CertificateError("a certificate chain of \(chain.count) certificates (1 or 2 expected)")
        }
        let device = chain[0]
        guard device.role == .device else { throw CertificateError("the first certificate is not a device certificate") }
        if chain.count == 1 {
            guard device.issuer == authority else {
                throw CertificateError("\(device.subject) is certified by an authority this replica does not trust (\(fingerprint(device.issuer)))")
            }
            guard device.signed(by: authority) else { throw CertificateError("the signature on \(device.subject) does not verify") }
        } else {
            let user = chain[1]
            guard user.role == .userAuthority else { throw CertificateError("the second certificate is not a user authority's") }
            guard case .user = device.scope, device.scope == user.scope else {
                throw CertificateError("\(device.subject) is signed by the \(user.subject): scopes differ")
            }
            guard user.issuer == authority else {
                throw CertificateError("the \(user.subject) is certified by an authority this replica does not trust (\(fingerprint(user.issuer)))")
            }
            guard user.signed(by: authority) else { throw CertificateError("the signature on the \(user.subject) does not verify") }
            guard device.issuer == user.key, device.signed(by: user.key) else {
                throw CertificateError("the signature on \(device.subject) by the \(user.subject) does not verify")
            }
        }
        return device
    }

    /// The first 8 bytes of a key in hex, to name it in a message.
    public static func fingerprint(_ key: [UInt8]) -> String { Digest.hex(Array(key.prefix(8))) }

    /// A chain as text: comment lines (`#`), then one certificate a line in hex, device first.
    public static func text(_ chain: [Certificate]) -> String {
        var out = "# Breeze certificate chain, device certificate first (public: no secret in it)\n"
        for c in chain { out += "# \(c.subject), valid \(ISOTime.format(millis: Int64(clamping: c.notBefore))) to \(ISOTime.format(millis: Int64(clamping: c.notAfter)))\n" }
        for c in chain { out += Digest.hex(c.encoded) + "\n" }
        return out
    }

    /// Reads the text form: blank and `#` lines are skipped, every other line is one certificate in hex.
    public static func parse(text: String) throws(CertificateError) -> [Certificate] {
        var chain: [Certificate] = []
        for (n, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.filter { $0 != " " && $0 != "\t" && $0 != "\r" }
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let bytes = Digest.bytes(hex: line) else { throw CertificateError("line \(n + 1): not hexadecimal") }
            do { chain.append(try Certificate(decoding: bytes)) } catch {
                throw CertificateError("line \(n + 1): \(error.description)")
            }
        }
        guard !chain.isEmpty else { throw CertificateError("no certificate in it") }
        return chain
    }
}

/// What a replica syncs with: its device key, its certificate chain and the cluster authority's public key it
/// trusts. Made once when a node starts; `init` checks that the chain is valid now and certifies this key.
public struct SyncCredentials: Sendable {
    /// This replica's device key (its X25519 form is the handshake's static key).
    public let deviceKey: Ed25519.KeyPair
    /// This replica's certificate chain, device certificate first.
    public let chain: [Certificate]
    /// The cluster authority's Ed25519 public key: peers' chains must lead to it.
    public let authority: [UInt8]
    /// The static X25519 private key of the handshake.
    let staticPrivateKey: [UInt8]

    /// Credentials; refused when the chain does not verify against `authority` at `nowMillis` or certifies
    /// another key.
    public init(deviceKey: Ed25519.KeyPair, chain: [Certificate], authority: [UInt8], nowMillis: UInt64) throws(CertificateError) {
        guard authority.count == Ed25519.publicKeyLength else { throw CertificateError("the authority key is not 32 bytes") }
        let device = try CertificateChain.verify(chain, authority: authority, nowMillis: nowMillis)
        guard device.key == deviceKey.publicKey else {
            throw CertificateError("the certificate is for key \(CertificateChain.fingerprint(device.key)), not this replica's key \(CertificateChain.fingerprint(deviceKey.publicKey))")
        }
        self.deviceKey = deviceKey
        self.chain = chain
        self.authority = authority
        staticPrivateKey = deviceKey.x25519PrivateKey
    }

    /// Credentials taken as they are, unchecked: for tests that play an attacker presenting a chain that does
    /// not certify its key.
    init(unchecked deviceKey: Ed25519.KeyPair, chain: [Certificate], authority: [UInt8]) {
        self.deviceKey = deviceKey
        self.chain = chain
        self.authority = authority
        staticPrivateKey = deviceKey.x25519PrivateKey
    }

    /// The replica id the certificate binds to this key.
    public var replica: ReplicaID { chain[0].replica }
    /// What the certificate grants: `cluster` or `user:<id>`.
    public var scope: Scope { chain[0].scope }
}
