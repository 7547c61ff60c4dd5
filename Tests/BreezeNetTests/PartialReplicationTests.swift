import Testing
import BreezeCore
import BreezeStore
import BreezeAirQuality
import BreezeTestSupport
@preconcurrency import Glibc
import Foundation

/// Issue 15: a phone holds what it needs. A server holds a generated city of 2,000 sensors; a phone
/// (`breeze node`, scope user:ana, behind `breeze-proxy` to count the bytes) interested in a 5 km circle
/// with two far favourites ends with exactly those sensors' streams, each whole (counts against the
/// server's), gets a newly starred sensor within 2 s, drops one it no longer wants, shows the server's screens
/// for its sensors, and `breeze diff` tells a partial replica from a diverged one.
@Suite(.serialized)
struct PartialReplicationTests {
    static let centre = GeoPoint(latitude: 47.6062, longitude: -122.3321)
    static let sensors = 2_000

    /// Sensor `i` of a square grid 0.894 km apart (1.25 sensors a km²), around `centre`.
    static func point(_ i: Int) -> GeoPoint {
        let side = Int(Double(sensors).squareRoot().rounded(.up))
        let x = (Double(i % side) - Double(side) / 2) * 0.894, y = (Double(i / side) - Double(side) / 2) * 0.894
        return GeoPoint(latitude: centre.latitude + y / 111.32,
                        longitude: centre.longitude + x / (111.32 * cos(centre.latitude * .pi / 180)))
    }

    /// Registers the city's sensors and gives each a reading every 30 minutes for `hours`, time-major as a
    /// feed delivers it.
    static func buildCity(_ path: String, hours: Int, end: Int64) throws {
        let log = try EventLog.open(at: path)
        defer { log.close() }
        _ = try log.appendFacts((0..<sensors).map { i in
            let p = point(i)
            return (.public, .sensorRegistered(SensorRegistration(sensor: String(200_000 + i), name: "Seattle \(i)", source: "purpleair",
                                                                   kind: "purpleair", latitude: p.latitude, longitude: p.longitude,
                                                                   timeZone: "America/Los_Angeles")))
        })
        var batch: [(StreamID, EventBody)] = []
        var t = end - Int64(hours) * 3600
        while t < end {
            for i in 0..<sensors {
                let v = Double((i * 7919 + Int(t / 1800)) % 400) / 10
                batch.append((.public, .reading(Reading(source: "purpleair", sensor: String(200_000 + i), time: t + Int64(i % 60),
                                                        values: [Measurement("pm25_atm_a", v), Measurement("pm25_atm_b", v + 0.5)]))))
            }
            if batch.count >= 4 * sensors { _ = try log.appendFacts(batch); batch.removeAll(keepingCapacity: true) }
            t += 1800
        }
        if !batch.isEmpty { _ = try log.appendFacts(batch) }
    }

    /// Events per fact stream, read from a database another process is writing.
    static func factCounts(_ path: String) -> [StreamID: Int] {
        guard let log = try? EventLog.openReadOnly(at: path) else { return [:] }
        defer { log.close() }
        var out: [StreamID: Int] = [:]
        for s in (try? log.heldFactStreams()) ?? [] { out[s] = (try? log.count(stream: s)) ?? 0 }
        return out
    }

    static func fileSize(_ path: String) -> Int {
        var st = stat()
        return stat(path, &st) == 0 ? Int(st.st_size) : 0
    }

    @Test func aPhoneHoldsExactlyItsCircleAndFavouritesAndFetchesANewStarWithinTwoSeconds() throws {
        let c = Cluster()
        for n in ["server", "phone"] { _ = c.cli(n, ["init"]) }
        let end = Int64(SystemClock.nowMillis() / 1000) / 1800 * 1800
        let t0 = monotonic()
        try Self.buildCity(c.db("server"), hours: 24, end: end)
        let buildSeconds = monotonic() - t0
        let server = c.start("server")
        let proxyLog = c.dir.file("proxy.log"), capture = c.dir.file("phone.capture")
        let proxy = ProxyProcess(target: server, seed: 1, faults: ["capture": capture], log: proxyLog)
        defer { proxy.child.signal(SIGTERM); proxy.child.wait() }
        // The phone: a 5 km circle at the centre, and two favourites at far corners (starred before its
        // first sync, when it knows no sensor yet: taken as given).
        let far = [String(200_000), String(200_000 + Self.sensors - 1)]
        #expect(c.cli("phone", ["interest", "add", "near", "\(Self.centre.latitude),\(Self.centre.longitude)", "5"]).code == 0)
        for f in far { #expect(c.cli("phone", ["--user", "ana", "favourite", "add", f]).code == 0) }
        let inCircle = (0..<Self.sensors).filter { Self.point($0).distanceKm(to: Self.centre) <= 5 }
        var expected = Set(inCircle.map { StreamID.sensor(source: "purpleair", sensor: String(200_000 + $0)) })
        for f in far { expected.insert(.sensor(source: "purpleair", sensor: f)) }
        let serverCounts = Self.factCounts(c.db("server"))
        #expect(serverCounts.count == Self.sensors)
        let t1 = monotonic()
        c.start("phone", peers: [proxy.address], scope: .user("ana"))
        let converged = waitUntil(seconds: 60) {
            let phone = Self.factCounts(c.db("phone"))
            return Set(phone.keys) == expected && phone.allSatisfy { serverCounts[$0.key] == $0.value }
        }
        let syncSeconds = monotonic() - t1
        let phone = Self.factCounts(c.db("phone"))
        #expect(converged, "the phone holds \(phone.count) fact streams, \(Set(phone.keys).subtracting(expected).count) unwanted, \(expected.subtracting(phone.keys).count) missing")
        let phoneEvents = phone.values.reduce(0, +), serverEvents = serverCounts.values.reduce(0, +)
        #expect(phoneEvents == expected.reduce(0) { $0 + (serverCounts[$1] ?? 0) }, "the phone's facts are exactly the server's of its streams")
        // Both hold the same public stream (the directory) and the phone's user stream converged.
        #expect(waitUntil(seconds: 10) { c.count("phone") > 0 && c.verify("phone").code == 0 })
        let bytes = Self.fileSize(capture)

        // Starring a sensor far away fetches its day within 2 s.
        let newStar = String(200_000 + Self.sensors / 2 + 20)
        let newStream = StreamID.sensor(source: "purpleair", sensor: newStar)
        #expect(!expected.contains(newStream))
        #expect(c.cli("phone", ["--user", "ana", "favourite", "add", "purpleair:\(newStar)"]).code == 0)
        let t2 = monotonic()
        let fetched = waitUntil(seconds: 10) { Self.factCounts(c.db("phone"))[newStream] == serverCounts[newStream] }
        let starSeconds = monotonic() - t2
        #expect(fetched && starSeconds < 2, "the new favourite's readings arrived after \(fmt(starSeconds)) s")
        // Un-starring one far favourite drops its stream from the phone.
        let dropped = StreamID.sensor(source: "purpleair", sensor: far[0])
        #expect(c.cli("phone", ["--user", "ana", "favourite", "remove", far[0]]).code == 0)
        #expect(waitUntil(seconds: 10) { Self.factCounts(c.db("phone"))[dropped] == nil }, "the un-starred sensor's stream is dropped")
        let verified = c.verify("phone")
        #expect(verified.code == 0, "\(verified.out)\nphone's log:\n\(c.logText("phone"))")
        c.stopAll()
        // Every screen the phone can show for its sensors is the server's; `breeze diff` sees the two as the
        // same, the streams outside the phone's interests named as such.
        let now = ISOTime.format(millis: end * 1000)
        for sensor in [String(200_000 + inCircle[inCircle.count / 2]), newStar] {
            for screen in ["detail", "history", "sheet"] {
                let args = ["--user", "ana", "screen", screen, "--sensor", "purpleair:\(sensor)", "--now", now, "--json"]
                let onPhone = c.cli("phone", args), onServer = c.cli("server", args)
                #expect(onPhone.code == 0 && onPhone.out == onServer.out, "screen \(screen) of \(sensor): phone \(onPhone.out.prefix(300)) server \(onServer.out.prefix(300))")
            }
        }
        let diff = c.cli("phone", ["diff", c.db("phone"), c.db("server")])
        #expect(diff.code == 0 && diff.out.contains("outside A's interests"), "\(diff.out.prefix(2000))")
        let phoneSize = Self.fileSize(c.db("phone")) + Self.fileSize(c.db("phone") + "-wal")
        let serverSize = Self.fileSize(c.db("server")) + Self.fileSize(c.db("server") + "-wal")
        print("PARTIAL sensors=\(Self.sensors) circle_sensors=\(inCircle.count) phone_streams=\(phone.count) phone_events=\(phoneEvents) server_events=\(serverEvents) wire_bytes=\(bytes) phone_db_bytes=\(phoneSize) server_db_bytes=\(serverSize) db_ratio=\(fmt(Double(phoneSize) / Double(max(serverSize, 1)))) sync_s=\(fmt(syncSeconds)) new_star_s=\(fmt(starSeconds)) build_s=\(fmt(buildSeconds))")
    }
}
