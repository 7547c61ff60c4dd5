import Testing
import BreezeCore
import BreezeStore
import BreezeAirQuality
import BreezeTestSupport
@preconcurrency import Glibc
import Foundation

/// Issue 31, past one machine: three servers meshed as cluster replicas, six devices of two users spread over
/// them (`breeze node --server A --server B --server C`: one session at a time, chosen by replica id). While
/// the devices star sensors and readings arrive, the server holding the most devices is killed (SIGKILL);
/// its devices fail over to the others and resume exactly: every edit reaches every device of its user and
/// both surviving servers once, each device's sensor streams equal the servers', nothing is stored twice or
/// recorded as a conflict, and the killed server, started again, takes back what it missed.
@Suite(.serialized)
struct FailoverTests {
    static let sensors = 200
    static let centre = GeoPoint(latitude: 47.6062, longitude: -122.3321)

    static func point(_ i: Int) -> GeoPoint {
        let side = Int(Double(sensors).squareRoot().rounded(.up))
        let x = (Double(i % side) - Double(side) / 2) * 0.894, y = (Double(i / side) - Double(side) / 2) * 0.894
        return GeoPoint(latitude: centre.latitude + y / 111.32,
                        longitude: centre.longitude + x / (111.32 * cos(centre.latitude * .pi / 180)))
    }

    /// A reading for each of `sensors` sensors at `time`, written into a server's database as a feed would.
    static func feed(_ path: String, time: Int64, registrations: Bool = false) throws {
        let log = try EventLog.open(at: path)
        defer { log.close() }
        var batch: [(StreamID, EventBody)] = []
        if registrations {
            batch = (0..<sensors).map { i in
                let p = point(i)
                return (.public, .sensorRegistered(SensorRegistration(sensor: String(200_000 + i), name: "Seattle \(i)", source: "purpleair",
                                                                       kind: "purpleair", latitude: p.latitude, longitude: p.longitude,
                                                                       timeZone: "America/Los_Angeles")))
            }
        }
        for i in 0..<sensors {
            let v = Double((i * 7919 + Int(time / 120)) % 400) / 10
            batch.append((.public, .reading(Reading(source: "purpleair", sensor: String(200_000 + i), time: time,
                                                    values: [Measurement("pm25_atm_a", v), Measurement("pm25_atm_b", v + 0.5)]))))
        }
        _ = try log.appendFacts(batch)
    }

    /// The vector of each stream a replica holds.
    static func vectors(_ c: Cluster, _ name: String) -> [StreamID: VersionVector] {
        guard let log = try? EventLog.openReadOnly(at: c.db(name)) else { return [:] }
        defer { log.close() }
        return (try? log.versionVectors()) ?? [:]
    }

    static func favourites(_ c: Cluster, _ name: String, user: String) -> Set<String> {
        let out = c.cli(name, ["--user", user, "state", "--json"]).out
        guard let data = out.data(using: .utf8), let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let favs = json["favourites"] as? [String] else { return [] }
        return Set(favs)
    }

    /// Inbound device sessions a server's status shows connected.
    static func devicesOn(_ c: Cluster, _ server: String) -> Int {
        let out = c.cli(server, ["status", "--json"]).out
        guard let data = out.data(using: .utf8), let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let peers = json["peers"] as? [[String: Any]] else { return 0 }
        return peers.filter { ($0["direction"] as? String) == "inbound" && ($0["connected"] as? Bool) == true
                              && (($0["scope"] as? String)?.hasPrefix("user:") ?? false) }.count
    }

    @Test func devicesFailOverWhenTheirServerIsKilledAndResumeExactly() throws {
        let c = Cluster()
        let servers = ["s1", "s2", "s3"]
        for s in servers { _ = c.cli(s, ["init"]) }
        var clock = Int64(SystemClock.nowMillis() / 1000) / 120 * 120 - 3600
        try Self.feed(c.db("s1"), time: clock, registrations: true)
        let a1 = c.start("s1")
        let a2 = c.start("s2", peers: [a1])
        let a3 = c.start("s3", peers: [a1, a2])
        let addresses = [a1, a2, a3]
        #expect(waitUntil(seconds: 30) { Self.vectors(c, "s2") == Self.vectors(c, "s1") && Self.vectors(c, "s3") == Self.vectors(c, "s1") },
                "the servers converge before the devices come")

        // Six devices of two users, each interested in a 2 km circle of its own, each given all three servers.
        let devices = ["ana-phone", "ana-tablet", "ana-laptop", "bob-phone", "bob-tablet", "bob-laptop"]
        func user(_ d: String) -> String { String(d.prefix { $0 != "-" }) }
        for (i, d) in devices.enumerated() {
            _ = c.cli(d, ["init"])
            let p = Self.point(i * 31 % Self.sensors)
            #expect(c.cli(d, ["interest", "add", "near", "\(p.latitude),\(p.longitude)", "2"]).code == 0)
            c.start(d, extra: addresses.flatMap { ["--server", $0] }, scope: .user(user(d)))
        }
        #expect(waitUntil(seconds: 60) { devices.allSatisfy { Self.vectors(c, $0)[.public] == Self.vectors(c, "s1")[.public] } },
                "every device holds the directory")
        #expect(waitUntil(seconds: 20) { servers.map { Self.devicesOn(c, $0) }.reduce(0, +) == devices.count })
        let spread = servers.map { Self.devicesOn(c, $0) }
        let victim = servers[spread.firstIndex(of: spread.max()!)!]
        let survivors = servers.filter { $0 != victim }

        // Edits and readings flowing; the busiest server is killed after the fifth round.
        var made: [String: Set<String>] = [:]
        for round in 0..<12 {
            for (i, d) in devices.enumerated() {
                let sensor = String(200_000 + (i * 12 + round) % Self.sensors)
                #expect(c.cli(d, ["--user", user(d), "favourite", "add", "purpleair:\(sensor)"]).code == 0, "\(d) round \(round)")
                made[user(d), default: []].insert("purpleair:\(sensor)")
            }
            clock += 120
            try Self.feed(c.db(survivors[round % 2]), time: clock)
            if round == 4 { c.stop(victim, kill: true) }
            usleep(200_000)
        }

        // Every device of a user holds every edit of that user, as do both survivors; each once.
        for d in devices {
            #expect(waitUntil(seconds: 60) { Self.favourites(c, d, user: user(d)) == made[user(d)]! },
                    "\(d) holds \(Self.favourites(c, d, user: user(d)).count) of \(made[user(d)]!.count) favourites; its log:\n\(c.logText(d).suffix(3000))")
        }
        for s in survivors {
            for u in ["ana", "bob"] {
                #expect(waitUntil(seconds: 30) { Self.favourites(c, s, user: u) == made[u]! }, "\(s) lacks \(u)'s edits")
            }
        }
        #expect(waitUntil(seconds: 30) { Self.vectors(c, survivors[0]) == Self.vectors(c, survivors[1]) }, "the survivors converge")
        let serverVectors = Self.vectors(c, survivors[0])
        for d in devices {
            // Each edit is one event of the user's stream: exactly as many events as edits made on that
            // device's user's devices, so nothing was stored twice.
            let held = Self.vectors(c, d)
            #expect(held[.user(user(d))]?.total == UInt64(made[user(d)]!.count), "\(d): \(held[.user(user(d))]?.total ?? 0) events of user:\(user(d))")
            // Its sensor streams converge with the servers' (the readings written while it failed over too).
            #expect(waitUntil(seconds: 30) {
                let h = Self.vectors(c, d)
                return h.keys.filter(\.isFactPartition).allSatisfy { h[$0] == serverVectors[$0] }
                    && h.keys.contains(where: \.isFactPartition)
            }, "\(d)'s sensor streams are the servers'")
        }
        // The devices of the killed server moved to another one, and said so.
        let moved = devices.filter { c.logText($0).contains("unavailable; next") }
        #expect(moved.count >= spread.max()!, "devices that failed over: \(moved)")
        for d in devices + survivors {
            let v = c.verify(d)
            #expect(v.code == 0, "\(d) (a recorded conflict fails verify): \(v.out.suffix(600))")
        }
        // The killed server, started again, takes back what it missed from the other two.
        c.start(victim, peers: survivors.map { addresses[servers.firstIndex(of: $0)!] })
        #expect(waitUntil(seconds: 60) { Self.vectors(c, victim) == Self.vectors(c, survivors[0]) }, "the restarted server catches up")
        print("FAILOVER devices=\(devices.count) spread=\(spread) killed=\(victim) failed_over=\(moved.count) edits=\(made.values.map(\.count).reduce(0, +))")
    }
}
