import Testing
import Synchronization
import BreezeCore
import BreezeCrypto
@testable import BreezeSync

/// The guards a session keeps against an authenticated but hostile peer (`Protocol/sync.md` 6.6): a device
/// sends only its own events, with no stamp far ahead, and nobody makes this side rescan by repeating
/// `vectors`. Each test fails without its guard.
struct DeviceGuardTests {
    typealias F = Fixtures
    static let tablet = ReplicaID(rawValue: 0x7AB0_0000_0000_0001)

    /// A clock the test moves by hand.
    final class ManualClock: Sendable {
        let millis = Mutex<UInt64>(F.now)
        func read() -> UInt64 { millis.withLock { $0 } }
        func advance(_ ms: UInt64) { millis.withLock { $0 += ms } }
    }

    static func config(_ replica: ReplicaID, _ scope: Scope, clock: ManualClock) -> SyncSession.Config {
        var c = F.config(replica, scope)
        c.wallClock = { clock.read() }
        c.monotonicClock = { clock.read() }
        return c
    }

    static func ingested(_ actions: [SyncSession.Action]) -> [Event] {
        actions.flatMap { a -> [Event] in if case .ingest(_, let e, _, _) = a { return e } else { return [] } }
    }

    static func event(_ stream: StreamID, _ origin: ReplicaID, epoch: UInt32 = 1, _ n: UInt64, hlc: HLC? = nil) -> Event {
        Event(stream: stream, id: EventID(origin: Origin(replica: origin, epoch: epoch), counter: n),
              hlc: hlc ?? HLC(physicalMillis: F.now, logical: UInt16(n)), body: .favouriteAdd(sensor: "s\(n)"))
    }

    /// ana's phone (a device) connected to the server: it may send its own events only.
    @Test func aDeviceSendsOnlyEventsOfItsOwnOrigin() {
        let clock = ManualClock()
        // The device's own events are taken, in every stream it may write.
        var (phone, server) = F.pair(client: Self.config(F.phone, .user("ana"), clock: clock), server: Self.config(F.server, .cluster, clock: clock))
        let own = [Self.event(.user("ana"), F.phone, 1), Self.event(.health("ana"), F.phone, 1), Self.event(.user("ana"), F.phone, epoch: 2, 1)]
        #expect(Self.ingested(F.deliver(F.signedBatch(own), from: &phone, to: &server)) == own)
        // Under the server's origin, another device's, or a made-up one, unsigned or signed by the phone's own
        // key: the whole batch is refused (with the origin's own signature it is a relay, `RelayTests`).
        for forged in [F.server, Self.tablet, ReplicaID(rawValue: 0xDEAD_BEEF)] {
            for signed in [false, true] {
                var (p, s) = F.pair(client: Self.config(F.phone, .user("ana"), clock: clock), server: Self.config(F.server, .cluster, clock: clock))
                let batch = [Self.event(.user("ana"), F.phone, 1), Self.event(.user("ana"), forged, 1)]
                let messages: [Message] = signed ? F.signedBatch(batch, signedBy: F.deviceKey(F.phone)) : [.events(batch: 1, events: batch)]
                let out = F.deliver(messages, from: &p, to: &s)
                #expect(Self.ingested(out).isEmpty && s.state == .closed, "origin \(forged)")
                #expect(SessionTests.errorCode(p.read(out)) == .forbidden)
            }
        }
        // The device's own events without signatures: refused too (every event of a device is signed).
        var (p0, s0) = F.pair(client: Self.config(F.phone, .user("ana"), clock: clock), server: Self.config(F.server, .cluster, clock: clock))
        #expect(Self.ingested(s0.receive(p0.sealed(.events(batch: 1, events: own)))).isEmpty && s0.state == .closed)
        // Two cluster replicas relay every origin's events (the cluster authority vouches for both).
        var (c1, c2) = F.pair(client: Self.config(F.phone, .cluster, clock: clock), server: Self.config(F.server, .cluster, clock: clock))
        let relayed = [Self.event(.user("ana"), Self.tablet, 1), Self.event(.user("ana"), ReplicaID(rawValue: 0xDEAD_BEEF), 1)]
        #expect(Self.ingested(c2.receive(c1.sealed(.events(batch: 1, events: relayed)))) == relayed)
    }

    /// A device's event stamped far ahead (2^64 - 1 at worst) would win every merge for good.
    @Test func aDevicesEventStampedMoreThanADayAheadIsRefused() {
        let clock = ManualClock()
        let day: UInt64 = 24 * 3_600_000
        for (hlc, taken) in [(HLC(rawValue: .max), false), (HLC(physicalMillis: F.now + day + 1, logical: 0), false),
                             (HLC(physicalMillis: F.now + day, logical: 0), true), (HLC(physicalMillis: F.now - 1000, logical: 0), true)] {
            var (phone, server) = F.pair(client: Self.config(F.phone, .user("ana"), clock: clock), server: Self.config(F.server, .cluster, clock: clock))
            let e = Self.event(.user("ana"), F.phone, 1, hlc: hlc)
            let out = F.deliver(F.signedBatch([e]), from: &phone, to: &server)
            #expect(Self.ingested(out) == (taken ? [e] : []), "stamp \(hlc)")
            #expect((server.state == .closed) == !taken)
        }
        // From the cluster the same bound holds (issue 29: every way in), but the session goes on: the event is
        // skipped with its origin's later ones, and the batch's others are taken.
        var (c1, c2) = F.pair(client: Self.config(F.phone, .cluster, clock: clock), server: Self.config(F.server, .cluster, clock: clock))
        let ahead = Self.event(.user("ana"), F.phone, 1, hlc: HLC(physicalMillis: F.now + 2 * day, logical: 0))
        let after = Self.event(.user("ana"), F.phone, 2, hlc: HLC(physicalMillis: F.now, logical: 0))
        let other = Self.event(.user("ana"), Self.tablet, 1, hlc: HLC(physicalMillis: F.now, logical: 0))
        let out = c2.receive(c1.sealed(.events(batch: 1, events: [ahead, after, other])))
        #expect(Self.ingested(out) == [other] && c2.state == .ready)
        #expect(out.contains { if case .skipped(1, 2, let why) = $0 { return why.contains("ahead") } else { return false } }, "\(out)")
        // Later batches of that origin are skipped too, for the session (no gap is stored).
        let third = Self.event(.user("ana"), F.phone, 3, hlc: HLC(physicalMillis: F.now, logical: 1))
        #expect(Self.ingested(c2.receive(c1.sealed(.events(batch: 2, events: [third])))) == [] && c2.state == .ready)
    }

    /// An honest device's write that supersedes a value from a clock two days ahead (one the server holds,
    /// flagged, from the cluster) is stamped just after that value: it must be taken, or the device could
    /// never sync again; a stamp further past the held value is still refused.
    @Test func aDevicesWriteJustAfterAFarAheadValueTheServerHoldsIsTaken() {
        let clock = ManualClock()
        let floor = HLC(physicalMillis: F.now + 48 * 3_600_000, logical: 3)
        var server = Self.config(F.server, .cluster, clock: clock)
        server.aheadFloor = { $0 == .user("ana") ? floor : .zero }
        for (stream, hlc, taken) in [(StreamID.user("ana"), HLC(rawValue: floor.rawValue + 1), true),
                                     (.user("ana"), HLC(physicalMillis: floor.physicalMillis + SyncSession.supersedeSlackMillis + 1, logical: 0), false),
                                     (.health("ana"), HLC(rawValue: floor.rawValue + 1), false)] {
            var (p, s) = F.pair(client: Self.config(F.phone, .user("ana"), clock: clock), server: server)
            let e = Self.event(stream, F.phone, 1, hlc: hlc)
            #expect(Self.ingested(F.deliver(F.signedBatch([e]), from: &p, to: &s)) == (taken ? [e] : []), "\(stream) \(hlc)")
        }
    }

    /// 990 bytes of repeated `vectors` made a server rescan and resend its log for each one.
    @Test func repeatedVectorsAreDroppedOrRefusedAndNeverRescanTooSoon() {
        let clock = ManualClock()
        var (c, s) = F.pair(client: Self.config(F.phone, .cluster, clock: clock), server: Self.config(F.server, .cluster, clock: clock))
        let empty = Message.vectors([StreamVector(stream: .user("ana"), vector: VersionVector())])
        #expect(s.receive(c.sealed(empty)) == [.rescan])
        // The same vectors again at once, a hundred times: dropped, no rescan, the session stays.
        var rescans = 0
        for _ in 0..<100 { rescans += s.receive(c.sealed(empty)).filter { $0 == .rescan }.count }
        #expect(rescans == 0 && s.state == .ready && s.vectorsDropped == 100)
        // Different vectors too soon: a protocol violation.
        clock.advance(SyncSession.resyncIntervalMillis / 2 - 1)
        var (c2, s2) = (c, s)
        let other = Message.vectors([StreamVector(stream: .user("ana"), vector: VersionVector([Origin(replica: F.phone, epoch: 1): 3]))])
        let refused = s2.receive(c2.sealed(other))
        #expect(s2.state == .closed && !refused.contains(.rescan))
        // After half the resend interval, vectors are taken again (a peer re-sends at most once per interval).
        clock.advance(1)
        #expect(s.receive(c.sealed(other)) == [.rescan])
    }

    /// The sender's side of the same rule: vectors are re-sent after gaps only once per interval, counted from
    /// the first vectors sent, so an honest peer is never dropped or refused by the rule above.
    @Test func vectorsAreResentAtMostOncePerIntervalCountingTheFirst() {
        let clock = ManualClock()
        var (c, s) = F.pair(client: Self.config(F.phone, .cluster, clock: clock), server: Self.config(F.server, .cluster, clock: clock))
        _ = c.sendVectors(local: [.user("ana"): VersionVector()])
        let e = Self.event(.user("ana"), F.server, 1)
        _ = c.receive(s.sealed(.events(batch: 1, events: [e])))
        #expect(!c.committed(batch: 1, inserted: 0, duplicates: 0, gaps: 1).contains(.resendVectors), "too soon after the first vectors")
        #expect(c.resyncIfDue().isEmpty, "still too soon")
        // The resync is owed, not lost: once the interval has passed, the next look fires it, once.
        clock.advance(SyncSession.resyncIntervalMillis)
        #expect(c.resyncIfDue() == [.resendVectors])
        #expect(c.resyncIfDue().isEmpty)
        _ = c.sendVectors(local: [.user("ana"): VersionVector()])
        _ = c.receive(s.sealed(.events(batch: 2, events: [e])))
        #expect(!c.committed(batch: 2, inserted: 0, duplicates: 0, gaps: 1).contains(.resendVectors), "too soon after the resent vectors")
        clock.advance(SyncSession.resyncIntervalMillis)
        _ = c.receive(s.sealed(.events(batch: 3, events: [e])))
        #expect(c.committed(batch: 3, inserted: 0, duplicates: 0, gaps: 1).contains(.resendVectors))
    }

    /// The version-vector frame between two cluster replicas once passed the 4 MiB frame limit, and those
    /// replicas never synced again: vectors of any size now travel in parts.
    @Test func largeVectorsTravelInPartsAndArriveWhole() {
        let clock = ManualClock()
        var cc = Self.config(F.phone, .cluster, clock: clock)
        cc.vectorsPartBytes = 200
        var (c, s) = F.pair(client: cc, server: Self.config(F.server, .cluster, clock: clock))
        var local: [StreamID: VersionVector] = [:]
        for u in 0..<300 {
            local[.user("u\(u)")] = VersionVector(Dictionary(uniqueKeysWithValues: (0..<UInt64(u % 5)).map {
                (Origin(replica: ReplicaID(rawValue: 100 + $0), epoch: 1), $0 + 1) }))
        }
        let wire = c.sendVectors(local: local)
        var peek = s
        let sent = peek.read(wire)
        let parts = sent.filter { if case .vectorsPart = $0 { return true } else { return false } }.count
        #expect(parts > 10 && sent.count == parts + 1, "\(parts) parts")
        for m in sent {
            var w = ByteWriter()
            m.encodePayload(into: &w)
            #expect(w.bytes.count <= 200 + 64, "a part of \(w.bytes.count) bytes")
        }
        var actions: [SyncSession.Action] = []
        for case .send(let frame) in wire { actions += s.receive(frame) }
        #expect(actions == [.rescan] && s.peerVectors == local, "the parts and the vectors are taken as one")
        // A stream in two parts is malformed; too many parts before a vectors end the session.
        var (c2, s2) = F.pair(client: Self.config(F.phone, .cluster, clock: clock), server: Self.config(F.server, .cluster, clock: clock))
        let one = [StreamVector(stream: .user("x"), vector: VersionVector())]
        _ = s2.receive(c2.sealed(.vectorsPart(one)))
        _ = s2.receive(c2.sealed(.vectors(one)))
        #expect(s2.state == .closed)
        var (c3, s3) = F.pair(client: Self.config(F.phone, .cluster, clock: clock), server: Self.config(F.server, .cluster, clock: clock))
        for i in 0...SyncSession.maxVectorsParts { _ = s3.receive(c3.sealed(.vectorsPart([StreamVector(stream: .user("p\(i)"), vector: VersionVector())]))) }
        #expect(s3.state == .closed)
    }
}
