import Testing
import Synchronization
import BreezeCore
import BreezeCrypto
@testable import BreezeSync

/// Origin signatures (`Protocol/sync.md` 6.9): a device relays another device's events only with their
/// origin's signature, and a receiver takes a relayed event only when that signature binds the origin's
/// replica id to the signing key through a chain it trusts. Each test fails without the check it names.
struct RelayTests {
    typealias F = Fixtures
    static let tablet = ReplicaID(rawValue: 0x7AB0_0000_0000_0001), laptop = ReplicaID(rawValue: 0x1A70_0000_0000_0002)

    static func event(_ origin: ReplicaID, _ n: UInt64, sensor: String? = nil, stream: StreamID = .user("ana")) -> Event {
        Event(stream: stream, id: EventID(origin: Origin(replica: origin, epoch: 1), counter: n),
              hlc: HLC(physicalMillis: F.now, logical: UInt16(n)), body: .favouriteAdd(sensor: sensor ?? "s\(n)"))
    }

    static func sign(_ e: Event, by replica: ReplicaID, scope: Scope = .user("ana"), chain: [Certificate]? = nil) -> OriginSignature {
        OriginSignature.sign(e, key: F.deviceKey(replica), chain: (chain ?? F.chain(replica, scope)).map(\.encoded))
    }

    /// The tablet's config, holding `held` as the stored signatures of others' events.
    static func tabletConfig(holding held: [Event: OriginSignature]) -> SyncSession.Config {
        var c = F.config(tablet, .user("ana"))
        c.storedSignature = { held[$0] }
        c.batchEvents = 100
        return c
    }

    static func ingested(_ actions: [SyncSession.Action]) -> (events: [Event], signatures: [Int: OriginSignature]) {
        for case .ingest(_, let events, let signatures, _) in actions { return (events, signatures) }
        return ([], [:])
    }

    /// What ana's phone takes when a replica with `config` offers it `events` (as its log, in this order), and
    /// the phone's state after.
    static func offered(_ events: [Event], by config: SyncSession.Config) -> (received: (events: [Event], signatures: [Int: OriginSignature]), state: SyncSession.State) {
        var (phone, sender) = F.pair(client: F.config(F.phone, .user("ana")), server: config)
        _ = sender.receive(phone.sealed(.vectors([])))
        let rows = events.enumerated().map { (Int64($0 + 1), $1) }
        var out: [SyncSession.Action] = []
        for m in F.sent(sender.offer(rows, scannedTo: Int64(rows.count))) { out += phone.receive(m) }
        return (Self.ingested(out), phone.state)
    }

    /// ana's tablet holds the laptop's events with their signatures and its own: it relays both to her phone
    /// (a device, no cluster in between), each with its origin's signature, and the phone takes them all.
    @Test func aDeviceRelaysAnotherDevicesSignedEventsAndThePeerTakesThem() {
        let laptopEvents = (1...3).map { Self.event(Self.laptop, $0) }
        let held = Dictionary(uniqueKeysWithValues: laptopEvents.map { ($0, Self.sign($0, by: Self.laptop)) })
        let own = Self.event(Self.tablet, 1)
        let (got, phoneState) = Self.offered(laptopEvents + [own], by: Self.tabletConfig(holding: held))
        #expect(got.events == laptopEvents + [own] && phoneState == .ready)
        #expect(got.signatures.count == 4)
        for (i, e) in got.events.enumerated() {
            var v = SignatureVerifier(authority: F.authority.publicKey, revocations: nil)
            #expect(got.signatures[i].map { v.refusal(e, $0, nowMillis: F.now) } == .some(nil), "event \(i)")
        }
        #expect(got.signatures[3]?.chain == F.chain(Self.tablet, .user("ana")).map(\.encoded), "the tablet signs its own")
    }

    /// An event stored before signatures existed (no signature held) is not relayed by a device, and neither
    /// is anything after it of that origin: the peer would see a gap (it gets those from the cluster).
    @Test func aDeviceSkipsUnsignedEventsOfOthersAndWhatFollowsThemOfThatOrigin() {
        let laptopEvents = (1...3).map { Self.event(Self.laptop, $0) }
        let held = [laptopEvents[1]: Self.sign(laptopEvents[1], by: Self.laptop), laptopEvents[2]: Self.sign(laptopEvents[2], by: Self.laptop)]
        let own = Self.event(Self.tablet, 1)
        let (fromTablet, phoneState) = Self.offered(laptopEvents + [own], by: Self.tabletConfig(holding: held))
        #expect(fromTablet.events == [own] && phoneState == .ready)
        // A cluster replica sends the unsigned one (it vouches for what it relays), and the signatures it has.
        var server = F.config(F.server, .cluster)
        server.batchEvents = 100
        server.storedSignature = { held[$0] }
        let got = Self.offered(laptopEvents + [own], by: server).received
        #expect(got.events == laptopEvents + [own] && Set(got.signatures.keys) == [1, 2])
    }

    /// What a hostile device of ana's (the tablet, in an attacker's hands) might relay to her phone as the
    /// laptop's: each forgery is refused whole (error 5), and nothing of its batch is stored. The laptop's own
    /// signature under a chain that was not valid when the event was made (nor is now) is no forgery: that
    /// event is skipped, the batch's others are taken, and the session goes on (issue 29).
    @Test func aForgedOrAlteredRelayIsRefusedWhole() {
        let real = Self.event(Self.laptop, 1, sensor: "131075")
        let realSignature = Self.sign(real, by: Self.laptop)
        let altered = Self.event(Self.laptop, 1, sensor: "999999")
        let bob = F.chain(Self.laptop, .user("bob"))
        let foreign = F.chain(Self.laptop, .user("ana"), viaUserAuthority: false, signer: F.foreignAuthority)
        let expired = F.chain(Self.laptop, .user("ana"), notBefore: F.notBefore, notAfter: F.now - 1)
        var flipped = realSignature.signature
        flipped[7] ^= 1
        let cases: [(String, Event, OriginSignature?)] = [
            ("unsigned", real, nil),
            ("altered after signing", altered, realSignature),
            ("signed by the tablet's own key and chain", real, Self.sign(real, by: Self.tablet)),
            ("the laptop's key under the tablet's chain", real, OriginSignature.sign(real, key: F.deviceKey(Self.laptop), chain: F.chain(Self.tablet, .user("ana")).map(\.encoded))),
            ("the tablet's key under the laptop's chain", real, OriginSignature.sign(real, key: F.deviceKey(Self.tablet), chain: realSignature.chain)),
            ("a chain of another user", real, Self.sign(real, by: Self.laptop, chain: bob)),
            ("a chain from another authority", real, Self.sign(real, by: Self.laptop, chain: foreign)),
            ("an expired chain", real, Self.sign(real, by: Self.laptop, chain: expired)),
            ("one flipped bit of the signature", real, OriginSignature(chain: realSignature.chain, signature: flipped)),
            ("a signature of another event", real, Self.sign(Self.event(Self.laptop, 2), by: Self.laptop)),
        ]
        var refused = 0
        for (name, e, signature) in cases {
            var (tablet, phone) = F.pair(client: F.config(Self.tablet, .user("ana")), server: F.config(F.phone, .user("ana")))
            let own = Self.event(Self.tablet, 1)
            let ownSignature = Self.sign(own, by: Self.tablet)
            var entries = [SignatureEntry(index: 0, signature: ownSignature)]
            if let signature { entries.append(SignatureEntry(index: 1, signature: signature)) }
            let out = F.deliver([.signatures(batch: 1, entries), .events(batch: 1, events: [own, e])], from: &tablet, to: &phone)
            let stored = Self.ingested(out).events
            if name == "an expired chain" {
                #expect(stored == [own] && phone.state == .ready, "\(name): stored \(stored.count)")
                #expect(out.contains { if case .skipped(1, 1, let why) = $0 { return why.contains("expired") } else { return false } }, "\(out)")
                continue
            }
            #expect(stored.isEmpty && phone.state == .closed, "\(name): stored \(stored.count)")
            #expect(SessionTests.errorCode(tablet.read(out)) == .forbidden, "\(name)")
            if stored.isEmpty && phone.state == .closed { refused += 1 }
        }
        print("RELAY forged_relays_attempted=\(cases.count - 1) refused=\(refused) stored=0 expired_chain_skipped=1")
    }

    /// A revocation cuts what its key signed from its `revokedAt` on: a relayed event made after it is skipped
    /// (not stored; the session goes on, and the batch's others are taken), one made before it is taken, also
    /// when the revocation arrives while the session is open.
    @Test func aRelayedEventSignedAfterItsKeysRevocationIsSkippedAndOneBeforeIsTaken() {
        let before = Event(stream: .user("ana"), id: EventID(origin: Origin(replica: Self.laptop, epoch: 1), counter: 1),
                           hlc: HLC(physicalMillis: F.now - 60_000, logical: 0), body: .favouriteAdd(sensor: "before"))
        let after = Self.event(Self.laptop, 2)              // made at F.now, the revocation's time
        let revocation = Revocation.sign(key: F.deviceKey(Self.laptop).publicKey, replica: Self.laptop, revokedAtMillis: F.now,
                                         reason: "lost", signer: F.authority)
        var revocations = Revocations(authority: F.authority.publicKey)
        revocations.add(revocation)
        var phoneConfig = F.config(F.phone, .user("ana"))
        phoneConfig.revocations = revocations
        var (t1, p1) = F.pair(client: F.config(Self.tablet, .user("ana")), server: phoneConfig)
        let out = F.deliver(F.signedBatch([before, after]), from: &t1, to: &p1)
        #expect(Self.ingested(out).events == [before] && p1.state == .ready)
        #expect(out.contains { if case .skipped(1, 1, let why) = $0 { return why.contains("revoked") } else { return false } }, "\(out)")
        // Revoked mid-session: the first batch is taken whole, the next one's event made after it is skipped.
        var (t2, p2) = F.pair(client: F.config(Self.tablet, .user("ana")), server: F.config(F.phone, .user("ana")))
        #expect(Self.ingested(F.deliver(F.signedBatch([before]), from: &t2, to: &p2)).events == [before])
        p2.revocationsChanged(revocations)
        #expect(Self.ingested(F.deliver(F.signedBatch([after], batch: 2), from: &t2, to: &p2)).events.isEmpty && p2.state == .ready)
    }

    /// From the cluster, unsigned relays are taken (it vouches for them: events older than signatures), and a
    /// signature that does not verify skips its event (one event never blocks the cluster's others: issue 29);
    /// `signatures` for another batch, or naming an event past the batch, is a protocol error.
    @Test func signaturesFromTheClusterAreCheckedAndMustFitTheirBatch() {
        let e = Self.event(Self.laptop, 1)
        var (phone, server) = F.pair(client: F.config(F.phone, .user("ana")), server: F.config(F.server, .cluster))
        #expect(Self.ingested(F.deliver([.events(batch: 1, events: [e])], from: &server, to: &phone)).events == [e])
        var flipped = Self.sign(e, by: Self.laptop)
        flipped = OriginSignature(chain: flipped.chain, signature: flipped.signature.map { $0 ^ 0x01 })
        var (p2, s2) = F.pair(client: F.config(F.phone, .user("ana")), server: F.config(F.server, .cluster))
        let other = Self.event(Self.tablet, 1)
        let bad = F.deliver([.signatures(batch: 1, [SignatureEntry(index: 0, signature: flipped)]), .events(batch: 1, events: [e, other])], from: &s2, to: &p2)
        #expect(Self.ingested(bad).events == [other] && p2.state == .ready)
        for (name, messages) in [
            ("for a later batch", [Message.signatures(batch: 2, [SignatureEntry(index: 0, signature: Self.sign(e, by: Self.laptop))])]),
            ("twice before a batch", F.signedBatch([e]).prefix(1) + F.signedBatch([e]).prefix(1)),
            ("past the batch", [.signatures(batch: 1, [SignatureEntry(index: 1, signature: Self.sign(e, by: Self.laptop))]), .events(batch: 1, events: [e])]),
        ] {
            var (p, s) = F.pair(client: F.config(F.phone, .user("ana")), server: F.config(F.server, .cluster))
            let out = F.deliver(Array(messages), from: &s, to: &p)
            #expect(Self.ingested(out).events.isEmpty && p.state == .closed, "\(name)")
        }
    }

    /// The wire form: chains are sent once per message, entries refer to them, and it decodes to what was
    /// encoded; out-of-order indices and unknown chain numbers do not decode.
    @Test func theSignaturesMessageRoundTripsAndRefusesBadIndices() throws {
        let a = Self.sign(Self.event(Self.laptop, 1), by: Self.laptop), b = Self.sign(Self.event(Self.laptop, 2), by: Self.laptop)
        let c = Self.sign(Self.event(Self.tablet, 1), by: Self.tablet)
        let m = Message.signatures(batch: 9, [SignatureEntry(index: 0, signature: a), SignatureEntry(index: 2, signature: b),
                                              SignatureEntry(index: 5, signature: c)])
        var w = ByteWriter()
        m.encodePayload(into: &w)
        #expect(try Message.decode(type: 0x17, payload: w.bytes, range: 0..<w.bytes.count) == m)
        // Two chains (the laptop's once), not three.
        let chainBytes = a.chain.reduce(0) { $0 + $1.count }
        #expect(w.bytes.count < 3 * (chainBytes + 64))
        let swapped = Message.signatures(batch: 9, [SignatureEntry(index: 2, signature: a), SignatureEntry(index: 0, signature: b)])
        var w2 = ByteWriter()
        swapped.encodePayload(into: &w2)
        #expect(throws: DecodingError.self) { try Message.decode(type: 0x17, payload: w2.bytes, range: 0..<w2.bytes.count) }
    }
}
