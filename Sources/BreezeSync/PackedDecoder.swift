public import BreezeCore

/// The receiving side of one direction of a version-2 connection: reads `packed` payloads back into events
/// (`Protocol/sync.md` section 3.1), rebuilding each event's canonical encoding and hash, and refuses a frame
/// whose end-to-end check does not match, which is what a frame lost, repeated or reordered on the way
/// produces. After any error the decoder is spent: the session closes and the next connection starts a new
/// one.
public struct PackedDecoder: Sendable {
    /// The dictionary sizes a peer may fill; a definition beyond them is refused.
    public let limits: Packed.Limits
    private var streams: [StreamID] = []
    private var types: [(name: String, version: UInt16)] = []
    private var origins: [Origin] = []
    private var keys: [(stream: Int32, type: Int32, origin: Int32)] = []
    private var counters: [Packed.Pair: UInt64] = [:]
    private var physical: UInt64 = 0
    private var failed = false

    /// A decoder with empty dictionaries.
    public init(limits: Packed.Limits = .protocolDefault) {
        self.limits = limits
    }

    /// Entries held now, for tests and status: streams, types, origins, keys.
    public var dictionarySizes: (streams: Int, types: Int, origins: Int, keys: Int) {
        (streams.count, types.count, origins.count, keys.count)
    }

    /// Empties every dictionary and delta base: the peer sent `reset`.
    public mutating func reset() {
        streams = []; types = []; origins = []; keys = []; counters = [:]
        physical = 0
    }

    /// Decodes the payload of a `packed` message that should carry batch number `batch` (the previous
    /// batch's number + 1 on this connection). Throws `.malformed` for bytes that do not decode (an unknown
    /// index, a definition out of order or beyond the limits, an invalid field) and `.unexpected` when the
    /// decoded events do not match the sender's check; either way nothing of the frame may be stored.
    public mutating func decode(batch: UInt64, payload: [UInt8]) throws(FrameError) -> [Event] {
        guard !failed else { throw FrameError(code: .unexpected, "packed decoder used after an error") }
        failed = true
        let events: [Event]
        do { events = try records(payload) } catch {
            throw FrameError(code: .malformed, "packed events: \(error.description)")
        }
        let sizes = Packed.Sizes(streams: streams.count, types: types.count, origins: origins.count, keys: keys.count)
        guard Packed.check(batch: batch, sizes: sizes, events: events) == Array(payload.prefix(Packed.checkLength)) else {
            throw FrameError(code: .unexpected, "packed batch \(batch) fails its check: a frame was lost, repeated or reordered")
        }
        failed = false
        return events
    }

    private mutating func records(_ payload: [UInt8]) throws(DecodingError) -> [Event] {
        var r = ByteReader(payload)
        _ = try r.raw(Packed.checkLength)
        var out: [Event] = []
        var expanded = 0
        while !r.isAtEnd {
            guard out.count < Packed.maxEvents else { throw .malformed("more than \(Packed.maxEvents) events") }
            let e = try record(&r)
            expanded += e.encoded.count
            guard expanded <= Packed.maxExpandedBytes else { throw .malformed("events expand beyond \(Packed.maxExpandedBytes) bytes") }
            out.append(e)
        }
        return out
    }

    /// Reads a reference: an existing index below `count`, or the definition of index `count`.
    private func reference(_ r: inout ByteReader, count: Int, limit: Int, _ what: String) throws(DecodingError) -> (Int, defines: Bool) {
        let v = try r.varint()
        let i = v >> 1
        if v & 1 == 0 {
            guard i < UInt64(count) else { throw .malformed("\(what) index \(i) not defined (\(count) defined)") }
            return (Int(i), false)
        }
        guard i == UInt64(count) else { throw .malformed("\(what) defined at index \(i), expected \(count)") }
        guard count < limit else { throw .malformed("more than \(limit) \(what) entries") }
        return (count, true)
    }

    private mutating func record(_ r: inout ByteReader) throws(DecodingError) -> Event {
        let (k, definesKey) = try reference(&r, count: keys.count, limit: limits.keys, "key")
        if definesKey {
            let (s, ds) = try reference(&r, count: streams.count, limit: limits.streams, "stream")
            if ds {
                let text = try r.string()
                do { streams.append(try StreamID(parsing: text)) } catch { throw .malformed(error.description) }
            }
            let (t, dt) = try reference(&r, count: types.count, limit: limits.types, "type")
            if dt {
                let name = try r.string()
                guard !name.isEmpty, name.utf8.count <= Packed.maxTypeBytes else { throw .malformed("type name of \(name.utf8.count) bytes") }
                let v = try r.varint()
                guard v <= UInt64(UInt16.max) else { throw .malformed("schema version \(v) out of range") }
                types.append((name, UInt16(v)))
            }
            let (o, dorigin) = try reference(&r, count: origins.count, limit: limits.origins, "origin")
            if dorigin {
                let replica = ReplicaID(rawValue: try r.u64())
                let epoch = try r.varint()
                guard epoch >= 1, epoch <= UInt64(UInt32.max) else { throw .malformed("epoch \(epoch) out of range") }
                origins.append(Origin(replica: replica, epoch: UInt32(epoch)))
            }
            keys.append((Int32(s), Int32(t), Int32(o)))
        }
        let key = keys[k]
        let pair = Packed.Pair(stream: key.stream, origin: key.origin)
        let counter = (counters[pair] ?? 0) &+ UInt64(bitPattern: try r.zigzag())
        guard counter >= 1 else { throw .malformed("event counter 0") }
        counters[pair] = counter
        let clock = try r.varint()
        let z = clock >> 1
        let delta = Int64(bitPattern: (z >> 1) ^ (0 &- (z & 1)))
        let (p, overflow) = Int64(physical).addingReportingOverflow(delta)
        guard !overflow, p >= 0, p < 1 << 48 else { throw .malformed("clock out of range") }
        var logical: UInt64 = 0
        if clock & 1 == 1 {
            logical = try r.varint()
            guard logical >= 1, logical <= UInt64(UInt16.max) else { throw .malformed("logical clock \(logical)") }
        }
        physical = UInt64(p)
        let type = types[Int(key.type)]
        let id = EventID(origin: origins[Int(key.origin)], counter: counter)
        let hlc = HLC(physicalMillis: UInt64(p), logical: UInt16(logical))
        // The payload is copied from the frame straight into the event's encoding (one allocation per event).
        let built: Event? = try r.withBlob { payload in
            guard payload.count <= Event.maxEncodedSize else { return nil }
            return Event(stream: streams[Int(key.stream)], id: id, hlc: hlc, type: type.name,
                         schemaVersion: type.version, payloadBytes: payload)
        }
        guard let e = built else { throw .malformed("payload larger than \(Event.maxEncodedSize) bytes") }
        guard e.encoded.count <= Event.maxEncodedSize else {
            throw .malformed("event of \(e.encoded.count) bytes exceeds \(Event.maxEncodedSize)")
        }
        return e
    }
}
