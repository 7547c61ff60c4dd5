public import BreezeCore
import BreezeCrypto
import BreezeStore

/// What a device sends its backend to be enrolled (certified to sync): its replica id, its user, its device
/// public key, and a proof that it holds the key's private half (the key's signature over the rest). The
/// backend checks it (`verify()`, or `breeze enrol --request FILE`), certifies the key for `user:<user>`, and
/// sends the certificate chain back; the app installs it (`Replica.installCertificate`).
///
/// `Codable` as JSON with hex strings, so it goes through any HTTP API as it is:
///
/// ```swift
/// let request = try replica.enrolmentRequest()
/// let body = try JSONEncoder().encode(request)   // POST it to your backend
/// ```
public struct EnrolmentRequest: Codable, Equatable, Sendable {
    /// The replica id, 16 hex digits.
    public var replica: String
    /// The user whose devices it joins (`Options.user`).
    public var user: String
    /// The device's Ed25519 public key, 64 hex digits.
    public var deviceKey: String
    /// When the request was made, milliseconds since 1970 (a backend may refuse old ones).
    public var createdMillis: UInt64
    /// The device key's signature over the fields above (`signedBytes`), 128 hex digits.
    public var proof: String

    /// What the proof signs: a context string, then each field, so a signature made for something else (an
    /// event, a handshake) is never a proof.
    static func signedBytes(replica: String, user: String, deviceKey: String, createdMillis: UInt64) -> [UInt8] {
        var w = ByteWriter(capacity: 128)
        w.string("breeze enrolment request v1")
        w.string(replica)
        w.string(user)
        w.string(deviceKey)
        w.u64(createdMillis)
        return w.bytes
    }

    /// A request as received (from JSON a backend parsed itself); `verify()` checks it.
    public init(replica: String, user: String, deviceKey: String, createdMillis: UInt64, proof: String) {
        self.replica = replica
        self.user = user
        self.deviceKey = deviceKey
        self.createdMillis = createdMillis
        self.proof = proof
    }

    /// A request signed with `key`.
    init(key: Ed25519.KeyPair, replica: ReplicaID, user: String, createdMillis: UInt64) {
        self.replica = replica.description
        self.user = user
        deviceKey = Digest.hex(key.publicKey)
        self.createdMillis = createdMillis
        proof = Digest.hex(key.sign(EnrolmentRequest.signedBytes(replica: self.replica, user: user, deviceKey: deviceKey,
                                                                 createdMillis: createdMillis)))
    }

    /// The request's replica id and key, once every field is well formed and the proof is the key's.
    ///
    /// ```swift
    /// let (replicaID, key) = try request.verify()   // then certify `key` for replicaID, scope user:<request.user>
    /// ```
    ///
    /// - Throws: `BreezeError.invalidArgument` naming the field that is malformed, or saying the proof does not
    ///   match (a request altered on the way, or made without the key).
    public func verify() throws(BreezeError) -> (replica: ReplicaID, key: [UInt8]) {
        guard let id = ReplicaID(hex: replica), id.rawValue != 0 else {
            throw BreezeError(.invalidArgument, "enrolment request: replica '\(replica)' is not 16 hex digits (not all zero)")
        }
        try Validation.user(user, what: "enrolment request: user")
        let key = try SyncOptions.publicKey(hexText: deviceKey, what: "enrolment request: deviceKey")
        guard let signature = Digest.bytes(hex: proof), signature.count == 64 else {
            throw BreezeError(.invalidArgument, "enrolment request: proof is not 128 hex digits")
        }
        let message = EnrolmentRequest.signedBytes(replica: replica, user: user, deviceKey: deviceKey, createdMillis: createdMillis)
        guard Ed25519.verify(signature: signature, message: message, publicKey: key) else {
            throw BreezeError(.invalidArgument, "enrolment request: the proof is not the device key's signature of this request (altered, or made without the key)")
        }
        return (id, key)
    }
}
