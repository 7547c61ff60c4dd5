import Testing
import BreezeCore
@testable import BreezeStore
import BreezeTestSupport
@preconcurrency import Glibc
@testable import BreezeCLI

/// `breeze diff`: identical databases, missing events, a damaged projection, and the determinism check.
struct DiffCLITests {
    /// Two replicas with the same settings and sensors, their projections caught up.
    static func pair() throws -> (Harness, String, String) {
        let h = Harness()
        let a = h.db, b = h.dir + "/second.db"
        #expect(h.run(["init"]).code == 0 && h.run(["--db", b, "init"]).code == 0)
        #expect(h.run(["import", "sensors-csv", ImportCLITests.fixtures + "/purpleair/ajl_sensors.csv"]).code == 0)
        #expect(h.run(["favourite", "add", "149970"]).code == 0)
        #expect(h.run(["--db", b, "unit", "set", "fahrenheit"]).code == 0)
        try ExplainCLITests.sync(a, b)
        try ExplainCLITests.sync(b, a)
        for db in [a, b] { #expect(h.run(["--db", db, "screen", "sources"]).code == 0) }
        return (h, a, b)
    }

    @Test func identicalReplicasExitZeroAndDatabasesAreLeftUntouched() throws {
        let (h, a, b) = try Self.pair()
        let before = [a, a + "-wal", b, b + "-wal"].map(readFileBytes)
        let r = h.run(["diff", a, b])
        #expect(r.code == 0, "\(r.out) \(r.err)")
        #expect(r.out.contains("stream public: same events, same state") && r.out.contains("stream user:me: same events, same state"))
        #expect(r.out.contains { $0.hasPrefix("projection A: stored projection equals a fresh replay of its log (digest ") })
        #expect(r.out.contains { $0.hasPrefix("projection B: stored projection equals a fresh replay of its log (digest ") })
        // The vectors side by side: each origin with both counters.
        let replicaA = try EventLog.open(at: a).origin.description
        #expect(r.out.contains { $0.hasPrefix("  " + pad(replicaA, 24) + pad("11", 12) + "11") }, "\(r.out)")
        #expect([a, a + "-wal", b, b + "-wal"].map(readFileBytes) == before)
        let json = h.run(["diff", a, b, "--json"])
        #expect(json.code == 0 && json.out.joined().contains(#""same":true"#))
    }

    @Test func missingEventsAreCountedAndListedPerSide() throws {
        let (h, a, b) = try Self.pair()
        #expect(h.run(["favourite", "add", "87173"]).code == 0)
        #expect(h.run(["favourite", "add", "151502"]).code == 0)
        #expect(h.run(["--db", b, "alert", "set", "--category", "moderate"]).code == 0)
        let adds = ExplainCLITests.ids(h, a, type: "favourite.add")
        let r = h.run(["diff", a, b, "--limit", "1"])
        #expect(r.code == 1 && r.err == ["breeze diff: \(a) and \(b) differ"], "\(r.err)")
        #expect(r.out.contains("stream user:me: DIFFERENT"))
        #expect(r.out.contains("  only in A: 2 event(s) B lacks (first 1)"))
        #expect(r.out.contains("    \(adds[1])  favourite.add"))
        #expect(r.out.contains("  only in B: 1 event(s) A lacks"))
        #expect(r.out.contains("stream public: same events, same state"))
        let one = h.run(["diff", a, b, "--stream", "public"])
        #expect(one.code == 0 && !one.out.contains { $0.contains("user:me") })
        let json = try JSONReader.parse(h.run(["diff", a, b, "--json", "--stream", "user:me"]).out.joined())
        let s = ExplainCLITests.array(json, "streams")[0]
        #expect(ExplainCLITests.object(ExplainCLITests.object(s, "onlyA"), "count") == .int(2))
        #expect(ExplainCLITests.object(ExplainCLITests.object(s, "onlyB"), "count") == .int(1))
        #expect(h.run(["diff", a]).code == 2)
        #expect(h.run(["diff", a, h.dir + "/none.db"]).code == 1)
    }

    @Test func aDamagedProjectionIsReportedAsSuch() throws {
        let (h, a, b) = try Self.pair()
        let log = try EventLog.open(at: b)
        try log.db.execute("UPDATE proj_sensors SET name = 'Tampered' WHERE sensor = '149970'")
        log.close()
        let r = h.run(["diff", a, b])
        #expect(r.code == 1)
        #expect(r.out.contains("stream public: same events, same state"))
        #expect(r.out.contains { $0.hasPrefix("projection A: stored projection equals a fresh replay") })
        #expect(r.out.contains { $0.hasPrefix("projection B: DETERMINISM BUG or damaged projection: the stored projection (digest ") })
        #expect(r.out.contains("projections: A and B hold the same facts but their stored projections differ"))
    }

    /// A large public stream (read by one scan of the log) arriving in opposite orders on the two sides.
    @Test func aLargeStreamInAnotherOrderIsTheSame() throws {
        let h = Harness()
        let a = h.db, b = h.dir + "/second.db"
        #expect(h.run(["init"]).code == 0 && h.run(["--db", b, "init"]).code == 0)
        let origins = [Origin(replica: ReplicaID(rawValue: 0xA1), epoch: 1), Origin(replica: ReplicaID(rawValue: 0xB2), epoch: 1)]
        func reading(_ o: Origin, _ k: Int, _ i: Int) -> Event {
            let time: Int64 = 1_698_000_000 + Int64(i % 5000) * 600
            let value: Double = Double(i % 97) + Double(k) / 10
            let body = EventBody.reading(Reading(source: "purpleair", sensor: "149970", time: time, values: [Measurement("pm25_atm_a", value)]))
            return Event(stream: .public, id: EventID(origin: o, counter: UInt64(i)),
                         hlc: HLC(physicalMillis: UInt64(i), logical: UInt16(k)), body: body)
        }
        var streams: [[Event]] = []
        for (k, o) in origins.enumerated() { streams.append((1...11_000).map { reading(o, k, $0) }) }
        for (db, order) in [(a, [0, 1]), (b, [1, 0])] {
            let log = try EventLog.open(at: db)
            for i in order { _ = try log.ingest(streams[i]) }
            log.close()
        }
        let r = h.run(["diff", a, b])
        #expect(r.code == 0, "\(r.out)")
        #expect(r.out.contains("stream public: same events, same state"))
        #expect(r.out.contains("  " + pad(origins[0].description, 24) + pad("11000", 12) + "11000"))
        // One more reading on a: counted, listed, and the sides differ.
        let log = try EventLog.open(at: a)
        try log.append(.reading(Reading(source: "purpleair", sensor: "149970", time: 1_700_000_000,
                                        values: [Measurement("pm25_atm_a", 1)])), to: .public)
        log.close()
        let after = h.run(["diff", a, b, "--stream", "public"])
        #expect(after.code == 1 && after.out.contains("  only in A: 1 event(s) B lacks"), "\(after.out)")
    }

    @Test func aClonedDatabaseThatReusedIdsIsReportedAsConflicts() throws {
        let h = Harness()
        #expect(h.run(["init"]).code == 0)
        #expect(h.run(["favourite", "add", "149970"]).code == 0)
        let clone = h.dir + "/clone.db"
        for suffix in ["", "-wal"] where access(h.db + suffix, F_OK) == 0 { writeFileBytes(clone + suffix, readFileBytes(h.db + suffix)) }
        // Both copies are the same replica and epoch: their next events get the same id, different content.
        #expect(h.run(["unit", "set", "fahrenheit"]).code == 0)
        #expect(h.run(["--db", clone, "unit", "set", "celsius"]).code == 0)
        let id = ExplainCLITests.ids(h, h.db, type: "unit.set")[0]
        #expect(ExplainCLITests.ids(h, clone, type: "unit.set") == [id])
        let r = h.run(["diff", h.db, clone])
        #expect(r.code == 1)
        #expect(r.out.contains("stream user:me: DIFFERENT") && !r.out.contains { $0.hasPrefix("  only in") })
        #expect(r.out.contains("  conflicts: 1 id(s) held by both with different content") && r.out.contains("    \(id)"), "\(r.out)")
    }

    /// An order-dependent reducer (the last unit applied wins, ignoring clocks): the bug `diff` hunts.
    struct LastAppliedUnit: Equatable {
        var unit: TemperatureUnit?
        var count = 0
        mutating func apply(_ e: Event) {
            count += 1
            if case .unitSet(let u)? = try? e.body() { unit = u }
        }
    }

    @Test func theFirstCommonPointWhereTwoOrdersDisagreeIsFound() throws {
        let s = StreamID.user("me")
        let r1 = Origin(replica: ReplicaID(rawValue: 1), epoch: 1), r2 = Origin(replica: ReplicaID(rawValue: 2), epoch: 1)
        func ev(_ o: Origin, _ c: UInt64, _ ms: UInt64, _ body: EventBody) -> Event {
            Event(stream: s, id: EventID(origin: o, counter: c), hlc: HLC(physicalMillis: ms, logical: 0), body: body)
        }
        let f1 = ev(r1, 1, 10, .favouriteAdd(sensor: "x")), u1 = ev(r1, 2, 20, .unitSet(.fahrenheit))
        let u2 = ev(r2, 1, 30, .unitSet(.celsius)), f2 = ev(r2, 2, 40, .favouriteAdd(sensor: "y"))
        // A received f1 u1 u2 f2; B received f1 u2 u1 f2 (seq numbers are each log's own).
        let a = [f1, u1, u2, f2].enumerated().map { (seq: Int64($0.offset + 1), event: $0.element) }
        let b = [f1, u2, u1, f2].enumerated().map { (seq: Int64($0.offset + 1), event: $0.element) }
        let d = ReplayDivergence.first(a, b, initial: LastAppliedUnit()) { $0.apply($1) }
        // After 1 event both agree; after 2 they have applied different sets (no comparison); after 3 the same
        // set, and the buggy reducer disagrees: that is the first divergence.
        #expect(d?.lastAgreed == 1 && d?.applied == 3)
        #expect(d?.sinceA.map(\.event.id) == [u1.id, u2.id] && d?.sinceB.map(\.event.id) == [u2.id, u1.id])
        #expect(d?.sinceA.map(\.seq) == [2, 3])
        // The real state code agrees at every common point.
        #expect(ReplayDivergence.first(a, b, initial: UserState()) { $0.apply($1) } == nil)
        // Same order: never diverges, even with the buggy reducer.
        #expect(ReplayDivergence.first(a, a, initial: LastAppliedUnit()) { $0.apply($1) } == nil)
    }
}
