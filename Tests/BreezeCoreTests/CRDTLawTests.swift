import Testing
@testable import BreezeCore

/// Commutativity, associativity and idempotence of every merge, on randomly generated states.
struct CRDTLawTests {
    static let seeds: [UInt64] = Array(1...200)

    static func stamp<R: RandomNumberGenerator>(_ rng: inout R) -> Stamp {
        // Few distinct clock values and replicas, so equal HLCs across replicas are common.
        let replica = ReplicaID(rawValue: UInt64.random(in: 1...4, using: &rng))
        return Stamp(hlc: HLC(physicalMillis: UInt64.random(in: 1...3, using: &rng), logical: 0),
                     id: EventID(origin: Origin(replica: replica, epoch: 1), counter: UInt64.random(in: 1...6, using: &rng)))
    }

    /// The value an event wrote is a function of the event (one id, one content).
    static func value(of s: Stamp) -> Int { Int(truncatingIfNeeded: s.id.counter &* 31 &+ s.id.origin.replica.rawValue &* 7) % 5 }

    static func register<R: RandomNumberGenerator>(_ rng: inout R) -> LWWRegister<Int> {
        var s = stamp(&rng)
        var r = LWWRegister(value(of: s), stamp: s)
        for _ in 0..<Int.random(in: 0...3, using: &rng) {
            s = stamp(&rng)
            r.set(value(of: s), stamp: s)
        }
        return r
    }

    static func orset<R: RandomNumberGenerator>(_ rng: inout R) -> ORSet<String> {
        var s = ORSet<String>()
        for _ in 0..<Int.random(in: 0...8, using: &rng) {
            let e = ["a", "b", "c"].randomElement(using: &rng)!
            if Bool.random(using: &rng) {
                s.add(e, dot: stamp(&rng).id)
            } else {
                let live = s.liveDots(of: e)
                s.remove(observed: Array(live.prefix(Int.random(in: 0...live.count, using: &rng))))
            }
        }
        return s
    }

    static func facts<R: RandomNumberGenerator>(_ rng: inout R) -> FactSet<String, Int> {
        var f = FactSet<String, Int>()
        for _ in 0..<Int.random(in: 0...6, using: &rng) {
            let s = stamp(&rng)
            f.insert(["k1", "k2", "k3"].randomElement(using: &rng)!, value(of: s), stamp: s)
        }
        return f
    }

    static func map<R: RandomNumberGenerator>(_ rng: inout R) -> LWWMap<String, Int> {
        var m = LWWMap<String, Int>()
        for _ in 0..<Int.random(in: 0...6, using: &rng) {
            let s = stamp(&rng)
            m.set(["x", "y"].randomElement(using: &rng)!, value(of: s), stamp: s)
        }
        return m
    }

    static func userState<R: RandomNumberGenerator>(_ rng: inout R) -> UserState {
        var replicas = (1...3).map { SimReplica(replica: UInt64($0)) }
        var state = UserState()
        for _ in 0..<Int.random(in: 0...12, using: &rng) {
            let i = Int.random(in: 0..<replicas.count, using: &rng)
            let e = replicas[i].edit(&rng, wall: UInt64.random(in: 1...5, using: &rng))
            if Bool.random(using: &rng) { state.apply(e) }
        }
        return state
    }

    func checkLaws<T: Equatable>(_ name: String, _ gen: (inout SeededRandom) -> T, _ merge: (T, T) -> T) {
        for seed in Self.seeds {
            var rng = SeededRandom(seed: seed)
            let a = gen(&rng), b = gen(&rng), c = gen(&rng)
            #expect(merge(a, b) == merge(b, a), "\(name) commutativity, seed \(seed)")
            #expect(merge(merge(a, b), c) == merge(a, merge(b, c)), "\(name) associativity, seed \(seed)")
            #expect(merge(a, a) == a, "\(name) idempotence, seed \(seed)")
            #expect(merge(merge(a, b), b) == merge(a, b), "\(name) absorbs a repeated merge, seed \(seed)")
        }
    }

    @Test func lwwRegisterMergeIsACommutativeAssociativeIdempotentJoin() {
        checkLaws("LWWRegister", { Self.register(&$0) }) { $0.merged(with: $1) }
    }

    @Test func orSetMergeIsACommutativeAssociativeIdempotentJoin() {
        checkLaws("ORSet", { Self.orset(&$0) }) { $0.merged(with: $1) }
    }

    @Test func factSetMergeIsACommutativeAssociativeIdempotentJoin() {
        checkLaws("FactSet", { Self.facts(&$0) }) { $0.merged(with: $1) }
    }

    @Test func lwwMapMergeIsACommutativeAssociativeIdempotentJoin() {
        checkLaws("LWWMap", { Self.map(&$0) }) { $0.merged(with: $1) }
    }

    @Test func userStateMergeIsACommutativeAssociativeIdempotentJoin() {
        for seed in Self.seeds {
            var rng = SeededRandom(seed: seed)
            let a = Self.userState(&rng), b = Self.userState(&rng), c = Self.userState(&rng)
            #expect(a.merged(with: b).canonicalBytes == b.merged(with: a).canonicalBytes, "seed \(seed)")
            #expect(a.merged(with: b).merged(with: c).canonicalBytes == a.merged(with: b.merged(with: c)).canonicalBytes,
                    "seed \(seed)")
            #expect(a.merged(with: a).canonicalBytes == a.canonicalBytes, "seed \(seed)")
        }
    }

    @Test func equalClocksFromDifferentReplicasStillHaveOneWinner() {
        let t = HLC(physicalMillis: 100, logical: 0)
        let low = Stamp(hlc: t, id: EventID(origin: Origin(replica: ReplicaID(rawValue: 1), epoch: 1), counter: 1))
        let high = Stamp(hlc: t, id: EventID(origin: Origin(replica: ReplicaID(rawValue: 2), epoch: 1), counter: 1))
        let a = LWWRegister("from 1", stamp: low), b = LWWRegister("from 2", stamp: high)
        #expect(a.merged(with: b).value == "from 2")
        #expect(b.merged(with: a).value == "from 2")
    }

    @Test func aConcurrentAddWinsOverARemoveThatDidNotSeeIt() {
        let o1 = Origin(replica: ReplicaID(rawValue: 1), epoch: 1), o2 = Origin(replica: ReplicaID(rawValue: 2), epoch: 1)
        var s = ORSet<String>()
        s.add("x", dot: EventID(origin: o1, counter: 1))
        var left = s, right = s
        left.remove(observed: left.liveDots(of: "x"))           // replica 1 removes what it saw
        right.add("x", dot: EventID(origin: o2, counter: 1))    // replica 2 adds again, concurrently
        #expect(!left.contains("x"))
        #expect(left.merged(with: right).contains("x"))
        #expect(right.merged(with: left).contains("x"))
        var both = left.merged(with: right)
        both.remove(observed: both.liveDots(of: "x"))           // a remove that saw both adds wins
        #expect(!both.contains("x"))
    }
}
