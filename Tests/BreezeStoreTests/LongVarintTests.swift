import Testing
import BreezeCore
import BreezeCrypto
@testable import BreezeStore
import BreezeTestSupport

/// Events with a varint longer than its minimal form: refused at decode from peers and files since issue 18
/// (encoding.md section 1), but an older build stored such events from peers. A database holding one must stay
/// readable: every read of the store takes them (`Event(decoding:stored:)`), `verify` notes them without
/// calling the database damaged, and the rest of the log reads on.
struct LongVarintTests {
    /// `good` with its counter varint written in two bytes (`81 00` instead of `01`), hashed as such.
    static func longForm(_ good: Event) -> [UInt8] {
        var body = Array(good.encoded.dropLast(Event.hashLength))
        precondition(body[9] == 0x01 && body[10] == 0x01, "format, 8-byte replica, epoch 1, counter 1")
        body.replaceSubrange(10...10, with: [0x81, 0x00])
        return body + Digest.blake2b(body, length: Event.hashLength)
    }

    static func event(_ n: UInt64, replica: UInt64 = 7, _ sensor: String) -> Event {
        Event(stream: .user("ana"), id: EventID(origin: Origin(replica: ReplicaID(rawValue: replica), epoch: 1), counter: n),
              hlc: HLC(physicalMillis: 1_700_000_000_000, logical: UInt16(n)), body: .favouriteAdd(sensor: sensor))
    }

    @Test func aStoredEventWithALongVarintStaysReadableAndVerifyNotesIt() throws {
        let bytes = Self.longForm(Self.event(1, "131075"))
        #expect(throws: DecodingError.self) { try Event(decoding: bytes) }
        let long = try Event(decoding: bytes, stored: true)
        #expect(!long.hasShortestEncoding && long.id.counter == 1 && long.encoded == bytes)
        // As an older build stored it, then the origin's next event and another origin's.
        let dir = TempDir()
        let path = dir.file("old.db")
        let log = try EventLog.create(at: path, options: testOptions())
        let next = Self.event(2, "777"), other = Self.event(1, replica: 8, "888")
        #expect(try log.ingest([long, next, other], source: "old build").inserted == 3)
        let read = try log.events(in: .user("ana")).events
        #expect(read.map(\.encoded) == [bytes, next.encoded, other.encoded])
        let state = try log.userState(user: "ana")
        #expect(state.favourites.contains("131075") && state.favourites.contains("777") && state.favourites.contains("888"))
        log.close()
        let report = try EventLog.verify(at: path)
        #expect(report.isClean, "\(report.problems)")
        #expect(report.notes.contains { $0.kind == .decode && $0.message.contains("shortest form") })
    }
}
