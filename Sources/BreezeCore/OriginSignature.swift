public import BreezeCrypto

/// An event's signature by the device that made it (its origin), as stored beside the event and relayed with
/// it (`Protocol/sync.md` 6.9): the signer's certificate chain (encoded certificates, device certificate
/// first) and an Ed25519 signature over `message(for:)`.
///
/// It is what lets a replica that is not the cluster relay another device's events: the receiver checks that
/// the chain leads to its trusted authority and binds the signing key to the event's replica id, so a relaying
/// device can neither forge an event nor change one. Only events of a user's own streams (`user:`, `health:`)
/// are signed (`isSigned(_:)`): facts and `public` reach devices from the cluster alone. The signature is not
/// part of the event's canonical bytes or its hash; an event stored before signatures existed has none and is
/// relayed by the cluster only.
public struct OriginSignature: Hashable, Sendable {
    /// The signer's certificate chain, each certificate encoded (`Certificate.encoded`), device first.
    public let chain: [[UInt8]]
    /// Ed25519 (RFC 8032) by the chain's device key over `message(for:)` of the event.
    public let signature: [UInt8]

    public init(chain: [[UInt8]], signature: [UInt8]) {
        self.chain = chain
        self.signature = signature
    }

    /// Signed before the event, so a signature made for something else cannot pass for an event's.
    public static let context = "breeze event v1"

    /// The bytes signed: the context string (varint length, UTF-8), then the event's whole canonical
    /// encoding, hash included.
    public static func message(for e: Event) -> [UInt8] {
        var w = ByteWriter(capacity: e.encoded.count + 20)
        w.string(context)
        w.raw(e.encoded)
        return w.bytes
    }

    /// Signs `e` with `key`, presenting `chain`.
    public static func sign(_ e: Event, key: Ed25519.KeyPair, chain: [[UInt8]]) -> OriginSignature {
        OriginSignature(chain: chain, signature: key.sign(message(for: e)))
    }

    /// True for the streams whose events are signed by their origin: a user's own (`user:`, `health:`).
    public static func isSigned(_ stream: StreamID) -> Bool { !stream.isShared }

    /// The chain as one blob (`list<bytes>`), as the store keeps it.
    public var encodedChain: [UInt8] {
        var w = ByteWriter(capacity: chain.reduce(4) { $0 + $1.count + 3 })
        w.array(chain) { w, c in w.blob(c) }
        return w.bytes
    }

    /// A chain read back from `encodedChain`.
    public static func decodeChain(_ bytes: [UInt8]) throws(DecodingError) -> [[UInt8]] {
        var r = ByteReader(bytes)
        let chain = try r.array { (r: inout ByteReader) throws(DecodingError) in try r.blob() }
        try r.expectEnd("signer chain")
        return chain
    }
}
