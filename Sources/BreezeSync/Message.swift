public import BreezeCore

/// Error codes carried by an `error` frame (`Protocol/sync.md` section 8).
public struct SyncErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// The frame could not be parsed (bad checksum, oversized, truncated, unknown type).
    public static let malformed = SyncErrorCode(rawValue: 1)
    /// A message that is not allowed in the current state.
    public static let unexpected = SyncErrorCode(rawValue: 2)
    /// No protocol version in common.
    public static let version = SyncErrorCode(rawValue: 3)
    /// The peer could not prove it holds the secret, or its scope is not accepted.
    public static let authentication = SyncErrorCode(rawValue: 4)
    /// The peer asked for, or sent, a stream it has no grant for.
    public static let forbidden = SyncErrorCode(rawValue: 5)
    /// The peer did not answer in time.
    public static let timeout = SyncErrorCode(rawValue: 6)
    /// The node is shutting down.
    public static let shutdown = SyncErrorCode(rawValue: 7)
    /// Storing events failed on this side (disk full, ...).
    public static let storage = SyncErrorCode(rawValue: 8)

    public var description: String {
        switch rawValue {
        case 1: return "malformed"
        case 2: return "unexpected"
        case 3: return "version"
        case 4: return "authentication"
        case 5: return "forbidden"
        case 6: return "timeout"
        case 7: return "shutdown"
        case 8: return "storage"
        default: return "code \(rawValue)"
        }
    }
}

/// One message of the sync protocol. Layouts in `Protocol/sync.md` section 3.
public enum Message: Equatable, Sendable {
    /// Client, first: versions it speaks, who it is, what it claims to hold, a fresh nonce.
    case hello(minVersion: UInt16, maxVersion: UInt16, replica: ReplicaID, scope: Scope, nonce: [UInt8])
    /// Server: the chosen version, who it is, its scope, its nonce and its proof of the key.
    case challenge(version: UInt16, replica: ReplicaID, scope: Scope, nonce: [UInt8], proof: [UInt8])
    /// Client: its proof of the key.
    case auth(proof: [UInt8])
    /// Server: authenticated; sync may start.
    case ready
    /// What the sender holds of each stream; the receiver sends everything else it may.
    case vectors([StreamVector])
    /// A batch of events (canonical encodings), numbered for acknowledgement.
    case events(batch: UInt64, events: [Event])
    /// Version 2: a batch of events in the compact form of `Protocol/sync.md` section 3.1 (end-to-end check,
    /// then event records). The bytes only make sense to the `PackedDecoder` of this connection and
    /// direction; the batch number is implicit (the previous one + 1) and covered by the check.
    case packed([UInt8])
    /// Version 2: the sender starts its packed dictionaries over; the receiver empties its `PackedDecoder`.
    case reset
    /// The batch is committed on the receiver: how many were new and how many it already had.
    case ack(batch: UInt64, inserted: UInt32, duplicates: UInt32)
    /// Keep-alive.
    case ping(UInt64)
    /// Answer to a ping.
    case pong(UInt64)
    /// Fatal: the sender closes the connection after it.
    case error(code: SyncErrorCode, message: String)

    /// The frame type byte.
    public var typeByte: UInt8 {
        switch self {
        case .hello: return 0x01
        case .challenge: return 0x02
        case .auth: return 0x03
        case .ready: return 0x04
        case .vectors: return 0x10
        case .events: return 0x11
        case .ack: return 0x12
        case .packed: return 0x13
        case .reset: return 0x14
        case .ping: return 0x20
        case .pong: return 0x21
        case .error: return 0x7F
        }
    }

    /// Nonces and proofs are 32 bytes.
    public static let nonceLength = 32

    /// The payload bytes (after the type byte).
    public func encodePayload(into w: inout ByteWriter) {
        switch self {
        case .hello(let lo, let hi, let replica, let scope, let nonce):
            w.u16(lo); w.u16(hi); w.u64(replica.rawValue); w.string(scope.description); w.raw(nonce)
        case .challenge(let v, let replica, let scope, let nonce, let proof):
            w.u16(v); w.u64(replica.rawValue); w.string(scope.description); w.raw(nonce); w.raw(proof)
        case .auth(let proof): w.raw(proof)
        case .ready: break
        case .vectors(let list):
            var dict: [StreamID: VersionVector] = [:]
            for sv in list { dict[sv.stream] = sv.vector }
            StreamVectors.encode(dict, into: &w)
        case .events(let batch, let events):
            w.varint(batch)
            w.array(events) { w, e in w.blob(e.encoded) }
        case .packed(let bytes): w.raw(bytes)
        case .reset: break
        case .ack(let batch, let inserted, let duplicates):
            w.varint(batch); w.varint(UInt64(inserted)); w.varint(UInt64(duplicates))
        case .ping(let v), .pong(let v): w.u64(v)
        case .error(let code, let message): w.u16(code.rawValue); w.string(message)
        }
    }

    /// Decodes a payload of frame type `type`.
    public static func decode(type: UInt8, payload: [UInt8], range: Range<Int>) throws(DecodingError) -> Message {
        var r = ByteReader(payload, range: range)
        let m: Message
        func nonce(_ r: inout ByteReader) throws(DecodingError) -> [UInt8] { try r.raw(nonceLength) }
        func scope(_ r: inout ByteReader) throws(DecodingError) -> Scope {
            let s = try r.string()
            guard let sc = Scope(s) else { throw DecodingError.malformed("scope '\(s)'") }
            return sc
        }
        switch type {
        case 0x01:
            let lo = try r.u16(), hi = try r.u16(), replica = ReplicaID(rawValue: try r.u64())
            m = .hello(minVersion: lo, maxVersion: hi, replica: replica, scope: try scope(&r), nonce: try nonce(&r))
        case 0x02:
            let v = try r.u16(), replica = ReplicaID(rawValue: try r.u64()), sc = try scope(&r)
            m = .challenge(version: v, replica: replica, scope: sc, nonce: try nonce(&r), proof: try nonce(&r))
        case 0x03: m = .auth(proof: try nonce(&r))
        case 0x04: m = .ready
        case 0x10:
            let list = try StreamVectors.decode(from: &r)
            guard Set(list.map(\.0)).count == list.count else { throw DecodingError.malformed("a stream listed twice") }
            m = .vectors(list.map { StreamVector(stream: $0.0, vector: $0.1) }.sorted { $0.stream < $1.stream })
        case 0x11:
            let batch = try r.varint()
            m = .events(batch: batch, events: try r.array { (r: inout ByteReader) throws(DecodingError) in
                try Event(decoding: try r.blob())
            })
        case 0x12:
            let batch = try r.varint(), ins = try r.varint(), dup = try r.varint()
            guard ins <= UInt64(UInt32.max), dup <= UInt64(UInt32.max) else { throw DecodingError.malformed("ack counts") }
            m = .ack(batch: batch, inserted: UInt32(ins), duplicates: UInt32(dup))
        case 0x13:
            guard range.count >= Packed.checkLength else { throw DecodingError.truncated("packed check") }
            m = .packed(try r.raw(range.count))
        case 0x14: m = .reset
        case 0x20: m = .ping(try r.u64())
        case 0x21: m = .pong(try r.u64())
        case 0x7F: m = .error(code: SyncErrorCode(rawValue: try r.u16()), message: try r.string())
        default: throw DecodingError.malformed("unknown message type 0x\(String(type, radix: 16))")
        }
        try r.expectEnd("message 0x\(String(type, radix: 16))")
        return m
    }
}

/// A stream and the version vector its sender holds.
public struct StreamVector: Equatable, Sendable {
    public var stream: StreamID
    public var vector: VersionVector
    public init(stream: StreamID, vector: VersionVector) {
        self.stream = stream
        self.vector = vector
    }
}
