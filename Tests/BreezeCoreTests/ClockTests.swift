import Testing
@testable import BreezeCore

struct ClockTests {
    @Test func localTimestampsStrictlyIncreaseEvenWhenTheWallClockGoesBack() {
        var c = HybridClock()
        var last = HLC.zero
        for wall: UInt64 in [1000, 1000, 1000, 999, 500, 1001, 1001, 2000, 10] {
            let t = c.tick(wallMillis: wall)
            #expect(t > last)
            last = t
        }
        #expect(c.tick(wallMillis: 5000).physicalMillis == 5000)
    }

    @Test func remoteTimestampsWithinTheBoundAdvanceTheClock() {
        var c = HybridClock(maxSkewMillis: 60_000)
        let skewed = c.observe(HLC(physicalMillis: 30_000, logical: 3), wallMillis: 1000)
        #expect(!skewed)
        let t = c.tick(wallMillis: 1000)
        #expect(t > HLC(physicalMillis: 30_000, logical: 3))
    }

    @Test func farFutureTimestampsAreFlaggedAndDoNotDragTheClockPastTheBound() {
        var c = HybridClock(maxSkewMillis: 60_000)
        let skewed = c.observe(HLC(physicalMillis: 48 * 3_600_000, logical: 0), wallMillis: 1000)
        #expect(skewed)
        let t = c.tick(wallMillis: 1000)
        #expect(t.physicalMillis <= 1000 + 60_000)
        #expect(t > HLC(physicalMillis: 1000 + 60_000, logical: 0) || t.physicalMillis == 61_000)
    }

    /// An event stamped 2^64 - 1 (a hostile peer's) used to make the next local write after it wrap to
    /// timestamp 0, the oldest of all, so the user's later write lost every merge for good.
    @Test func theClockSaturatesAtTheTopInsteadOfWrappingToZero() {
        var c = HybridClock()
        let top = HLC(rawValue: .max)
        let next = c.tick(wallMillis: 1_750_000_000_000, after: top)
        #expect(next == top, "the write after the top is stamped the top, not 0")
        #expect(c.tick(wallMillis: 1_750_000_000_001) == top && c.last == top)
        var below = HybridClock(last: HLC(rawValue: .max - 1))
        #expect(below.tick(wallMillis: 0) == top)
    }

    @Test func versionVectorsCompareAndMergePointwise() {
        let a = Origin(replica: ReplicaID(rawValue: 1), epoch: 1), b = Origin(replica: ReplicaID(rawValue: 2), epoch: 1)
        let x = VersionVector([a: 3, b: 1]), y = VersionVector([a: 2, b: 5])
        #expect(x.compare(y) == .concurrent)
        let m = x.merged(with: y)
        #expect(m[a] == 3 && m[b] == 5)
        #expect(x.compare(m) == .before && m.compare(y) == .after && m.compare(m) == .same)
        #expect(x.missing(from: y) == 4 && y.missing(from: x) == 1)
        #expect(x.contains(EventID(origin: a, counter: 3)) && !x.contains(EventID(origin: a, counter: 4)))
        #expect(VersionVector([a: 0]) == VersionVector())
    }

    @Test func idsParseFromTheirTextForm() {
        let id = EventID(origin: Origin(replica: ReplicaID(rawValue: 0xabc), epoch: 2), counter: 7)
        #expect(id.description == "0000000000000abc.2:7")
        #expect(EventID(id.description) == id)
        #expect(EventID("zz.1:1") == nil && EventID("0000000000000abc.2:0") == nil)
        #expect(ISOTime.format(millis: 0) == "1970-01-01T00:00:00.000Z")
        #expect(ISOTime.format(millis: 1_700_000_000_123) == "2023-11-14T22:13:20.123Z")
        #expect(ISOTime.format(millis: 951_782_400_000) == "2000-02-29T00:00:00.000Z")
    }
}

struct SupersedingClockTests {
    @Test func aWriteAfterAFarFutureValueIsStampedAfterItAndTheClockStaysMonotonic() {
        var c = HybridClock(maxSkewMillis: 60_000)
        let future = HLC(physicalMillis: 48 * 3_600_000, logical: 7)
        let skewed = c.observe(future, wallMillis: 1000)
        #expect(skewed)
        let before = c.last
        let t = c.tick(wallMillis: 1000, after: future)
        #expect(t > future && t > before)
        #expect(c.last == t)
        // Later local events, whatever the wall clock says, come after it.
        let later = c.tick(wallMillis: 5)
        #expect(later > t)
        // A value observed in the past changes nothing: the clock does not move back.
        let now = c.last
        let next = c.tick(wallMillis: 10, after: HLC(physicalMillis: 3, logical: 0))
        #expect(next == HLC(rawValue: now.rawValue + 1))
    }

    @Test func causallyOrderedWritesWinWhateverEachReplicasWallClock() {
        // Replicas with clocks +48 h, 0 and -6 h take turns: each writes after seeing the previous write, which
        // reaches it beyond the skew bound. The last write must win the last-writer-wins merge.
        var rng = SeededRandom(seed: 0x5EED_C10C)
        let hour: Int64 = 3_600_000
        let base: Int64 = 1_700_000_000_000
        let offsets: [Int64] = [48 * hour, 0, -6 * hour]
        var clocks = offsets.map { _ in HybridClock() }
        var register: LWWRegister<Int>?
        var counters = [UInt64](repeating: 0, count: 3)
        var wall = base
        for step in 0..<200 {
            wall += Int64(rng.next() % 50)
            let i = Int(rng.next() % 3)
            let w = UInt64(wall + offsets[i])
            if let r = register { clocks[i].observe(r.stamp.hlc, wallMillis: w) }
            counters[i] += 1
            let hlc = clocks[i].tick(wallMillis: w, after: register?.stamp.hlc ?? .zero)
            let id = EventID(origin: Origin(replica: ReplicaID(rawValue: UInt64(i + 1)), epoch: 1), counter: counters[i])
            let write = LWWRegister(step, stamp: Stamp(hlc: hlc, id: id))
            register = .merge(register, write)
            #expect(register?.value == step, "step \(step) by replica \(i) lost")
        }
    }
}
