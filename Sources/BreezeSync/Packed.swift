import BreezeCore
import BreezeCrypto

/// The compact event form (protocol version 2 onwards, `Protocol/sync.md` section 3.1): what both ends of one
/// direction of a connection agree on. `PackedEncoder` writes `packed` payloads, `PackedDecoder` reads them;
/// both keep the same four dictionaries (streams, types, origins, keys) and the same delta bases, which
/// start empty on every connection and after every `reset` message.
public enum Packed {
    /// Most entries in each dictionary. A sender resets before it would exceed one; a receiver refuses a
    /// definition beyond it. They bound what a peer can make this side remember (well under 1 MiB).
    public struct Limits: Equatable, Sendable {
        /// Stream names.
        public var streams: Int
        /// (type name, schema version) pairs.
        public var types: Int
        /// Origins (replica id, epoch).
        public var origins: Int
        /// Keys: (stream, type, origin) triples.
        public var keys: Int

        /// Makes limits.
        public init(streams: Int, types: Int, origins: Int, keys: Int) {
            self.streams = streams
            self.types = types
            self.origins = origins
            self.keys = keys
        }

        /// The limits of `Protocol/sync.md` section 3.1: 4,096 entries, 1,024 for types.
        public static let protocolDefault = Limits(streams: 4096, types: 1024, origins: 4096, keys: 4096)
    }

    /// Longest type name (UTF-8 bytes) a dictionary holds; events with longer names travel in `events`.
    public static let maxTypeBytes = 128
    /// Most events in one `packed` frame.
    public static let maxEvents = 16_384
    /// Most bytes of canonical encodings (sum of `Event.encoded`) one `packed` frame may expand to.
    public static let maxExpandedBytes = 8 << 20
    /// Bytes of the end-to-end check at the start of every `packed` payload.
    public static let checkLength = 4

    /// Sizes of the four dictionaries, in the order the check covers them.
    struct Sizes: Equatable {
        var streams = 0, types = 0, origins = 0, keys = 0
    }

    /// The check of a `packed` frame: the first 4 bytes of BLAKE2b-128 over the batch number (`u64`), the
    /// sizes of the four dictionaries after the frame (`u32` each) and the 16-byte hash of every event of
    /// the frame in order. A receiver that decoded with the wrong context (a frame lost, repeated or
    /// reordered) computes a different value.
    static func check(batch: UInt64, sizes: Sizes, events: [Event]) -> [UInt8] {
        var w = ByteWriter(capacity: 24 + events.count * Event.hashLength)
        w.u64(batch)
        w.u32(UInt32(sizes.streams)); w.u32(UInt32(sizes.types)); w.u32(UInt32(sizes.origins)); w.u32(UInt32(sizes.keys))
        for e in events { w.raw(e.hashBytes) }
        return Array(Digest.blake2b(w.bytes, length: 16).prefix(checkLength))
    }

    /// A dictionary reference: `2i` for entry `i`, `2i + 1` to define entry `i` (the next one) in place.
    static func reference(_ index: Int, defining: Bool) -> UInt64 { UInt64(index) << 1 | (defining ? 1 : 0) }

    /// Key of the counter base: (stream entry, origin entry).
    struct Pair: Hashable {
        var stream: Int32, origin: Int32
    }

    /// The clock field: zig-zag of the physical milliseconds' difference, shifted left once, with the low
    /// bit set when a logical part (1 ... 65535) follows.
    static func clockField(physicalDelta: Int64, logical: UInt16) -> UInt64 {
        let z = UInt64(bitPattern: (physicalDelta << 1) ^ (physicalDelta >> 63))
        return z << 1 | (logical != 0 ? 1 : 0)
    }
}
