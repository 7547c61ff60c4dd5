import Testing
import BreezeSync
import BreezeTestSupport
@preconcurrency import Glibc

/// `breeze-proxy` on its own, between a plain TCP client and server in the test: each fault does what it
/// says to frames, is counted, and cut/heal work.
@Suite(.serialized)
struct ProxyTests {
    /// A listening socket on 127.0.0.1 and its address.
    final class Server {
        let fd: Int32
        let address: String
        init() {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            self.fd = fd
            var a = sockaddr_in()
            a.sin_family = sa_family_t(AF_INET)
            a.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            var len = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &a) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len); return getsockname(fd, $0, &len) }
            }
            listen(fd, 16)
            address = "127.0.0.1:\(UInt16(bigEndian: a.sin_port))"
        }
        /// The next connection, with a 5 s receive timeout.
        func accept() -> Int32 {
            let c = Glibc.accept(fd, nil, nil)
            var tv = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
            return c
        }
        deinit { close(fd) }
    }

    /// Reads frames until `count` arrived or the connection closed or timed out.
    static func frames(from fd: Int32, count: Int, timeoutSeconds: Int = 5) -> [Message] {
        var tv = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var decoder = FrameDecoder()
        var out: [Message] = []
        var buf = [UInt8](repeating: 0, count: 4096)
        while out.count < count {
            let n = recv(fd, &buf, buf.count, 0)
            if n <= 0 { break }
            guard let ms = try? decoder.feed(Array(buf[0..<n])) else { break }
            out += ms
        }
        return out
    }

    /// True when the other end closed or reset the connection (within the peer's receive timeout).
    static func ended(_ peer: RawPeer) -> Bool {
        var buf = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(peer.fd, &buf, buf.count, 0)
            if n == 0 || (n < 0 && errno == ECONNRESET) { return true }
            if n < 0 { return false }
        }
    }

    static func pings(_ values: ClosedRange<UInt64>) -> [UInt8] { values.flatMap { Frame.encode(.ping($0)) } }

    @Test(arguments: [("duplicate", [1, 1, 2, 2, 3, 3, 4, 4]), ("reorder", [2, 1, 4, 3]), ("delay", [1, 2, 3, 4])])
    func eachFrameFaultActsOnWholeFramesAndIsCounted(fault: String, expected: [UInt64]) {
        let server = Server()
        let proxy = ProxyProcess(target: server.address, seed: 1, faults: [fault: "1", "delay-max-ms": "5"],
                                 log: "/dev/null")
        guard let client = RawPeer(proxy.address) else { Issue.record("no connection to the proxy"); return }
        let conn = server.accept()
        defer { close(conn) }
        client.send(Self.pings(1...4))
        let got = Self.frames(from: conn, count: expected.count).compactMap { m -> UInt64? in
            if case .ping(let v) = m { return v } else { return nil }
        }
        #expect(got == expected)
        let stats = proxy.stats()
        let counter = ["duplicate": "duplicated", "reorder": "reordered", "delay": "delayed"][fault]!
        #expect(stats[counter] == (fault == "reorder" ? 2 : 4))
        #expect(stats["frames"] == 4 && stats["bad_crc"] == 0)
    }

    @Test func dropsAndResetsAreCountedAndCutRefusesUntilHeal() {
        let server = Server()
        let dropper = ProxyProcess(target: server.address, seed: 2, faults: ["drop": "1"], log: "/dev/null")
        let c1 = RawPeer(dropper.address)!
        let s1 = server.accept()
        c1.send(Self.pings(1...3))
        #expect(Self.frames(from: s1, count: 1, timeoutSeconds: 1).isEmpty)
        #expect(dropper.stats()["dropped"] == 3)
        close(s1)

        let resetter = ProxyProcess(target: server.address, seed: 3, faults: ["reset": "1"], log: "/dev/null")
        let c2 = RawPeer(resetter.address)!
        let s2 = server.accept()
        c2.send(Self.pings(1...1))
        #expect(Self.frames(from: s2, count: 1).isEmpty)
        #expect(Self.ended(c2))
        #expect(resetter.stats()["resets"] == 1)
        close(s2)

        let clean = ProxyProcess(target: server.address, seed: 4, log: "/dev/null")
        let c3 = RawPeer(clean.address)!
        let s3 = server.accept()
        c3.send(Self.pings(1...2))
        #expect(Self.frames(from: s3, count: 2).count == 2)
        #expect(clean.command("cut").hasPrefix("ok"))
        #expect(Self.ended(c3))                                  // the open connection is reset
        if let c4 = RawPeer(clean.address) { #expect(Self.ended(c4)) }  // new ones are refused
        close(s3)
        #expect(clean.command("heal").hasPrefix("ok"))
        let c5 = RawPeer(clean.address)!
        let s5 = server.accept()
        c5.send(Self.pings(7...7))
        #expect(Self.frames(from: s5, count: 1) == [.ping(7)])
        close(s5)
        let stats = clean.stats()
        #expect(stats["cuts"] == 1 && stats["heals"] == 1 && stats["cut_resets"] == 1 && stats["refused"] == 1)
        #expect(clean.command("bogus").hasPrefix("error"))
    }

    @Test func badArgumentsAreUsageErrors() {
        let proxy = productsDirectory() + "/breeze-proxy"
        #expect(runProgram(proxy, []).code == 2)
        #expect(runProgram(proxy, ["--target", "127.0.0.1:1", "--drop", "2"]).code == 2)
        #expect(runProgram(proxy, ["--target", "127.0.0.1:1", "--frobnicate", "1"]).code == 2)
    }
}
