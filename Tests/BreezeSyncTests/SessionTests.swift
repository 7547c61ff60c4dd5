import Testing
import BreezeCore
import BreezeCrypto
@testable import BreezeSync

/// The session state machine driven directly, with no sockets: grants, batches, the window, acknowledgements
/// and every message in every state (the handshake itself is `HandshakeTests`, the sealed frames
/// `TransportTests`).
struct SessionTests {
    typealias F = Fixtures
    static let a = F.phone, b = F.server

    /// Reads batches the way a peer does: opens each sealed frame with `reader`, then `events` as they are and
    /// `packed` through its `PackedDecoder`.
    struct Unpacker {
        var reader: SyncSession
        var decoder = PackedDecoder()
        var next: UInt64 = 1

        /// The batches in `actions`, as (number, events).
        mutating func batches(_ actions: [SyncSession.Action]) -> [(UInt64, [Event])] {
            var out: [(UInt64, [Event])] = []
            for m in reader.read(actions) {
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

    /// The code of the first `error` among `messages`.
    static func errorCode(_ messages: [Message]) -> SyncErrorCode? {
        for case .error(let code, _) in messages { return code }
        return nil
    }

    static func ingests(_ actions: [SyncSession.Action]) -> Bool {
        actions.contains { if case .ingest = $0 { return true } else { return false } }
    }

    @Test func aUserCertificateGrantsOnlyThatUsersStreamsAndReadOnlyPublic() {
        var (phone, server) = F.pair(client: F.config(Self.a, .user("ana")))
        #expect(server.grants?.scope == .user("ana") && phone.grants?.scope == .user("ana"))
        // The phone asks for bo's stream: refused.
        var bad = server, badPhone = phone
        let asked = bad.receive(badPhone.sealed(.vectors([StreamVector(stream: .user("bo"), vector: VersionVector())])))
        #expect(bad.state == .closed && Self.errorCode(badPhone.read(asked)) == .forbidden)
        // The phone sends public events: refused, nothing to ingest.
        var bad2 = server, badPhone2 = phone
        let wrote = bad2.receive(badPhone2.sealed(.events(batch: 1, events: [F.event(.public, Self.a, 1)])))
        #expect(bad2.state == .closed && !Self.ingests(wrote) && Self.errorCode(badPhone2.read(wrote)) == .forbidden)
        // Its own streams are fine, and the server sends it public and ana's streams, but not bo's.
        let ok = server.receive(phone.sealed(.vectors([StreamVector(stream: .user("ana"), vector: VersionVector()),
                                                       StreamVector(stream: .public, vector: VersionVector())])))
        #expect(ok == [.rescan])
        let offer = server.offer([(1, F.event(.public, Self.b, 1)), (2, F.event(.user("bo"), Self.b, 1)),
                                  (3, F.event(.user("ana"), Self.b, 1)), (4, F.event(.health("ana"), Self.b, 1))], scannedTo: 4)
        var phoneSide = Unpacker(reader: phone)
        let shipped = phoneSide.batches(offer).flatMap(\.1)
        #expect(shipped.map(\.stream) == [.public, .user("ana"), .health("ana")])
        // The phone's own vectors never list public as something it could send.
        var server2 = server
        let v = server2.read(phone.sendVectors(local: [.public: VersionVector(), .user("ana"): VersionVector(), .user("bo"): VersionVector()]))
        #expect(v == [.vectors([StreamVector(stream: .public, vector: VersionVector()),
                                StreamVector(stream: .user("ana"), vector: VersionVector())])])
    }

    @Test func onlyACertificateOfScopeClusterMakesAPeerTheClusterSideWhoeverDialled() {
        // Another of ana's devices dials ana's phone: its certificate says user:ana, so it is not the cluster
        // and may not write public.
        var (tablet, phone) = F.pair(client: F.config(ReplicaID(rawValue: 0x7AB), .user("ana")), server: F.config(Self.a, .user("ana")))
        #expect(phone.grants?.peerIsCluster == false && tablet.grants?.peerIsCluster == false)
        let wrote = phone.receive(tablet.sealed(.events(batch: 1, events: [F.event(.public, ReplicaID(rawValue: 0x7AB), 1)])))
        #expect(phone.state == .closed && !Self.ingests(wrote) && Self.errorCode(tablet.read(wrote)) == .forbidden)
        // A cluster server accepts from either side: dialled by the phone, or dialling it.
        var (dialer, server, _) = F.handshake(F.client(F.config(Self.a, .user("ana"))), F.server(F.config(Self.b)))
        #expect(dialer.grants?.peerIsCluster == true)
        #expect(Self.ingests(dialer.receive(server.sealed(.events(batch: 1, events: [F.event(.public, Self.b, 1)])))))
        var (server2, phone2, _) = F.handshake(F.client(F.config(Self.b)), F.server(F.config(Self.a, .user("ana"))))
        #expect(phone2.grants?.peerIsCluster == true)
        #expect(Self.ingests(phone2.receive(server2.sealed(.events(batch: 1, events: [F.event(.public, Self.b, 1)])))))
    }

    @Test func twoDifferentUsersCannotSync() {
        let (c, s, _) = F.handshake(F.client(F.config(Self.a, .user("ana"))), F.server(F.config(Self.b, .user("bo"))))
        #expect(c.state == .closed && s.state != .ready)
        let (c2, s2, _) = F.handshake(F.client(F.config(Self.b, .user("bo"))), F.server(F.config(Self.a, .user("ana"))))
        #expect(c2.state != .ready && s2.state == .closed)
    }

    @Test func batchesRespectTheWindowAndOnlyCarryWhatThePeerLacks() {
        var (c, s) = F.pair()
        #expect(!s.wantsEvents)                                  // no vectors from the peer yet
        let peerHas = VersionVector([Origin(replica: Self.b, epoch: 1): 2])
        _ = s.receive(c.sealed(.vectors([StreamVector(stream: .user("u"), vector: peerHas)])))
        #expect(s.wantsEvents && s.readLimit == 6)
        let rows = (1...6).map { (Int64($0), F.event(.user("u"), Self.b, UInt64($0))) }
        var peer = Unpacker(reader: c)
        let batches = peer.batches(s.offer(rows, scannedTo: 6)).map { ($0.0, $0.1.map(\.id.counter)) }
        #expect(batches.map(\.1) == [[3, 4, 5], [6]])
        #expect(s.unacknowledged == 2 && !s.wantsEvents && s.cursor == 6)
        _ = s.receive(c.sealed(.ack(batch: batches[0].0, inserted: 3, duplicates: 0)))
        #expect(s.wantsEvents && s.readLimit == 3)
        // Offering the same rows again sends nothing: the peer is known to hold them now.
        #expect(s.offer(rows, scannedTo: 6).isEmpty)
        // Events received from the peer are not echoed back to it.
        let theirs = F.event(.user("u"), Self.a, 1)
        let got = s.receive(c.sealed(.events(batch: 1, events: [theirs])))
        #expect(got == [.ingest(batch: 1, events: [theirs])])
        #expect(s.offer([(7, theirs)], scannedTo: 7).isEmpty)
        var reader = peer.reader
        #expect(reader.read(s.committed(batch: 1, inserted: 1, duplicates: 0, gaps: 0)) == [.ack(batch: 1, inserted: 1, duplicates: 0)])
        #expect(s.committed(batch: 2, inserted: 0, duplicates: 0, gaps: 1).contains(.resendVectors))
    }

    @Test func batchNumbersOutOfSequenceEndTheSessionEvenInsideValidSealedFrames() {
        // The channel refuses frames lost, repeated or reordered on the way (`TransportTests`); a sender that
        // numbers its own batches wrongly is caught by the batch check.
        let e = F.event(.user("u"), Self.a, 1)
        for (numbers, bad) in [([1, 1], 1), ([2], 0), ([1, 3], 1), ([2, 1], 0)] as [([UInt64], Int)] {
            var (c, s) = F.pair()
            var codes: [Bool] = []
            for n in numbers { codes.append(s.receive(c.sealed(.events(batch: n, events: [e]))).contains { if case .close = $0 { return true } else { return false } }) }
            #expect(codes[bad] && s.state == .closed, "batches \(numbers)")
            #expect(codes.enumerated().allSatisfy { $0.offset == bad || !$0.element }, "batches \(numbers)")
        }
        var (c, s) = F.pair()
        for n: UInt64 in 1...3 { #expect(Self.ingests(s.receive(c.sealed(.events(batch: n, events: [e]))))) }
    }

    @Test func aLostOrRepeatedAckEndsTheSession() {
        var cfg = F.config(Self.b)
        cfg.batchBytes = 1          // one event per batch
        cfg.window = 3
        for acks in [[2], [1, 1], [1, 3]] as [[UInt64]] {
            var (c, s) = F.pair(server: cfg)
            _ = s.receive(c.sealed(.vectors([])))
            let rows = (1...3).map { (Int64($0), F.event(.public, Self.b, UInt64($0))) }
            #expect(SyncSession.wire(s.offer(rows, scannedTo: 3)).count == 3)
            for n in acks { _ = s.receive(c.sealed(.ack(batch: n, inserted: 1, duplicates: 0))) }
            #expect(s.state == .closed, "acks \(acks)")
        }
        var (c, s) = F.pair(server: cfg)
        #expect(s.awaitingVectors)
        _ = s.receive(c.sealed(.vectors([])))
        #expect(!s.awaitingVectors)
        _ = s.offer((1...3).map { (Int64($0), F.event(.public, Self.b, UInt64($0))) }, scannedTo: 3)
        for n: UInt64 in 1...3 { _ = s.receive(c.sealed(.ack(batch: n, inserted: 1, duplicates: 0))) }
        #expect(s.state == .ready && s.acksReceived == 3 && s.unacknowledged == 0)
    }

    @Test func fewerEventsPerBatchWhenEventsAreLarge() {
        var cfg = F.config(Self.b)
        cfg.batchEvents = 100
        cfg.batchBytes = 200
        var (c, s) = F.pair(server: cfg)
        _ = s.receive(c.sealed(.vectors([])))
        let rows = (1...5).map { (Int64($0), F.event(.public, Self.b, UInt64($0))) }
        var peer = Unpacker(reader: c)
        let sizes = peer.batches(s.offer(rows, scannedTo: 5)).map(\.1.count)
        #expect(sizes.reduce(0, +) == 5 && sizes.count > 1)
        #expect(s.unacknowledged <= cfg.window)
    }

    @Test func smallBatchesStopAtTheWindowAndTheRestIsReadAgainAfterAcks() {
        var cfg = F.config(Self.b)
        cfg.batchEvents = 100
        cfg.batchBytes = 1          // one event per batch
        cfg.window = 2
        var (c, s) = F.pair(server: cfg)
        _ = s.receive(c.sealed(.vectors([])))
        let rows = (1...5).map { (Int64($0), F.event(.public, Self.b, UInt64($0))) }
        var shipped: [UInt64] = []
        var peer = Unpacker(reader: c)
        var rounds = 0
        while shipped.count < 5 && rounds < 10 {
            let pending = rows.filter { $0.0 > s.cursor }
            let out = s.offer(pending, scannedTo: 5)
            #expect(s.unacknowledged <= 2, "window respected")
            for (n, e) in peer.batches(out) {
                shipped += e.map(\.id.counter)
                _ = s.receive(c.sealed(.ack(batch: n, inserted: UInt32(e.count), duplicates: 0)))
            }
            rounds += 1
        }
        #expect(shipped == [1, 2, 3, 4, 5])
        #expect(s.state == .ready)
    }

    /// A session brought to `state` by a real exchange, and its peer.
    static func session(in state: SyncSession.State) -> (session: SyncSession, peer: SyncSession) {
        var c = F.client(F.config(a)), s = F.server(F.config(b))
        switch state {
        case .awaitingHandshake1: _ = s.start(); return (s, c)
        case .awaitingHandshake2: _ = c.start(); return (c, s)
        case .awaitingHandshake3:
            _ = s.start()
            _ = s.receive(F.sent(c.start())[0])
            return (s, c)
        default:
            let (c2, s2) = F.pair()
            return (s2, c2)
        }
    }

    @Test func everyMessageInEveryStateIsEitherHandledOrRefused() {
        let plain: [Message] = [
            .hello(minVersion: 1, maxVersion: 2, replica: Self.a, scope: .cluster, nonce: Array(repeating: 1, count: 32)),
            .handshake1(minVersion: 3, maxVersion: 3, ephemeral: X25519.publicKey(privateKey: F.seed(9))),
            .handshake2(noise: Array(repeating: 7, count: 120)), .handshake3(noise: Array(repeating: 7, count: 90)),
            .sealed(Array(repeating: 7, count: 40)),
            .vectors([]), .events(batch: 1, events: []), .ack(batch: 99, inserted: 0, duplicates: 0), .ping(1), .pong(1), .reset,
            { var e = PackedEncoder(); return e.encode(batch: 1, events: [F.event(.user("u"), Self.a, 1)])!.last! }(),
            .error(code: .shutdown, message: "bye"),
        ]
        // Which plain message types each state accepts without closing (ready accepts none: everything after
        // the handshake must be sealed; a garbage `sealed` frame does not open).
        let accepted: [SyncSession.State: Set<UInt8>] = [
            .awaitingHandshake1: [0x05], .awaitingHandshake2: [], .awaitingHandshake3: [], .ready: [],
        ]
        for (state, ok) in accepted {
            for m in plain {
                var (s, _) = Self.session(in: state)
                #expect(s.state == state)
                let actions = s.receive(m)
                if case .error = m {
                    #expect(s.state == .closed && F.closed(actions) == nil, "\(state): a peer's error closes without an answer")
                } else if ok.contains(m.typeByte) {
                    #expect(s.state != .closed, "\(state) should accept 0x\(String(m.typeByte, radix: 16))")
                } else {
                    #expect(s.state == .closed, "\(state) should refuse 0x\(String(m.typeByte, radix: 16))")
                    #expect(SyncSession.wire(actions).contains { if case .error = $0 { return true }; if case .sealed = $0 { return true }; return false },
                            "\(state) sends an error frame")
                }
            }
        }
        // In ready, each of those messages sealed by the peer is handled (all but hello and the handshake,
        // which are never sealed: malformed).
        for m in plain {
            var (s, peer) = Self.session(in: .ready)
            _ = s.receive(peer.sealed(.vectors([])))
            let sealable = Message.isSealable(m.typeByte)
            guard sealable else { continue }
            _ = s.receive(peer.sealed(m))
            let expectOpen: Bool
            switch m { case .error, .ack: expectOpen = false; default: expectOpen = true }
            #expect((s.state == .ready) == expectOpen, "sealed 0x\(String(m.typeByte, radix: 16))")
        }
        // A closed session ignores everything.
        var (closed, _) = Self.session(in: .ready)
        _ = closed.abort(.shutdown, "bye")
        for m in plain { #expect(closed.receive(m).isEmpty) }
    }

    @Test func versionsOneAndTwoAndSelfConnectionsAreRefused() {
        var s = F.server(F.config(Self.b))
        _ = s.start()
        let old = s.receive(.hello(minVersion: 1, maxVersion: 2, replica: Self.a, scope: .cluster, nonce: Array(repeating: 1, count: 32)))
        #expect(F.closed(old) == .version && s.state == .closed)
        var s2 = F.server(F.config(Self.b))
        _ = s2.start()
        let e = X25519.publicKey(privateKey: F.seed(9))
        #expect(F.closed(s2.receive(.handshake1(minVersion: 1, maxVersion: 2, ephemeral: e))) == .version)
        var s3 = F.server(F.config(Self.b))
        _ = s3.start()
        #expect(F.closed(s3.receive(.handshake1(minVersion: 4, maxVersion: 9, ephemeral: e))) == .version)
        // A replica dialling itself (its own certificate on both sides).
        let (c, me, _) = F.handshake(F.client(F.config(Self.b)), F.server(F.config(Self.b)))
        #expect(c.state == .closed && me.state != .ready)
    }

    /// `storedFromPeer`: the scan steps over rows of the peer's own events only when it had reached them, so
    /// it never skips a row it has not read.
    @Test func theScanStepsOverAPeersOwnEventsOnlyFromWhereItHadReached() {
        var (_, server) = F.pair()
        #expect(server.cursor == 0)
        server.storedFromPeer(5...9)          // rows 1 to 4 not read yet: nothing skipped
        #expect(server.cursor == 0)
        server.storedFromPeer(1...3)
        #expect(server.cursor == 3)
        server.storedFromPeer(4...7)
        #expect(server.cursor == 7)
        server.storedFromPeer(2...5)          // already past: stays
        #expect(server.cursor == 7)
    }
}
