/// Many readings of one sensor in one event (type `reading.block`): what an import stores, so a row of nine
/// values costs about 25 bytes in the log instead of the 200 of a `reading` event of its own (the event's
/// header, hash and index entry are shared by the rows, times are steps from the previous row, values are
/// `Decimal64`, quantities are named once).
///
/// Each value is still its own fact, keyed by (source, sensor, time, quantity), with the block's stamp: the
/// projection merges a block exactly as it would the readings it holds.
///
/// Canonical form (`init` makes it, the decoder refuses anything else): rows in strictly increasing time,
/// each with at least one value, a quantity at most once in a row (the last value given wins), quantities
/// listed sorted, at most 64 of them.
public struct ReadingBlock: Hashable, Sendable {
    /// One time of the sensor, with its values.
    public struct Row: Hashable, Sendable {
        public var time: Int64
        public var values: [Measurement]
        public init(time: Int64, values: [Measurement]) {
            self.time = time
            self.values = values
        }
    }

    public let source: String
    public let sensor: String
    /// By time, in canonical form.
    public let rows: [Row]

    /// Most quantities one block may name (a row says which it holds in a 64-bit mask).
    public static let maxQuantities = 64

    /// A block of `rows` (normalised: sorted by time, rows of one time merged, the last value of a quantity
    /// kept, values sorted by quantity, empty rows dropped).
    ///
    /// - Precondition: at most `maxQuantities` distinct quantities (`ReadingBlock.blocks` splits larger sets).
    public init(source: String, sensor: String, rows: [Row]) {
        self.source = source
        self.sensor = sensor
        var byTime: [Int64: [String: Double]] = [:]
        var order: [Int64] = []
        for r in rows {
            if byTime[r.time] == nil {
                order.append(r.time)
                byTime[r.time] = [:]
            }
            for m in r.values { byTime[r.time]![m.quantity] = m.value }
        }
        self.rows = order.sorted().compactMap { t in
            let v = byTime[t]!
            return v.isEmpty ? nil : Row(time: t, values: v.keys.sorted().map { Measurement($0, v[$0]!) })
        }
        precondition(Set(self.rows.flatMap { $0.values.map(\.quantity) }).count <= ReadingBlock.maxQuantities)
    }

    private init(source: String, sensor: String, canonical rows: [Row]) {
        self.source = source
        self.sensor = sensor
        self.rows = rows
    }

    /// The readings of one sensor as blocks of at most `maxRows` rows and `maxQuantities` quantities, by time.
    public static func blocks(source: String, sensor: String, readings: [Reading], maxRows: Int = 1000) -> [ReadingBlock] {
        var out: [ReadingBlock] = []
        var rows: [Row] = []
        var quantities = Set<String>()
        func flush() {
            if !rows.isEmpty { out.append(ReadingBlock(source: source, sensor: sensor, rows: rows)) }
            rows = []
            quantities = []
        }
        for r in readings.sorted(by: { $0.time < $1.time }) {
            let q = Set(r.values.map(\.quantity))
            if rows.count >= maxRows || quantities.union(q).count > maxQuantities { flush() }
            quantities.formUnion(q)
            rows.append(Row(time: r.time, values: r.values))
        }
        flush()
        return out
    }

    /// The readings it holds.
    public var readings: [Reading] { rows.map { Reading(source: source, sensor: sensor, time: $0.time, values: $0.values) } }

    /// The quantities it names, sorted.
    var quantities: [String] { Array(Set(rows.flatMap { $0.values.map(\.quantity) })).sorted() }

    /// `string source, string sensor, list<quantity> quantities (`QuantityCode`), varint rows, rows of (varint time step, varint
    /// mask, decimal value per set bit)`: the first step is the zigzag time, each next one the time minus the
    /// previous row's (at least 1).
    func encode(into w: inout ByteWriter) {
        let table = quantities
        var index: [String: Int] = [:]
        for (i, q) in table.enumerated() { index[q] = i }
        w.string(source)
        w.string(sensor)
        w.array(table) { w, q in w.quantity(q) }
        w.varint(UInt64(rows.count))
        var previous: Int64?
        for r in rows {
            if let p = previous { w.varint(UInt64(r.time - p)) } else { w.zigzag(r.time) }
            previous = r.time
            Self.encodeValues(r.values, index, into: &w)
        }
    }

    /// A row's values (sorted by quantity, so in the mask's bit order) as `varint mask`, then one decimal per set
    /// bit; `index` gives each quantity's bit.
    static func encodeValues(_ values: [Measurement], _ index: [String: Int], into w: inout ByteWriter) {
        var mask: UInt64 = 0
        for m in values { mask |= 1 << UInt64(index[m.quantity]!) }
        w.varint(mask)
        for m in values { w.decimal(m.value) }
    }

    /// The values `encodeValues` writes, of a table of `table` quantities: a mask of 0, or with a bit beyond the
    /// table, is malformed.
    static func decodeValues(_ r: inout ByteReader, _ table: [String], type: String) throws(DecodingError) -> [Measurement] {
        let n = table.count
        let mask = try r.varint()
        guard mask != 0, n == 64 || mask >> UInt64(n) == 0 else { throw DecodingError.malformed("\(type) row mask \(mask)") }
        var values: [Measurement] = []
        for bit in 0..<n where mask & (1 << UInt64(bit)) != 0 { values.append(Measurement(table[bit], try r.decimal())) }
        return values
    }

    /// A quantity table: sorted, distinct, at most `maxQuantities`.
    static func decodeQuantities(_ r: inout ByteReader, type: String) throws(DecodingError) -> [String] {
        var table: [String] = []
        let n = try r.count(limit: r.remaining)
        guard n <= maxQuantities else { throw DecodingError.malformed("\(type) names \(n) quantities, more than \(maxQuantities)") }
        for _ in 0..<n {
            let q = try r.quantity()
            if let last = table.last, q <= last { throw DecodingError.malformed("\(type) quantities not sorted and distinct") }
            table.append(q)
        }
        return table
    }

    /// Decodes a payload in canonical form.
    static func decode(_ r: inout ByteReader) throws(DecodingError) -> ReadingBlock {
        let source = try r.string(), sensor = try r.string()
        let table = try decodeQuantities(&r, type: "reading.block")
        let count = try r.count(limit: r.remaining / 2)
        var rows: [Row] = []
        rows.reserveCapacity(count)
        var time: Int64 = 0
        for i in 0..<count {
            if i == 0 { time = try r.zigzag() } else {
                let step = try r.varint()
                guard step >= 1, step <= UInt64(Int64.max), time <= Int64.max - Int64(step) else {
                    throw DecodingError.malformed("reading.block time step \(step)")
                }
                time += Int64(step)
            }
            rows.append(Row(time: time, values: try decodeValues(&r, table, type: "reading.block")))
        }
        let block = ReadingBlock(source: source, sensor: sensor, canonical: rows)
        guard block.quantities == table else { throw DecodingError.malformed("reading.block names a quantity no row holds") }
        return block
    }

    /// The rows' finite values, read straight from a payload (the projection's fast path; nil when it does
    /// not decode).
    static func rowValues(_ reader: ByteReader) -> (source: String, sensor: String,
                                                     rows: [(time: Int64, values: [(quantity: String, value: Double)])])? {
        var r = reader
        guard let b = try? decode(&r), r.isAtEnd else { return nil }
        return (b.source, b.sensor, b.rows.map { row in (row.time, row.values.compactMap { $0.value.isFinite ? ($0.quantity, $0.value) : nil }) })
    }
}
