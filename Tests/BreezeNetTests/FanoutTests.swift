import Testing
import BreezeCore
import BreezeCrypto
import BreezeSync
import BreezeTestSupport
@testable import BreezeNet

/// The node's fan-out without sockets (`Fanout`, `Router`): a server's log grows while devices with random
/// subscriptions, a device that wants everything and a cluster peer sync from it; rows are routed once per
/// commit, sessions fall behind when their window or socket is full and catch up by stream or in log order,
/// subscriptions change mid-way. Whatever the interleaving, every device ends with exactly the streams it
/// wants, each whole and each origin's events in counter order, and the router indexes only what it must.
struct FanoutTests {
    static let now = SystemClock.nowMillis()
    static let authority = Ed25519.KeyPair(seed: [UInt8](repeating: 0x41, count: 32))
    static let server = ReplicaID(rawValue: 0x5E_5E), writer = ReplicaID(rawValue: 77), other = ReplicaID(rawValue: 78)

    static func credentials(_ replica: ReplicaID, _ scope: Scope) -> SyncCredentials {
        let key = Ed25519.KeyPair(seed: Digest.blake2b((0..<8).map { UInt8(truncatingIfNeeded: replica.rawValue >> (8 * $0)) }, length: 32))
        let cert = try! Certificate.issue(role: .device, key: key.publicKey, replica: replica, scope: scope, notBefore: now - 86_400_000,
                                          notAfter: now + 86_400_000, signer: authority)
        return try! SyncCredentials(deviceKey: key, chain: [cert], authority: authority.publicKey, nowMillis: now)
    }

    static func config(_ replica: ReplicaID, _ scope: Scope, window: Int, batch: Int) -> SyncSession.Config {
        var c = SyncSession.Config(credentials: credentials(replica, scope))
        c.window = window
        c.batchEvents = batch
        return c
    }

    /// The server's log in memory.
    final class MemoryLog: FanoutLog {
        var rows: [(seq: Int64, event: Event)] = []
        var counters: [StreamID: [ReplicaID: UInt64]] = [:]
        func append(_ stream: StreamID, _ origin: ReplicaID) {
            let n = counters[stream, default: [:]][origin, default: 0] + 1
            counters[stream, default: [:]][origin] = n
            let body: EventBody = stream.isShared
                ? .reading(Reading(source: "x", sensor: stream.description, time: Int64(n), values: [Measurement("pm25", 1)]))
                : .favouriteAdd(sensor: "s\(n)")
            rows.append((Int64(rows.count + 1), Event(stream: stream, id: EventID(origin: Origin(replica: origin, epoch: 1), counter: n),
                                                      hlc: HLC(rawValue: n << 16), body: body)))
        }
        func rows(after seq: Int64, limit: Int) throws -> [(seq: Int64, event: Event)] {
            Array(rows.drop { $0.seq <= seq }.prefix(limit))
        }
        func streamEvents(_ stream: StreamID, beyond v: VersionVector, limit: Int) throws -> [Event] {
            let mine = rows.map(\.event).filter { $0.stream == stream && $0.id.counter > v[$0.id.origin] }
            return Array(mine.sorted { ($0.id.origin, $0.id.counter) < ($1.id.origin, $1.id.counter) }.prefix(limit))
        }
        var heads: [StreamID: VersionVector] {
            var out: [StreamID: VersionVector] = [:]
            for (s, byOrigin) in counters {
                var v = VersionVector()
                for (o, n) in byOrigin { v[Origin(replica: o, epoch: 1)] = n }
                out[s] = v
            }
            return out
        }
    }

    /// One connection: the server's session (the member) and the peer's, with the frames between them queued.
    final class Member: FanoutMember {
        let id: Int
        var session: SyncSession
        var peer: SyncSession
        var live = false, busy = false, parked = false, hasRoom = true
        var toPeer: [Message] = [], toServer: [Message] = []
        var stored: [Event] = []
        var held: [StreamID: VersionVector] = [:]
        weak var fanout: Fanout<Member>?
        var rescans = 0

        init(id: Int, server: SyncSession, peer: SyncSession) {
            self.id = id
            session = server
            self.peer = peer
        }

        func perform(_ actions: [SyncSession.Action]) {
            for a in actions {
                switch a {
                case .send(let m): toPeer.append(m)
                case .rescan:
                    rescans += 1
                    fanout?.planCatchUp(self)
                case .close(let why): Issue.record("server closed session \(id): \(why)")
                default: break
                }
            }
        }

        /// Delivers up to `n` frames each way; the peer stores what it receives and acknowledges it.
        func deliver(_ n: Int) {
            for m in toPeer.prefix(n) {
                for a in peer.receive(m) {
                    switch a {
                    case .send(let r): toServer.append(r)
                    case .ingest(let batch, let events, _, _):
                        var inserted = 0, gaps = 0
                        for e in events {
                            let have = held[e.stream]?[e.id.origin] ?? 0
                            if e.id.counter == have + 1 {
                                held[e.stream, default: VersionVector()].advance(to: e.id)
                                stored.append(e)
                                inserted += 1
                            } else if e.id.counter > have + 1 { gaps += 1 }
                        }
                        toServer += Fixtures.sent(peer.committed(batch: batch, inserted: inserted, duplicates: events.count - inserted - gaps, gaps: gaps))
                    case .close(let why): Issue.record("peer closed session \(id): \(why)")
                    default: break
                    }
                }
            }
            toPeer.removeFirst(min(n, toPeer.count))
            for m in toServer.prefix(n) {
                let before = session.peerSubscription
                perform(session.receive(m))
                if session.peerSubscription != before { fanout?.resubscribed(self) }
            }
            toServer.removeFirst(min(n, toServer.count))
            fanout?.unpark(self)
        }
    }

    enum Fixtures {
        static func sent(_ actions: [SyncSession.Action]) -> [Message] {
            actions.compactMap { if case .send(let m) = $0 { return m } else { return nil } }
        }
    }

    /// Connects a peer: handshake, its subscription and vectors; the server side registers on `.rescan`.
    static func connect(_ id: Int, _ replica: ReplicaID, _ scope: Scope, subscription: Set<StreamID>?, window: Int,
                        fanout: Fanout<Member>) -> Member {
        var s = SyncSession(role: .server, config: config(server, .cluster, window: window, batch: 3),
                            ephemeralKey: SecureRandom.bytes(32), nowMillis: now)
        var c = SyncSession(role: .client, config: config(replica, scope, window: 4, batch: 3),
                            ephemeralKey: SecureRandom.bytes(32), nowMillis: now)
        var toServer = Fixtures.sent(c.start())
        _ = s.start()
        var authenticated = false
        while !toServer.isEmpty {
            var toClient: [Message] = []
            for m in toServer {
                for a in s.receive(m) {
                    if case .send(let r) = a { toClient.append(r) }
                    if case .authenticated = a { authenticated = true }
                }
            }
            toServer = []
            for m in toClient { toServer += Fixtures.sent(c.receive(m)) }
        }
        precondition(authenticated && s.state == .ready && c.state == .ready)
        let m = Member(id: id, server: s, peer: c)
        m.fanout = fanout
        m.toServer = Fixtures.sent(m.peer.subscribe(subscription)) + Fixtures.sent(m.peer.sendVectors(local: [:]))
        m.toPeer = Fixtures.sent(m.session.sendVectors(local: fanout.router.vectors(for: m.session.grants!)))
        return m
    }

    @Test(arguments: 0..<12)
    func everyPeerEndsWithExactlyItsStreamsWhateverTheInterleaving(seed: UInt64) {
        var rng = SeededRandom(seed: seed)
        let log = MemoryLog()
        let sensors = (0..<10).map { StreamID.sensor("s\($0)") }
        func grow(_ n: Int) {
            for _ in 0..<n {
                let r = rng.next() % 20
                let stream: StreamID = r < 2 ? .public : r < 4 ? .user("u\(rng.next() % 3)") : sensors[Int(rng.next() % 10)]
                log.append(stream, [Self.writer, Self.other][Int(rng.next() % 2)])
            }
        }
        grow(150)
        let fanout = Fanout<Member>(router: Router(tail: Int64(log.rows.count), heads: log.heads), routeRowsPerTurn: 7, catchUpReadsPerTurn: 5)
        var wanted: [Int: Set<StreamID>?] = [:]
        var members: [Member] = []
        // Three devices of three users with subscriptions, one device that wants everything, a cluster peer.
        for i in 0..<5 {
            let sub: Set<StreamID>? = i < 3 ? Set(sensors.filter { _ in rng.next() % 3 == 0 }) : nil
            let scope: Scope = i == 4 ? .cluster : .user("u\(i)")
            wanted[i] = sub
            members.append(Self.connect(i, ReplicaID(rawValue: 1000 + UInt64(i)), scope, subscription: sub,
                                   window: 1 + Int(rng.next() % 3), fanout: fanout))
        }
        var dropped: [Int: Set<StreamID>] = [:]
        for step in 0..<400 {
            switch rng.next() % 6 {
            case 0: grow(Int(rng.next() % 6))
            case 1: _ = fanout.route(log)
            case 2: _ = fanout.pump(log)
            case 3:
                let m = members[Int(rng.next() % 5)]
                m.hasRoom = rng.next() % 4 != 0
                fanout.unpark(m)
            default:
                let m = members[Int(rng.next() % 5)]
                m.deliver(1 + Int(rng.next() % 4))
            }
            // Mid-way, device 0 takes two new streams and drops one.
            if step == 200, let old = wanted[0] ?? nil {
                let added = Set(sensors.filter { !old.contains($0) }.prefix(2))
                var next = old.union(added)
                if let gone = old.first { next.remove(gone); dropped[0] = [gone] }
                wanted[0] = next
                members[0].toServer += Fixtures.sent(members[0].peer.subscribe(next))
            }
        }
        // Quiet: everything delivered, routed and pumped until nothing moves.
        for m in members { m.hasRoom = true; fanout.unpark(m) }
        var rounds = 0
        while rounds < 10_000 {
            rounds += 1
            let more = fanout.route(log) != .done || fanout.pump(log)
            var moved = false
            for m in members where !m.toPeer.isEmpty || !m.toServer.isEmpty { m.deliver(100); moved = true }
            if !more && !moved && fanout.busyCount == 0 { break }
        }
        for (i, m) in members.enumerated() {
            // Each origin's events arrived in counter order, none missing or repeated.
            var seen: [StreamID: [Origin: UInt64]] = [:]
            for e in m.stored {
                #expect(seen[e.stream, default: [:]][e.id.origin, default: 0] + 1 == e.id.counter, "seed \(seed): peer \(i) \(e.stream) \(e.id) out of order")
                seen[e.stream, default: [:]][e.id.origin] = e.id.counter
            }
            let scope = m.session.grants!.scope
            func wants(_ s: StreamID) -> Bool {
                switch s {
                case .public: return true
                case .user(let u), .health(let u): return scope == .cluster || scope == .user(u)
                default: return (wanted[i] ?? nil).map { $0.contains(s) } ?? true
                }
            }
            for (s, byOrigin) in log.counters where wants(s) {
                for (o, n) in byOrigin {
                    #expect(m.held[s]?[Origin(replica: o, epoch: 1)] == n, "seed \(seed): peer \(i) lacks \(s) of \(o): \(m.held[s]?[Origin(replica: o, epoch: 1)] ?? 0) of \(n)")
                }
            }
            let extra = Set(m.held.keys).filter { !wants($0) && !(dropped[i]?.contains($0) ?? false) }
            #expect(extra.isEmpty, "seed \(seed): peer \(i) got streams it never wanted: \(extra)")
            #expect(m.live && m.session.catchingUp.isEmpty, "seed \(seed): peer \(i) still catching up")
        }
        #expect(fanout.router.tail == Int64(log.rows.count))
        #expect(fanout.router.heads == log.heads)
    }

    /// `good` (counter 1) with its counter varint written in two bytes (`81 00` instead of `01`), hashed as
    /// such: what an older build stored from a peer, which a sender must never send (encoding.md section 1).
    static func longForm(_ good: Event) -> Event {
        var body = Array(good.encoded.dropLast(Event.hashLength))
        precondition(body[9] == 0x01 && body[10] == 0x01, "format, 8-byte replica, epoch 1, counter 1")
        body.replaceSubrange(10...10, with: [0x81, 0x00])
        return try! Event(decoding: body + Digest.blake2b(body, length: Event.hashLength), stored: true)
    }

    @Test func anOriginWhoseNextEventCannotGoDoesNotHoldBackTheOtherOriginsOfItsStream() {
        // Origin 5's first event of the stream is in a longer form (it never goes, nor anything after it of
        // that origin); origin 6 sorts after it. A device catching the stream up by stream gets all of origin
        // 6's events, although origin 5's fill every read.
        let log = MemoryLog()
        let a = ReplicaID(rawValue: 5), b = ReplicaID(rawValue: 6), s = StreamID.sensor("s0")
        for _ in 0..<40 { log.append(s, a) }
        for _ in 0..<7 { log.append(s, b) }
        let first = log.rows.firstIndex { $0.event.id.origin.replica == a }!
        log.rows[first].event = Self.longForm(log.rows[first].event)
        #expect(!log.rows[first].event.hasShortestEncoding)
        let fanout = Fanout<Member>(router: Router(tail: Int64(log.rows.count), heads: log.heads), routeRowsPerTurn: 100, catchUpReadsPerTurn: 50)
        let m = Self.connect(0, ReplicaID(rawValue: 900), .user("u0"), subscription: [s], window: 1, fanout: fanout)
        var rounds = 0
        while rounds < 1000 {
            rounds += 1
            let more = fanout.route(log) != .done || fanout.pump(log)
            let moved = !m.toPeer.isEmpty || !m.toServer.isEmpty
            m.deliver(100)
            if !more && !moved && fanout.busyCount == 0 { break }
        }
        #expect(m.held[s]?[Origin(replica: b, epoch: 1)] == 7, "origin 6's events: \(m.held[s]?[Origin(replica: b, epoch: 1)] ?? 0) of 7")
        #expect(m.held[s]?[Origin(replica: a, epoch: 1)] ?? 0 == 0, "nothing of origin 5 goes")
        #expect(m.session.catchingUp.isEmpty)
    }

    @Test func theRouterHandsAnEventOnlyToTheSessionsThatWantIt() {
        var r = Router(tail: 0, heads: [:])
        func grants(_ scope: Scope, cluster: Bool = true) -> Grants {
            Grants(scope: scope, localIsCluster: cluster, peerIsCluster: scope == .cluster)
        }
        r.register(1, grants: grants(.cluster), subscription: nil)                      // a cluster peer
        r.register(2, grants: grants(.user("ana")), subscription: [.sensor("a")])        // ana's phone
        r.register(3, grants: grants(.user("bob")), subscription: [.sensor("b")])        // bob's phone
        r.register(4, grants: grants(.user("ana")), subscription: nil)                   // ana's tablet: everything
        r.register(5, grants: grants(.user("ana"), cluster: false), subscription: nil)   // ana's laptop, device to device
        func who(_ s: StreamID) -> Set<Int> {
            var out = Set<Int>()
            r.forEachInterested(in: s) { out.insert($0) }
            return out
        }
        #expect(who(.sensor("a")) == [1, 2, 4])
        #expect(who(.sensor("b")) == [1, 3, 4])
        #expect(who(.sensor("c")) == [1, 4])
        #expect(who(.public) == [1, 2, 3, 4])
        #expect(who(.user("ana")) == [1, 2, 4, 5] && who(.health("ana")) == [1, 2, 4, 5])
        #expect(who(.user("bob")) == [1, 3])
        // A new subscription moves the phone; a session that leaves is gone from every index.
        r.register(2, grants: grants(.user("ana")), subscription: [.sensor("c")])
        #expect(who(.sensor("a")) == [1, 4] && who(.sensor("c")) == [1, 2, 4])
        r.unregister(4)
        r.unregister(1)
        #expect(who(.sensor("c")) == [2] && who(.public) == [2, 3] && who(.user("ana")) == [2, 5])
        // Routing moves the tail and the heads, and hands each row to those who want it.
        let e = Event(stream: .sensor("c"), id: EventID(origin: Origin(replica: ReplicaID(rawValue: 9), epoch: 1), counter: 1),
                      hlc: HLC(rawValue: 1 << 16), body: .reading(Reading(source: "x", sensor: "c", time: 1, values: [])))
        let out = r.route([(5, e)])
        #expect(Set(out.keys) == [2] && r.tail == 5 && r.heads[.sensor("c")]?[e.id.origin] == 1)
        #expect(r.route([(5, e)]).isEmpty, "a row at or before the tail is not routed again")
        // A device served by the cluster gets vectors of its user's streams only.
        #expect(r.vectors(for: grants(.user("ana"))).isEmpty)
        #expect(r.vectors(for: grants(.cluster)).keys.contains(.sensor("c")))
    }
}
