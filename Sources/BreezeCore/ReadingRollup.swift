/// A sensor's hours summed up, replacing the raw reading events of its origin that they came from (type
/// `reading.rollup`): what a server writes under the cluster's retention policy (`RetentionPolicy`) once those
/// readings are older than its raw window (`EventLog.rollUpReadings`).
///
/// Each hour is the projection's aggregate of that hour (`HourAggregate`, the bytes the store keeps: what the
/// screens read for a whole hour), taken as it was when the rollup was written, so the History screen and a
/// detail at an hour's end read the same from the rollup as they did from the readings. An hour a rollup holds
/// is the rollup's in every projection from then on: raw readings of it are no longer taken in (the retention
/// policy's promise), and of two rollups of one hour the later stamp wins.
///
/// `retires` names counters of the event's own origin and epoch in its stream, before its own counter, as a
/// `reading.compact`'s do (`Protocol/sync.md` 6.10): those events are deleted where it is stored, and a replica
/// that lacks them is told they are retired.
///
/// Canonical form (`init` makes it, the decoder refuses anything else): ranges as in `ReadingCompaction`; hours
/// strictly increasing, each aggregate 1 to `maxAggregateBytes` bytes (its content is the store's to read).
public struct ReadingRollup: Hashable, Sendable {
    /// One hour (`hour`: hours since 1970, UTC) and its aggregate's stored bytes.
    public struct Hour: Hashable, Sendable {
        public var hour: Int64
        public var aggregate: [UInt8]
        public init(hour: Int64, aggregate: [UInt8]) {
            self.hour = hour
            self.aggregate = aggregate
        }
    }

    public let source: String
    public let sensor: String
    /// The counters replaced, as ranges.
    public let retires: [ClosedRange<UInt64>]
    /// By hour.
    public let hours: [Hour]
    /// Counters of the same replica's earlier epochs (a server restarts in a new epoch) it replaces too, by epoch
    /// (ascending, each with ranges as `retires`).
    public let earlier: [EpochRanges]

    /// Counter ranges of one epoch.
    public struct EpochRanges: Hashable, Sendable {
        public var epoch: UInt32
        public var ranges: [ClosedRange<UInt64>]
        public init(epoch: UInt32, ranges: [ClosedRange<UInt64>]) {
            self.epoch = epoch
            self.ranges = ranges
        }
    }

    /// The longest aggregate an hour may carry (a real one of nine quantities is under 200 bytes).
    public static let maxAggregateBytes = 4096

    /// A rollup of `hours` replacing `counters` (ranges merged, hours sorted).
    ///
    /// - Precondition: no hour twice, each aggregate 1 to `maxAggregateBytes` bytes.
    public init(source: String, sensor: String, retires counters: [ClosedRange<UInt64>], hours: [Hour], earlier: [EpochRanges] = []) {
        self.source = source
        self.sensor = sensor
        self.retires = ReadingCompaction.normalised(counters)
        self.hours = hours.sorted { $0.hour < $1.hour }
        var byEpoch: [UInt32: [ClosedRange<UInt64>]] = [:]
        for e in earlier { byEpoch[e.epoch, default: []] += e.ranges }
        self.earlier = byEpoch.keys.sorted().compactMap { k in
            let r = ReadingCompaction.normalised(byEpoch[k]!)
            return r.isEmpty ? nil : EpochRanges(epoch: k, ranges: r)
        }
        precondition(zip(self.hours, self.hours.dropFirst()).allSatisfy { $0.hour < $1.hour }, "an hour twice in a rollup")
        precondition(self.hours.allSatisfy { (1...Self.maxAggregateBytes).contains($0.aggregate.count) })
    }

    private init(source: String, sensor: String, canonicalRetires: [ClosedRange<UInt64>], hours: [Hour], earlier: [EpochRanges]) {
        self.source = source
        self.sensor = sensor
        self.retires = canonicalRetires
        self.hours = hours
        self.earlier = earlier
    }

    /// `string source, string sensor`, the ranges as `ReadingCompaction` writes them, then `varint hours`, each
    /// (`zigzag hour` for the first, then `varint step` >= 1; `bytes aggregate`), then `varint epochs`, each
    /// (`varint epoch`, strictly ascending, at most 2^32 - 1; its ranges as above, at least one).
    func encode(into w: inout ByteWriter) {
        w.string(source)
        w.string(sensor)
        ReadingCompaction.encode(ranges: retires, into: &w)
        w.varint(UInt64(hours.count))
        var previous: Int64?
        for h in hours {
            if let p = previous { w.varint(UInt64(h.hour - p)) } else { w.zigzag(h.hour) }
            previous = h.hour
            w.blob(h.aggregate)
        }
        w.varint(UInt64(earlier.count))
        for e in earlier {
            w.varint(UInt64(e.epoch))
            ReadingCompaction.encode(ranges: e.ranges, into: &w)
        }
    }

    static func decode(_ r: inout ByteReader) throws(DecodingError) -> ReadingRollup {
        let source = try r.string(), sensor = try r.string()
        let retires = try ReadingCompaction.decodeRanges(&r, type: "reading.rollup")
        let count = try r.count(limit: r.remaining / 2)
        var hours: [Hour] = []
        hours.reserveCapacity(count)
        var hour: Int64 = 0
        for i in 0..<count {
            if i == 0 { hour = try r.zigzag() } else {
                let step = try r.varint()
                guard step >= 1, step <= UInt64(Int64.max), hour <= Int64.max - Int64(step) else {
                    throw DecodingError.malformed("reading.rollup hour step \(step)")
                }
                hour += Int64(step)
            }
            // Hours since 1970 within ±2^31 (some 245,000 years): what a projection multiplies by 3,600 fits.
            guard hour >= -Int64(Int32.max), hour <= Int64(Int32.max) else {   // not `abs`: it traps on Int64.min
                throw DecodingError.malformed("reading.rollup hour \(hour) out of range")
            }
            let aggregate = try r.blob()
            guard (1...maxAggregateBytes).contains(aggregate.count) else {
                throw DecodingError.malformed("reading.rollup aggregate of \(aggregate.count) bytes")
            }
            hours.append(Hour(hour: hour, aggregate: aggregate))
        }
        let epochs = try r.count(limit: r.remaining / 2)
        var earlier: [EpochRanges] = []
        for _ in 0..<epochs {
            let epoch = try r.varint()
            guard epoch >= 1, epoch <= UInt64(UInt32.max), earlier.last.map({ UInt64($0.epoch) < epoch }) ?? true else {
                throw DecodingError.malformed("reading.rollup epoch \(epoch) out of order or out of range")
            }
            let ranges = try ReadingCompaction.decodeRanges(&r, type: "reading.rollup")
            guard !ranges.isEmpty else { throw DecodingError.malformed("reading.rollup epoch \(epoch) with no range") }
            earlier.append(EpochRanges(epoch: UInt32(epoch), ranges: ranges))
        }
        return ReadingRollup(source: source, sensor: sensor, canonicalRetires: retires, hours: hours, earlier: earlier)
    }
}
