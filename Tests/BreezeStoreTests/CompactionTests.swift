import Testing
import BreezeCore
import BreezeAirQuality
@testable import BreezeStore

/// Compaction (`EventLog+Compaction`, issue 28): a server's small reading events merged into `reading.compact`
/// events change no fact, on the server and on every replica the compaction reaches, and the counters they
/// replace are retired, not lost.
struct CompactionTests {
    /// Every event of `log`, in log order.
    static func events(_ log: EventLog) throws -> [Event] {
        var out: [Event] = []
        try log.forEach { out.append($0.event); return true }
        return out
    }

    static func ids(_ log: EventLog) throws -> Set<String> { Set(try events(log).map { "\($0.stream) \($0.id) \($0.hash)" }) }

    static let small = CompactionPolicy(smallRows: 64, targetEvents: 10, maxAgeMillis: .max, rowsPerEvent: 100)

    @Test func aCompactionChangesNoFactAndARebuildAgrees() throws {
        for seed in [1, 2, 3] as [UInt64] {
            let dir = TempDir()
            let log = try EventLog.create(at: dir.file("a.db"), options: testOptions())
            defer { log.close() }
            try RecentHoursTests.feed(log, seed: seed)
            let windows = RecentHoursTests.windows(seed: seed)
            let before = try log.projectionDigest(), hourly = try RecentHoursTests.hourly(log, windows)
            let countBefore = try log.count()
            let r = try log.compactReadings(policy: Self.small)
            #expect(r.streams == 3 && r.eventsRetired > 100 && r.eventsWritten >= 3, "\(r)")
            #expect(try log.count() == countBefore - r.eventsRetired + r.eventsWritten)
            try log.catchUpProjection()
            #expect(try log.projectionDigest() == before, "seed \(seed): the projection after compaction")
            let after = try RecentHoursTests.hourly(log, windows)
            #expect(after.count == hourly.count && zip(after, hourly).filter { $0.0 != $0.1 }.isEmpty, "seed \(seed): hour aggregates")
            _ = try log.rebuildProjection()
            #expect(try log.projectionDigest() == before, "seed \(seed): a rebuild from the compacted log")
            // Compacted events are gone, their counters retired; heads and vectors did not move back.
            let retired = try log.retiredRanges()
            #expect(retired.values.flatMap { $0.values.flatMap { $0 } }.reduce(0) { $0 + $1.count } == r.eventsRetired)
            // Nothing more is due until new events come.
            #expect(try log.compactReadings(policy: Self.small).streams == 0)
            let report = try EventLog.verify(at: dir.file("a.db"))
            #expect(report.isClean, "\(report.problems.map(\.message))")
            #expect(report.notes.contains { $0.message.contains("replaced by reading.compact or reading.rollup") })
        }
    }

    /// A replica that held the replaced events drops them when the compaction reaches it; one that lacked
    /// them is told they are retired and takes the events after them; all three end with the same events and
    /// the same projection. Late readings and corrections from another origin, before and after the
    /// compaction, win or lose as they did.
    @Test func everyReplicaEndsWithTheSameEventsAndFacts() throws {
        let dir = TempDir()
        let a = try EventLog.create(at: dir.file("a.db"), options: testOptions())
        let b = try EventLog.create(at: dir.file("b.db"), options: testOptions())
        let c = try EventLog.create(at: dir.file("c.db"), options: testOptions())
        let x = try EventLog.create(at: dir.file("x.db"), options: testOptions(wall: 1_700_000_000_000 + 60_000))
        defer { for l in [a, b, c, x] { l.close() } }
        try RecentHoursTests.feed(a, seed: 9)
        _ = try b.ingest(try Self.events(a))
        // Another origin corrects some of a's values, stamped later (wins), and its own reading of a time a
        // holds too.
        let t = RecentHoursTests.end - 20 * 3600
        _ = try x.appendFacts([RecentHoursTests.reading("a", t - t % 600, 1), RecentHoursTests.reading("b", t + 37, 2)])
        let fromX = try Self.events(x).filter { $0.id.origin == x.origin }
        _ = try a.ingest(fromX)
        _ = try b.ingest(fromX)
        let originals = try Self.events(a)
        let r = try a.compactReadings(policy: Self.small)
        #expect(r.eventsRetired > 0)
        // b gets what a wrote since (the compactions), in a's order.
        let bVectors = try b.versionVectors()
        let newer = try Self.events(a).filter { !(bVectors[$0.stream]?.contains($0.id) ?? false) }
        #expect(newer.allSatisfy { $0.type == "reading.compact" } && newer.count == r.eventsWritten)
        let rb = try b.ingest(newer)
        #expect(rb.inserted == newer.count && rb.gaps == 0)
        #expect(try Self.ids(b) == Self.ids(a), "b dropped the events the compaction replaced")
        // c had nothing: the remaining events in a's order, each stream's retired counters said before the
        // first event after them (what a session's `retired` message does).
        var groups: [[Event]] = [], retired: [[EventLog.RetiredRange]] = []
        var held: [StreamID: VersionVector] = [:]
        for e in try Self.events(a) {
            let h = held[e.stream]?[e.id.origin] ?? 0
            var ranges: [EventLog.RetiredRange] = []
            if e.id.counter > h + 1, let range = try a.retiredRange(stream: e.stream, origin: e.id.origin, containing: h + 1) {
                #expect(range.upperBound == e.id.counter - 1)
                ranges.append(EventLog.RetiredRange(stream: e.stream, origin: e.id.origin, range: (h + 1)...range.upperBound))
            }
            groups.append([e])
            retired.append(ranges)
            held[e.stream, default: VersionVector()].advance(to: e.id)
        }
        // Half of it as one batch, each range just before its event (a session's batch: events of an origin
        // before and after a range in one group), the rest an event at a time.
        let half = groups.count / 2
        let first = groups[..<half].flatMap { $0 }
        var firstRanges: [EventLog.RetiredRange] = []
        for (i, r) in retired[..<half].enumerated() {
            for x in r { firstRanges.append(EventLog.RetiredRange(stream: x.stream, origin: x.origin, range: x.range, before: i)) }
        }
        #expect(!firstRanges.isEmpty)
        groups = [first] + groups[half...]
        retired = [firstRanges] + retired[half...]
        let rc = try c.ingest(groups: groups, retired: retired)
        #expect(rc.reduce(0) { $0 + $1.gaps } == 0 && rc.reduce(0) { $0 + $1.inserted } == first.count + groups.count - 1)
        #expect(rc.reduce(UInt64(0)) { $0 + $1.retired } == UInt64(r.eventsRetired))
        #expect(try Self.ids(c) == Self.ids(a))
        #expect(try c.versionVectors() == a.versionVectors())
        // A replaced event offered again (a peer that did not know) is held, not a gap or a conflict.
        let again = try c.ingest(originals)
        #expect(again.duplicates == originals.count && again.conflicts == 0 && again.gaps == 0 && again.inserted == 0)
        // Late events after the compaction, on every replica.
        _ = try x.appendFacts([RecentHoursTests.reading("c", t + 300, 70)])
        let lateEvents = try Self.events(x).filter { e in e.id.origin == x.origin && !fromX.contains(e) }
        #expect(lateEvents.count == 1)
        for l in [a, b, c] { _ = try l.ingest(Array(lateEvents)) }
        for l in [a, b, c] { try l.catchUpProjection() }
        #expect(try a.projectionDigest() == b.projectionDigest())
        #expect(try a.projectionDigest() == c.projectionDigest())
        // The same facts as a replica that never compacted.
        let plain = try EventLog.create(at: dir.file("plain.db"), options: testOptions())
        defer { plain.close() }
        try RecentHoursTests.feed(plain, seed: 9)
        _ = try plain.ingest(fromX)
        _ = try plain.ingest(Array(lateEvents))
        try plain.catchUpProjection()
        let windows = RecentHoursTests.windows(seed: 9)
        let p = try RecentHoursTests.hourly(plain, windows), q = try RecentHoursTests.hourly(c, windows)
        #expect(p.count == q.count && zip(p, q).filter { $0.0 != $0.1 }.isEmpty)
        for (name, l) in [("a", a), ("b", b), ("c", c)] {
            let report = try EventLog.verify(at: dir.file(name + ".db"))
            #expect(report.isClean, "\(name): \(report.problems.map(\.message))")
        }
    }

    /// A range that does not continue what the receiver holds is ignored (the event after it is a gap), and a
    /// compaction retires only its own origin's events before it.
    @Test func retirementIsBoundedToWhatItMayMean() throws {
        let dir = TempDir()
        let a = try EventLog.create(at: dir.file("a.db"), options: testOptions())
        let b = try EventLog.create(at: dir.file("b.db"), options: testOptions())
        defer { a.close(); b.close() }
        try RecentHoursTests.feed(a, seed: 4)
        try a.compactReadings(policy: Self.small)
        let stream = StreamID.sensor(source: "purpleair", sensor: "a")
        let events = try Self.events(a).filter { $0.stream == stream }
        let firstKept = events.first { $0.id.counter > 1 }!
        // Says 5...(counter - 1) retired while b holds nothing: refused as a gap.
        let r = try b.ingest(groups: [[firstKept]], retired: [[EventLog.RetiredRange(stream: stream, origin: a.origin, range: 5...(firstKept.id.counter - 1))]])
        #expect(r[0].gaps == 1 && r[0].retired == 0 && r[0].inserted == 0)
        #expect(try b.versionVectors()[stream] == nil)
        // A compaction by another origin naming a's counters retires nothing of a's.
        let forged = ReadingCompaction(source: "purpleair", sensor: "a", retires: [1...3],
                                       rows: [ReadingCompaction.Row(time: 100, counter: 2, hlc: HLC(rawValue: 1), values: [Measurement("pm25", 1)])])
        let x = try EventLog.create(at: dir.file("x.db"), options: testOptions())
        defer { x.close() }
        _ = try x.ingest(try Self.events(a))
        let before = try x.count()
        let block = try x.append(.readingBlock(ReadingBlock(source: "purpleair", sensor: "a", rows: [.init(time: 50, values: [Measurement("pm25", 3)])])), to: stream)
        let e = try x.append(.readingCompaction(forged), to: stream)
        let r2 = try a.ingest([block, e])
        #expect(r2.inserted == 2)
        #expect(try a.count(stream: stream) == events.count + 1, "x's compaction replaced only x's own event")
        #expect(try x.count() == before + 1)
    }

    @Test func theCompactionCodecRoundTripsAndRefusesNonCanonicalForms() throws {
        var rng = SeededRandom(seed: 7)
        for _ in 0..<200 {
            var counters: [UInt64] = []
            var c: UInt64 = UInt64.random(in: 1...50, using: &rng)
            for _ in 0..<Int.random(in: 1...40, using: &rng) {
                counters.append(c)
                c += UInt64.random(in: 1...3, using: &rng)
            }
            var rows: [ReadingCompaction.Row] = []
            var hlc = UInt64.random(in: 1...(1 << 60), using: &rng)
            for counter in counters {
                hlc += UInt64.random(in: 0...(1 << 30), using: &rng)
                for k in 0..<Int.random(in: 1...3, using: &rng) {
                    rows.append(ReadingCompaction.Row(time: Int64.random(in: -1000...100_000, using: &rng) + Int64(k), counter: counter,
                                                      hlc: HLC(rawValue: hlc), values: [Measurement("pm25_cf1_a", Double(Int.random(in: 0...900, using: &rng)) / 10),
                                                                                         Measurement(Bool.random(using: &rng) ? "humidity" : "temperature", .pi)]))
                }
            }
            rows = Dictionary(grouping: rows) { "\($0.time) \($0.counter)" }.values.map { $0[0] }
            let body = EventBody.readingCompaction(ReadingCompaction(source: "purpleair", sensor: "9", retires: counters.map { $0...$0 }, rows: rows))
            let (type, version, payload) = body.encode()
            #expect(try EventBody.decode(type: type, version: version, payload: payload) == body)
        }
        func decodes(_ bytes: [UInt8]) -> Bool { (try? EventBody.decode(type: "reading.compact", version: 1, payload: bytes)) != nil }
        var w = ByteWriter()
        w.string("purpleair"); w.string("9")
        w.varint(2); w.varint(0); w.varint(1); w.varint(0); w.varint(0)         // ranges 1...2 then 3...3: adjacent
        w.varint(1); w.quantity("pm25")
        w.varint(1); w.zigzag(10); w.varint(1); w.varint(5); w.varint(0); w.varint(1); w.decimal(3)
        #expect(!decodes(w.bytes), "adjacent ranges are not canonical")
        var v = ByteWriter()
        v.string("purpleair"); v.string("9")
        v.varint(1); v.varint(0); v.varint(1)                                   // 1...2
        v.varint(1); v.quantity("pm25")
        v.varint(1); v.zigzag(10); v.varint(7); v.varint(5); v.varint(0); v.varint(1); v.decimal(3)   // counter 7: not retired
        #expect(!decodes(v.bytes), "a row of a counter it does not retire")
    }

    /// Projection version 9 writes a bucket's stamps as differences; a version-8 bucket (a database opened
    /// before its rebuild, read meanwhile) still reads, with the same values and stamps.
    @Test func aVersion8BucketStillReads() throws {
        var w = ByteWriter()
        w.varint(1); w.quantity("pm25_cf1_a")
        w.varint(2)
        for (hlc, counter) in [(UInt64(7) << 16, UInt64(3)), (UInt64(9) << 16 | 2, UInt64(4))] {
            w.u64(hlc); w.u64(0xABCD); w.varint(1); w.varint(counter)
        }
        w.varint(2)
        w.zigzag(36_000); w.varint(0); w.varint(1); w.varint(0); w.decimal(4.5)
        w.varint(120); w.varint(1); w.varint(1); w.varint(0); w.decimal(6)
        let old = try ReadingBucket(decoding: w.bytes)
        let origin = Origin(replica: ReplicaID(rawValue: 0xABCD), epoch: 1)
        #expect(old.entries.map(\.value) == [4.5, 6])
        #expect(old.entries.map(\.stamp) == [Stamp(hlc: HLC(rawValue: 7 << 16), id: EventID(origin: origin, counter: 3)),
                                             Stamp(hlc: HLC(rawValue: 9 << 16 | 2), id: EventID(origin: origin, counter: 4))])
        let now = try ReadingBucket(decoding: old.encoded)
        #expect(now.encoded.prefix(2) == [0x80, 0x00] && now.encoded.count < w.bytes.count)
        #expect(now.entries.map(\.stamp) == old.entries.map(\.stamp) && now.entries.map(\.value) == old.entries.map(\.value))
    }

    /// In one batch, a range is taken just before the event it precedes, after the batch's earlier events of its
    /// origin; taken before them, it would not continue what is held, and the event after it would be a gap.
    @Test func aRangeIsTakenJustBeforeItsEvent() throws {
        let dir = TempDir()
        let x = try EventLog.create(at: dir.file("x.db"), options: testOptions())
        defer { x.close() }
        let stream = StreamID.sensor(source: "purpleair", sensor: "7")
        var events: [Event] = []
        for k in 1...5 {
            events.append(try x.append(.readingBlock(ReadingBlock(source: "purpleair", sensor: "7", rows: [.init(time: Int64(k) * 120, values: [Measurement("pm25", Double(k))])])), to: stream))
        }
        let rows = events[2...3].map { e in ReadingCompaction.Row(time: Int64(e.id.counter) * 120, counter: e.id.counter, hlc: e.hlc, values: [Measurement("pm25", Double(e.id.counter))]) }
        let compaction = try x.append(.readingCompaction(ReadingCompaction(source: "purpleair", sensor: "7", retires: [3...4], rows: rows)), to: stream)
        #expect(try x.count(stream: stream) == 4, "x's own compaction replaced its counters 3 and 4")
        let batch = [events[0], events[1], events[4], compaction]
        for (before, gaps) in [(2, 0), (0, 2)] {
            let y = try EventLog.create(at: dir.file("y\(before).db"), options: testOptions())
            defer { y.close() }
            let r = try y.ingest(groups: [batch], retired: [[EventLog.RetiredRange(stream: stream, origin: x.origin, range: 3...4, before: before)]])
            #expect(r[0].gaps == gaps && r[0].inserted == 4 - gaps, "range before event \(before): \(r[0])")
        }
    }

    /// Salvage of a compacted and rolled-up log keeps every event: the holes its compactions and rollups retire
    /// are not gaps.
    @Test func aSalvageKeepsACompactedAndRolledUpLog() throws {
        let dir = TempDir()
        let a = try EventLog.create(at: dir.file("a.db"), options: testOptions())
        try RecentHoursTests.feed(a, seed: 5)
        try a.compactReadings(policy: Self.small)
        let rolled = try a.rollUpReadings(rawDays: 1, nowSeconds: RecentHoursTests.end + 86_400 - 20 * 3600)
        #expect(rolled.eventsRetired > 0 && rolled.hours > 0, "\(rolled)")
        try a.catchUpProjection()
        let events = try Self.events(a).count, digest = try a.projectionDigest()
        a.close()
        let report = try EventLog.salvage(damaged: dir.file("a.db"), into: dir.file("s.db"), options: testOptions())
        #expect(report.salvaged == events && report.beyondGap == 0, "\(report), \(events) events")
        let s = try EventLog.open(at: dir.file("s.db"), options: testOptions())
        defer { s.close() }
        try s.catchUpProjection()
        #expect(try s.projectionDigest() == digest)
    }

    /// A server restarts in a new epoch: its rollups replace what every epoch wrote, a replica that held the raw
    /// events drops them and its vectors cover the old epoch's retired counters, and one that held only the
    /// beginning of a compacted run keeps nothing stale (the rollup names what the compaction had replaced).
    @Test func rollupsSpanEpochsAndWhatTheirCompactionsReplaced() throws {
        let dir = TempDir()
        let stream = StreamID.sensor(source: "purpleair", sensor: "7")
        func reading(_ k: Int) -> (StreamID, EventBody) {
            (.public, .reading(Reading(source: "purpleair", sensor: "7", time: 1_700_000_000 + Int64(k) * 120, values: [Measurement("pm25_cf1_a", Double(k % 50))])))
        }
        var a = try EventLog.create(at: dir.file("a.db"), options: testOptions(boot: "b1"))
        for k in 0..<12 { _ = try a.appendFacts([reading(k)]) }
        let early = try Self.events(a).filter { $0.stream == stream }
        let b = try EventLog.create(at: dir.file("b.db"), options: testOptions())
        defer { b.close() }
        _ = try b.ingest(Array(early.prefix(5)))          // b holds only the first five raw events
        try a.compactReadings(policy: Self.small)
        let epoch1 = a.origin
        a.close()
        a = try EventLog.open(at: dir.file("a.db"), options: testOptions(boot: "b2"))
        defer { a.close() }
        #expect(a.origin != epoch1)
        for k in 12..<20 { _ = try a.appendFacts([reading(k)]) }
        try a.catchUpProjection()
        let digest = try a.projectionDigest()
        let r = try a.rollUpReadings(rawDays: 1, nowSeconds: 1_700_000_000 + 20 * 120 + 2 * 86_400)
        #expect(r.streams == 1 && r.eventsWritten == 1 && r.eventsRetired == 1 + 8, "\(r)")   // epoch 1's compaction, epoch 2's eight
        try a.catchUpProjection()
        #expect(try a.projectionDigest() != digest)              // the hours are now the rollup's (marks, not buckets)
        let left = try Self.events(a).filter { $0.stream == stream }
        #expect(left.count == 1 && left[0].type == "reading.rollup")
        // b gets what it lacks as a peer sends it: the rollup, after its retired range in the rollup's epoch.
        let rollup = left[0]
        let rb = try b.ingest(groups: [[rollup]], retired: [[EventLog.RetiredRange(stream: stream, origin: rollup.id.origin, range: 1...(rollup.id.counter - 1))]])
        #expect(rb[0].inserted == 1 && rb[0].gaps == 0)
        #expect(try Self.events(b).filter { $0.stream == stream }.map(\.id) == [rollup.id], "b's raw events of epoch 1 went")
        #expect(try b.versionVectors()[stream] == a.versionVectors()[stream], "the old epoch's retired counters are covered")
        try b.catchUpProjection()
        _ = try a.rebuildProjection()
        #expect(try b.projectionDigest() == a.projectionDigest())
        for name in ["a", "b"] {
            let report = try EventLog.verify(at: dir.file(name + ".db"))
            #expect(report.isClean, "\(name): \(report.problems.map(\.message))")
        }
    }
}
