/// Many small reading events of one origin in one sensor stream, merged into one event (type `reading.compact`):
/// what a server writes when it compacts the one-row blocks a live feed leaves (`EventLog.compactReadings`).
///
/// It changes no fact. Every row keeps the stamp of the event it came from (that event's timestamp and counter;
/// the origin and epoch are this event's), so the projection merges a compaction exactly as it merged the events
/// it replaces, and a later correction from anyone still wins or loses as it would have. `retires` names the
/// counters of this event's origin and epoch in its stream that it replaces: a replica that holds them drops
/// them when it stores this event, and a replica that lacks them is told they are retired, not lost
/// (`Protocol/sync.md` 6.10).
///
/// Canonical form (`init` makes it, the decoder refuses anything else): ranges ascending, disjoint and not
/// adjacent, counters from 1; rows in strictly increasing (time, counter), each with at least one value and a
/// counter inside a range; quantities listed sorted, at most 64, each held by some row.
public struct ReadingCompaction: Hashable, Sendable {
    /// One time of the sensor as one replaced event gave it, with that event's counter and timestamp.
    public struct Row: Hashable, Sendable {
        public var time: Int64
        public var counter: UInt64
        public var hlc: HLC
        public var values: [Measurement]
        public init(time: Int64, counter: UInt64, hlc: HLC, values: [Measurement]) {
            self.time = time
            self.counter = counter
            self.hlc = hlc
            self.values = values
        }
    }

    public let source: String
    public let sensor: String
    /// The counters replaced, as ranges.
    public let retires: [ClosedRange<UInt64>]
    /// By (time, counter), in canonical form.
    public let rows: [Row]

    /// A compaction of `rows` replacing `counters` (normalised: ranges merged, rows sorted, a row's values
    /// sorted by quantity with the last of a repeated one kept, empty rows dropped).
    ///
    /// - Precondition: every row's counter is in `counters`, no (time, counter) twice, at most
    ///   `ReadingBlock.maxQuantities` distinct quantities.
    public init(source: String, sensor: String, retires counters: [ClosedRange<UInt64>], rows: [Row]) {
        self.source = source
        self.sensor = sensor
        self.retires = ReadingCompaction.normalised(counters)
        self.rows = rows.compactMap { r -> Row? in
            var byQuantity: [String: Double] = [:]
            for m in r.values { byQuantity[m.quantity] = m.value }
            guard !byQuantity.isEmpty else { return nil }
            return Row(time: r.time, counter: r.counter, hlc: r.hlc,
                       values: byQuantity.keys.sorted().map { Measurement($0, byQuantity[$0]!) })
        }.sorted { ($0.time, $0.counter) < ($1.time, $1.counter) }
        precondition(zip(self.rows, self.rows.dropFirst()).allSatisfy { ($0.time, $0.counter) < ($1.time, $1.counter) },
                     "a (time, counter) twice in a compaction")
        precondition(self.rows.allSatisfy { ReadingCompaction.contains(self.retires, $0.counter) }, "a row's counter is not retired")
        precondition(quantities.count <= ReadingBlock.maxQuantities)
    }

    private init(source: String, sensor: String, canonicalRetires: [ClosedRange<UInt64>], rows: [Row]) {
        self.source = source
        self.sensor = sensor
        self.retires = canonicalRetires
        self.rows = rows
    }

    /// Ranges sorted, overlapping and adjacent ones merged.
    public static func normalised(_ ranges: [ClosedRange<UInt64>]) -> [ClosedRange<UInt64>] {
        var out: [ClosedRange<UInt64>] = []
        for r in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = out.last, r.lowerBound <= last.upperBound &+ 1, last.upperBound != .max {
                out[out.count - 1] = last.lowerBound...max(last.upperBound, r.upperBound)
            } else {
                out.append(r)
            }
        }
        return out
    }

    /// `varint ranges`, then per range `varint skip` (its first counter minus the previous range's last minus 1,
    /// from 0; at least 1 after the first range) and `varint length - 1`.
    static func encode(ranges: [ClosedRange<UInt64>], into w: inout ByteWriter) {
        w.varint(UInt64(ranges.count))
        var end: UInt64 = 0
        for r in ranges {
            w.varint(r.lowerBound - end - 1)     // from 1, then at least one counter left out between ranges
            w.varint(r.upperBound - r.lowerBound)
            end = r.upperBound
        }
    }

    /// The ranges `encode(ranges:into:)` writes, refusing any other form.
    static func decodeRanges(_ r: inout ByteReader, type: String) throws(DecodingError) -> [ClosedRange<UInt64>] {
        let rangeCount = try r.count(limit: r.remaining / 2)
        var retires: [ClosedRange<UInt64>] = []
        retires.reserveCapacity(rangeCount)
        var end: UInt64 = 0
        for i in 0..<rangeCount {
            let skip = try r.varint(), length = try r.varint()
            // The first range may start at 1 (skip 0); each later one leaves at least one counter out.
            guard i == 0 || skip >= 1, skip < UInt64.max - end, length < UInt64.max - (end + skip + 1) else {
                throw DecodingError.malformed("\(type) range \(i) out of order or out of range")
            }
            let first = end + skip + 1
            // Counters below 2^63: what the store can order (it keeps them as signed 64-bit numbers).
            guard first + length < UInt64(Int64.max) else { throw DecodingError.malformed("\(type) range \(i) beyond counter 2^63") }
            retires.append(first...(first + length))
            end = first + length
        }
        return retires
    }

    /// True when `counter` is in one of the sorted, disjoint `ranges`.
    public static func contains(_ ranges: [ClosedRange<UInt64>], _ counter: UInt64) -> Bool {
        var lo = 0, hi = ranges.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if ranges[mid].upperBound < counter { lo = mid + 1 } else { hi = mid }
        }
        return lo < ranges.count && ranges[lo].contains(counter)
    }

    /// The quantities it names, sorted.
    var quantities: [String] { Array(Set(rows.flatMap { $0.values.map(\.quantity) })).sorted() }

    /// `string source, string sensor, list<(varint skip, varint length - 1)> retires` (each range's first counter
    /// is the previous range's last + 1 + skip, from 0; skip >= 1 after the first range), `list<quantity>
    /// quantities, varint rows`, rows of (time: zigzag for the first row, then the varint step from the previous,
    /// >= 0; counter: varint for the first row, then the zigzag difference; timestamp: for the first row varint
    /// physical milliseconds and varint logical, then zigzag (physical difference - 1000 x the time step) and
    /// zigzag logical difference; `varint mask`, a decimal value per set bit).
    func encode(into w: inout ByteWriter) {
        let table = quantities
        var index: [String: Int] = [:]
        for (i, q) in table.enumerated() { index[q] = i }
        w.string(source)
        w.string(sensor)
        Self.encode(ranges: retires, into: &w)
        w.array(table) { w, q in w.quantity(q) }
        w.varint(UInt64(rows.count))
        var previous: Row?
        for r in rows {
            if let p = previous {
                let step = r.time - p.time
                w.varint(UInt64(step))
                w.zigzag(Int64(bitPattern: r.counter &- p.counter))
                // A feed stores each reading about as long after its time as the one before: the clock's step
                // minus the readings' is a byte or two, where the plain difference of two stamps is five.
                w.zigzag(Int64(bitPattern: r.hlc.physicalMillis &- p.hlc.physicalMillis) &- step &* 1000)
                w.zigzag(Int64(r.hlc.logical) - Int64(p.hlc.logical))
            } else {
                w.zigzag(r.time)
                w.varint(r.counter)
                w.varint(r.hlc.physicalMillis)
                w.varint(UInt64(r.hlc.logical))
            }
            previous = r
            ReadingBlock.encodeValues(r.values, index, into: &w)
        }
    }

    /// Decodes a payload in canonical form.
    static func decode(_ r: inout ByteReader) throws(DecodingError) -> ReadingCompaction {
        let source = try r.string(), sensor = try r.string()
        let retires = try decodeRanges(&r, type: "reading.compact")
        let table = try ReadingBlock.decodeQuantities(&r, type: "reading.compact")
        let count = try r.count(limit: r.remaining / 4)
        var rows: [Row] = []
        rows.reserveCapacity(count)
        var time: Int64 = 0, counter: UInt64 = 0, physical: UInt64 = 0, logical: UInt64 = 0
        for i in 0..<count {
            if i == 0 {
                time = try r.zigzag()
                counter = try r.varint()
                physical = try r.varint()
                logical = try r.varint()
            } else {
                let step = try r.varint()
                guard step <= UInt64(Int64.max), time <= Int64.max - Int64(step) else {
                    throw DecodingError.malformed("reading.compact time step \(step)")
                }
                let dc = try r.zigzag(), dp = try r.zigzag(), dl = try r.zigzag()
                time += Int64(step)
                counter = counter &+ UInt64(bitPattern: dc)
                physical = physical &+ UInt64(bitPattern: dp &+ Int64(step) &* 1000)
                logical = UInt64(bitPattern: Int64(bitPattern: logical) &+ dl)
                guard step > 0 || counter > rows[i - 1].counter else {
                    throw DecodingError.malformed("reading.compact rows not in (time, counter) order")
                }
            }
            guard physical <= UInt64.max >> 16, logical <= UInt64(UInt16.max) else {
                throw DecodingError.malformed("reading.compact row timestamp out of range")
            }
            guard contains(retires, counter) else {
                throw DecodingError.malformed("reading.compact row of counter \(counter), which it does not retire")
            }
            let values = try ReadingBlock.decodeValues(&r, table, type: "reading.compact")
            rows.append(Row(time: time, counter: counter, hlc: HLC(physicalMillis: physical, logical: UInt16(logical)), values: values))
        }
        let c = ReadingCompaction(source: source, sensor: sensor, canonicalRetires: retires, rows: rows)
        guard c.quantities == table else { throw DecodingError.malformed("reading.compact names a quantity no row holds") }
        return c
    }

    /// The rows' finite values with their stamps' counter and timestamp, read straight from a payload (the
    /// projection's path; nil when it does not decode).
    static func rowValues(_ reader: ByteReader) -> (source: String, sensor: String,
                                                     rows: [(time: Int64, counter: UInt64, hlc: HLC, values: [(quantity: String, value: Double)])])? {
        var r = reader
        guard let c = try? decode(&r), r.isAtEnd else { return nil }
        return (c.source, c.sensor, c.rows.map { row in
            (row.time, row.counter, row.hlc, row.values.compactMap { $0.value.isFinite ? ($0.quantity, $0.value) : nil })
        })
    }
}
