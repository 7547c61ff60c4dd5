import BreezeCore
import BreezeAirQuality

/// The readings of one sensor in one clock hour (a row of `proj_readings`): for every (time, quantity), the
/// value of the event with the greatest stamp (HLC, then origin, epoch, counter), so merging buckets is
/// commutative, associative and idempotent and a bucket's bytes do not depend on the order events arrived in.
///
/// A bucket rather than a row per reading: a rebuild writes each hour once instead of once per reading (about
/// 30x fewer B-tree inserts for a 2-minute sensor), and a screen reads 24 rows for a day instead of 720.
///
/// Values are kept grouped by the event that wrote them (`Group`: one time, one stamp, its quantities), so a
/// reading's time and stamp are held and written once, not once per quantity.
///
/// Canonical encoding (equal buckets have equal bytes; projection version 6): the quantities, sorted, as
/// `list<quantity>` (`QuantityCode`: one byte for a known name); the distinct stamps of its groups,
/// ascending (an import writes an hour of a sensor in one event: one stamp; a live feed thirty, of one origin):
/// since projection version 9 the bytes `80 00`, then the origins once as `list<(u64 replica, varint epoch)>`,
/// then `list<(varint physical milliseconds after the previous stamp's, varint logical, varint origin index,
/// zigzag counter minus the previous stamp's)>` (about 6 bytes a stamp; version 8 wrote 20); then
/// `list<(varint time step, varint stamp index, list<(varint quantity index, decimal value)>)>`, groups
/// sorted by (time, stamp), values by quantity, no empty group; the first group's step is its zigzag time,
/// each next one's its time minus the previous group's, and values use `Decimal64` (2 or 3 bytes for a
/// typical reading instead of 8). About 30 bytes for a reading of nine values, where version 4 took 100;
/// version 6 writes known quantity names as one byte (version 5 spelt them out in every hour).
struct ReadingBucket: Sendable {
    /// The values one event wrote at one time (those that still win), in the event's order; a quantity
    /// given twice in one event counts once, with its last value (see `encoded`).
    ///
    /// `values` is a slice: the groups of one bucket usually share one buffer (`Pending`), so a page of
    /// readings costs an allocation per bucket, not one per reading.
    struct Group: Sendable {
        var time: Int64
        var stamp: Stamp
        var values: ArraySlice<(quantity: String, value: Double)>
        init(time: Int64, stamp: Stamp, values: ArraySlice<(quantity: String, value: Double)>) {
            self.time = time
            self.stamp = stamp
            self.values = values
        }
        init(time: Int64, stamp: Stamp, values: [(quantity: String, value: Double)]) {
            self.init(time: time, stamp: stamp, values: values[...])
        }
    }

    /// The groups of one bucket gathered before they are merged, their values in one buffer.
    struct Pending: Sendable {
        private var heads: [(time: Int64, stamp: Stamp, start: Int, end: Int)] = []
        private var values: [(quantity: String, value: Double)] = []
        init() {}
        /// Adds the values one event wrote at one time.
        mutating func add<C: Collection>(time: Int64, stamp: Stamp, values v: C) where C.Element == (quantity: String, value: Double) {
            let start = values.count
            values.append(contentsOf: v)
            heads.append((time, stamp, start, values.count))
        }
        /// The groups, slicing the shared buffer.
        var groups: [Group] {
            heads.map { Group(time: $0.time, stamp: $0.stamp, values: values[$0.start..<$0.end]) }
        }
    }

    /// Sorted by (time, stamp); each (time, quantity) appears in exactly one group, the one with the greatest
    /// stamp that wrote it.
    private(set) var groups: [Group]

    /// Keeps, for every (time, quantity) in `raw`, the value of the group with the greatest stamp.
    init(merging raw: [Group]) {
        // By time, newest stamp first within a time.
        let sorted = zip(raw, raw.dropFirst()).allSatisfy({ $0.0.time < $0.1.time })
            ? raw : raw.sorted { $0.time != $1.time ? $0.time < $1.time : $0.stamp > $1.stamp }
        var out: [Group] = []
        out.reserveCapacity(sorted.count)
        var i = 0
        while i < sorted.count {
            var j = i + 1
            while j < sorted.count, sorted[j].time == sorted[i].time { j += 1 }
            if j == i + 1 {
                if !sorted[i].values.isEmpty { out.append(sorted[i]) }
            } else {
                // Several events at one time: each quantity goes to the newest stamp that wrote it.
                var taken: [String] = []
                var resolved: [Group] = []
                var lastStamp: Stamp?
                for g in sorted[i..<j] where g.stamp != lastStamp {          // the same event twice adds nothing
                    lastStamp = g.stamp
                    var kept = g
                    kept.values = ArraySlice(g.values.filter { !taken.contains($0.quantity) })
                    taken += kept.values.map(\.quantity)
                    if !kept.values.isEmpty { resolved.append(kept) }
                }
                out += resolved.reversed()                                    // ascending stamps
            }
            i = j
        }
        groups = out
    }

    /// Decodes a stored bucket; a damaged one throws rather than silently losing values.
    init(decoding bytes: [UInt8]) throws(DecodingError) {
        var pending = Pending()
        try ReadingBucket.walk(bytes) { time, stamp, values in pending.add(time: time, stamp: stamp(), values: values) }
        self.init(merging: pending.groups)
    }

    /// The canonical bytes.
    var encoded: [UInt8] { encoded(aggregating: nil).bytes }

    /// The canonical bytes and, for `hour`, the `HourAggregate` of the winning values, in one pass over the
    /// groups (what the projection writes for a bucket).
    func encodedWithAggregate(hour: Int64) -> (bytes: [UInt8], aggregate: HourAggregate) {
        let (bytes, aggregate) = encoded(aggregating: hour)
        return (bytes, aggregate!)
    }

    private func encoded(aggregating hour: Int64?) -> (bytes: [UInt8], aggregate: HourAggregate?) {
        var builder = hour.map { HourAggregate.Builder(hour: $0) }
        var row = HourAggregate.Row(time: groups.first?.time ?? 0)
        let quantities = quantityTable
        // Distinct stamps, ascending (a rebuild gives each group its own: sorted once, then found by bisection).
        var stamps = groups.map(\.stamp)
        stamps.sort()
        var distinct = 0
        for s in stamps where distinct == 0 || stamps[distinct - 1] != s {
            stamps[distinct] = s
            distinct += 1
        }
        stamps.removeLast(stamps.count - distinct)
        func stampIndex(_ s: Stamp) -> Int {
            var lo = 0, hi = stamps.count - 1
            while lo < hi {
                let mid = (lo + hi) / 2
                if stamps[mid] < s { lo = mid + 1 } else { hi = mid }
            }
            return lo
        }
        var w = ByteWriter(capacity: 16 + quantities.count * 2 + stamps.count * 8 + groups.count * (4 + 4 * quantities.count))
        w.u8(0x80); w.u8(0x00)                     // the format's mark (an overlong 0, never a version-6 bucket's start)
        w.varint(UInt64(quantities.count))
        for q in quantities { w.quantity(q) }
        // The origins once (a live feed's hour is thirty events of one origin), then each stamp as differences
        // from the one before: about 6 bytes where version 8 wrote 20.
        var origins: [Origin] = []
        for s in stamps where !origins.contains(s.id.origin) { origins.append(s.id.origin) }
        w.varint(UInt64(origins.count))
        for o in origins {
            w.u64(o.replica.rawValue)
            w.varint(UInt64(o.epoch))
        }
        w.varint(UInt64(stamps.count))
        var physical: UInt64 = 0, counter: UInt64 = 0
        for s in stamps {
            w.varint(s.hlc.physicalMillis - physical)       // ascending stamps: never negative
            w.varint(UInt64(s.hlc.logical))
            w.varint(UInt64(origins.count == 1 ? 0 : origins.firstIndex(of: s.id.origin)!))
            w.zigzag(Int64(bitPattern: s.id.counter &- counter))
            physical = s.hlc.physicalMillis
            counter = s.id.counter
        }
        w.varint(UInt64(groups.count))
        var indexed: [(index: Int, value: Double)] = []
        var previous: Int64?
        var lastNames: [String] = [], lastOrder: [(index: Int, position: Int)] = [], lastFields: [HourAggregate.Row.Field?] = []
        for g in groups {
            // Groups of one sensor usually list the same quantities in the same order: their canonical order
            // (index in `quantities`, then position in the group) and the aggregate's field of each are worked
            // out once and reused.
            if g.values.count == lastNames.count, ReadingBucket.sameNames(g.values, lastNames) {
                indexed.removeAll(keepingCapacity: true)
                let base = g.values.startIndex
                for o in lastOrder { indexed.append((o.index, g.values[base + o.position].value)) }
            } else {
                ReadingBucket.canonical(g, quantities, into: &indexed, order: &lastOrder)
                lastNames = g.values.map(\.quantity)
                lastFields = lastNames.map(HourAggregate.Row.Field.init(quantity:))
            }
            if let p = previous { w.varint(UInt64(g.time - p)) } else { w.zigzag(g.time) }
            if builder != nil {
                // The aggregate's row of a time gathers the values of every group at that time.
                if previous != nil, g.time != row.time {
                    builder!.add(row)
                    row = HourAggregate.Row(time: g.time)
                }
                for (i, v) in g.values.enumerated() { if let f = lastFields[i] { row.set(f, v.value) } }
            }
            previous = g.time
            w.varint(UInt64(stamps.count == 1 ? 0 : stampIndex(g.stamp)))
            w.varint(UInt64(indexed.count))
            for v in indexed {
                w.varint(UInt64(v.index))
                w.decimal(v.value)
            }
        }
        if builder != nil, !groups.isEmpty { builder!.add(row) }
        return (w.bytes, builder?.aggregate)
    }

    /// The bucket's quantities, sorted. A handful per sensor: a small array beats hashing, and a group naming the
    /// same quantities as the one before it adds nothing.
    private var quantityTable: [String] {
        var quantities: [String] = []
        var previous: ArraySlice<(quantity: String, value: Double)> = []
        for g in groups {
            if g.values.count == previous.count, zip(g.values, previous).allSatisfy({ $0.0.quantity == $0.1.quantity }) { continue }
            for v in g.values where !quantities.contains(v.quantity) { quantities.append(v.quantity) }
            previous = g.values
        }
        quantities.sort()
        return quantities
    }

    /// True when `values` name `names`, in that order (the caller has compared the counts).
    private static func sameNames(_ values: ArraySlice<(quantity: String, value: Double)>, _ names: [String]) -> Bool {
        var i = 0
        for v in values {
            if v.quantity != names[i] { return false }
            i += 1
        }
        return true
    }

    /// A group's values as (index in `quantities`, value), sorted by index, the last of a repeated quantity
    /// kept: the canonical order, whatever order the event listed them in. `order` receives, for each output
    /// value, its index and its position in the group.
    private static func canonical(_ g: Group, _ quantities: [String], into out: inout [(index: Int, value: Double)],
                                  order: inout [(index: Int, position: Int)]) {
        order.removeAll(keepingCapacity: true)
        for (position, v) in g.values.enumerated() {
            let index = quantities.firstIndex(of: v.quantity)!
            // Insertion sort: a reading has a handful of quantities.
            var i = order.count
            while i > 0, order[i - 1].index > index { i -= 1 }
            if i > 0, order[i - 1].index == index { order[i - 1].position = position } else { order.insert((index, position), at: i) }
        }
        out.removeAll(keepingCapacity: true)
        let base = g.values.startIndex
        for o in order { out.append((o.index, g.values[base + o.position].value)) }
    }

    private static func canonical(_ g: Group, _ quantities: [String], into out: inout [(index: Int, value: Double)]) {
        var order: [(index: Int, position: Int)] = []
        canonical(g, quantities, into: &out, order: &order)
    }

    /// Every (time, quantity) value with its stamp, sorted by time then quantity (for tests and tools).
    var entries: [(time: Int64, quantity: String, value: Double, stamp: Stamp)] {
        let quantities = quantityTable
        var indexed: [(index: Int, value: Double)] = []
        var out: [(time: Int64, quantity: String, value: Double, stamp: Stamp)] = []
        for g in groups {
            ReadingBucket.canonical(g, quantities, into: &indexed)
            out += indexed.map { (g.time, quantities[$0.index], $0.value, g.stamp) }
        }
        return out.sorted { ($0.time, $0.quantity) < ($1.time, $1.quantity) }
    }

    /// The winning values, one dictionary of quantities per time, in time order (what screens read).
    var rows: [(time: Int64, values: [String: Double])] {
        var out: [(time: Int64, values: [String: Double])] = []
        for g in groups {
            if out.last?.time != g.time { out.append((g.time, Dictionary(minimumCapacity: g.values.count))) }
            for v in g.values { out[out.count - 1].values[v.quantity] = v.value }
        }
        return out
    }

    /// The hour's `HourAggregate` of the winning values (the one `encodedWithAggregate` sums while encoding).
    func aggregate(hour: Int64) -> HourAggregate { encoded(aggregating: hour).aggregate! }

    /// Per (time, quantity), the value with the greater stamp.
    func merged(with other: ReadingBucket) -> ReadingBucket { ReadingBucket(merging: groups + other.groups) }

    /// The clock hour a time falls in (floor division, so times before 1970 land in the right hour).
    static func hour(_ time: Int64) -> Int64 { time >= 0 ? time / 3600 : (time + 1) / 3600 - 1 }   // no overflow at .min

    /// The stamps of a version-9 bucket: the origins once, then each stamp as differences.
    private static func readStamps(_ r: inout ByteReader,
                                   into stamps: inout [(hlc: UInt64, replica: UInt64, epoch: UInt64, counter: UInt64)]) throws(DecodingError) {
        let originCount = try r.count(limit: r.remaining / 9)
        var origins: [(replica: UInt64, epoch: UInt64)] = []
        origins.reserveCapacity(originCount)
        for _ in 0..<originCount {
            let replica = try r.u64(), epoch = try r.varint()
            guard epoch <= UInt64(UInt32.max) else { throw DecodingError.malformed("bucket epoch out of range") }
            origins.append((replica, epoch))
        }
        let stampCount = try r.count(limit: r.remaining / 4)
        stamps.reserveCapacity(stampCount)
        var physical: UInt64 = 0, counter: UInt64 = 0
        for _ in 0..<stampCount {
            let dp = try r.varint(), logical = try r.varint(), o = try r.varint(), dc = try r.zigzag()
            guard dp <= (UInt64.max >> 16) - physical, logical <= UInt64(UInt16.max), o < UInt64(originCount) else {
                throw DecodingError.malformed("a bucket stamp out of range")
            }
            physical += dp
            counter = counter &+ UInt64(bitPattern: dc)
            stamps.append((physical << 16 | logical, origins[Int(o)].replica, origins[Int(o)].epoch, counter))
        }
    }

    /// The stamps of a version-8 bucket: each in full.
    private static func readVersion8Stamps(_ r: inout ByteReader,
                                           into stamps: inout [(hlc: UInt64, replica: UInt64, epoch: UInt64, counter: UInt64)]) throws(DecodingError) {
        let stampCount = try r.count(limit: r.remaining / 18)
        stamps.reserveCapacity(stampCount)
        for _ in 0..<stampCount {
            let hlc = try r.u64(), replica = try r.u64()
            let epoch = try r.varint(), counter = try r.varint()
            guard epoch <= UInt64(UInt32.max) else { throw DecodingError.malformed("bucket epoch out of range") }
            stamps.append((hlc, replica, epoch, counter))
        }
    }

    /// The data of an hour a `reading.rollup` holds: the bytes `80 01` (never a bucket's start) and the rollup
    /// event's stamp (`u64 hlc, u64 replica, varint epoch, varint counter`). It holds no readings.
    static func rollupMark(_ stamp: Stamp) -> [UInt8] {
        var w = ByteWriter(capacity: 32)
        w.u8(0x80); w.u8(0x01)
        w.u64(stamp.hlc.rawValue); w.u64(stamp.id.origin.replica.rawValue)
        w.varint(UInt64(stamp.id.origin.epoch)); w.varint(stamp.id.counter)
        return w.bytes
    }

    /// The stamp of the rollup an hour's data says holds it, or nil for a bucket of readings.
    static func rollupStamp(_ bytes: [UInt8]) -> Stamp? {
        guard bytes.count >= 2, bytes[0] == 0x80, bytes[1] == 0x01 else { return nil }
        var r = ByteReader(bytes)
        guard (try? r.raw(2)) != nil, let hlc = try? r.u64(), let replica = try? r.u64(), let epoch = try? r.varint(), epoch <= UInt64(UInt32.max),
              let counter = try? r.varint(), r.isAtEnd else { return nil }
        return Stamp(hlc: HLC(rawValue: hlc), id: EventID(origin: Origin(replica: ReplicaID(rawValue: replica), epoch: UInt32(epoch)), counter: counter))
    }

    /// Calls `body` with every group of an encoded bucket, in stored order; the stamp is built only if asked. An
    /// hour a rollup holds has none.
    private static func walk(_ bytes: [UInt8],
                             _ body: (Int64, () -> Stamp, [(quantity: String, value: Double)]) -> Void) throws(DecodingError) {
        if bytes.count >= 2, bytes[0] == 0x80, bytes[1] == 0x01 {
            guard rollupStamp(bytes) != nil else { throw DecodingError.malformed("a damaged rollup mark") }
            return
        }
        var r = ByteReader(bytes)
        // A bucket of projection version 8 (the tables of a database opened before its rebuild to version 9,
        // which readers go on reading while it runs) holds its stamps in full.
        let current = bytes.count >= 2 && bytes[0] == 0x80 && bytes[1] == 0x00
        if current { _ = try r.u8(); _ = try r.u8() }
        let n = try r.count(limit: r.remaining)
        var quantities: [String] = []
        quantities.reserveCapacity(n)
        for _ in 0..<n { quantities.append(try r.quantity()) }
        var stamps: [(hlc: UInt64, replica: UInt64, epoch: UInt64, counter: UInt64)] = []
        if current { try readStamps(&r, into: &stamps) } else { try readVersion8Stamps(&r, into: &stamps) }
        let stampCount = stamps.count
        let groups = try r.count(limit: r.remaining)
        guard groups == 0 || stampCount > 0 else { throw DecodingError.malformed("a bucket's groups without stamps") }
        var values: [(quantity: String, value: Double)] = []
        var time: Int64 = 0
        for g in 0..<groups {
            if g == 0 { time = try r.zigzag() } else {
                let step = try r.varint()
                guard step <= 3600 else { throw DecodingError.malformed("bucket time step \(step) beyond an hour") }
                time += Int64(step)
            }
            let si = try r.varint()
            guard si < UInt64(stampCount) else { throw DecodingError.malformed("bucket stamp index \(si) out of range") }
            let s = stamps[Int(si)]
            let stamp = { Stamp(hlc: HLC(rawValue: s.hlc), id: EventID(origin: Origin(replica: ReplicaID(rawValue: s.replica),
                                                                                    epoch: UInt32(s.epoch)), counter: s.counter)) }
            let count = try r.count(limit: r.remaining)
            values.removeAll(keepingCapacity: true)
            for _ in 0..<count {
                let q = try r.varint()
                guard q < UInt64(quantities.count) else { throw DecodingError.malformed("bucket quantity index \(q) out of range") }
                values.append((quantities[Int(q)], try r.decimal()))
            }
            body(time, stamp, values)
        }
        guard r.isAtEnd else { throw DecodingError.malformed("trailing bytes after a reading bucket") }
    }

    /// What screens read: the values with `from <= time < to`, one dictionary of quantities per time, in time
    /// order, without building stamps. Appends to `out`.
    static func readValues(_ bytes: [UInt8], from: Int64, to: Int64,
                           into out: inout [(time: Int64, values: [String: Double])]) throws(DecodingError) {
        var current: (time: Int64, values: [String: Double])?
        try walk(bytes) { time, _, values in
            guard time >= from, time < to else { return }
            if current?.time != time {
                if let c = current { out.append(c) }
                current = (time, Dictionary(minimumCapacity: values.count))
            }
            for v in values { current!.values[v.quantity] = v.value }
        }
        if let c = current { out.append(c) }
    }

    /// The latest time in the bucket at or before `at`.
    static func latestTime(_ bytes: [UInt8], atOrBefore at: Int64) throws(DecodingError) -> Int64? {
        var best: Int64?
        try walk(bytes) { time, _, _ in if time <= at, best.map({ time > $0 }) ?? true { best = time } }
        return best
    }
}
