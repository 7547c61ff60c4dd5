import Testing
import BreezeCore
import BreezeCrypto
@testable import BreezeSync

/// Crashes found by `tools/fuzz.sh`, as plain tests. Each keeps the bytes of its reproducer (the whole input
/// is also in `tools/fuzz/regressions/<target>/`, which every fuzz run replays first).
struct FuzzRegressionTests {
    /// fuzz-session, `closed-session-storage-failed`: after an honest handshake the peer sent a message whose
    /// payload does not decode (bytes below, from the reproducer: type 0x7F, an error whose message length
    /// runs past the end), which closes the session; a storage failure reported afterwards made the closed
    /// session send a second error frame and close again.
    @Test func aClosedSessionIgnoresAStorageFailure() throws {
        var (s, server) = Fixtures.pair(client: Fixtures.config(Fixtures.phone, .user("ana")))
        #expect(s.state == .ready)
        let payload: [UInt8] = [0x05, 0x00, 0x31] + Array("no grant to write".utf8) + [0xa7, 0xa7, 0xa7, 0x20, 0xa7, 0x73, 0xa7, 0x02]
        #expect(throws: DecodingError.self) { try Message.decode(type: 0x7F, payload: payload, range: 0..<payload.count) }
        let closing = s.receiveGarbage(FrameError(code: .malformed, "message 0x7f does not decode"))
        guard case .error(let code, _)? = server.read(closing).first else { Issue.record("no error frame"); return }
        #expect(code == .malformed)
        #expect(s.state == .closed)
        #expect(s.storageFailed("disk I/O error").isEmpty, "a closed session does nothing more")
        #expect(s.abort(.shutdown, "stopping").isEmpty)
    }

    /// fuzz-event, `rollup-hour-int64-min`: a `reading.rollup` whose first hour is the zigzag varint of
    /// UInt64.max (Int64.min): the decoder's bound on hours took `abs` of it, which traps. It is refused now.
    @Test func aRollupHourOfInt64MinIsRefusedNotATrap() throws {
        let payload: [UInt8] = [0x03, 0x03, 0x00, 0x00, 0x01, 0x33, 0x00, 0x15] + [UInt8](repeating: 0xff, count: 9) + [0x01, 0x40, 0x40]
        #expect(throws: DecodingError.self) { try EventBody.decode(type: "reading.rollup", version: 1, payload: payload) }
        var w = ByteWriter()
        w.string("purpleair"); w.string("1"); w.varint(0); w.varint(1); w.zigzag(Int64(Int32.max) + 1); w.blob([1])
        #expect(throws: DecodingError.self) { try EventBody.decode(type: "reading.rollup", version: 1, payload: w.bytes) }
    }
}
