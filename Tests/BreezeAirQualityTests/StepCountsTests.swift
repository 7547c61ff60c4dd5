import Testing
@testable import BreezeAirQuality

/// `StepCounts`, the histogram of an hour's steps with two kept inline: the same as a sorted dictionary of
/// counts, however many distinct steps and in whatever order they come.
struct StepCountsTests {
    @Test(arguments: [UInt64(1), 2, 3, 4])
    func countsEveryStepInOrderOfLength(seed: UInt64) {
        var rng = XorShift(state: seed &* 0x9E3779B97F4A7C15 | 1)
        for distinct in [1, 2, 3, 5, 9] {
            var steps = StepCounts(), reference: [Int64: Int] = [:]
            for _ in 0..<40 {
                let s = Int64(Int.random(in: 1...distinct, using: &rng) * 60)
                steps.add(seconds: s)
                reference[s, default: 0] += 1
            }
            let expected = reference.sorted { $0.key < $1.key }.map { HourAggregate.Step(seconds: $0.key, count: $0.value) }
            #expect(Array(steps) == expected, "\(distinct) distinct steps")
            #expect(steps == StepCounts(expected))
            #expect(steps.count == expected.count)
        }
        #expect(StepCounts() == [])
        #expect(StepCounts([HourAggregate.Step(seconds: 60, count: 1)]) != StepCounts([HourAggregate.Step(seconds: 60, count: 2)]))
    }
}

/// A small deterministic generator (this target does not link the test support library).
struct XorShift: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}
