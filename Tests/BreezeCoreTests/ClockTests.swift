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
