import Testing
import BreezeCore
import BreezeCrypto
@testable import BreezeSync

/// The session state machine driven directly, with no sockets.
struct SessionTests {
    static let clusterSecret = Array(repeating: UInt8(7), count: 32)
    static let a = ReplicaID(rawValue: 0xA), b = ReplicaID(rawValue: 0xB)

    static func config(_ r: ReplicaID, _ scope: Scope = .cluster, secret: [UInt8]? = nil) -> SyncSession.Config {
        var c = SyncSession.Config(replica: r, scope: scope, secret: secret ?? clusterSecret)
        c.batchEvents = 3
        c.window = 2
        return c
    }

    static func sent(_ actions: [SyncSession.Action]) -> [Message] {
        actions.compactMap { if case .send(let m) = $0 { return m } else { return nil } }
    }

    /// Reads batches the way a peer does: `events` as they are, `packed` through its `PackedDecoder`.
    struct Unpacker {
        var decoder = PackedDecoder()
        var next: UInt64 = 1

        /// The batches in `messages`, as (number, events).
        mutating func batches(_ messages: [Message]) -> [(UInt64, [Event])] {
            var out: [(UInt64, [Event])] = []
            for m in messages {
                switch m {
                case .events(let n, let e): out.append((n, e)); next = n + 1
                case .packed(let p):
                    guard let e = try? decoder.decode(batch: next, payload: p) else { Issue.record("packed batch \(next) refused"); return out }
                    out.append((next, e)); next += 1
                case .reset: decoder.reset()
                default: break
                }
            }
            return out
        }
    }

    static func closed(_ actions: [SyncSession.Action]) -> SyncErrorCode? {
        for case .send(.error(let code, _)) in actions { return code }
        return nil
    }

    /// Runs the handshake between a client and a server; returns both and the client-side actions log.
    static func handshake(client: SyncSession.Config, server: SyncSession.Config, clientNonce: [UInt8] = Array(repeating: 1, count: 32),
                          serverNonce: [UInt8] = Array(repeating: 2, count: 32)) -> (SyncSession, SyncSession, [Message]) {
        var c = SyncSession(role: .client, config: client, nonce: clientNonce)
        var s = SyncSession(role: .server, config: server, nonce: serverNonce)
        var wire: [Message] = []
        var toServer = sent(c.start())
        _ = s.start()
        var rounds = 0
        while !toServer.isEmpty && rounds < 4 {
            wire += toServer
            var toClient: [Message] = []
            for m in toServer { toClient += sent(s.receive(m)) }
            wire += toClient
            toServer = []
            for m in toClient { toServer += sent(c.receive(m)) }
            rounds += 1
        }
        return (c, s, wire)
    }

    static func event(_ stream: StreamID, _ origin: ReplicaID, _ n: UInt64) -> Event {
        Event(stream: stream, id: EventID(origin: Origin(replica: origin, epoch: 1), counter: n), hlc: HLC(rawValue: n),
              body: stream == .public ? .reading(Reading(source: "x", sensor: "s", time: Int64(n), values: []))
                                      : .favouriteAdd(sensor: "s\(n)"))
    }

    @Test func peersWithTheSameSecretAuthenticateWithoutSendingIt() {
        let (c, s, wire) = Self.handshake(client: Self.config(Self.a), server: Self.config(Self.b))
        #expect(c.state == .ready && s.state == .ready)
        #expect(c.peerReplica == Self.b && s.peerReplica == Self.a)
        let bytes = wire.flatMap { Frame.encode($0) }
        #expect(!bytes.containsSubsequence(Self.clusterSecret))
    }

    @Test func aWrongSecretIsRefusedOnEitherSide() {
        let wrong = Array(repeating: UInt8(9), count: 32)
        let (c1, s1, w1) = Self.handshake(client: Self.config(Self.a, secret: wrong), server: Self.config(Self.b))
        #expect(c1.state == .closed && s1.state != .ready)     // the client sees the server's proof fail
        #expect(w1.contains { if case .error(.authentication, _) = $0 { return true } else { return false } })
        // A server with the wrong secret: the client refuses it before proving anything.
        let (c2, s2, w2) = Self.handshake(client: Self.config(Self.a), server: Self.config(Self.b, secret: wrong))
        #expect(c2.state == .closed && s2.state != .ready)
        #expect(!w2.contains { if case .auth = $0 { return true } else { return false } })
    }

    @Test func aRecordedHandshakeCannotBeReplayed() {
        let (_, _, wire) = Self.handshake(client: Self.config(Self.a), server: Self.config(Self.b))
        // An attacker replays the client's hello and auth to a server that picks a fresh nonce.
        var s = SyncSession(role: .server, config: Self.config(Self.b), nonce: Array(repeating: 3, count: 32))
        _ = s.start()
        var actions: [SyncSession.Action] = []
        for m in wire {
            switch m {
            case .hello, .auth: actions += s.receive(m)
            default: break
            }
        }
        #expect(s.state == .closed)
        #expect(Self.closed(actions) == .authentication)
    }

    @Test func aUserKeyGrantsOnlyThatUsersStreamsAndReadOnlyPublic() {
        let anaKey = Scope.userKey(clusterSecret: Self.clusterSecret, user: "ana")
        var (phone, server, _) = Self.handshake(client: Self.config(Self.a, .user("ana"), secret: anaKey), server: Self.config(Self.b))
        #expect(phone.state == .ready && server.state == .ready && server.grants?.scope == .user("ana"))
        // The phone asks for bo's stream: refused.
        var bad = server
        let asked = bad.receive(.vectors([StreamVector(stream: .user("bo"), vector: VersionVector())]))
        #expect(Self.closed(asked) == .forbidden)
        // The phone sends public events: refused, nothing to ingest.
        var bad2 = server
        let wrote = bad2.receive(.events(batch: 1, events: [Self.event(.public, Self.a, 1)]))
        #expect(Self.closed(wrote) == .forbidden && !wrote.contains { if case .ingest = $0 { return true } else { return false } })
        // Its own streams are fine, and the server sends it public and ana's streams, but not bo's.
        let ok = server.receive(.vectors([StreamVector(stream: .user("ana"), vector: VersionVector()),
                                          StreamVector(stream: .public, vector: VersionVector())]))
        #expect(ok == [.rescan])
        let offer = server.offer([(1, Self.event(.public, Self.b, 1)), (2, Self.event(.user("bo"), Self.b, 1)),
                                  (3, Self.event(.user("ana"), Self.b, 1)), (4, Self.event(.health("ana"), Self.b, 1))], scannedTo: 4)
        var phoneSide = Unpacker()
        let shipped = phoneSide.batches(Self.sent(offer)).flatMap(\.1)
        #expect(shipped.map(\.stream) == [.public, .user("ana"), .health("ana")])
        // The phone's own vectors never list public as something it could send.
        let v = phone.sendVectors(local: [.public: VersionVector(), .user("ana"): VersionVector(), .user("bo"): VersionVector()])
        #expect(Self.sent(v) == [.vectors([StreamVector(stream: .public, vector: VersionVector()),
                                          StreamVector(stream: .user("ana"), vector: VersionVector())])])
    }

    @Test func aUserReplicaTrustsAClusterClaimOnlyFromAPeerItDialled() {
        let anaKey = Scope.userKey(clusterSecret: Self.clusterSecret, user: "ana")
        // Another of ana's devices dials ana's phone and claims to be the cluster, proving with ana's key
        // (hand-made messages: a correct client would derive a different key from a cluster claim).
        var phone = SyncSession(role: .server, config: Self.config(Self.b, .user("ana"), secret: anaKey),
                                nonce: Array(repeating: 2, count: 32))
        _ = phone.start()
        let clientNonce = Array(repeating: UInt8(1), count: 32)
        _ = phone.receive(.hello(minVersion: 1, maxVersion: 1, replica: Self.a, scope: .cluster, nonce: clientNonce))
        var w = ByteWriter()
        w.string("breeze-sync-v1 client")
        w.raw(clientNonce); w.raw(Array(repeating: 2, count: 32))
        w.u64(Self.a.rawValue); w.u64(Self.b.rawValue)
        w.string("cluster"); w.string("user:ana")
        _ = phone.receive(.auth(proof: HMAC.sha256(key: anaKey, message: w.bytes)))
        #expect(phone.state == .ready && phone.grants?.peerIsCluster == false)
        let wrote = phone.receive(.events(batch: 1, events: [Self.event(.public, Self.a, 1)]))
        #expect(Self.closed(wrote) == .forbidden)
        // The phone dialling its configured server does accept public from it.
        var (dialer, _, _) = Self.handshake(client: Self.config(Self.b, .user("ana"), secret: anaKey), server: Self.config(Self.a))
        #expect(dialer.grants?.peerIsCluster == true)
        #expect(dialer.receive(.events(batch: 1, events: [Self.event(.public, Self.a, 1)])).contains { if case .ingest = $0 { return true } else { return false } })
    }

    @Test func twoDifferentUsersCannotSync() {
        let ana = Scope.userKey(clusterSecret: Self.clusterSecret, user: "ana")
        let bo = Scope.userKey(clusterSecret: Self.clusterSecret, user: "bo")
        let (c, s, _) = Self.handshake(client: Self.config(Self.a, .user("ana"), secret: ana), server: Self.config(Self.b, .user("bo"), secret: bo))
        #expect(c.state != .ready && s.state == .closed)
    }

    @Test func batchesRespectTheWindowAndOnlyCarryWhatThePeerLacks() {
        var (c, s, _) = Self.handshake(client: Self.config(Self.a), server: Self.config(Self.b))
        _ = c
        #expect(!s.wantsEvents)                                  // no vectors from the peer yet
        let peerHas = VersionVector([Origin(replica: Self.b, epoch: 1): 2])
        _ = s.receive(.vectors([StreamVector(stream: .user("u"), vector: peerHas)]))
        #expect(s.wantsEvents && s.readLimit == 6)
        let rows = (1...6).map { (Int64($0), Self.event(.user("u"), Self.b, UInt64($0))) }
        let out = Self.sent(s.offer(rows, scannedTo: 6))
        var peer = Unpacker()
        let batches = peer.batches(out).map { ($0.0, $0.1.map(\.id.counter)) }
        #expect(batches.map(\.1) == [[3, 4, 5], [6]])
        #expect(s.unacknowledged == 2 && !s.wantsEvents && s.cursor == 6)
        _ = s.receive(.ack(batch: batches[0].0, inserted: 3, duplicates: 0))
        #expect(s.wantsEvents && s.readLimit == 3)
        // Offering the same rows again sends nothing: the peer is known to hold them now.
        #expect(Self.sent(s.offer(rows, scannedTo: 6)).isEmpty)
        // Events received from the peer are not echoed back to it.
        let theirs = Self.event(.user("u"), Self.a, 1)
        let got = s.receive(.events(batch: 1, events: [theirs]))
        #expect(got == [.ingest(batch: 1, events: [theirs])])
        #expect(Self.sent(s.offer([(7, theirs)], scannedTo: 7)).isEmpty)
        #expect(s.committed(batch: 1, inserted: 1, duplicates: 0, gaps: 0) == [.send(.ack(batch: 1, inserted: 1, duplicates: 0))])
        #expect(s.committed(batch: 2, inserted: 0, duplicates: 0, gaps: 1).contains(.resendVectors))
    }

    @Test func aLostRepeatedOrReorderedEventsFrameEndsTheSession() {
        let e = Self.event(.user("u"), Self.a, 1)
        // Repeated, lost, lost, reordered: the session ends at the frame out of sequence.
        for (numbers, bad) in [([1, 1], 1), ([2], 0), ([1, 3], 1), ([2, 1], 0)] as [([UInt64], Int)] {
            var s = Self.session(in: .ready)
            var codes: [SyncErrorCode?] = []
            for n in numbers { codes.append(Self.closed(s.receive(.events(batch: n, events: [e])))) }
            #expect(codes[bad] == .unexpected && s.state == .closed, "batches \(numbers)")
            #expect(codes.enumerated().allSatisfy { $0.offset == bad || $0.element == nil }, "batches \(numbers)")
        }
        var s = Self.session(in: .ready)
        for n: UInt64 in 1...3 { #expect(Self.closed(s.receive(.events(batch: n, events: [e]))) == nil) }
    }

    @Test func aLostOrRepeatedAckEndsTheSession() {
        var cfg = Self.config(Self.b)
        cfg.batchBytes = 1          // one event per batch
        cfg.window = 3
        for acks in [[2], [1, 1], [1, 3]] as [[UInt64]] {
            var (_, s, _) = Self.handshake(client: Self.config(Self.a), server: cfg)
            _ = s.receive(.vectors([]))
            let rows = (1...3).map { (Int64($0), Self.event(.public, Self.b, UInt64($0))) }
            #expect(Self.sent(s.offer(rows, scannedTo: 3)).count == 3)
            var codes: [SyncErrorCode?] = []
            for n in acks { codes.append(Self.closed(s.receive(.ack(batch: n, inserted: 1, duplicates: 0)))) }
            #expect(codes.last == .unexpected && s.state == .closed, "acks \(acks)")
        }
        var (_, s, _) = Self.handshake(client: Self.config(Self.a), server: cfg)
        #expect(s.awaitingVectors)
        _ = s.receive(.vectors([]))
        #expect(!s.awaitingVectors)
        _ = s.offer((1...3).map { (Int64($0), Self.event(.public, Self.b, UInt64($0))) }, scannedTo: 3)
        for n: UInt64 in 1...3 { #expect(Self.closed(s.receive(.ack(batch: n, inserted: 1, duplicates: 0))) == nil) }
        #expect(s.acksReceived == 3 && s.unacknowledged == 0)
    }

    @Test func fewerEventsPerBatchWhenEventsAreLarge() {
        var cfg = Self.config(Self.b)
        cfg.batchEvents = 100
        cfg.batchBytes = 200
        var (_, s, _) = Self.handshake(client: Self.config(Self.a), server: cfg)
        _ = s.receive(.vectors([]))
        let rows = (1...5).map { (Int64($0), Self.event(.public, Self.b, UInt64($0))) }
        var peer = Unpacker()
        let sizes = peer.batches(Self.sent(s.offer(rows, scannedTo: 5))).map(\.1.count)
        #expect(sizes.reduce(0, +) == 5 && sizes.count > 1)
        #expect(s.unacknowledged <= cfg.window)
    }

    @Test func smallBatchesStopAtTheWindowAndTheRestIsReadAgainAfterAcks() {
        var cfg = Self.config(Self.b)
        cfg.batchEvents = 100
        cfg.batchBytes = 1          // one event per batch
        cfg.window = 2
        var (_, s, _) = Self.handshake(client: Self.config(Self.a), server: cfg)
        _ = s.receive(.vectors([]))
        let rows = (1...5).map { (Int64($0), Self.event(.public, Self.b, UInt64($0))) }
        var shipped: [UInt64] = []
        var peer = Unpacker()
        var rounds = 0
        while shipped.count < 5 && rounds < 10 {
            let pending = rows.filter { $0.0 > s.cursor }
            let out = Self.sent(s.offer(pending, scannedTo: 5))
            #expect(s.unacknowledged <= 2, "window respected")
            for (n, e) in peer.batches(out) {
                shipped += e.map(\.id.counter)
                _ = s.receive(.ack(batch: n, inserted: UInt32(e.count), duplicates: 0))
            }
            rounds += 1
        }
        #expect(shipped == [1, 2, 3, 4, 5])
    }

    @Test func everyMessageInEveryStateIsEitherHandledOrRefused() {
        let samples: [Message] = [
            .hello(minVersion: 1, maxVersion: 1, replica: Self.a, scope: .cluster, nonce: Array(repeating: 1, count: 32)),
            .challenge(version: 1, replica: Self.b, scope: .cluster, nonce: Array(repeating: 2, count: 32), proof: Array(repeating: 0, count: 32)),
            .auth(proof: Array(repeating: 0, count: 32)), .ready, .vectors([]), .events(batch: 1, events: []),
            .ack(batch: 99, inserted: 0, duplicates: 0), .ping(1), .pong(1), .error(code: .shutdown, message: "bye"),
            .reset, { var e = PackedEncoder(); return e.encode(batch: 1, events: [Self.event(.user("u"), Self.a, 1)])!.last! }(),
        ]
        // Which message types each state accepts without closing.
        let accepted: [SyncSession.State: Set<UInt8>] = [
            .awaitingHello: [0x01], .awaitingChallenge: [], .awaitingAuth: [], .awaitingReady: [0x04],
            .ready: [0x10, 0x11, 0x13, 0x14, 0x20, 0x21],
        ]
        for (state, ok) in accepted {
            for m in samples {
                var s = Self.session(in: state)
                #expect(s.state == state)
                let actions = s.receive(m)
                if case .error = m {
                    #expect(s.state == .closed && actions == [.close(reason: "peer reported shutdown: bye")], "\(state)")
                } else if ok.contains(m.typeByte) {
                    #expect(s.state != .closed, "\(state) should accept 0x\(String(m.typeByte, radix: 16))")
                } else {
                    #expect(s.state == .closed, "\(state) should refuse 0x\(String(m.typeByte, radix: 16))")
                    #expect(Self.closed(actions) != nil, "\(state) sends an error frame")
                }
            }
        }
        // A closed session ignores everything.
        var closed = Self.session(in: .ready)
        _ = closed.abort(.shutdown, "bye")
        for m in samples { #expect(closed.receive(m).isEmpty) }
        // The wrong proof in a challenge (awaitingChallenge) closes with an authentication error.
        var c = Self.session(in: .awaitingChallenge)
        #expect(Self.closed(c.receive(samples[1])) == .authentication)
    }

    @Test func versionsWithoutOverlapAndSelfConnectionsAreRefused() {
        var s = SyncSession(role: .server, config: Self.config(Self.b), nonce: Array(repeating: 2, count: 32))
        _ = s.start()
        #expect(Self.closed(s.receive(.hello(minVersion: 3, maxVersion: 5, replica: Self.a, scope: .cluster, nonce: Array(repeating: 1, count: 32)))) == .version)
        var me = SyncSession(role: .server, config: Self.config(Self.b), nonce: Array(repeating: 2, count: 32))
        _ = me.start()
        #expect(Self.closed(me.receive(.hello(minVersion: 1, maxVersion: 1, replica: Self.b, scope: .cluster, nonce: Array(repeating: 1, count: 32)))) == .unexpected)
    }

    /// A session brought to `state` by a real exchange.
    static func session(in state: SyncSession.State) -> SyncSession {
        let nonceA = Array(repeating: UInt8(1), count: 32), nonceB = Array(repeating: UInt8(2), count: 32)
        var c = SyncSession(role: .client, config: config(a), nonce: nonceA)
        var s = SyncSession(role: .server, config: config(b), nonce: nonceB)
        switch state {
        case .awaitingHello: _ = s.start(); return s
        case .awaitingChallenge: _ = c.start(); return c
        case .awaitingAuth:
            _ = s.start()
            _ = s.receive(sent(c.start())[0])
            return s
        case .awaitingReady:
            _ = s.start()
            let challenge = sent(s.receive(sent(c.start())[0]))[0]
            _ = c.receive(challenge)
            return c
        default:
            return handshake(client: config(a), server: config(b)).1
        }
    }
}

extension Array where Element == UInt8 {
    func containsSubsequence(_ needle: [UInt8]) -> Bool {
        guard needle.count <= count else { return false }
        for i in 0...(count - needle.count) where Array(self[i..<(i + needle.count)]) == needle { return true }
        return false
    }
}
