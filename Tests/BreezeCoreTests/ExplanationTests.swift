import Testing
@testable import BreezeCore

/// `UserState.explain` and the helpers it uses agree with the merge code on random histories.
struct ExplanationTests {
    @Test func theDecidingComponentAgreesWithTheStampOrder() {
        var rng = SeededRandom(seed: 7)
        for _ in 0..<2000 {
            let a = CRDTLawTests.stamp(&rng), b = CRDTLawTests.stamp(&rng)
            guard let c = a.decidingComponent(against: b) else { #expect(a == b); continue }
            // The component named is the first that differs, and it orders the stamps as `<` does.
            switch c {
            case .hlc: #expect((a.hlc < b.hlc) == (a < b))
            case .replica: #expect(a.hlc == b.hlc && (a.id.origin.replica < b.id.origin.replica) == (a < b))
            case .epoch: #expect(a.hlc == b.hlc && a.id.origin.replica == b.id.origin.replica && (a.id.origin.epoch < b.id.origin.epoch) == (a < b))
            case .counter: #expect(a.hlc == b.hlc && a.id.origin == b.id.origin && (a.id.counter < b.id.counter) == (a < b))
            }
        }
    }

    @Test func winnerOfIsTheGreatestStampWhateverTheOrder() {
        var rng = SeededRandom(seed: 11)
        for _ in 0..<300 {
            let regs = (0..<Int.random(in: 1...6, using: &rng)).map { _ in
                let s = CRDTLawTests.stamp(&rng)
                return LWWRegister(CRDTLawTests.value(of: s), stamp: s)
            }
            let w = LWWRegister.winner(of: regs)!
            #expect(w.stamp == regs.map(\.stamp).max())
            #expect(LWWRegister.winner(of: regs.shuffled(using: &rng)) == w)
        }
        #expect(LWWRegister<Int>.winner(of: []) == nil)
    }

    /// Three replicas edit concurrently with colliding clocks; every field's explanation matches the state
    /// that the same events give, its winner is the greatest write, and a set's presence is explained by
    /// adds that no remove observed.
    @Test func explanationsMatchTheStateOnRandomConcurrentHistories() {
        for seed in UInt64(1)...40 {
            var rng = SeededRandom(seed: seed)
            var replicas = [SimReplica(replica: 1), SimReplica(replica: 2), SimReplica(replica: 3)]
            var all: [Event] = []
            for step in 0..<40 {
                let i = Int.random(in: 0..<3, using: &rng)
                let wall = UInt64(1000 + step / 3)               // equal clocks across replicas are common
                all.append(replicas[i].edit(&rng, wall: wall))
                if Int.random(in: 0..<4, using: &rng) == 0 {     // occasional sync from another replica
                    let j = (i + 1) % 3
                    for e in replicas[i].seen { replicas[j].receive(e, wall: wall) }
                }
            }
            let state = UserState(events: all)
            var fields: [UserStateField] = [.alertCategory, .alertOnClear, .alertsEnabled, .unit, .sourceEnabled("purpleair"),
                                            .correction("purpleair"), .target("Blood Glucose"), .testAlerts]
            for s in ["a", "b", "c", "d"] { fields += [.favourite(s), .watch(s)] }
            for f in fields {
                let x = UserState.explain(f, events: all.shuffled(using: &rng))
                #expect(x.consistent, "seed \(seed) \(f)")
                #expect(x.value == f.effectiveValue(in: state), "seed \(seed) \(f)")
                if let w = x.winner {
                    #expect(w.event.stamp == f.register(in: state)!.stamp)
                    for l in x.losers {
                        #expect(l.event.stamp < w.event.stamp)
                        #expect(l.lostOn == w.event.stamp.decidingComponent(against: l.event.stamp))
                    }
                } else if f == .testAlerts {
                    #expect(x.requests.count == state.testAlerts.count)
                } else if !f.isSetMembership {
                    #expect(f.register(in: state) == nil && x.isDefault)
                } else {
                    let el = f.element!
                    #expect((x.value == "true") == f.set(in: state)!.contains(el))
                    #expect(x.adds.contains { $0.event != nil && $0.removedBy.isEmpty } == f.set(in: state)!.contains(el))
                    for a in x.adds where !a.removedBy.isEmpty {
                        for r in a.removedBy { #expect(x.removes.first { $0.event.id == r }!.observed.contains(a.dot)) }
                    }
                }
            }
        }
    }

    @Test func aConcurrentAddSurvivesARemoveThatDidNotObserveIt() {
        let s = StreamID.user("u")
        let r1 = Origin(replica: ReplicaID(rawValue: 1), epoch: 1), r2 = Origin(replica: ReplicaID(rawValue: 2), epoch: 1)
        let add1 = Event(stream: s, id: EventID(origin: r1, counter: 1), hlc: HLC(physicalMillis: 10, logical: 0), body: .favouriteAdd(sensor: "x"))
        let add2 = Event(stream: s, id: EventID(origin: r1, counter: 2), hlc: HLC(physicalMillis: 20, logical: 0), body: .favouriteAdd(sensor: "x"))
        let rem = Event(stream: s, id: EventID(origin: r2, counter: 1), hlc: HLC(physicalMillis: 30, logical: 0),
                        body: .favouriteRemove(sensor: "x", observed: [add1.id]))
        let x = UserState.explain(.favourite("x"), events: [rem, add2, add1])
        #expect(x.value == "true" && x.consistent)
        #expect(x.adds.map(\.dot) == [add1.id, add2.id])
        #expect(x.adds[0].removedBy == [rem.id] && x.adds[1].removedBy.isEmpty)
        #expect(x.removes.map(\.event.id) == [rem.id])
        // Without the second add, the remove covered every add: absent.
        let y = UserState.explain(.favourite("x"), events: [add1, rem])
        #expect(y.value == "false" && y.adds.count == 1 && y.adds[0].removedBy == [rem.id])
        // Equal clocks: the greater replica wins the unit, and the loser lost on the replica.
        let u1 = Event(stream: s, id: EventID(origin: r1, counter: 3), hlc: HLC(physicalMillis: 40, logical: 0), body: .unitSet(.fahrenheit))
        let u2 = Event(stream: s, id: EventID(origin: r2, counter: 2), hlc: HLC(physicalMillis: 40, logical: 0), body: .unitSet(.celsius))
        let z = UserState.explain(.unit, events: [u2, u1])
        #expect(z.value == "celsius" && z.winner?.event.id == u2.id && z.losers.map(\.event.id) == [u1.id])
        #expect(z.losers[0].lostOn == .replica)
    }
}
