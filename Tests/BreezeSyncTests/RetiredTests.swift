import Testing
import BreezeCore
import BreezeCrypto
@testable import BreezeSync

/// `retired` (`Protocol/sync.md` 6.10): a sender that compacted counters a peer lacks says so before the event
/// that follows them, instead of never sending that event; a receiver takes it only from the cluster, only for
/// the batch it precedes.
struct RetiredTests {
    typealias F = Fixtures
    static let stream = StreamID.sensor(source: "purpleair", sensor: "9")
    static let origin = Origin(replica: F.server, epoch: 1)

    static func sender(retired: ClosedRange<UInt64>?) -> (client: SyncSession, server: SyncSession) {
        var config = F.config(F.server)
        let range = retired
        config.retiredRange = { s, o, counter in
            guard s == RetiredTests.stream, o == RetiredTests.origin, let r = range, r.contains(counter) else { return nil }
            return r
        }
        return F.pair(client: F.config(F.phone), server: config)
    }

    @Test func aPeerLackingRetiredCountersIsToldAndTakesTheEventsAfterThem() {
        var (c, s) = Self.sender(retired: 1...4)
        _ = s.receive(c.sealed(.vectors([])))
        let rows = (5...6).map { (Int64($0), F.event(Self.stream, F.server, UInt64($0))) }
        let actions = s.offer(rows, scannedTo: 6)
        var reader = c
        let sent = reader.read(actions)
        guard case .retired(let batch, let entries)? = sent.first else { Issue.record("no retired first: \(sent)"); return }
        #expect(batch == 1 && entries == [RetiredEntry(index: 0, first: 1)])
        var ingested: [SyncSession.Action] = []
        for frame in F.sent(actions) { ingested += c.receive(frame) }
        #expect(ingested == [.ingest(batch: 1, events: rows.map(\.1), retired: [0: 1])])
        // Once told, the peer's vector covers them: the next event goes alone.
        var reader2 = c
        let next = reader2.read(s.offer([(7, F.event(Self.stream, F.server, 7))], scannedTo: 7))
        #expect(!next.contains { if case .retired = $0 { return true } else { return false } } && !next.isEmpty)
    }

    @Test func withoutARetiredRangeThatEndsJustBeforeItTheEventIsNotSent() {
        for range in [nil, 1...3, 2...4] as [ClosedRange<UInt64>?] {
            var (c, s) = Self.sender(retired: range)
            _ = s.receive(c.sealed(.vectors([])))
            #expect(s.offer([(5, F.event(Self.stream, F.server, 5))], scannedTo: 5).isEmpty, "\(String(describing: range))")
        }
    }

    @Test func onlyTheClusterMayRetireAndOnlyBeforeAnEventOfTheBatch() {
        // A device's `retired` is refused.
        var (phone, server) = F.pair(client: F.config(F.phone, .user("ana")), server: F.config(F.server))
        let refused = server.receive(phone.sealed(.retired(batch: 1, [RetiredEntry(index: 0, first: 1)])))
        #expect(Self.code(refused, phone) == .forbidden && server.state == .closed)
        // From the cluster: a range past the batch, or not before its event, is malformed.
        for (entry, events) in [(RetiredEntry(index: 1, first: 1), 1), (RetiredEntry(index: 0, first: 5), 1)] {
            var (c, s) = F.pair()
            #expect(c.receive(s.sealed(.retired(batch: 1, [entry]))).isEmpty)
            let got = c.receive(s.sealed(.events(batch: 1, events: (5..<(5 + UInt64(events))).map { F.event(Self.stream, F.server, $0) })))
            #expect(Self.code(got, s) == .malformed && c.state == .closed, "\(entry)")
        }
        // Before an event of a stream that is not a sensor's (a user's, `public`): forbidden.
        for stream in [StreamID.user("ana"), .public] {
            var (c, s) = F.pair()
            #expect(c.receive(s.sealed(.retired(batch: 1, [RetiredEntry(index: 0, first: 1)]))).isEmpty)
            let got = c.receive(s.sealed(.events(batch: 1, events: [F.event(stream, F.server, 5)])))
            #expect(Self.code(got, s) == .forbidden && c.state == .closed, "\(stream)")
        }
        // For another batch than the next: unexpected.
        var (c, s) = F.pair()
        #expect(Self.code(c.receive(s.sealed(.retired(batch: 2, [RetiredEntry(index: 0, first: 1)]))), s) == .unexpected)
    }

    /// The code of the sealed `error` among `actions`, opened by a copy of `peer`.
    static func code(_ actions: [SyncSession.Action], _ peer: SyncSession) -> SyncErrorCode? {
        var reader = peer
        return SessionTests.errorCode(reader.read(actions))
    }

    @Test func theMessageRoundTripsAndRefusesBadForms() throws {
        let m = Message.retired(batch: 3, [RetiredEntry(index: 0, first: 1), RetiredEntry(index: 5, first: 700)])
        var w = ByteWriter()
        m.encodePayload(into: &w)
        #expect(try Message.decode(type: m.typeByte, payload: w.bytes, range: 0..<w.bytes.count) == m)
        for bad in [[0x03, 0x00], [0x03, 0x01, 0x00, 0x00], [0x03, 0x02, 0x01, 0x01, 0x01, 0x01]] as [[UInt8]] {
            #expect((try? Message.decode(type: 0x18, payload: bad, range: 0..<bad.count)) == nil, "\(bad)")
        }
    }
}
