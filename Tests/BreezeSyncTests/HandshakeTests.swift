import Testing
import BreezeCore
import BreezeCrypto
@testable import BreezeSync

/// The version-3 handshake (`Protocol/sync.md` section 4), sans I/O: who is accepted, what is refused, and
/// that the transcript, the versions offered and a recording are all bound to the session.
struct HandshakeTests {
    typealias F = Fixtures

    static func isHandshake3(_ m: Message) -> Bool { if case .handshake3 = m { return true } else { return false } }

    @Test func replicasEnrolledUnderTheTrustedAuthorityAuthenticateAndNoPrivateKeyCrossesTheWire() {
        let (c, s, wire) = F.handshake(F.client(F.config(F.phone, .user("ana"))), F.server(F.config(F.server)))
        #expect(c.state == .ready && s.state == .ready && c.version == 3 && s.version == 3)
        #expect(c.peerReplica == F.server && s.peerReplica == F.phone)
        #expect(c.grants?.scope == .user("ana") && s.grants?.scope == .user("ana"))
        #expect(c.handshakeHash != nil && c.handshakeHash == s.handshakeHash)
        #expect(wire.map(\.typeByte) == [0x05, 0x06, 0x07])
        let bytes = wire.flatMap { Frame.encode($0) }
        for secret in [F.deviceKey(F.phone).seed, F.deviceKey(F.server).seed, F.deviceKey(F.phone).x25519PrivateKey,
                       F.deviceKey(F.server).x25519PrivateKey, F.clientEphemeral, F.serverEphemeral] {
            #expect(!bytes.containsSubsequence(secret))
        }
        // The identities travel encrypted: neither replica id nor the scope is in clear.
        for id in [F.phone, F.server] {
            #expect(!bytes.containsSubsequence((0..<8).map { UInt8(truncatingIfNeeded: id.rawValue >> (8 * $0)) }))
        }
        #expect(!bytes.containsSubsequence(Array("user:ana".utf8)))
    }

    @Test func aCertificateFromAForeignAuthorityIsRefusedAndTheClientRevealsNothingToSuchAServer() {
        let foreign = F.chain(F.server, .cluster, signer: F.foreignAuthority)
        // A server enrolled elsewhere: the client refuses it before sending handshake3 (its own chain).
        let server = F.config(F.server, chain: foreign, trusting: F.foreignAuthority)
        let (c, s, wire) = F.handshake(F.client(F.config(F.phone)), F.server(server))
        #expect(c.state == .closed && s.state != .ready)
        #expect(!wire.contains(where: Self.isHandshake3))
        // In clear, the refusal names nobody; the reason is the refusing side's (its log).
        #expect(F.refusedInClear(wire))
        #expect(F.closeReasons(F.client(F.config(F.phone)), F.server(server)).contains { $0.contains("does not trust") })
        // A client enrolled elsewhere (that knows this cluster's authority, so it accepts the server): the
        // server refuses it at handshake3.
        var client = F.config(F.phone)
        client.credentials = unsafeCredentials(key: F.deviceKey(F.phone), chain: F.chain(F.phone, .cluster, signer: F.foreignAuthority))
        let (c2, s2, wire2) = F.handshake(F.client(client), F.server(F.config(F.server)))
        #expect(s2.state == .closed && s2.peerReplica == nil)
        #expect(F.refusedInClear(wire2))
        #expect(F.closeReasons(F.client(client), F.server(F.config(F.server))).contains { $0.contains("does not trust") })
        _ = c2
    }

    @Test func expiredAndNotYetValidCertificatesAreRefused() {
        for (from, to) in [(F.notBefore, F.now - 1), (F.now + 1, F.notAfter)] {
            // Chains checked against `now` by the peer (the fixture credentials themselves are checked at
            // `from` so that they can be made at all).
            let chain = F.chain(F.server, .cluster, notBefore: from, notAfter: to)
            let creds = try! SyncCredentials(deviceKey: F.deviceKey(F.server), chain: chain, authority: F.authority.publicKey, nowMillis: from)
            var cfg = SyncSession.Config(credentials: creds)
            cfg.window = 2
            let (c, s, wire) = F.handshake(F.client(F.config(F.phone)), F.server(cfg))
            #expect(c.state == .closed && s.state != .ready, "valid \(from)...\(to), now \(F.now)")
            #expect(F.refusedInClear(wire))
            #expect(F.closeReasons(F.client(F.config(F.phone)), F.server(cfg)).contains { $0.contains("expired") || $0.contains("not valid before") })
        }
        // And a replica cannot even start with credentials that are not valid now.
        #expect(throws: CertificateError.self) {
            try SyncCredentials(deviceKey: F.deviceKey(F.server), chain: F.chain(F.server, .cluster, notAfter: F.now - 1),
                                authority: F.authority.publicKey, nowMillis: F.now)
        }
    }

    @Test func aCertificateCopiedFromAnotherReplicaIsRefused() {
        // The attacker holds its own key but presents the phone's (valid) certificate: the certificate binds
        // replica id and scope to the phone's key, which the attacker cannot prove it holds.
        let phoneChain = F.chain(F.phone, .user("ana"))
        let thief = ReplicaID(rawValue: 0xBAD)
        var forged = F.config(thief, .user("ana"))
        forged.credentials = unsafeCredentials(key: F.deviceKey(thief), chain: phoneChain)
        let (c, s, wire) = F.handshake(F.client(forged), F.server(F.config(F.server)))
        #expect(s.state == .closed && s.peerReplica == nil)
        #expect(F.refusedInClear(wire))
        #expect(F.closeReasons(F.client(forged), F.server(F.config(F.server))).contains { $0.contains("another key") })
        _ = c
        // The same with the roles swapped: a server presenting the phone's chain.
        var server = F.config(thief, .user("ana"))
        server.credentials = unsafeCredentials(key: F.deviceKey(thief), chain: phoneChain)
        let (c2, _, wire2) = F.handshake(F.client(F.config(F.server)), F.server(server))
        #expect(c2.state == .closed && !wire2.contains(where: Self.isHandshake3))
    }

    /// Credentials whose chain certifies another key (`SyncCredentials.init` refuses that, as it should; an
    /// attacker is not bound by it).
    func unsafeCredentials(key: Ed25519.KeyPair, chain: [Certificate]) -> SyncCredentials {
        SyncCredentials(unchecked: key, chain: chain, authority: F.authority.publicKey)
    }

    @Test func rewritingTheOfferedVersionsOnTheWayFailsTheHandshake() {
        // An attacker between the two rewrites the client's offer; the server, seeing a range it speaks,
        // answers, but the client's prologue differs from the server's, so it cannot open handshake2.
        for (lo, hi) in [(3, 4), (2, 3), (3, 3 + 100)] as [(UInt16, UInt16)] {
            var c = F.client(F.config(F.phone)), s = F.server(F.config(F.server))
            _ = s.start()
            guard case .handshake1(_, _, let e) = F.sent(c.start())[0] else { Issue.record("no handshake1"); return }
            let reply = F.sent(s.receive(.handshake1(minVersion: lo, maxVersion: hi, ephemeral: e)))
            #expect(reply.count == 1 && s.state == .awaitingHandshake3, "\(lo)...\(hi)")
            let out = F.sent(c.receive(reply[0]))
            #expect(c.state == .closed && !out.contains(where: Self.isHandshake3), "\(lo)...\(hi)")
        }
        // Rewritten to versions only 1 and 2 speak: refused at once (no plaintext version exists to fall to).
        var s = F.server(F.config(F.server))
        _ = s.start()
        #expect(F.closed(s.receive(.handshake1(minVersion: 1, maxVersion: 2, ephemeral: X25519.publicKey(privateKey: F.seed(3))))) == .version)
    }

    @Test func everyByteFlipOfEveryHandshakeFrameIsDetected() {
        func link() -> Link { Link(client: F.client(F.config(F.phone, .user("ana"))), server: F.server(F.config(F.server))) }
        var clean = link()
        clean.run()
        #expect(clean.client.state == .ready && clean.server.state == .ready)
        let handshake = clean.frames.prefix(3).map(\.bytes)
        #expect(handshake.count == 3 && clean.frames.prefix(3).map { $0.bytes[4] } == [0x05, 0x06, 0x07])
        var flips = 0, refused = 0, stalled = 0
        for (index, frame) in handshake.enumerated() {
            for byte in 0..<frame.count {
                var l = link()
                l.run { i, _, bytes in
                    guard i == index else { return bytes }
                    var b = bytes
                    b[byte] ^= 0x01
                    return b
                }
                flips += 1
                #expect(!(l.client.state == .ready && l.server.state == .ready), "frame \(index + 1) byte \(byte): the handshake completed")
                #expect(l.storedByServer.isEmpty && l.storedByClient.isEmpty)
                if l.client.state == .closed || l.server.state == .closed {
                    refused += 1
                } else {
                    // Only a flipped length can leave a side waiting for bytes that never come (the node's
                    // handshake timeout closes it).
                    #expect(byte < 4 && l.pending > 0, "frame \(index + 1) byte \(byte): neither refused nor waiting")
                    stalled += 1
                }
            }
        }
        #expect(flips == handshake.reduce(0) { $0 + $1.count } && refused + stalled == flips)
        print("handshake byte flips: \(flips), refused \(refused), left waiting for a longer frame \(stalled), accepted 0")
    }

    @Test func aRecordedSessionReplayedToEitherSideIsRefused() {
        // Record a whole session: handshake, then the client's sealed vectors and a batch of events.
        var (c, s, wire) = F.handshake(F.client(F.config(F.phone)), F.server(F.config(F.server)))
        let data = [c.sealed(.vectors([])), c.sealed(.events(batch: 1, events: [F.event(.user("me"), F.phone, 1)]))]
        #expect(s.receive(data[0]) == [.rescan] && s.receive(data[1]).contains { if case .ingest = $0 { return true } else { return false } })
        let fromClient = wire.filter { $0.typeByte == 0x05 || $0.typeByte == 0x07 } + data
        let fromServer = wire.filter { $0.typeByte == 0x06 }
        // Replayed to a server (which picks a fresh ephemeral key): handshake3 does not open; nothing stored.
        var replayServer = F.server(F.config(F.server), ephemeral: F.seed(0xE3))
        _ = replayServer.start()
        var actions: [SyncSession.Action] = []
        for m in fromClient where replayServer.state != .closed { actions += replayServer.receive(m) }
        #expect(replayServer.state == .closed && replayServer.peerReplica == nil)
        #expect(F.closed(actions) == .authentication)
        #expect(!actions.contains { if case .ingest = $0 { return true }; if case .authenticated = $0 { return true }; return false })
        // Replayed to a client (fresh ephemeral key): the recorded handshake2 does not open.
        var replayClient = F.client(F.config(F.phone), ephemeral: F.seed(0xE4))
        _ = replayClient.start()
        let out = replayClient.receive(fromServer[0])
        #expect(replayClient.state == .closed && F.closed(out) == .authentication)
        // And even the same ephemeral keys on one side only are not enough: the other side's are new.
        var sameClientKeys = F.server(F.config(F.server), ephemeral: F.seed(0xE5))
        _ = sameClientKeys.start()
        _ = sameClientKeys.receive(fromClient[0])
        #expect(F.closed(sameClientKeys.receive(fromClient[1])) == .authentication)
    }

    @Test func plainFramesAfterTheHandshakeAreRefused() {
        var (c, s) = F.pair()
        _ = c
        // An attacker injects plain messages that a version-2 replica would have taken.
        for m in [Message.vectors([]), .events(batch: 1, events: [F.event(.user("me"), F.phone, 1)]), .ping(1), .ack(batch: 1, inserted: 1, duplicates: 0)] {
            var victim = s
            let actions = victim.receive(m)
            #expect(victim.state == .closed && !actions.contains { if case .ingest = $0 { return true } else { return false } })
        }
        // Once a sealed frame has opened, even a plain error is refused (sealed answer); before, it only closes.
        var afterSealed = s
        _ = afterSealed.receive(c.sealed(.vectors([])))
        let answer = afterSealed.receive(.error(code: .shutdown, message: "forged"))
        #expect(afterSealed.state == .closed && SyncSession.wire(answer).contains { if case .sealed = $0 { return true } else { return false } })
        _ = s.receive(.error(code: .authentication, message: "the server refused handshake3"))
        #expect(s.state == .closed)
    }

    @Test func theGoldenHandshakeIsTheDocumentedOne() throws {
        let (c, s, wire) = F.handshake(F.client(F.config(F.phone, .user("ana"))), F.server(F.config(F.server)))
        #expect(c.state == .ready && s.state == .ready)
        #expect(Digest.hex(c.handshakeHash!) == GoldenFrameTests.handshakeHash)
        for (name, m) in zip(["handshake1", "handshake2", "handshake3"], wire) {
            #expect(GoldenFrameTests.readHex(GoldenFrameTests.goldenDir + "/\(name).hex") == Frame.encode(m), "\(name)")
        }
    }
}
