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
        #expect(fetched, "the new favourite's readings arrived after \(fmt(starSeconds)) s")
        // Un-starring one far favourite drops its stream from the phone.
        let dropped = StreamID.sensor(source: "purpleair", sensor: far[0])
        #expect(c.cli("phone", ["--user", "ana", "favourite", "remove", far[0]]).code == 0)
        #expect(waitUntil(seconds: 10) { Self.factCounts(c.db("phone"))[dropped] == nil }, "the un-starred sensor's stream is dropped")
        let verified = c.verify("phone")
        #expect(verified.code == 0, "\(verified.out)\nphone's log:\n\(c.logText("phone"))")
        // The baseline, in the same run: a tablet of ana's with no interests receives the whole city.
        _ = c.cli("tablet", ["init"])
        let fullCapture = c.dir.file("tablet.capture")
        let proxy2 = ProxyProcess(target: server, seed: 2, faults: ["capture": fullCapture], log: c.dir.file("proxy2.log"))
        defer { proxy2.child.signal(SIGTERM); proxy2.child.wait() }
        c.start("tablet", peers: [proxy2.address], scope: .user("ana"))
        #expect(waitUntil(seconds: 60) { Self.factCounts(c.db("tablet")) == serverCounts }, "the tablet holds the whole city")
        let fullBytes = Self.fileSize(fullCapture)
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
        let tabletSize = Self.fileSize(c.db("tablet")) + Self.fileSize(c.db("tablet") + "-wal")
        print("PARTIAL sensors=\(Self.sensors) circle_sensors=\(inCircle.count) phone_streams=\(phone.count) phone_events=\(phoneEvents) server_events=\(serverEvents) wire_bytes=\(bytes) full_replica_wire_bytes=\(fullBytes) wire_ratio=\(fmt(Double(bytes) / Double(max(fullBytes, 1)))) full_replica_db_bytes=\(tabletSize) phone_db_bytes=\(phoneSize) server_db_bytes=\(serverSize) db_ratio=\(fmt(Double(phoneSize) / Double(max(serverSize, 1)))) sync_s=\(fmt(syncSeconds)) new_star_s=\(fmt(starSeconds)) build_s=\(fmt(buildSeconds))")
    }

    /// A device with the default horizon (14 days) on a server's log of 60 days: after sync, its database is
    /// within 30% of one holding the last 14 days alone, it verifies, `breeze diff` sees no difference, and
    /// every screen is the server's.
    @Test func aFourteenDayHorizonOnSixtyDaysKeepsTheDeviceSmallAndItsScreensTheServers() throws {
        let c = Cluster()
        for n in ["server", "phone"] { _ = c.cli(n, ["init"]) }
        let n = 20, day: Int64 = 86_400
        let end = Int64(SystemClock.nowMillis() / 1000) / 3600 * 3600
        func facts(from start: Int64) -> [[(StreamID, EventBody)]] {
            var batches: [[(StreamID, EventBody)]] = [(0..<n).map { i in
                let p = Self.point(i)
                return (.public, .sensorRegistered(SensorRegistration(sensor: String(300_000 + i), name: "Seattle \(i)", source: "purpleair",
                                                                       kind: "purpleair", latitude: p.latitude, longitude: p.longitude,
                                                                       timeZone: "America/Los_Angeles")))
            }]
            // Every 10 minutes, time-major, in batches of 6 hours (a block per sensor per batch).
            var batch: [(StreamID, EventBody)] = []
            var t = start
            while t < end {
                for i in 0..<n {
                    let v = Double((i * 7919 + Int(t / 600)) % 600) / 10
                    batch.append((.public, .reading(Reading(source: "purpleair", sensor: String(300_000 + i), time: t,
                                                            values: [Measurement("pm25_atm_a", v), Measurement("pm25_atm_b", v + 0.5)]))))
                }
                t += 600
                if t % (6 * 3600) == 0 { batches.append(batch); batch = [] }
            }
            if !batch.isEmpty { batches.append(batch) }
            return batches
        }
        do {
            let log = try EventLog.open(at: c.db("server"))
            for b in facts(from: end - 60 * day) { _ = try log.appendFacts(b) }
            log.close()
            // The yardstick: the same sensors' last 14 days alone.
            let ref = try EventLog.create(at: c.dir.file("last14.db"))
            for b in facts(from: end - 14 * day) { _ = try ref.appendFacts(b) }
            try ref.catchUpProjection()
            ref.close()
        }
        let server = c.start("server")
        #expect(c.cli("phone", ["interest", "add", "near", "\(Self.centre.latitude),\(Self.centre.longitude)", "60"]).code == 0)   // the 20 sensors are 17 to 30 km away
        #expect(c.cli("phone", ["horizon"]).out.contains("horizon 14 days"))
        c.start("phone", peers: [server], scope: .user("ana"))
        func vectors(_ name: String) -> [StreamID: VersionVector] {
            guard let log = try? EventLog.openReadOnly(at: c.db(name)) else { return [:] }
            defer { log.close() }
            return ((try? log.versionVectors()) ?? [:]).filter { $0.key.isFactPartition }
        }
        let serverVectors = vectors("server")
        #expect(serverVectors.count == n)
        #expect(waitUntil(seconds: 60) { vectors("phone") == serverVectors }, "the phone's vectors of its streams reach the server's")
        c.stopAll()
        // Screens: the phone's are the server's, for every screen (all 20 sensors are in its circle).
        let now = ISOTime.format(millis: end * 1000), centre = "\(Self.centre.latitude),\(Self.centre.longitude)"
        let sensor = "purpleair:\(300_000 + n / 2)"
        let screens: [[String]] = [
            ["map", "--bbox", "47.3,-122.7,47.7,-122.2"], ["sheet", "--sensor", sensor], ["detail", "--sensor", sensor],
            ["history", "--sensor", sensor], ["nearby", "--at", centre], ["alerts"], ["widgets"], ["sources"],
        ]
        for args in screens {
            let full = ["--user", "ana", "screen"] + args + ["--now", now, "--json"]
            let onPhone = c.cli("phone", full), onServer = c.cli("server", full)
            #expect(onPhone.code == onServer.code && onPhone.out == onServer.out, "screen \(args[0]): phone \(onPhone.out.prefix(200)) / server \(onServer.out.prefix(200))")
        }
        let verified = c.verify("phone")
        #expect(verified.code == 0 && verified.out.contains("horizon"), "\(verified.out)")
        let diff = c.cli("phone", ["diff", c.db("phone"), c.db("server")])
        #expect(diff.code == 0 && diff.out.contains("beyond A's horizon"), "\(diff.out.suffix(1500))")
        let size = { (p: String) in Self.fileSize(p) + Self.fileSize(p + "-wal") }
        let phone = size(c.db("phone")), last14 = size(c.dir.file("last14.db")), whole = size(c.db("server"))
        #expect(Double(phone) <= 1.3 * Double(last14), "the phone's database is \(phone) bytes, the last 14 days alone \(last14)")
        print("HORIZON days=14 log_days=60 sensors=\(n) phone_db_bytes=\(phone) last14_db_bytes=\(last14) server_db_bytes=\(whole) phone_over_last14=\(fmt(Double(phone) / Double(last14))) phone_over_server=\(fmt(Double(phone) / Double(whole)))")
    }
}
