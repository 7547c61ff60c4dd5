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
    /// The peer's handshake or certificate chain does not verify, or its scope is not accepted.
    public static let authentication = SyncErrorCode(rawValue: 4)
    /// The peer asked for, or sent, a stream it has no grant for.
    public static let forbidden = SyncErrorCode(rawValue: 5)
    /// The peer did not answer in time.
    public static let timeout = SyncErrorCode(rawValue: 6)
    /// The node is shutting down.
    public static let shutdown = SyncErrorCode(rawValue: 7)
    /// Storing events failed on this side (disk full, ...).
    public static let storage = SyncErrorCode(rawValue: 8)
    /// The frame counter of this session's key reached its limit: a new session (new keys) is needed.
    public static let exhausted = SyncErrorCode(rawValue: 9)

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
        case 9: return "exhausted"
        default: return "code \(rawValue)"
        }
    }
}

/// One message of the sync protocol. Layouts in `Protocol/sync.md` section 3.
///
/// In version 3 the handshake (`handshake1`, `handshake2`, `handshake3`) travels in plain frames; after it every
/// message travels inside a `sealed` frame (encrypted and authenticated, section 2.1) and `SyncSession` seals
/// and opens them. `hello` is the first message of versions 1 and 2, decoded only to refuse it.
public enum Message: Equatable, Sendable {
    /// Versions 1 and 2 (unencrypted): a client's first message. A version-3 side answers it with error 3.
    case hello(minVersion: UInt16, maxVersion: UInt16, replica: ReplicaID, scope: Scope, nonce: [UInt8])
    /// Client, first: the versions it offers (also in the handshake's prologue) and its ephemeral X25519 key
    /// (Noise message 1: `e`, empty payload).
    case handshake1(minVersion: UInt16, maxVersion: UInt16, ephemeral: [UInt8])
    /// Server: Noise message 2 (`e, ee, s, es` and the encrypted payload: chosen version, offered versions,
    /// certificate chain).
    case handshake2(noise: [UInt8])
    /// Client: Noise message 3 (`s, se` and the encrypted payload: certificate chain).
    case handshake3(noise: [UInt8])
    /// After the handshake: one message (its type byte and payload) encrypted and authenticated with the
    /// direction's key and the next nonce; the bytes are ciphertext then the 16-byte tag.
    case sealed([UInt8])
    /// What the sender holds of each stream; the receiver sends everything else it may.
    case vectors([StreamVector])
    /// A leading part of the next `vectors`, when all of them would not fit in one frame (`Protocol/sync.md`
    /// 6.1): the receiver keeps the parts and takes them, with the `vectors` that ends them, as one.
    case vectorsPart([StreamVector])
    /// The fact streams the sender wants (`Protocol/sync.md` 6.7), sorted: the receiver offers it only these
    /// of the fact streams (`sensor:`, `pollen:`, `climate:`) and every other stream it may read; nil: every
    /// fact stream (the default of a session). A device with interests sends it before its first `vectors`,
    /// and again when they change.
    case subscribe([StreamID]?)
    /// Origin signatures of events of the batch numbered `batch`, the next batch its sender sends
    /// (`Protocol/sync.md` 6.9; other messages may come between): each entry names an event by its index in
    /// that batch. Sent only when the batch holds events with a signature.
    case signatures(batch: UInt64, [SignatureEntry])
    /// Counters retired by a compaction (`Protocol/sync.md` 6.10) before events of the batch numbered `batch`,
    /// the next batch its sender sends: each entry names an event by its index in that batch, and the first
    /// counter of its (stream, origin) that is retired; the range ends just before that event. Sent only by the
    /// cluster, only when the peer lacks the counters before an event it is sent.
    case retired(batch: UInt64, [RetiredEntry])
    /// A batch of events (canonical encodings), numbered for acknowledgement.
    case events(batch: UInt64, events: [Event])
    /// A batch of events in the compact form of `Protocol/sync.md` section 3.1 (end-to-end check, then event
    /// records). The bytes only make sense to the `PackedDecoder` of this connection and direction; the batch
    /// number is implicit (the previous one + 1) and covered by the check.
    case packed([UInt8])
    /// The sender starts its packed dictionaries over; the receiver empties its `PackedDecoder`.
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
        case .handshake1: return 0x05
        case .handshake2: return 0x06
        case .handshake3: return 0x07
        case .sealed: return 0x30
        case .vectors: return 0x10
        case .vectorsPart: return 0x15
        case .subscribe: return 0x16
        case .events: return 0x11
        case .signatures: return 0x17
        case .retired: return 0x18
        case .ack: return 0x12
        case .packed: return 0x13
        case .reset: return 0x14
        case .ping: return 0x20
        case .pong: return 0x21
        case .error: return 0x7F
        }
    }

    /// Most streams one `subscribe` lists (`Protocol/sync.md` 6.7): 50,000 names of at most 72 bytes fit
    /// one frame (4 MiB).
    public static let maxSubscribedStreams = 50_000

    /// Version 1 and 2 nonces and X25519 keys are 32 bytes.
    public static let nonceLength = 32
    /// Shortest Noise message 2 (`e`, encrypted `s`, an empty encrypted payload) and message 3.
    static let handshake2MinLength = 32 + 48 + 16, handshake3MinLength = 48 + 16
    /// Shortest sealed payload: a type byte and the tag.
    static let sealedMinLength = 1 + 16

    /// True for the types that travel inside `sealed` frames after the handshake (section 2.1).
    static func isSealable(_ type: UInt8) -> Bool {
        switch type {
        case 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x20, 0x21, 0x7F: return true
        default: return false
        }
    }

    /// The payload bytes (after the type byte).
    public func encodePayload(into w: inout ByteWriter) {
        switch self {
        case .hello(let lo, let hi, let replica, let scope, let nonce):
            w.u16(lo); w.u16(hi); w.u64(replica.rawValue); w.string(scope.description); w.raw(nonce)
        case .handshake1(let lo, let hi, let ephemeral): w.u16(lo); w.u16(hi); w.raw(ephemeral)
        case .handshake2(let noise), .handshake3(let noise), .sealed(let noise): w.raw(noise)
        case .vectors(let list), .vectorsPart(let list):
            var dict: [StreamID: VersionVector] = [:]
            for sv in list { dict[sv.stream] = sv.vector }
            StreamVectors.encode(dict, into: &w)
        case .subscribe(let list):
            if let list {
                w.u8(1)
                w.array(list.sorted()) { w, s in w.string(s.description) }
            } else {
                w.u8(0)
            }
        case .events(let batch, let events):
            w.varint(batch)
            w.array(events) { w, e in w.blob(e.encoded) }
        case .signatures(let batch, let entries):
            // Each distinct chain once, in order of first use; entries refer to it by number.
            var chains: [[[UInt8]]] = [], number: [[[UInt8]]: Int] = [:]
            for en in entries where number[en.signature.chain] == nil {
                number[en.signature.chain] = chains.count
                chains.append(en.signature.chain)
            }
            w.varint(batch)
            w.array(chains) { w, c in w.array(c) { w, cert in w.blob(cert) } }
            w.array(entries) { w, en in
                w.varint(UInt64(en.index)); w.varint(UInt64(number[en.signature.chain]!)); w.raw(en.signature.signature)
            }
        case .retired(let batch, let entries):
            w.varint(batch)
            w.array(entries) { w, en in w.varint(UInt64(en.index)); w.varint(en.first) }
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
        case 0x05:
            let lo = try r.u16(), hi = try r.u16()
            m = .handshake1(minVersion: lo, maxVersion: hi, ephemeral: try nonce(&r))
        case 0x06:
            guard range.count >= handshake2MinLength else { throw DecodingError.truncated("handshake2") }
            m = .handshake2(noise: try r.raw(range.count))
        case 0x07:
            guard range.count >= handshake3MinLength else { throw DecodingError.truncated("handshake3") }
            m = .handshake3(noise: try r.raw(range.count))
        case 0x30:
            guard range.count >= sealedMinLength else { throw DecodingError.truncated("sealed frame") }
            m = .sealed(try r.raw(range.count))
        case 0x10, 0x15:
            let list = try StreamVectors.decode(from: &r)
            guard Set(list.map(\.0)).count == list.count else { throw DecodingError.malformed("a stream listed twice") }
            let sorted = list.map { StreamVector(stream: $0.0, vector: $0.1) }.sorted { $0.stream < $1.stream }
            m = type == 0x10 ? .vectors(sorted) : .vectorsPart(sorted)
        case 0x16:
            switch try r.u8() {
            case 0: m = .subscribe(nil)
            case 1:
                let count = try r.varint()
                guard count <= UInt64(maxSubscribedStreams) else {
                    throw DecodingError.malformed("subscribe lists \(count) streams, more than \(maxSubscribedStreams)")
                }
                var list: [StreamID] = []
                list.reserveCapacity(Int(count))
                for _ in 0..<count {
                    let name = try r.string()
                    guard let s = try? StreamID(parsing: name), s.isFactPartition else {
                        throw DecodingError.malformed("subscribe names '\(name)', which is not a fact stream")
                    }
                    if let last = list.last, !(last < s) { throw DecodingError.malformed("subscribe streams not sorted or repeated at '\(name)'") }
                    list.append(s)
                }
                m = .subscribe(list)
            case let mode: throw DecodingError.malformed("subscribe mode \(mode)")
            }
        case 0x11:
            let batch = try r.varint()
            m = .events(batch: batch, events: try r.array { (r: inout ByteReader) throws(DecodingError) in
                try Event(decoding: try r.blob())
            })
        case 0x17:
            let batch = try r.varint()
            let chains = try r.array { (r: inout ByteReader) throws(DecodingError) -> [[UInt8]] in
                let chain = try r.array { (r: inout ByteReader) throws(DecodingError) in try r.blob() }
                guard (1...CertificateChain.maxLength).contains(chain.count) else { throw DecodingError.malformed("a signer chain of \(chain.count) certificates") }
                return chain
            }
            var last: Int?
            let entries = try r.array { (r: inout ByteReader) throws(DecodingError) -> SignatureEntry in
                let index = try r.varint(), chain = try r.varint()
                guard index < UInt64(Int32.max), last.map({ UInt64($0) < index }) ?? true else {
                    throw DecodingError.malformed("signature indices not increasing at \(index)")
                }
                guard chain < UInt64(chains.count) else { throw DecodingError.malformed("signature names chain \(chain) of \(chains.count)") }
                last = Int(index)
                return SignatureEntry(index: Int(index), signature: OriginSignature(chain: chains[Int(chain)], signature: try r.raw(64)))
            }
            guard !entries.isEmpty else { throw DecodingError.malformed("signatures with no entry") }
            m = .signatures(batch: batch, entries)
        case 0x18:
            let batch = try r.varint()
            var last: UInt64?
            let entries = try r.array { (r: inout ByteReader) throws(DecodingError) -> RetiredEntry in
                let index = try r.varint(), first = try r.varint()
                guard index < UInt64(Int32.max), last.map({ $0 < index }) ?? true else {
                    throw DecodingError.malformed("retired indices not increasing at \(index)")
                }
                guard first >= 1 else { throw DecodingError.malformed("retired counter 0") }
                last = index
                return RetiredEntry(index: Int(index), first: first)
            }
            guard !entries.isEmpty else { throw DecodingError.malformed("retired with no entry") }
            m = .retired(batch: batch, entries)
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

/// One event's origin signature in a `signatures` message: the event's index in its batch, and the signature.
public struct SignatureEntry: Equatable, Sendable {
    public var index: Int
    public var signature: OriginSignature
    public init(index: Int, signature: OriginSignature) {
        self.index = index
        self.signature = signature
    }
}

/// One range of a `retired` message: the event at `index` of the batch it describes follows counters
/// `first ... counter - 1` of its (stream, origin), which the sender retired (`Protocol/sync.md` 6.10).
public struct RetiredEntry: Equatable, Sendable {
    public var index: Int
    public var first: UInt64
    public init(index: Int, first: UInt64) {
        self.index = index
        self.first = first
    }
}
