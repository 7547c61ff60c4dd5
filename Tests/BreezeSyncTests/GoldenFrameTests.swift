import Testing
import BreezeCore
import BreezeCrypto
@testable import BreezeSync
@preconcurrency import Glibc

/// The golden frames in `Protocol/golden/` decode to the documented messages and re-encode byte for byte: each
/// message's layout (framed in the clear, as a version-3 side sends only the handshake and errors before it;
/// the rest are the plaintext of sealed frames), the handshake of `Protocol/sync.md` section 4.7 and the sealed
/// frames that follow it. Set BREEZE_WRITE_GOLDEN=1 to (re)write them after a deliberate change.
struct GoldenFrameTests {
    static let origin = Origin(replica: ReplicaID(rawValue: 0x0123_4567_89ab_cdef), epoch: 3)
    static let example = Event(stream: .user("ana"), id: EventID(origin: origin, counter: 1),
                               hlc: HLC(physicalMillis: 1_700_000_000_000, logical: 5), body: .favouriteAdd(sensor: "131075"))

    static let vectorsExample = Message.vectors([StreamVector(stream: .health("ana"), vector: VersionVector()),
                                                 StreamVector(stream: .user("ana"), vector: VersionVector([origin: 7]))])

    /// The test vector of `Protocol/sync.md` 4.10: the cluster authority of `Fixtures` (seed 32 bytes of 0x41)
    /// revokes the phone's device key (seed 32 bytes of 0x50), in a `device.revoke` event of the server.
    static let revocationEvent = Event(
        stream: .public, id: EventID(origin: Origin(replica: Fixtures.server, epoch: 1), counter: 1),
        hlc: HLC(physicalMillis: 1_750_000_000_000, logical: 0),
        body: .revocation(Revocation.sign(key: Fixtures.deviceKey(Fixtures.phone).publicKey, replica: Fixtures.phone,
                                          revokedAtMillis: 1_750_000_000_000, reason: "lost", signer: Fixtures.authority)))

    /// The test vector of `Protocol/sync.md` 6.9: ana's phone (device key seed 32 bytes of 0x50, its chain of
    /// section 4.7) signs its first event of `user:ana`, and sends the signature before batch 1.
    static let signedEvent = Event(stream: .user("ana"), id: EventID(origin: Origin(replica: Fixtures.phone, epoch: 1), counter: 1),
                                   hlc: HLC(physicalMillis: 1_750_000_000_000, logical: 0), body: .favouriteAdd(sensor: "131075"))
    static let signaturesExample = Message.signatures(batch: 1, [SignatureEntry(index: 0, signature: OriginSignature.sign(
        signedEvent, key: Fixtures.deviceKey(Fixtures.phone), chain: Fixtures.chain(Fixtures.phone, .user("ana")).map(\.encoded)))])

    static let messages: [(String, Message)] = [
        ("hello", .hello(minVersion: 1, maxVersion: 1, replica: ReplicaID(rawValue: 0x1111_2222_3333_4444), scope: .user("ana"),
                         nonce: Array(0..<32))),
        ("vectors", vectorsExample),
        ("events", .events(batch: 1, events: [example])),
        ("ack", .ack(batch: 1, inserted: 1, duplicates: 0)),
        ("ping", .ping(42)),
        ("pong", .pong(42)),
        ("error", .error(code: .forbidden, message: "no grant to write stream public in scope user:ana")),
        ("packed", .packed(packedExample.payloads[0])),
        ("packed-warm", .packed(packedExample.payloads[1])),
        ("reset", .reset),
        ("vectors-part", .vectorsPart([StreamVector(stream: .health("ana"), vector: VersionVector())])),
        ("subscribe", .subscribe([.pollen("427_-737"), .sensor("purpleair.131075")])),
        ("revocation", .events(batch: 1, events: [revocationEvent])),
        ("signatures", signaturesExample),
        ("retired", .retired(batch: 1, [RetiredEntry(index: 0, first: 1)])),
        ("signed-event", .events(batch: 1, events: [signedEvent])),
    ] + handshake.map { ($0.0, $0.1) } + sealed.map { ($0.name, $0.frame) }

    /// The handshake of section 4.7: ana's phone (client, scope user:ana, enrolled by ana's user authority)
    /// dials the server (scope cluster); every key from a fixed seed (`Fixtures`).
    static let handshake: [(String, Message)] = {
        let (c, s, wire) = Fixtures.handshake(Fixtures.client(Fixtures.config(Fixtures.phone, .user("ana"))),
                                              Fixtures.server(Fixtures.config(Fixtures.server)))
        precondition(c.state == .ready && s.state == .ready && wire.count == 3)
        return zip(["handshake1", "handshake2", "handshake3"], wire).map { ($0, $1) }
    }()

    /// Its handshake hash (both sides).
    static let handshakeHash =
        "d6656e6bc739fa7d2e78726855f8df54a78f1118d8c4be4eb09b4ef57da019fe034864b178bf46a7c178d6b7dfc6090d25d44403bfa194c63a7eb070baef315f"

    /// Its transport keys (Split): the client's sending key, which the server receives with, and the server's.
    static let clientToServerKey = "c6cb4d5ea9891bd5f7ed489ad6aa92844118a2104cd20ca5e76c70936b1d45bf"
    static let serverToClientKey = "9ab24bd21e126e0015f82c287deec1595417a043037ae594363323d65b7035cc"

    /// The first sealed frames of that session, in order: who sends, the message, the sealed frame.
    static let sealed: [(name: String, fromClient: Bool, message: Message, frame: Message)] = {
        var (c, s, _) = Fixtures.handshake(Fixtures.client(Fixtures.config(Fixtures.phone, .user("ana"))),
                                           Fixtures.server(Fixtures.config(Fixtures.server)))
        let plan: [(String, Bool, Message)] = [
            ("sealed-client-0", true, vectorsExample),
            ("sealed-server-0", false, .vectors([])),
            ("sealed-server-1", false, .packed(packedExample.payloads[0])),
            ("sealed-client-1", true, .ack(batch: 1, inserted: 3, duplicates: 0)),
        ]
        return plan.map { name, fromClient, m in (name, fromClient, m, fromClient ? c.sealed(m) : s.sealed(m)) }
    }()

    /// The packed example of `Protocol/sync.md` section 3.1: batch 1 holds the example event, a second
    /// favourite (same key) and a unit change (a new key, reusing stream and origin); batch 2, on the same
    /// connection, one more favourite with every name already known (a live push).
    static let packedEvents: [[Event]] = {
        func e(_ counter: UInt64, _ millis: UInt64, _ logical: UInt16, _ body: EventBody) -> Event {
            Event(stream: .user("ana"), id: EventID(origin: origin, counter: counter),
                  hlc: HLC(physicalMillis: millis, logical: logical), body: body)
        }
        return [[example, e(2, 1_700_000_000_000, 6, .favouriteAdd(sensor: "149970")),
                 e(3, 1_700_000_000_250, 0, .unitSet(.fahrenheit))],
                [e(4, 1_700_000_001_250, 0, .favouriteAdd(sensor: "12345"))]]
    }()

    static let packedExample: (payloads: [[UInt8]], encoder: PackedEncoder) = {
        var encoder = PackedEncoder()
        var payloads: [[UInt8]] = []
        for (i, batch) in packedEvents.enumerated() {
            guard case .packed(let p)? = encoder.encode(batch: UInt64(i + 1), events: batch)?.last else { fatalError("not packed") }
            payloads.append(p)
        }
        return (payloads, encoder)
    }()

    static var goldenDir: String {
        let file = #filePath
        var dir = String(file[..<file.lastIndex(of: "/")!])     // Tests/BreezeSyncTests
        for _ in 0..<2 { dir = String(dir[..<dir.lastIndex(of: "/")!]) }
        return dir + "/Protocol/golden"
    }

    static func readHex(_ path: String) -> [UInt8]? {
        guard let f = fopen(path, "r") else { return nil }
        defer { fclose(f) }
        var out: [UInt8] = []
        var line = [CChar](repeating: 0, count: 4096)
        while fgets(&line, 4096, f) != nil {
            var s = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if let hash = s.firstIndex(of: "#") { s = String(s[..<hash]) }
            let digits = Array(s.utf8.filter { $0 != 32 && $0 != 10 && $0 != 13 && $0 != 9 })
            var i = 0
            while i + 1 < digits.count {
                out.append(UInt8(String(decoding: digits[i...(i + 1)], as: UTF8.self), radix: 16)!)
                i += 2
            }
        }
        return out
    }

    @Test func goldenFramesDecodeAndReencodeByteForByte() throws {
        if getenv("BREEZE_WRITE_GOLDEN") != nil {
            for (name, m) in Self.messages {
                let bytes = Frame.encode(m)
                var text = "# \(name): generated by GoldenFrameTests; see Protocol/sync.md sections 3 and 4.7\n"
                for chunk in stride(from: 0, to: bytes.count, by: 16) {
                    text += bytes[chunk..<min(chunk + 16, bytes.count)].map { b in
                        let h = String(b, radix: 16); return h.count == 1 ? "0" + h : h }.joined(separator: " ") + "\n"
                }
                let f = fopen(Self.goldenDir + "/\(name).hex", "w")!
                fputs(text, f)
                fclose(f)
            }
        }
        for (name, expected) in Self.messages {
            guard let bytes = Self.readHex(Self.goldenDir + "/\(name).hex") else {
                Issue.record("missing Protocol/golden/\(name).hex")
                continue
            }
            var d = FrameDecoder()
            let decoded = try d.feed(bytes)
            #expect(decoded == [expected], "\(name)")
            #expect(Frame.encode(decoded[0]) == bytes, "\(name) re-encodes byte for byte")
            #expect(d.pending == 0)
        }
    }

    /// The golden signature decodes, verifies for the golden event against the fixtures' cluster authority, and
    /// not against another authority nor for another event.
    @Test func theGoldenSignatureSignsTheGoldenEvent() throws {
        var d = FrameDecoder()
        let bytes = try #require(Self.readHex(Self.goldenDir + "/signatures.hex"), "missing signatures.hex")
        guard case .signatures(1, let entries)? = try d.feed(bytes).first, entries.count == 1, entries[0].index == 0 else {
            Issue.record("signatures.hex is not a signatures frame for batch 1 with one entry"); return
        }
        var trusted = SignatureVerifier(authority: Fixtures.authority.publicKey, revocations: nil)
        #expect(trusted.refusal(Self.signedEvent, entries[0].signature, nowMillis: Fixtures.now) == nil)
        var other = SignatureVerifier(authority: Fixtures.foreignAuthority.publicKey, revocations: nil)
        #expect(other.refusal(Self.signedEvent, entries[0].signature, nowMillis: Fixtures.now) != nil)
        let another = Event(stream: .user("ana"), id: Self.signedEvent.id, hlc: Self.signedEvent.hlc, body: .favouriteAdd(sensor: "999999"))
        #expect(trusted.refusal(another, entries[0].signature, nowMillis: Fixtures.now) != nil)
    }

    /// The golden revocation decodes, holds against the fixtures' cluster authority only, and refuses the
    /// phone's chain (and no other).
    @Test func theGoldenRevocationHoldsAndRefusesThePhone() throws {
        let bytes = try #require(Self.readHex(Self.goldenDir + "/revocation.hex"), "missing revocation.hex")
        var d = FrameDecoder()
        guard case .events(_, let events)? = try d.feed(bytes).first, case .revocation(let r) = try events[0].body() else {
            Issue.record("revocation.hex is not an events frame with a device.revoke"); return
        }
        var set = Revocations(authority: Fixtures.authority.publicKey)
        let added = set.add(r)
        #expect(added)
        #expect(set.revocation(of: Fixtures.chain(Fixtures.phone, .user("ana"))) == r)
        #expect(set.revocation(of: Fixtures.chain(Fixtures.server, .cluster)) == nil)
        #expect(Revocations(authority: Fixtures.foreignAuthority.publicKey).refusal(r) != nil)
    }

    /// The golden packed frames, read by a fresh decoder in order, give back the documented events.
    @Test func goldenPackedFramesDecodeToTheDocumentedEvents() throws {
        var d = FrameDecoder()
        var packed = PackedDecoder()
        for (i, name) in ["packed", "packed-warm"].enumerated() {
            let bytes = try #require(Self.readHex(Self.goldenDir + "/\(name).hex"), "missing \(name).hex")
            guard case .packed(let payload)? = try d.feed(bytes).first else { Issue.record("\(name) is not packed"); continue }
            #expect(try packed.decode(batch: UInt64(i + 1), payload: payload) == Self.packedEvents[i], "\(name)")
        }
        #expect(Self.readHex(Self.goldenDir + "/packed-warm.hex")?.count == 24)
    }

    /// The golden handshake, replayed into fresh sessions with the documented keys, authenticates both sides,
    /// and the golden sealed frames open, in order, into the documented messages.
    @Test func theGoldenHandshakeAndSealedFramesOpenIntoTheDocumentedMessages() throws {
        var c = Fixtures.client(Fixtures.config(Fixtures.phone, .user("ana"))), s = Fixtures.server(Fixtures.config(Fixtures.server))
        _ = c.start()
        _ = s.start()
        var d = FrameDecoder()
        func golden(_ name: String) throws -> Message {
            let bytes = try #require(Self.readHex(Self.goldenDir + "/\(name).hex"), "missing \(name).hex")
            return try #require(try d.feed(bytes).first)
        }
        _ = s.receive(try golden("handshake1"))
        _ = c.receive(try golden("handshake2"))
        #expect(s.receive(try golden("handshake3")) == [.authenticated(peer: Fixtures.phone, scope: .user("ana"))])
        #expect(c.state == .ready && s.state == .ready)
        #expect(Digest.hex(c.handshakeHash!) == Self.handshakeHash && s.handshakeHash == c.handshakeHash)
        for step in Self.sealed {
            let frame = try golden(step.name)
            let opened = step.fromClient ? try s.inspect(frame) : try c.inspect(frame)
            #expect(opened == step.message, "\(step.name)")
        }
    }

    /// Each golden sealed frame is ChaCha20-Poly1305 (RFC 8439) of its message's type byte and payload, under
    /// the documented key of its direction, with nonce 32 zero bits then the frame counter little-endian, and
    /// the frame's first 5 bytes (length and type 0x30) as associated data, with no CRC after it; the
    /// documented keys are the ones the golden handshake derives.
    @Test func eachGoldenSealedFrameIsTheAEADOfItsMessageWithTheHeaderAsAssociatedData() throws {
        var counters: [Bool: UInt64] = [true: 0, false: 0]
        for step in Self.sealed {
            let frame = try #require(Self.readHex(Self.goldenDir + "/\(step.name).hex"))
            let key = Digest.bytes(hex: step.fromClient ? Self.clientToServerKey : Self.serverToClientKey)!
            let n = counters[step.fromClient]!
            counters[step.fromClient] = n + 1
            let nonce: [UInt8] = [0, 0, 0, 0] + (0..<8).map { UInt8(truncatingIfNeeded: n >> (8 * $0)) }
            #expect(frame[4] == 0x30)
            let body = Array(frame[5...])                                  // no CRC: the tag covers the frame
            var w = ByteWriter()
            w.u8(step.message.typeByte)
            step.message.encodePayload(into: &w)
            #expect(ChaChaPoly.open(key: key, nonce: nonce, ad: Array(frame[0..<5]), ciphertext: body) == w.bytes, "\(step.name)")
            #expect(ChaChaPoly.open(key: key, nonce: nonce, ad: [], ciphertext: body) == nil, "\(step.name) opens without its header")
            #expect(frame.count == 4 + (Int(frame[0]) | Int(frame[1]) << 8 | Int(frame[2]) << 16))
        }
        let (c, s, _) = Fixtures.handshake(Fixtures.client(Fixtures.config(Fixtures.phone, .user("ana"))),
                                           Fixtures.server(Fixtures.config(Fixtures.server)))
        #expect(c.transportKeys.map { Digest.hex($0.send) } == Self.clientToServerKey && s.transportKeys.map { Digest.hex($0.receive) } == Self.clientToServerKey)
        #expect(s.transportKeys.map { Digest.hex($0.send) } == Self.serverToClientKey && c.transportKeys.map { Digest.hex($0.receive) } == Self.serverToClientKey)
    }
}
