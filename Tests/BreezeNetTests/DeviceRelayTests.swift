import Testing
import BreezeCore
import BreezeStore
import BreezeSync
import BreezeCrypto
import BreezeTestSupport
@preconcurrency import Glibc

/// Devices relaying each other's events with their origin signatures (`Protocol/sync.md` 6.9), between real
/// `breeze node` processes on 127.0.0.1 and no cluster replica in between: ana's laptop, tablet and phone in a
/// chain. Then a hostile device of hers relays forgeries of the laptop's events to the phone.
@Suite(.serialized)
struct DeviceRelayTests {
    static let streams: [StreamID] = [.user("ana"), .health("ana")]

    @Test func devicesRelayEachOthersSignedEventsAndForgedRelaysAreRefused() throws {
        let c = Cluster()
        for n in ["laptop", "tablet", "phone"] { _ = c.cli(n, ["init"]) }
        let laptop = c.start("laptop", scope: .user("ana"))
        let tablet = c.start("tablet", peers: [laptop], scope: .user("ana"))
        let phone = c.start("phone", peers: [tablet], scope: .user("ana"))
        #expect(c.cli("laptop", ["--user", "ana", "favourite", "add", "from-laptop"]).code == 0)
        #expect(c.cli("phone", ["--user", "ana", "favourite", "add", "from-phone"]).code == 0)
        let t0 = monotonic()
        let relayed = waitUntil(seconds: 20) {
            c.cli("phone", ["--user", "ana", "state", "--json"]).out.contains("from-laptop")
                && c.cli("laptop", ["--user", "ana", "state", "--json"]).out.contains("from-phone")
        }
        let seconds = monotonic() - t0
        #expect(relayed, "tablet log: \(c.logText("tablet"))")
        // Every replica holds the same events, and every one of another replica's with its origin's signature
        // (a replica signs its own as it sends them).
        let held = c.nodes.keys.sorted().map { SealedWireTests.events(c, $0, streams: Self.streams) }
        #expect(held.allSatisfy { $0 == held[0] } && held[0].count >= 2)
        for n in ["laptop", "tablet", "phone"] {
            let log = try EventLog.open(at: c.db(n))
            var others = 0
            for s in Self.streams { try log.forEach(stream: s) { if $0.event.id.origin.replica != log.replica { others += 1 }; return true } }
            let signed = try log.signatureCount()
            #expect(others >= 1 && signed == others, "\(n): every other replica's event held with its origin's signature")
            log.close()
            #expect(c.verify(n).code == 0, "\(n): \(c.verify(n).out)")
        }

        // ana's fourth device, in an attacker's hands, relays to the phone what it claims are the laptop's events.
        let laptopLog = try EventLog.open(at: c.db("laptop"))
        let real = try laptopLog.events(in: .user("ana")).events.first { $0.id.origin == laptopLog.origin }!
        // The laptop signs its own as it sends them; the phone holds the signature that came with it.
        let phoneLog = try EventLog.open(at: c.db("phone"))
        let realSignature = try phoneLog.signature(of: real)!
        phoneLog.close()
        let next = Event(stream: .user("ana"), id: EventID(origin: real.id.origin, counter: real.id.counter + 1),
                         hlc: HLC(physicalMillis: SystemClock.nowMillis(), logical: 0), body: .favouriteAdd(sensor: "999999"))
        laptopLog.close()
        let attacker = c.authority.credentials(replica: ReplicaID(rawValue: 0xA77A_C4E2), scope: .user("ana"))
        let ownEvent = Event(stream: .user("ana"), id: EventID(origin: Origin(replica: attacker.replica, epoch: 1), counter: 1),
                             hlc: HLC(physicalMillis: SystemClock.nowMillis(), logical: 0), body: .favouriteAdd(sensor: "attacker"))
        let attacks: [(String, [Event], [OriginSignature?])] = [
            ("unsigned", [next], [nil]),
            ("the laptop's signature on another event", [next], [realSignature]),
            ("signed with the attacker's own key", [next], [OriginSignature.sign(next, key: attacker.deviceKey, chain: attacker.chain.map(\.encoded))]),
            ("its own event, then an unsigned one of the laptop's", [ownEvent, next],
             [OriginSignature.sign(ownEvent, key: attacker.deviceKey, chain: attacker.chain.map(\.encoded)), nil]),
        ]
        let before = SealedWireTests.events(c, "phone", streams: Self.streams).count
        var lines: [String] = []
        for (name, events, signatures) in attacks {
            guard let p = RawPeer(phone), p.handshake(credentials: attacker) != nil else {
                Issue.record("\(name): the attacker could not open a session")
                continue
            }
            let entries = signatures.enumerated().compactMap { i, s in s.map { SignatureEntry(index: i, signature: $0) } }
            if !entries.isEmpty { p.send(.signatures(batch: 1, entries)) }
            p.send(.events(batch: 1, events: events))
            let closed = DeviceAttackTests.closedOrReset(p)
            let stored = SealedWireTests.events(c, "phone", streams: Self.streams).count - before
            #expect(closed && stored == 0, "\(name): closed \(closed), stored \(stored)")
            lines.append("\(name.replacingOccurrences(of: " ", with: "_"))=stored:\(stored),closed:\(closed)")
        }
        // The phone keeps syncing with the tablet afterwards, and nothing forged is anywhere.
        #expect(c.cli("laptop", ["--user", "ana", "favourite", "add", "after-attacks"]).code == 0)
        #expect(waitUntil(seconds: 20) { c.cli("phone", ["--user", "ana", "state", "--json"]).out.contains("after-attacks") })
        for n in ["laptop", "tablet", "phone"] {
            let state = c.cli(n, ["--user", "ana", "state", "--json"]).out
            #expect(!state.contains("999999") && !state.contains("attacker"), "\(n): \(state)")
        }
        print("RELAY part=devices laptop_to_phone_via_tablet_s=\(fmt(seconds)) \(lines.joined(separator: " "))")
    }
}
