public import BreezeCore

/// The sending side of one direction of a version-2 connection: turns batches of events into `packed`
/// messages (`Protocol/sync.md` section 3.1). A stream, a type and an origin travel in full the first time
/// and as a small index afterwards; counters and clocks as differences. Memory is bounded by
/// `Packed.Limits`: before a batch would overflow a dictionary, the encoder starts over with a `reset`.
///
/// Every message the encoder returns must be sent, in order: the peer's `PackedDecoder` follows the same
/// steps. A new connection needs a new encoder.
public struct PackedEncoder: Sendable {
    /// The dictionary sizes this encoder never exceeds.
    public let limits: Packed.Limits
    private var streams: [StreamID: Int32] = [:]
    private var types: [TypeName: Int32] = [:]
    private var origins: [Origin: Int32] = [:]
    private var keys: [Key: Int32] = [:]
    private var counters: [Packed.Pair: UInt64] = [:]
    private var physical: UInt64 = 0
    /// The last event written and its key: a batch is mostly runs of one stream, type and origin, which then
    /// cost no dictionary lookup (each lookup of a type name hashes it byte by byte).
    private var lastKeyed: (event: Event, key: Key, index: Int32)?
    /// How many `reset` messages this encoder has sent.
    public private(set) var resets = 0

    /// A type name compared and hashed by its UTF-8 bytes: Swift's `String` equality is Unicode canonical
    /// equivalence, so `"caf\u{E9}"` and `"cafe\u{301}"` would share one entry and the receiver would
    /// rebuild the wrong bytes.
    struct TypeName: Hashable {
        var name: String, version: UInt16
        static func == (a: TypeName, b: TypeName) -> Bool {
            a.version == b.version && a.name.utf8.elementsEqual(b.name.utf8)
        }
        func hash(into h: inout Hasher) {
            h.combine(version)
            h.combine(name.utf8.count)
            for b in name.utf8 { h.combine(b) }
        }
    }
    struct Key: Hashable {
        var stream: Int32, type: Int32, origin: Int32
    }
    /// A key not in the dictionary yet, by its names.
    struct NamedKey: Hashable {
        var stream: StreamID, type: TypeName, origin: Origin
    }

    /// An encoder with empty dictionaries. `limits` must not exceed `Packed.Limits.protocolDefault` (what
    /// every receiver accepts); smaller limits are for tests.
    public init(limits: Packed.Limits = .protocolDefault) {
        let d = Packed.Limits.protocolDefault
        precondition(limits.streams >= 1 && limits.types >= 1 && limits.origins >= 1 && limits.keys >= 1
                     && limits.streams <= d.streams && limits.types <= d.types && limits.origins <= d.origins && limits.keys <= d.keys,
                     "packed dictionary limits must be 1 ... the protocol's")
        self.limits = limits
    }

    /// Entries held now, for tests and status: streams, types, origins, keys.
    public var dictionarySizes: (streams: Int, types: Int, origins: Int, keys: Int) {
        (streams.count, types.count, origins.count, keys.count)
    }

    /// Encodes batch number `batch` (the number the session gives it; it is not written, the check covers
    /// it). Returns `[.packed]`, or `[.reset, .packed]` when the dictionaries had to start over, or nil when
    /// the batch cannot be packed (more than `Packed.maxEvents` events or `Packed.maxExpandedBytes` bytes, a
    /// type name longer than `Packed.maxTypeBytes`, more distinct names than a dictionary holds, or an event
    /// the receiver could not rebuild byte for byte: see `rebuildsExactly`): the caller then sends it as a
    /// self-describing `events` message, and the encoder is unchanged.
    public mutating func encode(batch: UInt64, events: [Event]) -> [Message]? {
        guard events.count <= Packed.maxEvents,
              events.reduce(0, { $0 + $1.encoded.count }) <= Packed.maxExpandedBytes,
              events.allSatisfy({ $0.type.utf8.count <= Packed.maxTypeBytes && Self.rebuildsExactly($0) }) else { return nil }
        var out: [Message] = []
        if !fits(events) {
            guard fitsEmpty(events) else { return nil }
            reset()
            out.append(.reset)
        }
        var w = ByteWriter(capacity: 8 + events.count * 24)
        w.raw([UInt8](repeating: 0, count: Packed.checkLength))
        for e in events { write(e, into: &w) }
        var bytes = w.bytes
        let sizes = Packed.Sizes(streams: streams.count, types: types.count, origins: origins.count, keys: keys.count)
        let check = Packed.check(batch: batch, sizes: sizes, events: events)
        for i in 0..<Packed.checkLength { bytes[i] = check[i] }
        out.append(.packed(bytes))
        return out
    }

    /// Whether a receiver that rebuilds `e` from its fields gets `e.encoded` back. A stored event may not:
    /// one relayed from a peer can hold a non-minimal varint (which the hash covers, so it is kept as
    /// received), and one built locally may have fields every decoder refuses (an empty type, epoch or
    /// counter 0). Packing such an event would fail the frame's check on every connection, for good;
    /// `events` carries its bytes as they are.
    static func rebuildsExactly(_ e: Event) -> Bool {
        !e.type.isEmpty && e.id.origin.epoch >= 1 && e.id.counter >= 1 && e.hasShortestEncoding
    }

    /// Empties every dictionary and delta base (what a `reset` message makes the receiver do).
    private mutating func reset() {
        streams = [:]; types = [:]; origins = [:]; keys = [:]; counters = [:]
        physical = 0
        lastKeyed = nil
        resets += 1
    }

    /// Whether the batch's new names fit in the dictionaries as they are.
    private func fits(_ events: [Event]) -> Bool {
        var s = Set<StreamID>(), t = Set<TypeName>(), o = Set<Origin>(), k = Set<NamedKey>()
        var previous: Event?
        for e in events {
            if let p = previous, Self.sameNames(p, e) { continue }   // counted already
            previous = e
            let name = TypeName(name: e.type, version: e.schemaVersion)
            let si = streams[e.stream], ti = types[name], oi = origins[e.id.origin]
            if si == nil { s.insert(e.stream) }
            if ti == nil { t.insert(name) }
            if oi == nil { o.insert(e.id.origin) }
            if let si, let ti, let oi, keys[Key(stream: si, type: ti, origin: oi)] != nil { continue }
            k.insert(NamedKey(stream: e.stream, type: name, origin: e.id.origin))
        }
        return streams.count + s.count <= limits.streams && types.count + t.count <= limits.types
            && origins.count + o.count <= limits.origins && keys.count + k.count <= limits.keys
    }

    /// Whether the batch fits in empty dictionaries.
    private func fitsEmpty(_ events: [Event]) -> Bool {
        PackedEncoder(limits: limits).fits(events)
    }

    private static func index<T: Hashable>(_ value: T, in dict: inout [T: Int32], _ w: inout ByteWriter,
                                             define: (inout ByteWriter) -> Void) -> Int32 {
        if let i = dict[value] {
            w.varint(Packed.reference(Int(i), defining: false))
            return i
        }
        let i = Int32(dict.count)
        dict[value] = i
        w.varint(Packed.reference(Int(i), defining: true))
        define(&w)
        return i
    }

    /// Whether two events have the same stream, type name (by its UTF-8 bytes), schema version and origin.
    private static func sameNames(_ a: Event, _ b: Event) -> Bool {
        a.stream == b.stream && a.id.origin == b.id.origin && a.schemaVersion == b.schemaVersion
            && a.type.utf8.elementsEqual(b.type.utf8)
    }

    private mutating func write(_ e: Event, into w: inout ByteWriter) {
        let key: Key
        if let last = lastKeyed, Self.sameNames(last.event, e) {
            w.varint(Packed.reference(Int(last.index), defining: false))
            key = last.key
        } else if let si = streams[e.stream], let ti = types[TypeName(name: e.type, version: e.schemaVersion)],
                  let oi = origins[e.id.origin], let k = keys[Key(stream: si, type: ti, origin: oi)] {
            w.varint(Packed.reference(Int(k), defining: false))
            key = Key(stream: si, type: ti, origin: oi)
            lastKeyed = (e, key, k)
        } else {
            let name = TypeName(name: e.type, version: e.schemaVersion)
            let k = Int32(keys.count)
            w.varint(Packed.reference(Int(k), defining: true))
            let si = Self.index(e.stream, in: &streams, &w) { $0.string(e.stream.description) }
            let ti = Self.index(name, in: &types, &w) { $0.string(e.type); $0.varint(UInt64(e.schemaVersion)) }
            let oi = Self.index(e.id.origin, in: &origins, &w) { $0.u64(e.id.origin.replica.rawValue); $0.varint(UInt64(e.id.origin.epoch)) }
            key = Key(stream: si, type: ti, origin: oi)
            keys[key] = k
            lastKeyed = (e, key, k)
        }
        let pair = Packed.Pair(stream: key.stream, origin: key.origin)
        let previous = counters[pair] ?? 0
        counters[pair] = e.id.counter
        w.zigzag(Int64(bitPattern: e.id.counter &- previous))
        let p = e.hlc.physicalMillis
        w.varint(Packed.clockField(physicalDelta: Int64(p) - Int64(physical), logical: e.hlc.logical))
        if e.hlc.logical != 0 { w.varint(UInt64(e.hlc.logical)) }
        physical = p
        w.blob(e.payloadBytes)
    }
}
