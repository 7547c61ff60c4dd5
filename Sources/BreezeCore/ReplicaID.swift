import BreezeCrypto

/// The identity of one replica (one database), chosen at random when the database is created.
///
/// 64 random bits: among the handful to thousands of replicas one user or deployment runs, a collision
/// is about as likely as 2^-40. Written as 16 lower-case hex digits.
public struct ReplicaID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The raw 64-bit value.
    public let rawValue: UInt64

    /// Wraps a raw value.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Parses 16 hex digits; nil for anything else.
    public init?(hex: String) {
        guard hex.utf8.count == 16, let v = UInt64(hex, radix: 16) else { return nil }
        rawValue = v
    }

    /// A fresh random, non-zero id.
    public static func random() -> ReplicaID {
        while true {
            let v = SecureRandom.uint64()
            if v != 0 { return ReplicaID(rawValue: v) }
        }
    }

    public var description: String {
        let h = String(rawValue, radix: 16)
        return String(repeating: "0", count: 16 - h.count) + h
    }

    public static func < (a: ReplicaID, b: ReplicaID) -> Bool { a.rawValue < b.rawValue }
}

/// One incarnation of a replica: its id and an epoch that increases whenever the replica may have lost the
/// unsynced tail of its log (a reboot after which `synchronous=NORMAL` commits may have been lost, or an
/// unknown boot). Counters restart at 1 in each epoch, so an event id is never issued twice even when the
/// previous incarnation's last events vanished before they were synced. See `Protocol/encoding.md`.
public struct Origin: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The replica.
    public var replica: ReplicaID
    /// The incarnation of that replica, from 1.
    public var epoch: UInt32

    /// Makes an origin.
    public init(replica: ReplicaID, epoch: UInt32) {
        self.replica = replica
        self.epoch = epoch
    }

    /// `replica.epoch`, e.g. `3f9c0a1b2c3d4e5f.1`.
    public var description: String { "\(replica).\(epoch)" }

    /// Parses `replica.epoch`.
    public init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let r = ReplicaID(hex: String(parts[0])), let e = UInt32(parts[1]) else { return nil }
        self.init(replica: r, epoch: e)
    }

    public static func < (a: Origin, b: Origin) -> Bool {
        (a.replica, a.epoch) < (b.replica, b.epoch)
    }
}

/// The id of an event within its stream: the origin that wrote it and a counter, from 1, that counts that
/// origin's events in that stream without gaps. `(stream, id)` is unique across all replicas forever.
///
/// An `EventID` is also the *dot* that add-wins sets use to tell one add from another.
public struct EventID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Who wrote the event.
    public var origin: Origin
    /// The per-origin, per-stream sequence number, from 1.
    public var counter: UInt64

    /// Makes an id.
    public init(origin: Origin, counter: UInt64) {
        self.origin = origin
        self.counter = counter
    }

    /// `replica.epoch:counter`.
    public var description: String { "\(origin):\(counter)" }

    /// Parses `replica.epoch:counter`.
    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let o = Origin(String(parts[0])), let c = UInt64(parts[1]), c > 0 else { return nil }
        self.init(origin: o, counter: c)
    }

    public static func < (a: EventID, b: EventID) -> Bool {
        (a.origin, a.counter) < (b.origin, b.counter)
    }

    func encode(into w: inout ByteWriter) {
        w.u64(origin.replica.rawValue)
        w.varint(UInt64(origin.epoch))
        w.varint(counter)
    }

    static func decode(from r: inout ByteReader) throws(DecodingError) -> EventID {
        let replica = ReplicaID(rawValue: try r.u64())
        let epoch = try r.varint()
        guard epoch >= 1, epoch <= UInt64(UInt32.max) else { throw DecodingError.malformed("epoch \(epoch) out of range") }
        let counter = try r.varint()
        guard counter >= 1 else { throw DecodingError.malformed("event counter 0") }
        return EventID(origin: Origin(replica: replica, epoch: UInt32(epoch)), counter: counter)
    }
}

// Codable (a stored or transmitted `UserState`, say): the fields as declared.
extension ReplicaID: Codable {}
extension Origin: Codable {}
extension EventID: Codable {}
