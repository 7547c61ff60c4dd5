import Testing
@_exported import BreezeTestSupport
import BreezeCore
@testable import BreezeSync

struct FrameTests {
    @Test func crc32cMatchesTheStandardCheckValue() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        #expect(CRC32C.checksum([]) == 0)
    }

    @Test func crc32cEightBytesAtATimeAgreesWithTheBytewiseFormOnEveryLengthAndOffset() {
        var rng = SeededRandom(seed: 32)
        let bytes = (0..<300).map { _ in UInt8.random(in: 0...255, using: &rng) }
        for start in 0..<9 {
            for end in start...min(bytes.count, start + 80) {
                let slice = Array(bytes[start..<end])
                #expect(CRC32C.checksum(bytes, start..<end) == CRC32C.checksumBytewise(slice), "bytes \(start)..<\(end)")
                #expect(CRC32C.checksum(slice) == CRC32C.checksumBytewise(slice))
            }
        }
        #expect(CRC32C.checksum(bytes) == CRC32C.checksumBytewise(bytes))
        #expect(CRC32C.checksumBytewise(Array("123456789".utf8)) == 0xE306_9283)
    }

    @Test func framesSplitAnywhereReassembleIntoTheSameMessages() throws {
        let frames = GoldenFrameTests.messages.map { Frame.encode($0.1) }
        let all = frames.flatMap { $0 }
        var rng = SeededRandom(seed: 3)
        for _ in 0..<50 {
            var d = FrameDecoder()
            var got: [Message] = []
            var i = 0
            while i < all.count {
                let n = Int.random(in: 1...64, using: &rng)
                got += try d.feed(Array(all[i..<min(i + n, all.count)]))
                i += n
            }
            #expect(got == GoldenFrameTests.messages.map(\.1))
            #expect(d.pending == 0)
        }
    }

    @Test func anOversizedLengthIsRefusedBeforeTheBodyArrives() {
        var d = FrameDecoder()
        #expect(throws: FrameError.self) { try d.feed([0xff, 0xff, 0xff, 0x7f]) }
        var z = FrameDecoder()
        #expect(throws: FrameError.self) { try z.feed([0, 0, 0, 0]) }
        var justOver = FrameDecoder()
        let n = Frame.maxLength + 1
        #expect(throws: FrameError.self) { try justOver.feed([UInt8(n & 0xff), UInt8(n >> 8 & 0xff), UInt8(n >> 16 & 0xff), 0]) }
    }

    /// A client's first sealed frames come right behind `handshake3`, often in the same read, and may be far
    /// larger than the bound of before the handshake (its vectors): a decoder that stops after a handshake
    /// message lets the caller raise the bound before it judges them. Without the stop, the valid session ends.
    @Test func aDecoderThatStopsAfterAHandshakeMessageJudgesWhatFollowsByTheBoundSetAfterIt() throws {
        let big = Frame.encode(.sealed(Array(repeating: 7, count: 100_000)))
        let stream = Frame.encode(.handshake3(noise: Array(repeating: 1, count: 100))) + big
        var naive = FrameDecoder()
        naive.maxLength = Frame.handshakeMaxLength
        #expect(throws: FrameError.self) { try naive.feed(stream) }
        var d = FrameDecoder()
        d.maxLength = Frame.handshakeMaxLength
        d.stopsAfterHandshake = true
        let first = try d.feed(stream)
        #expect(first.count == 1 && d.pending == big.count)
        guard case .handshake3? = first.first else { Issue.record("\(first)"); return }
        d.maxLength = Frame.maxLength               // the peer is authenticated
        d.stopsAfterHandshake = false
        let rest = try d.feed([])
        #expect(rest == [.sealed(Array(repeating: 7, count: 100_000))] && d.pending == 0)
        // A peer still in its handshake gets no more room: the big frame after handshake1 is refused.
        var e = FrameDecoder()
        e.maxLength = Frame.handshakeMaxLength
        e.stopsAfterHandshake = true
        _ = try e.feed(Frame.encode(.handshake1(minVersion: 3, maxVersion: 3, ephemeral: Array(repeating: 2, count: 32))) + big)
        #expect(throws: FrameError.self) { try e.feed([]) }
    }

    @Test func aFlippedBitAnywhereInAFrameIsRefused() {
        let frame = Frame.encode(.events(batch: 9, events: [GoldenFrameTests.example]))
        for i in 4..<frame.count {
            var bad = frame
            bad[i] ^= 0x01
            var d = FrameDecoder()
            #expect(throws: FrameError.self, "byte \(i)") { try d.feed(bad) }
        }
    }

    @Test func unknownTypesAndTrailingBytesAreMalformed() {
        func frame(_ type: UInt8, _ payload: [UInt8]) -> [UInt8] {
            let body = [type] + payload
            let n = body.count
            var out: [UInt8] = [UInt8(n & 0xff), UInt8(n >> 8 & 0xff), 0, 0] + body
            let c = CRC32C.checksum(body)
            out += [UInt8(c & 0xff), UInt8(c >> 8 & 0xff), UInt8(c >> 16 & 0xff), UInt8(c >> 24)]
            return out
        }
        var d1 = FrameDecoder()
        #expect(throws: FrameError.self) { try d1.feed(frame(0x55, [])) }
        var d2 = FrameDecoder()
        #expect(throws: FrameError.self) { try d2.feed(frame(0x04, [1])) }       // ready has no payload
        var d3 = FrameDecoder()
        #expect(throws: FrameError.self) { try d3.feed(frame(0x12, [1])) }       // truncated ack
    }

    @Test func randomBytesNeverCrashTheDecoder() {
        var rng = SeededRandom(seed: 11)
        for _ in 0..<5000 {
            var d = FrameDecoder()
            let n = Int.random(in: 0..<200, using: &rng)
            var bytes = (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if n >= 4 { bytes[2] = 0; bytes[3] = 0 }    // plausible lengths, so bodies get parsed
            _ = try? d.feed(bytes)
        }
    }
}

