import Testing
@testable import BreezeCore

/// Replicas editing one user's settings while messages are delayed, reordered, duplicated and partitioned
/// end in the same state, with the same state hash, as soon as each has seen every event.
struct ConvergenceTests {
    @Test(arguments: Array(UInt64(1)...40))
    func fiveReplicasConvergeUnderRandomDeliveryDuplicatesAndPartitions(seed: UInt64) {
        var rng = SeededRandom(seed: seed)
        let n = 5
        var replicas = (0..<n).map { SimReplica(replica: 0x1000 + UInt64($0)) }
        var inbox: [[Event]] = Array(repeating: [], count: n)    // in flight to each replica
        var all: [Event] = []
        var wall: UInt64 = 1_000
        for round in 0..<120 {
            // A partition: some replicas are cut off for this round (they neither send nor receive).
            let cut = Set((0..<n).filter { _ in Int.random(in: 0..<5, using: &rng) == 0 })
            // Wall clocks are close but not equal, and sometimes step back.
            wall += UInt64.random(in: 0...2, using: &rng)
            for i in 0..<n where Int.random(in: 0..<3, using: &rng) == 0 {
                let skew = UInt64.random(in: 0...3, using: &rng)
                let e = replicas[i].edit(&rng, wall: wall > skew ? wall - skew : wall)
                all.append(e)
                for j in 0..<n where j != i {
                    inbox[j].append(e)
                    if Int.random(in: 0..<4, using: &rng) == 0 { inbox[j].append(e) }    // duplicate
                }
            }
            for j in 0..<n where !cut.contains(j) && !inbox[j].isEmpty {
                inbox[j].shuffle(using: &rng)
                let k = Int.random(in: 0...inbox[j].count, using: &rng)
                for e in inbox[j].prefix(k) { replicas[j].receive(e, wall: wall) }
                inbox[j].removeFirst(k)
            }
            _ = round
        }
        // Heal: everything still in flight is delivered, shuffled, with more duplicates.
        for j in 0..<n {
            var rest = inbox[j] + all.filter { _ in Int.random(in: 0..<10, using: &rng) == 0 }
            rest.shuffle(using: &rng)
            for e in rest { replicas[j].receive(e, wall: wall) }
        }
        let reference = UserState(events: all)
        let reversed = UserState(events: all.reversed())
        #expect(reference.canonicalBytes == reversed.canonicalBytes, "seed \(seed)")
        for r in replicas {
            #expect(r.seen.count == all.count, "seed \(seed): replica \(r.origin) saw every event")
            #expect(r.state.canonicalBytes == reference.canonicalBytes, "seed \(seed): replica \(r.origin)")
            #expect(r.state.stateHash == reference.stateHash, "seed \(seed)")
        }
        // State-based merge of the replicas' states gives the same state too.
        let merged = replicas.map(\.state).reduce(UserState()) { $0.merged(with: $1) }
        #expect(merged.canonicalBytes == reference.canonicalBytes, "seed \(seed)")
    }

    @Test func causallyLaterEditsWinAndConcurrentOnesResolveByStamp() {
        var a = SimReplica(replica: 1), b = SimReplica(replica: 2)
        var rng = SeededRandom(seed: 99)
        _ = rng.next()
        let e1 = Event(stream: a.stream, id: EventID(origin: a.origin, counter: 1), hlc: a.clock.tick(wallMillis: 5000),
                       body: .unitSet(.fahrenheit))
        a.receive(e1, wall: 5000)
        b.receive(e1, wall: 10)                    // b's wall clock is behind, but it saw e1
        let e2 = Event(stream: b.stream, id: EventID(origin: b.origin, counter: 1), hlc: b.clock.tick(wallMillis: 10),
                       body: .unitSet(.celsius))
        #expect(e2.hlc > e1.hlc)                   // the HLC carries causality past the slow wall clock
        let s = UserState(events: [e2, e1])
        #expect(s.effectiveUnit == .celsius)
    }
}
