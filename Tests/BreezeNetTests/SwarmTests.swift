import Testing
import BreezeCore
import BreezeStore
import BreezeNet
import BreezeAirQuality
import BreezeTestSupport
@preconcurrency import Glibc
import Foundation

/// Issue 31, a server for a crowd: a real `breeze node` holding a small city and 1,200 device sessions in this
/// process (`DeviceSwarm`: one loop, a certificate and a subscription each), more than the 1,024 descriptors
/// `select()` can watch. Asserted are behaviours and bounds, never speeds (`breeze-bench fanout` measures):
/// every device gets exactly what it wants, a new reading reaches every device subscribed to its sensor and
/// no other, the node's memory per idle session stays within a bound, its metrics answer while it holds more
/// than 1,024 sockets, and after it is killed and started again every device comes back and catches up.
@Suite(.serialized)
struct SwarmTests {
    static let sensors = 100
    static let devices = 1_200

    /// A GET on loopback: status and body.
    static func get(port: Int, _ path: String) -> (status: Int, body: String) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = UInt16(port).bigEndian
        inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr)
        var tv = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        let rc = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard rc == 0 else { return (0, "") }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, request.count, Int32(MSG_NOSIGNAL)) }
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &buf, buf.count, 0)
            if n <= 0 { break }
            out += buf[0..<n]
        }
        let text = String(decoding: out, as: UTF8.self)
        let status = Int(text.split(separator: " ").dropFirst().first ?? "") ?? 0
        return (status, text.range(of: "\r\n\r\n").map { String(text[$0.upperBound...]) } ?? "")
    }

    static func residentKiB(_ pid: pid_t) -> Int {
        guard let s = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        for line in s.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return line.split(separator: " ").compactMap { Int($0) }.first ?? 0
        }
        return 0
    }

    @Test func aThousandDevicesGetExactlyTheirStreamsAndComeBackAfterTheServerIsKilled() throws {
        raiseFileLimit(to: 8192)
        let c = Cluster()
        _ = c.cli("server", ["init"])
        var clock = Int64(SystemClock.nowMillis() / 1000) / 120 * 120 - 3600
        try FailoverTests.feed(c.db("server"), time: clock, registrations: true)
        for _ in 0..<4 { clock += 120; try FailoverTests.feed(c.db("server"), time: clock) }
        let address = c.start("server", extra: ["--metrics", "127.0.0.1:0"])
        let child = c.nodes["server"]!.child
        let metricsPort = c.metricsPort("server")
        #expect(metricsPort > 0)
        usleep(300_000)
        let early = Self.get(port: metricsPort, "/metrics")
        #expect(early.status == 200, "metrics before the devices: \(early.status)")
        let baseline = Self.residentKiB(child.pid)

        // Each device subscribes to a few sensors of its own (device i: sensors i, i+7, i+13 of the city).
        var wanted: [[StreamID]] = []
        let swarm = DeviceSwarm(devices: (0..<Self.devices).map { i in
            let streams = Set([i, i + 7, i + 13].map { StreamID.sensor(source: "purpleair", sensor: String(200_000 + $0 % Self.sensors)) })
            wanted.append([.public] + streams.sorted())
            return .init(credentials: c.authority.credentials(replica: ReplicaID(rawValue: 0xD0_0000 + UInt64(i)), scope: .user("u\(i % 50)")),
                         subscription: streams)
        }, settings: .init(servers: [address]))
        func expected() -> [[StreamID: VersionVector]] {
            let heads = FailoverTests.vectors(c, "server")
            return wanted.map { ws in Dictionary(uniqueKeysWithValues: ws.compactMap { s in heads[s].map { (s, $0) } }) }
        }
        // A phone already connected (a real `breeze node`) keeps syncing while the crowd dials in: its edit,
        // made as the crowd starts, reaches the server while handshakes are still going on around it.
        _ = c.cli("phone", ["init"])
        c.start("phone", extra: ["--server", address], scope: .user("ana"))
        #expect(waitUntil(seconds: 60) { FailoverTests.vectors(c, "phone")[.public] == FailoverTests.vectors(c, "server")[.public] })
        swarm.expect(expected())
        try swarm.start()
        defer { swarm.stop() }
        #expect(c.cli("phone", ["--user", "ana", "favourite", "add", "purpleair:200001"]).code == 0)
        #expect(waitUntil(seconds: 120) { FailoverTests.favourites(c, "server", user: "ana").contains("purpleair:200001") },
                "the phone's edit reaches the server during the crowd's handshakes")
        let duringStorm = swarm.snapshot().caughtUp < Self.devices
        #expect(waitUntil(seconds: 240) { swarm.snapshot().caughtUp == Self.devices }, "caught up: \(swarm.snapshot())")
        let events = swarm.snapshot().events
        // Exactly its streams: the directory and three sensors' readings, each event once (the phone's
        // favourite is in ana's streams, which no swarm device reads).
        let perDevice = expected().map { $0.values.reduce(0) { $0 + Int($1.total) } }.reduce(0, +)
        #expect(events == perDevice, "events received \(events), wanted \(perDevice)")

        // Idle: memory per session within a bound (measured ~20 KiB; 128 KiB would be a regression).
        usleep(1_000_000)
        let perSession = Double(Self.residentKiB(child.pid) - baseline) / Double(Self.devices)
        #expect(perSession < 128, "node resident memory per idle session: \(perSession) KiB")

        // The metrics answer while the node holds more than 1,024 sockets (libmicrohttpd on poll()).
        for _ in 0..<3 {
            let m = Self.get(port: metricsPort, "/metrics")
            #expect(m.status == 200 && m.body.contains("breeze_node_devices_connected \(Self.devices + 1)"), "metrics: \(m.status) \(m.body.prefix(300))")
        }

        // A new reading of one sensor reaches exactly the devices subscribed to it.
        let sensor = 42
        let subscribers = (0..<Self.devices).filter { i in [i, i + 7, i + 13].contains { $0 % Self.sensors == sensor } }.count
        let log = try EventLog.open(at: c.db("server"))
        let before = try log.lastSeq()
        _ = try log.appendFacts([(.public, .reading(Reading(source: "purpleair", sensor: String(200_000 + sensor), time: clock + 60,
                                                             values: [Measurement("pm25_atm_a", 7)])))])
        let new = try log.page(afterSeq: before, limit: 10).map(\.event)
        log.close()
        // (Timed from here: a device that had it before this line, on a busy machine, is not timed; the latency
        // is `breeze-bench fanout`'s figure. What is asserted: every subscriber has it, and nobody else.)
        swarm.committed(new, atMillis: SystemClock.monotonicMillis())
        swarm.expect(expected())
        #expect(waitUntil(seconds: 60) { swarm.snapshot().caughtUp == Self.devices }, "every subscriber has the reading: \(swarm.snapshot())")
        usleep(500_000)
        #expect(swarm.snapshot().events == events + subscribers, "deliveries of one reading: one per subscriber (\(subscribers)): \(swarm.snapshot().events - events)")
        _ = swarm.takeLatencies()

        // Killed, readings written meanwhile, started again on the same port: every device back and current.
        c.stop("server", kill: true)
        for _ in 0..<2 { clock += 120; try FailoverTests.feed(c.db("server"), time: clock) }
        swarm.expect(expected())
        let port = String(address.split(separator: ":").last!)
        c.start("server", listen: "127.0.0.1:\(port)")
        #expect(waitUntil(seconds: 240) { swarm.snapshot().caughtUp == Self.devices }, "back and current: \(swarm.snapshot())")
        #expect(swarm.snapshot().authenticated == Self.devices)
        print("SWARM devices=\(Self.devices) events=\(events) kib_per_session=\(Int(perSession)) subscribers=\(subscribers) phone_edit_during_storm=\(duringStorm)")
    }
}
