import BreezeCrypto

/// One entry of the append-only log, exactly as it is stored and sent to peers.
///
/// The binary form (`encoded`) is canonical: it is what the store keeps, what the wire carries and what the
/// hash covers, so an event is relayed byte for byte even when this build does not understand its type.
/// Layout in `Protocol/encoding.md`:
///
///     u8 format(=1) | u64 replica | varint epoch | varint counter | u64 hlc | string stream
///     | string type | varint schemaVersion | bytes payload | 16-byte BLAKE2b-128 of everything before
public struct Event: Hashable, Sendable {
    /// The stream the event belongs to.
    public let stream: StreamID
    /// Origin and per-stream counter.
    public let id: EventID
    /// When the origin wrote it (hybrid logical clock).
    public let hlc: HLC
    /// The event type name, e.g. `favourite.add`.
    public let type: String
    /// The schema version of the payload for that type.
    public let schemaVersion: UInt16
    /// The canonical encoding, hash included.
    public let encoded: [UInt8]
    /// Where the payload lies in `encoded` (payload and hash are read from it on demand, so decoding and
    /// appending allocate one buffer per event, not three).
    private let payloadStart: Int32, payloadEnd: Int32

    /// The type-specific payload bytes (see `EventBody`), copied out of `encoded`.
    public var payload: [UInt8] { Array(payloadBytes) }
    /// BLAKE2b-128 of the encoding up to the hash (its last 16 bytes), copied out of `encoded`.
    public var hash: [UInt8] { Array(hashBytes) }
    /// The payload as a slice of `encoded` (no copy).
    public var payloadBytes: ArraySlice<UInt8> { encoded[Int(payloadStart)..<Int(payloadEnd)] }
    /// The hash as a slice of `encoded` (no copy).
    public var hashBytes: ArraySlice<UInt8> { encoded[(encoded.count - Event.hashLength)...] }
    /// A reader over the payload where it lies in `encoded` (no copy).
    public var payloadReader: ByteReader { ByteReader(encoded, range: Int(payloadStart)..<Int(payloadEnd)) }

    /// The encoding format version this build writes and reads.
    public static let format: UInt8 = 1
    /// Length of the content hash in bytes.
    public static let hashLength = 16
    /// Largest encoded event accepted (1 MiB): bounds what a peer or file can make us allocate.
    public static let maxEncodedSize = 1 << 20

    /// Builds and encodes an event, computing its hash.
    public init(stream: StreamID, id: EventID, hlc: HLC, type: String, schemaVersion: UInt16, payload: [UInt8]) {
        self = payload.withUnsafeBytes { p in
            Event(stream: stream, id: id, hlc: hlc, type: type, schemaVersion: schemaVersion, payloadBytes: p)
        }
    }

    /// Builds and encodes an event whose payload lies in memory the caller owns (copied into the encoding).
    ///
    /// The encoding is written in one pass into a buffer of its exact size (`ByteCursor`), then hashed in
    /// place: one allocation per event. `CodecTests` checks it against the layout written with `ByteWriter`.
    public init(stream: StreamID, id: EventID, hlc: HLC, type: String, schemaVersion: UInt16,
                payloadBytes payload: UnsafeRawBufferPointer) {
        self.stream = stream
        self.id = id
        self.hlc = hlc
        self.type = type
        self.schemaVersion = schemaVersion
        let head = Event.headSize(stream: stream, id: id, type: type, schemaVersion: schemaVersion,
                                  payloadCount: payload.count)
        let size = head + payload.count + Event.hashLength
        payloadStart = Int32(head)
        payloadEnd = Int32(head + payload.count)   // traps rather than wraps for a payload of 2 GiB or more
        encoded = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            var c = ByteCursor(buffer)
            c.u8(Event.format)
            c.u64(id.origin.replica.rawValue)
            c.varint(UInt64(id.origin.epoch))
            c.varint(id.counter)
            c.u64(hlc.rawValue)
            stream.encodeName(into: &c)
            c.string(type)
            c.varint(UInt64(schemaVersion))
            c.varint(UInt64(payload.count))
            c.raw(payload)
            precondition(c.remaining == Event.hashLength, "event encoding size")
            let all = UnsafeMutableRawBufferPointer(buffer)
            Digest.blake2b(UnsafeRawBufferPointer(rebasing: all[..<(size - Event.hashLength)]),
                           into: UnsafeMutableRawBufferPointer(rebasing: all[(size - Event.hashLength)...]))
            initialized = size
        }
    }

    /// Bytes of the encoding before the payload, with every varint in its shortest form.
    private static func headSize(stream: StreamID, id: EventID, type: String, schemaVersion: UInt16,
                                 payloadCount: Int) -> Int {
        let typeCount = type.utf8.count, nameCount = stream.nameLength
        return 1 + 8 + ByteWriter.varintSize(UInt64(id.origin.epoch)) + ByteWriter.varintSize(id.counter) + 8
            + ByteWriter.varintSize(UInt64(nameCount)) + nameCount + ByteWriter.varintSize(UInt64(typeCount)) + typeCount
            + ByteWriter.varintSize(UInt64(schemaVersion)) + ByteWriter.varintSize(UInt64(payloadCount))
    }

    /// True when `encoded` is what this build writes for the event's fields: every varint in its shortest
    /// form. An event relayed from a peer may hold a longer one, which the hash covers, so it is kept as
    /// received. (Every other byte is fixed by the fields, so the length alone tells, without re-encoding.)
    public var hasShortestEncoding: Bool {
        let payloadCount = Int(payloadEnd - payloadStart)
        return encoded.count == Event.headSize(stream: stream, id: id, type: type, schemaVersion: schemaVersion,
                                               payloadCount: payloadCount) + payloadCount + Event.hashLength
    }

    /// Builds an event from a typed body.
    public init(stream: StreamID, id: EventID, hlc: HLC, body: EventBody) {
        let (type, version, payload) = body.encode()
        self.init(stream: stream, id: id, hlc: hlc, type: type, schemaVersion: version, payload: payload)
    }

    /// Decodes and verifies an encoded event. Fails on a wrong format byte, truncation, trailing bytes, an
    /// invalid stream name, a varint not in its minimal form, or a hash that does not match the content.
    ///
    /// - Parameter stored: the bytes are a row the store already holds: a varint of the event's framing that is
    ///   not minimal is taken (an older build stored such events from peers before decoding refused them;
    ///   they stay readable, and `hasShortestEncoding` is false: a sender never offers them, `SyncSession`).
    public init(decoding bytes: [UInt8], stored: Bool = false) throws(DecodingError) {
        guard bytes.count <= Event.maxEncodedSize else {
            throw DecodingError.malformed("event of \(bytes.count) bytes exceeds \(Event.maxEncodedSize)")
        }
        guard bytes.count > Event.hashLength else { throw DecodingError.truncated("event") }
        var r = ByteReader(bytes, range: 0..<(bytes.count - Event.hashLength))
        r.acceptsLongVarints = stored
        let format = try r.u8()
        guard format == Event.format else { throw DecodingError.malformed("unknown event format \(format)") }
        id = try EventID.decode(from: &r)
        hlc = HLC(rawValue: try r.u64())
        stream = try Event.decodeStream(&r)
        type = try r.string()
        guard !type.isEmpty else { throw DecodingError.malformed("empty event type") }
        let v = try r.varint()
        guard v <= UInt64(UInt16.max) else { throw DecodingError.malformed("schema version \(v) out of range") }
        schemaVersion = UInt16(v)
        let p = try r.blobRange()
        payloadStart = Int32(p.lowerBound)   // bytes.count <= maxEncodedSize, so the offsets fit
        payloadEnd = Int32(p.upperBound)
        try r.expectEnd("event payload")
        let matches = bytes.withUnsafeBytes { all in
            withUnsafeTemporaryAllocation(byteCount: Event.hashLength, alignment: 8) { computed in
                let content = all.count - Event.hashLength
                Digest.blake2b(UnsafeRawBufferPointer(rebasing: all[0..<content]), into: computed)
                var same = true
                for i in 0..<Event.hashLength where computed[i] != all[content + i] { same = false }
                return same
            }
        }
        guard matches else { throw DecodingError.malformed("event hash does not match its content") }
        encoded = bytes
    }

    /// The stream name of an encoded event: ASCII names (every valid one) are parsed in place, anything
    /// else goes through UTF-8 validation and `StreamID(parsing:)` for the same errors.
    private static func decodeStream(_ r: inout ByteReader) throws(DecodingError) -> StreamID {
        var probe = r
        let range = try probe.blobRange()
        let parsed: Result<StreamID, StreamError>? = r.bytes.withUnsafeBufferPointer { all in
            let name = UnsafeBufferPointer(rebasing: all[range])
            guard name.allSatisfy({ $0 < 0x80 }) else { return nil }
            return Result { () throws(StreamError) in try StreamID(parsingUTF8: name) }
        }
        switch parsed {
        case .success(let s)?:
            r = probe
            return s
        case .failure(let e)?:
            throw DecodingError.malformed(e.description)
        case nil:
            let text = try r.string()
            do { return try StreamID(parsing: text) } catch { throw DecodingError.malformed(error.description) }
        }
    }

    /// The typed body, or `.unknown` for a type or schema version this build does not know (such events
    /// are kept and relayed unchanged; projections skip them). Throws when a known type's payload is
    /// malformed.
    public func body() throws(DecodingError) -> EventBody {
        try EventBody.decode(type: type, version: schemaVersion, payload: payload)
    }

    /// The hash as 32 hex digits.
    public var hashHex: String { Digest.hex(hash) }

    /// The LWW ordering key of this event: HLC first, then origin and counter, a total order.
    public var stamp: Stamp { Stamp(hlc: hlc, id: id) }

    public static func == (a: Event, b: Event) -> Bool { a.encoded == b.encoded }
    public func hash(into h: inout Hasher) { h.combine(encoded) }
}

/// A total order on writes: hybrid logical clock, then origin replica, epoch and counter. Two different
/// events of one stream never compare equal, so last-writer-wins is commutative even when clocks tie.
public struct Stamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// When the write happened.
    public var hlc: HLC
    /// Which write it was.
    public var id: EventID

    /// Makes a stamp.
    public init(hlc: HLC, id: EventID) {
        self.hlc = hlc
        self.id = id
    }

    public static func < (a: Stamp, b: Stamp) -> Bool { (a.hlc, a.id) < (b.hlc, b.id) }

    public var description: String { "\(hlc)@\(id)" }

    /// A part of the stamp order, in the order it is compared.
    public enum Component: String, Sendable, CaseIterable {
        /// The hybrid logical clock.
        case hlc
        /// The origin replica (compared when the clocks are equal).
        case replica
        /// The origin's epoch (compared when clock and replica are equal).
        case epoch
        /// The per-origin counter (compared when everything before is equal).
        case counter
    }

    /// The first component, in the order `<` compares them, in which this stamp and `other` differ: the one
    /// that decides which of the two is greater (nil for equal stamps). `explain` uses it to say why a
    /// last-writer-wins write won.
    public func decidingComponent(against other: Stamp) -> Component? {
        if hlc != other.hlc { return .hlc }
        if id.origin.replica != other.id.origin.replica { return .replica }
        if id.origin.epoch != other.id.origin.epoch { return .epoch }
        if id.counter != other.id.counter { return .counter }
        return nil
    }

    func encode(into w: inout ByteWriter) {
        w.u64(hlc.rawValue)
        id.encode(into: &w)
    }
}

extension Stamp: Codable {}
