import Testing
import BreezeCore

/// `reading.block` (Protocol/encoding.md section 5) and the `quantity` primitive: random blocks round-trip
/// and the projection's fast path reads the same values; each non-canonical form is refused; a block is
/// much smaller than the `reading` events it replaces.
struct ReadingBlockTests {
    static let names = QuantityCode.known + ["a custom quantity", "Zürich ☁️", "pm25_cf1_c"]

    static func payload(quantities: [(code: UInt64, name: String?)], rows: [(step: UInt64, mask: UInt64, values: [Double])],
                        source: String = "purpleair", sensor: String = "1") -> [UInt8] {
        var w = ByteWriter(capacity: 64)
        w.string(source)
        w.string(sensor)
        w.varint(UInt64(quantities.count))
        for q in quantities {
            w.varint(q.code)
            if let name = q.name { w.string(name) }
        }
        w.varint(UInt64(rows.count))
        for r in rows {
            w.varint(r.step)
            w.varint(r.mask)
            for v in r.values { w.decimal(v) }
        }
        return w.bytes
    }

    static func decodes(_ payload: [UInt8]) -> Bool {
        (try? EventBody.decode(type: "reading.block", version: 1, payload: payload)) != nil
    }

    @Test func randomBlocksRoundTripAndTheFastPathAgrees() throws {
        var rng = SeededRandom(seed: 1414)
        for _ in 0..<300 {
            var rows: [ReadingBlock.Row] = []
            for _ in 0..<Int.random(in: 1...40, using: &rng) {
                let values = (0..<Int.random(in: 0...6, using: &rng)).map { _ in
                    Measurement(Self.names.randomElement(using: &rng)!,
                                [Double.nan, .infinity, -1.5, 0, 12.25, 1013.25, .pi].randomElement(using: &rng)!)
                }
                rows.append(.init(time: Int64.random(in: -100_000...2_000_000_000, using: &rng), values: values))
            }
            let block = ReadingBlock(source: "purpleair", sensor: String(Int.random(in: 1...999, using: &rng)), rows: rows)
            let body = EventBody.readingBlock(block)
            let (type, version, payload) = body.encode()
            #expect(type == "reading.block")
            let back = try EventBody.decode(type: type, version: version, payload: payload)
            #expect(back.encode().payload == payload)           // bytes, since NaN != NaN
            // Canonical: strictly increasing times, no empty row.
            #expect(zip(block.rows, block.rows.dropFirst()).allSatisfy { $0.0.time < $0.1.time })
            #expect(block.rows.allSatisfy { !$0.values.isEmpty })
            let event = Event(stream: .public, id: EventID(origin: Origin(replica: ReplicaID(rawValue: 1), epoch: 1), counter: 1),
                              hlc: HLC(rawValue: 1 << 16), body: body)
            let fast = try #require(EventBody.readingRows(of: event))
            #expect(fast.source == block.source && fast.sensor == block.sensor)
            #expect(fast.rows.map(\.time) == block.rows.map(\.time))
            for (f, r) in zip(fast.rows, block.rows) {
                let finite = r.values.filter { $0.value.isFinite }
                #expect(f.values.map(\.quantity) == finite.map(\.quantity) && f.values.map(\.value) == finite.map(\.value))
            }
        }
    }

    @Test func theLastValueOfAQuantityInARowWinsAndRowsOfOneTimeMerge() {
        let b = ReadingBlock(source: "s", sensor: "1", rows: [
            .init(time: 20, values: [Measurement("pm25", 1), Measurement("pm25", 2)]),
            .init(time: 10, values: [Measurement("o3", 5)]),
            .init(time: 20, values: [Measurement("no2", 3)]),
            .init(time: 30, values: []),
        ])
        #expect(b.rows == [.init(time: 10, values: [Measurement("o3", 5)]),
                           .init(time: 20, values: [Measurement("no2", 3), Measurement("pm25", 2)])])
    }

    @Test func knownQuantitiesTakeOneByteAndEveryOtherFormIsRefused() throws {
        // A known name is its code, in one byte; another name is 0 then the string.
        var w = ByteWriter(capacity: 32)
        w.quantity("pm25_cf1_a")
        w.quantity("pressure")
        w.quantity("a custom quantity")
        #expect(Array(w.bytes.prefix(3)) == [1, 24, 0])
        var r = ByteReader(w.bytes)
        #expect(try r.quantity() == "pm25_cf1_a" && r.quantity() == "pressure" && r.quantity() == "a custom quantity" && r.isAtEnd)
        // The string form of a known name, and a code beyond the list.
        var spelt = ByteWriter(capacity: 16)
        spelt.varint(0)
        spelt.string("humidity")
        var r2 = ByteReader(spelt.bytes)
        #expect(throws: DecodingError.self) { try r2.quantity() }
        var beyond = ByteWriter(capacity: 4)
        beyond.varint(UInt64(QuantityCode.known.count + 1))
        var r3 = ByteReader(beyond.bytes)
        #expect(throws: DecodingError.self) { try r3.quantity() }
        // The list is the documented table's order (a reordering would change every stored block's meaning).
        #expect(QuantityCode.known.count == 24 && QuantityCode.known[0] == "pm25_cf1_a" && QuantityCode.known[23] == "pressure")
        #expect(Set(QuantityCode.known).count == QuantityCode.known.count)
    }

    @Test func nonCanonicalBlocksAreRefused() {
        // pm25_cf1_a (1) and pm25_cf1_b (2), two rows at 100 and 160.
        let good = Self.payload(quantities: [(1, nil), (2, nil)], rows: [(200, 0b11, [1.5, 2]), (60, 0b01, [3])])
        #expect(Self.decodes(good))
        let bad: [(String, [UInt8])] = [
            ("quantities not sorted", Self.payload(quantities: [(2, nil), (1, nil)], rows: [(200, 0b11, [1.5, 2])])),
            ("a quantity twice", Self.payload(quantities: [(1, nil), (1, nil)], rows: [(200, 0b11, [1.5, 2])])),
            ("a known name spelt out", Self.payload(quantities: [(0, "pm25_cf1_a")], rows: [(200, 0b1, [1.5])])),
            ("a listed quantity no row holds", Self.payload(quantities: [(1, nil), (2, nil)], rows: [(200, 0b01, [1.5])])),
            ("an empty row", Self.payload(quantities: [(1, nil)], rows: [(200, 0b1, [1.5]), (60, 0, [])])),
            ("a mask bit beyond the list", Self.payload(quantities: [(1, nil)], rows: [(200, 0b11, [1.5, 2])])),
            ("two rows at one time", Self.payload(quantities: [(1, nil)], rows: [(200, 0b1, [1.5]), (0, 0b1, [2])])),
            ("a value missing", Self.payload(quantities: [(1, nil), (2, nil)], rows: [(200, 0b11, [1.5])])),
        ]
        for (what, payload) in bad { #expect(!Self.decodes(payload), "\(what) decoded") }
        #expect(!Self.decodes(good + [0]), "trailing byte decoded")
        #expect(!Self.decodes(Array(good.dropLast())), "truncated block decoded")
    }

    @Test func aBlockIsAFractionOfItsReadingEvents() {
        // A day of a PurpleAir sensor every 2 minutes, nine values a row, as the importer writes it.
        var g = SeededRandom(seed: 9)
        let readings = (0..<720).map { i in
            Reading(source: "purpleair", sensor: "131075", time: 1_698_000_000 + Int64(i) * 120, values: [
                Measurement("pm25_cf1_a", Double(Int.random(in: 0...3000, using: &g)) / 100),
                Measurement("pm25_cf1_b", Double(Int.random(in: 0...3000, using: &g)) / 100),
                Measurement("pm25_atm_a", Double(Int.random(in: 0...3000, using: &g)) / 100),
                Measurement("pm25_atm_b", Double(Int.random(in: 0...3000, using: &g)) / 100),
                Measurement("pm25_alt_a", Double(Int.random(in: 0...300, using: &g)) / 10),
                Measurement("pm25_alt_b", Double(Int.random(in: 0...300, using: &g)) / 10),
                Measurement("temperature_housing", Double(Int.random(in: 0...400, using: &g)) / 10),
                Measurement("humidity_housing", Double(Int.random(in: 10...90, using: &g))),
                Measurement("pressure", Double(Int.random(in: 98000...103000, using: &g)) / 100),
            ])
        }
        let blocks = ReadingBlock.blocks(source: "purpleair", sensor: "131075", readings: readings)
        let sorted = readings.map { r in Reading(source: r.source, sensor: r.sensor, time: r.time, values: r.values.sorted { $0.quantity < $1.quantity }) }
        #expect(blocks.count == 1 && blocks[0].readings == sorted)
        let blockBytes = EventBody.readingBlock(blocks[0]).encode().payload.count
        let eventBytes = readings.map { EventBody.reading($0).encode().payload.count }.reduce(0, +)
        #expect(Double(blockBytes) / 720 < 30, "\(Double(blockBytes) / 720) bytes a row")
        #expect(blockBytes * 5 < eventBytes, "block \(blockBytes) bytes, reading events \(eventBytes)")
    }
}
