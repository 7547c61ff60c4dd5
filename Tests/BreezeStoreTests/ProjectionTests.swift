import Testing
import BreezeCore
import BreezeAirQuality
@testable import BreezeStore

/// The facts projection: incremental catch-up from checkpoints equals a full rebuild, whatever the order in
/// which concurrent replicas' events arrived.
struct ProjectionTests {
    /// Events of two "importing" replicas that disagree on some values (a corrected re-import), plus facts.
    static func events(seed: UInt64) -> [Event] {
        var rng = SeededRandom(seed: seed)
        var out: [Event] = []
        for (r, origin) in [Origin(replica: ReplicaID(rawValue: 0xA1), epoch: 1), Origin(replica: ReplicaID(rawValue: 0xB2), epoch: 1)].enumerated() {
            var counter: UInt64 = 0
            func next(_ body: EventBody, _ hlc: UInt64) -> Event {
                counter += 1
                return Event(stream: .public, id: EventID(origin: origin, counter: counter), hlc: HLC(physicalMillis: hlc, logical: 0), body: body)
            }
            out.append(next(.sensorRegistered(SensorRegistration(sensor: "1", name: r == 0 ? "Troy" : "Troy #1", source: "purpleair",
                                                                 kind: "purpleair", latitude: 42.7, longitude: -73.7, timeZone: "America/New_York")), 10))
            for i in 0..<60 {
                let t = Int64(1_698_000_000 + (i % 40) * 600)           // overlapping times between the two
                out.append(next(.reading(Reading(source: "purpleair", sensor: "1", time: t,
                                                 values: [Measurement("pm25_cf1_a", Double(Int.random(in: 0...50, using: &rng))),
                                                          Measurement("humidity", 40)])), UInt64(100 + i)))
            }
            out.append(next(.dailyTemperature(DailyTemperature(station: "S", date: "2020-07-04", maxC: Double(30 + r), minC: 20,
                                                               latitude: nil, longitude: nil)), 500))
        }
        return out
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func incrementalCatchUpEqualsARebuildUnderRandomArrivalOrders(seed: UInt64) throws {
        let dir = TempDir()
        let all = Self.events(seed: seed)
        var digests: [String] = []
        var rng = SeededRandom(seed: seed &* 77)
        for replica in 0..<3 {
            let log = try EventLog.create(at: dir.file("r\(replica).db"), options: testOptions())
            // Each origin's events must arrive in counter order; interleave the two origins at random.
            var queues = Dictionary(grouping: all, by: \.id.origin).values.map { Array($0) }
            while queues.contains(where: { !$0.isEmpty }) {
                let i = queues.indices.filter { !queues[$0].isEmpty }.randomElement(using: &rng)!
                let n = min(queues[i].count, Int.random(in: 1...7, using: &rng))
                _ = try log.ingest(Array(queues[i].prefix(n)))
                queues[i].removeFirst(n)
                if Bool.random(using: &rng) { try log.catchUpProjection() }   // checkpoints at random points
            }
            try log.catchUpProjection()
            let incremental = try log.projectionDigest()
            try log.rebuildProjection()
            #expect(try log.projectionDigest() == incremental, "replica \(replica): rebuild equals incremental")
            digests.append(incremental)
            if replica == 0 {
                let rows = try log.projectedReadings(source: "purpleair", sensor: "1", from: 0, to: .max)
                #expect(rows.count == 40)                                   // 40 distinct times
                #expect(try log.projectedSensors().map(\.name) == ["Troy #1"])   // the later registration wins
                #expect(try log.projectedFacts(kind: "temperature", keyPrefix: "S|").count == 1)
            }
            log.close()
        }
        #expect(Set(digests).count == 1, "every replica has the same projection")
    }

    @Test func aNewProjectionVersionRebuildsWhileTheOldTablesStayReadable() throws {
        let dir = TempDir()
        let log = try EventLog.create(at: dir.file("a.db"), options: testOptions())
        _ = try log.ingest(Self.events(seed: 9))
        try log.catchUpProjection()
        let before = try log.projectionDigest()
        try log.db.execute("UPDATE meta SET value = 0 WHERE key = 'proj_version'")
        let reader = try EventLog.open(at: dir.file("a.db"), options: testOptions())
        try reader.db.execute("BEGIN")                               // a reader holding a snapshot of the old tables
        let seen = try reader.projectedSensors().count
        #expect(try log.catchUpProjection() == Self.events(seed: 9).count)   // rebuilt from the whole log
        #expect(try reader.projectedSensors().count == seen)          // the reader was not blocked or disturbed
        try reader.db.execute("COMMIT")
        #expect(try log.projectionDigest() == before)
        #expect(try log.db.scalarInt("SELECT value FROM meta WHERE key = 'proj_version'") == EventLog.projectionVersion)
    }
}

struct ProjectionRepairTests {
    @Test func aDamagedBucketIsRebuiltFromTheLogInsteadOfFailingForGood() throws {
        let dir = TempDir()
        let log = try EventLog.create(at: dir.file("a.db"), options: testOptions())
        let events = ProjectionTests.events(seed: 5)
        _ = try log.ingest(Array(events.prefix(40)))
        try log.catchUpProjection()
        try log.db.execute("UPDATE proj_readings SET data = x'0102'")          // every bucket damaged
        // A reader reports it clearly and marks the projection for a rebuild ...
        #expect(throws: StoreError.self) { try log.projectedReadings(source: "purpleair", sensor: "1", from: 0, to: .max) }
        #expect(try log.db.scalarInt("SELECT value FROM meta WHERE key = 'proj_version'") == 0)
        try log.catchUpProjection()
        #expect(try log.projectedReadings(source: "purpleair", sensor: "1", from: 0, to: .max).count > 0)
        // ... and catch-up meeting a damaged bucket rebuilds rather than throwing.
        try log.db.execute("UPDATE proj_readings SET data = x'0102'")
        _ = try log.ingest(Array(events.dropFirst(40)))
        try log.catchUpProjection()
        let repaired = try log.projectionDigest()
        try log.rebuildProjection()
        #expect(try log.projectionDigest() == repaired)
    }

    @Test func shadowTablesOfAKilledRebuildAreDroppedByTheNextSwap() throws {
        let dir = TempDir()
        let log = try EventLog.create(at: dir.file("a.db"), options: testOptions())
        _ = try log.ingest(ProjectionTests.events(seed: 6))
        try log.catchUpProjection()
        try log.db.execute(Schema.projectionDDL(suffix: "_next_killed"))   // what a rebuild killed midway leaves
        try log.rebuildProjection()
        #expect(try log.db.scalarInt("SELECT count(*) FROM sqlite_master WHERE name LIKE 'proj_%_next_%'") == 0)
    }
}

struct ProjectionRebuildRaceTests {
    @Test func twoRebuildsStartedTogetherLeaveACompleteProjection() throws {
        let dir = TempDir()
        let a = try EventLog.create(at: dir.file("a.db"), options: testOptions())
        _ = try a.ingest(ProjectionTests.events(seed: 4))
        try a.catchUpProjection()
        let complete = try a.projectionDigest()
        try a.db.execute("UPDATE meta SET value = 0 WHERE key = 'proj_version'")
        let b = try EventLog.open(at: dir.file("a.db"), options: testOptions())
        // b starts its rebuild (stale), a rebuilds and swaps meanwhile, then b finishes: b must not clobber a.
        var bStarted = false
        _ = try b.rebuildProjection { _ in
            if !bStarted {
                bStarted = true
                _ = try? a.catchUpProjection()
            }
        }
        #expect(try a.projectionDigest() == complete)
        #expect(try b.projectionDigest() == complete)
        let leftovers = try a.db.scalarInt("SELECT count(*) FROM sqlite_master WHERE name LIKE 'proj_%_next_%'")
        #expect(leftovers == 0)
    }
}

struct ReadingBucketTests {
    private func st(_ h: UInt64, _ c: UInt64, replica: UInt64 = 1) -> Stamp {
        Stamp(hlc: HLC(rawValue: h), id: EventID(origin: Origin(replica: ReplicaID(rawValue: replica), epoch: 1), counter: c))
    }
    private func g(_ t: Int64, _ s: Stamp, _ values: [(String, Double)]) -> ReadingBucket.Group {
        ReadingBucket.Group(time: t, stamp: s, values: values.map { (quantity: $0.0, value: $0.1) })
    }

    @Test func bucketsMergePerTimeAndQuantityByStampInAnyOrder() throws {
        let a = ReadingBucket(merging: [g(7200, st(5, 1), [("pm25", 1), ("humidity", 40)])])
        let b = ReadingBucket(merging: [g(7200, st(6, 2), [("pm25", 2)]), g(7320, st(6, 3), [("pm25", 3)])])
        let c = ReadingBucket(merging: [g(7200, st(4, 3), [("pm25", 9), ("o3", 30)]), g(7320, st(6, 3, replica: 2), [("pm25", 8)])])
        let abc = a.merged(with: b).merged(with: c), cba = c.merged(with: b).merged(with: a), bac = b.merged(with: a.merged(with: c))
        #expect(abc.encoded == cba.encoded)
        #expect(abc.encoded == bac.encoded)
        #expect(abc.merged(with: abc).encoded == abc.encoded)
        #expect(try ReadingBucket(decoding: abc.encoded).encoded == abc.encoded)
        #expect(abc.entries.map { "\($0.time) \($0.quantity) \($0.value)" }
                == ["7200 humidity 40.0", "7200 o3 30.0", "7200 pm25 2.0", "7320 pm25 8.0"])
        // A later event that rewrites one quantity of an earlier one takes only that quantity.
        let d = abc.merged(with: ReadingBucket(merging: [g(7200, st(9, 1, replica: 3), [("o3", 31)])]))
        #expect(d.groups.count == 4)
        #expect(d.entries.first { $0.quantity == "o3" }?.value == 31)
        #expect(d.encoded == ReadingBucket(merging: [g(7200, st(9, 1, replica: 3), [("o3", 31)])]).merged(with: abc).encoded)
        var out: [(time: Int64, values: [String: Double])] = []
        try ReadingBucket.readValues(abc.encoded, from: 0, to: .max, into: &out)
        #expect(out.map(\.time) == [7200, 7320])
        #expect(out[0].values == ["pm25": 2, "humidity": 40, "o3": 30])
        #expect(out[1].values == ["pm25": 8])        // equal HLC and counter: the greater replica wins the tie
        out = []
        try ReadingBucket.readValues(abc.encoded, from: 7201, to: 8000, into: &out)
        #expect(out.map(\.time) == [7320])
        #expect(try ReadingBucket.latestTime(abc.encoded, atOrBefore: 7300) == 7200)
        #expect(try ReadingBucket.latestTime(abc.encoded, atOrBefore: 7199) == nil)
    }

    /// Random buckets: whatever the order the groups are merged in, the bytes are the same, the winning value of
    /// each (time, quantity) is the one of the greatest stamp that wrote it (the last of a quantity repeated in
    /// one event), decoding gives back the same bytes, and the aggregate summed while encoding equals the one
    /// summed from the rows and the one summed from the groups.
    @Test func randomBucketsEncodeCanonicallyAndAggregateAlike() throws {
        var rng = SeededRandom(seed: 6060)
        let names = ["pm25_cf1_a", "pm25_cf1_b", "humidity_housing", "temperature_housing", "pm25", "temperature", "humidity",
                     "pressure", "a custom one"]
        for _ in 0..<300 {
            let hour: Int64 = 1_698_000_000 / 3600
            var raw: [ReadingBucket.Group] = []
            for i in 0..<Int.random(in: 1...40, using: &rng) {      // distinct stamps: one event each
                let values = (0..<Int.random(in: 1...5, using: &rng)).map { _ in
                    (quantity: names.randomElement(using: &rng)!, value: Double(Int.random(in: -50...600, using: &rng)) / 4)
                }
                raw.append(ReadingBucket.Group(time: hour * 3600 + Int64(Int.random(in: 0...12, using: &rng)) * 300,
                                               stamp: st(UInt64.random(in: 1...6, using: &rng), UInt64(i + 1),
                                                         replica: UInt64.random(in: 1...2, using: &rng)),
                                               values: values))
            }
            // The reference: per (time, quantity), the value of the greatest stamp (a stamp's later value of a
            // quantity replacing its earlier one).
            var expected: [String: (Stamp, Double)] = [:]
            for g in raw {
                var own: [String: Double] = [:]
                for v in g.values { own[v.quantity] = v.value }
                for (q, v) in own {
                    let k = "\(g.time) \(q)"
                    if let (s, _) = expected[k], s > g.stamp { continue }
                    expected[k] = (g.stamp, v)
                }
            }
            let bucket = ReadingBucket(merging: raw)
            let shuffled = ReadingBucket(merging: raw.shuffled(using: &rng))
            #expect(bucket.encoded == shuffled.encoded)
            #expect(try ReadingBucket(decoding: bucket.encoded).encoded == bucket.encoded)
            #expect(Dictionary(uniqueKeysWithValues: bucket.entries.map { ("\($0.time) \($0.quantity)", $0.value) })
                    == expected.mapValues { $0.1 })
            let (bytes, aggregate) = bucket.encodedWithAggregate(hour: hour * 3600)
            #expect(bytes == bucket.encoded)
            #expect(aggregate == bucket.aggregate(hour: hour * 3600))
            #expect(aggregate == HourAggregate(hour: hour * 3600, readings: bucket.rows))
        }
    }

    @Test func hoursUseFloorDivisionAcrossZero() {
        #expect(ReadingBucket.hour(0) == 0)
        #expect(ReadingBucket.hour(3599) == 0)
        #expect(ReadingBucket.hour(3600) == 1)
        #expect(ReadingBucket.hour(-1) == -1)
        #expect(ReadingBucket.hour(-3600) == -1)
        #expect(ReadingBucket.hour(-3601) == -2)
        #expect(ReadingBucket.hour(.min) == Int64.min / 3600 - 1)      // .min is not a multiple of 3600
        #expect(ReadingBucket.hour(.max) == Int64.max / 3600)
    }

    @Test func aQuantityGivenTwiceInOneEventKeepsItsLastValue() throws {
        let b = ReadingBucket(merging: [g(7200, st(5, 1), [("pm25", 1), ("humidity", 40), ("pm25", 3)])])
        #expect(b.entries.map { "\($0.quantity) \($0.value)" } == ["humidity 40.0", "pm25 3.0"])
        #expect(try ReadingBucket(decoding: b.encoded).encoded == b.encoded)
    }

    @Test func aDamagedBucketFailsToDecodeInsteadOfLosingValues() {
        let good = ReadingBucket(merging: [g(7200, st(5, 1), [("pm25", 1)])]).encoded
        #expect(throws: DecodingError.self) { try ReadingBucket(decoding: Array(good.dropLast())) }
        var badIndex = good
        badIndex[good.count - 2] = 7                 // the quantity index of the only value (before its 1-byte decimal)
        #expect(throws: DecodingError.self) { try ReadingBucket(decoding: badIndex) }
        var longForm = Array(good.dropLast())        // 1.0 written in full (tag 7, then 8 bytes): not canonical
        longForm.append(7)
        longForm += withUnsafeBytes(of: (1.0).bitPattern.littleEndian) { Array($0) }
        #expect(throws: DecodingError.self) { try ReadingBucket(decoding: longForm) }
    }
}
