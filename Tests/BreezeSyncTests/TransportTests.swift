import Testing
import BreezeCore
import BreezeCrypto
@testable import BreezeSync

/// The sealed frames after the handshake (`Protocol/sync.md` section 2.1): one flipped, dropped, repeated,
/// reordered, injected or reflected frame ends the session and nothing of it is stored; nonces count frames
/// and never repeat; no plaintext reaches the wire.
struct TransportTests {
    typealias F = Fixtures

    /// A link after a clean handshake and vectors exchange, cluster scope, one event per batch.
    static func readyLink() -> Link {
        var server = F.config(F.server), client = F.config(F.phone)
        client.batchEvents = 1
        client.window = 4
        server.window = 4
        var l = Link(client: F.client(client), server: F.server(server))
        l.run()
        precondition(l.client.state == .ready && l.server.state == .ready && l.client.wantsEvents, "link not ready")
        return l
    }

    static let rows: [(seq: Int64, event: Event)] = (1...3).map { (Int64($0), F.event(.public, F.phone, UInt64($0))) }

    @Test func everyByteFlipOfASealedDataFrameClosesTheSessionAndStoresNothing() {
        var clean = Self.readyLink()
        let first = clean.frames.count
        clean.send(clean.client.offer(Array(Self.rows.prefix(1)), scannedTo: 1), fromClient: true)
        #expect(clean.storedByServer.count == 1 && clean.server.state == .ready)
        let frame = clean.frames[first].bytes
        #expect(frame[4] == 0x30)
        var refused = 0, stalled = 0
        for byte in 0..<frame.count {
            var l = Self.readyLink()
            let index = l.frames.count
            l.send(l.client.offer(Array(Self.rows.prefix(1)), scannedTo: 1), fromClient: true) { i, _, bytes in
                guard i == index else { return bytes }
                var b = bytes
                b[byte] ^= 0x01
                return b
            }
            #expect(l.storedByServer.isEmpty, "byte \(byte): the altered frame was stored")
            if l.server.state == .closed { refused += 1 } else {
                // A raised length, or a type that is not 0x30 (the frame then takes a checksum), leaves the
                // receiver waiting for bytes; the next frame's bytes or the idle timeout end it.
                #expect(byte <= 4 && l.pending > 0, "byte \(byte): neither refused nor waiting for a longer frame")
                stalled += 1
            }
        }
        #expect(refused + stalled == frame.count && refused >= frame.count - 5)
        #expect(frame.count == 4 + Int(frame[0]) | Int(frame[1]) << 8, "a sealed frame has no CRC")
        print("sealed data frame byte flips: \(frame.count) (no checksum: the tag covers every byte), refused \(refused), "
              + "left waiting for a longer frame (length or type changed) \(stalled), stored 0")
    }

    /// Sends three one-event batches from the client through `tamper`; returns the link.
    static func threeBatches(_ tamper: (_ dataIndex: Int, _ bytes: [UInt8], _ earlier: [[UInt8]]) -> [UInt8]) -> Link {
        var l = readyLink()
        let base = l.frames.count
        var seen: [[UInt8]] = []
        l.send(l.client.offer(rows, scannedTo: 3), fromClient: true) { i, toServer, bytes in
            guard toServer, i >= base else { return bytes }
            defer { seen.append(bytes) }
            return tamper(seen.count, bytes, seen)
        }
        return l
    }

    @Test func aDroppedRepeatedReorderedOrInjectedFrameEndsTheSessionAndIsNeverStored() {
        let intact = Self.threeBatches { _, b, _ in b }
        #expect(intact.storedByServer.map(\.id.counter) == [1, 2, 3] && intact.server.state == .ready)
        var held: [UInt8] = []
        let cases: [(String, (Int, [UInt8], [[UInt8]]) -> [UInt8], [UInt64])] = [
            ("drop the first", { i, b, _ in i == 0 ? [] : b }, []),
            ("drop the second", { i, b, _ in i == 1 ? [] : b }, [1]),
            ("repeat the first", { i, b, _ in i == 0 ? b + b : b }, [1]),
            ("replay the first after the second", { i, b, e in i == 1 ? b + e[0] : b }, [1, 2]),
            ("swap the first two", { i, b, _ in if i == 0 { held = b; return [] }; return i == 1 ? b + held : b }, []),
            ("inject random bytes as a sealed frame", { i, b, _ in i == 1 ? Frame.encode(.sealed(SecureRandom.bytes(40))) + b : b }, [1]),
            ("inject a plain events frame", { i, b, _ in
                i == 1 ? Frame.encode(.events(batch: 2, events: [F.event(.user("me"), ReplicaID(rawValue: 0xEE), 1)])) + b : b }, [1]),
            ("inject a plain error frame", { i, b, _ in i == 1 ? Frame.encode(.error(code: .shutdown, message: "forged")) + b : b }, [1]),
        ]
        for (name, tamper, expected) in cases {
            let l = Self.threeBatches(tamper)
            #expect(l.storedByServer.map(\.id.counter) == expected, "\(name): stored \(l.storedByServer.map(\.id.counter))")
            #expect(l.server.state == .closed, "\(name): the session went on")
            #expect(!l.storedByServer.contains { $0.id.origin.replica == ReplicaID(rawValue: 0xEE) }, "\(name)")
        }
    }

    @Test func aFrameReflectedToItsSenderOrSplicedIntoAnotherSessionDoesNotOpen() {
        var (c, s) = F.pair()
        let frame = c.sealed(.ping(7))
        var reflected = c
        _ = reflected.receive(frame)
        #expect(reflected.state == .closed)
        // Another session between the same two replicas (new ephemeral keys): the frame does not open there.
        var (_, other, _) = F.handshake(F.client(F.config(F.phone), ephemeral: F.seed(0x77)), F.server(F.config(F.server), ephemeral: F.seed(0x78)))
        _ = other.receive(frame)
        #expect(other.state == .closed)
        #expect(F.sent(s.receive(frame)).count == 1 && s.state == .ready)    // (its own session opens it: a pong)
    }

    @Test func theLengthIsAuthenticatedEvenWhenTheChecksumIsRedone() {
        var (c, s) = F.pair()
        guard case .sealed(let payload) = c.sealed(.ping(1)) else { Issue.record("not sealed"); return }
        // Re-framed one byte shorter and one byte longer, each with a correct CRC: the tag covers the length.
        for changed in [Array(payload.dropLast()), payload + [0]] {
            var victim = s
            var d = FrameDecoder()
            let ms = try? d.feed(Frame.encode(.sealed(changed)))
            #expect(ms?.count == 1)
            _ = ms.map { victim.receive($0[0]) }
            #expect(victim.state == .closed)
        }
        // The frame as it was opens (a pong comes back); then one whose plaintext is not a message that
        // travels sealed is malformed.
        var reader = c
        #expect(reader.read(s.receive(.sealed(payload))) == [.pong(1)] && s.state == .ready)
        guard case .sealed(let inner) = c.sealed(.handshake1(minVersion: 3, maxVersion: 3, ephemeral: F.seed(1))) else { return }
        let answer = s.receive(.sealed(inner))
        #expect(s.state == .closed)
        if case .error(let code, let text)? = reader.read(answer).first { #expect(code == .malformed && text.contains("never sealed")) }
        else { Issue.record("no malformed error") }
    }

    @Test func everyFrameUsesTheNextNonceAndEqualMessagesNeverGiveEqualBytes() {
        var (c, s) = F.pair()
        var seen = Set<[UInt8]>()
        for i in 0..<200 {
            #expect(c.sendNonce == UInt64(i))
            let frame = c.sealed(.ping(42))
            guard case .sealed(let bytes) = frame else { Issue.record("not sealed"); return }
            #expect(seen.insert(bytes).inserted, "frame \(i) repeats an earlier one")
            #expect(Fixtures.sent(s.receive(frame)).count == 1)        // opened in order: answered with a pong
        }
        #expect(c.sendNonce == 200 && s.state == .ready && c.state == .ready)
        // The two directions have different keys: the server's first frame is not the client's first frame.
        var (c2, s2) = F.pair()
        #expect(c2.sealed(.ping(42)) != s2.sealed(.ping(42)))
    }

    @Test func aSessionEndsBeforeItsNonceCounterCouldWrap() throws {
        var client = F.config(F.phone)
        client.nonceLimit = 4
        var (c, s, _) = F.handshake(F.client(client), F.server(F.config(F.server)))
        #expect(c.state == .ready)
        // Nonces 0, 1, 2 carry messages; 3 is the last below the limit and carries the error that ends it.
        for _ in 0..<3 { _ = s.receive(c.sealed(.pong(1))) }
        let last = c.send(.ping(1))
        #expect(c.state == .closed && c.sendNonce == 4)
        let opened = s.read(last)
        #expect(opened.count == 1)
        if case .error(let code, _)? = opened.first { #expect(code == .exhausted) } else { Issue.record("no exhausted error: \(opened)") }
        // A receiver refuses a frame beyond its own limit too.
        var server = F.config(F.server)
        server.nonceLimit = 2
        var (c3, s3, _) = F.handshake(F.client(F.config(F.phone)), F.server(server))
        _ = s3.receive(c3.sealed(.pong(1)))
        _ = s3.receive(c3.sealed(.pong(2)))
        #expect(s3.state == .ready)
        _ = s3.receive(c3.sealed(.pong(3)))
        #expect(s3.state == .closed)
        // And Noise's own rule: a CipherState never uses the nonce 2^64 - 1.
        var cs = CipherState(key: F.seed(5), nonce: .max - 1)
        _ = try cs.encrypt(ad: [], [1])
        #expect(throws: NoiseError.self) { try cs.encrypt(ad: [], [1]) }
    }

    @Test func noUserDataTravelsInClear() {
        var l = Self.readyLink()
        let favourite = Event(stream: .user("me"), id: EventID(origin: Origin(replica: F.phone, epoch: 1), counter: 1),
                              hlc: HLC(rawValue: 1), body: .favouriteAdd(sensor: "131075"))
        l.send(l.client.offer([(1, favourite)], scannedTo: 1), fromClient: true)
        #expect(l.storedByServer == [favourite])
        let wire = l.frames.flatMap(\.bytes)
        let needle = Array("131075".utf8)
        #expect(favourite.encoded.containsSubsequence(needle))              // the search would find it in clear
        #expect(Frame.encode(.events(batch: 1, events: [favourite])).containsSubsequence(needle))
        #expect(!wire.containsSubsequence(needle))
    }
}
