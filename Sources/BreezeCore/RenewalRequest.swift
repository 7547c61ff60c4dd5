/// A device's request for a new certificate before the one it holds expires (`device.renew`, in its user's
/// stream `user:<id>`, signed by the device like every event it makes there: `Protocol/sync.md` 4.11). Whoever
/// holds the user's authority key (or the cluster authority's) answers with a `device.certificate` event
/// naming the same key and replica id (`breeze enrol --renew`); the device's node installs it.
///
/// Payload: `raw32 key`, `u64 replica`, `varint notAfter` (of the certificate the device holds, milliseconds
/// since 1970).
public struct RenewalRequest: Hashable, Sendable {
    /// The device key to certify again.
    public var key: [UInt8]
    /// The device's replica id.
    public var replica: ReplicaID
    /// When the certificate the device holds expires.
    public var notAfterMillis: UInt64

    public init(key: [UInt8], replica: ReplicaID, notAfterMillis: UInt64) {
        self.key = key
        self.replica = replica
        self.notAfterMillis = notAfterMillis
    }

    func encode(into w: inout ByteWriter) {
        w.raw(key); w.u64(replica.rawValue); w.varint(notAfterMillis)
    }

    static func decode(_ r: inout ByteReader) throws(DecodingError) -> RenewalRequest {
        RenewalRequest(key: try r.raw(32), replica: ReplicaID(rawValue: try r.u64()), notAfterMillis: try r.varint())
    }
}
