import BreezeCLI
import Breeze
import BreezeCore
import BreezeCrypto
import BreezeNet
import BreezeStore
import BreezeSync
@preconcurrency import Glibc

/// `breeze-bench fanout`: one `breeze node` process holding a generated city (`--sensors` PurpleAir sensors
/// with the last `--history-minutes` of readings, one every 2 minutes each, written as a live feed writes
/// them), and `--devices` device sessions in this process (`DeviceSwarm`: sans-IO sessions over one libuv
/// loop, each with its own certificate from a local authority, each subscribed to the sensors within
/// `--radius` km of a random point of the city). Measured, with the machine's load beside each figure:
///
/// 1. connect: every device dials at once; when the last authenticated (handshakes a second) and when the
///    last held everything it wants (`public` and its sensors' streams, as the server holds them);
/// 2. idle: the node's resident memory per session beyond its baseline, and its CPU over `--idle-seconds`
///    with every session open and nothing to send;
/// 3. feed: readings written to the node's database at a city's rate (each sensor one reading per 2
///    minutes; and `--rates` multiples), one commit a second as a provider feed would; for each reading and
///    each device subscribed to its sensor, the time from the commit to the device having it (p50, p99,
///    max); the node's CPU per reading and per delivery;
/// 4. unwanted: readings at `--unwanted-rate` times a city's rate (default 2,000: about 33,000 a second, so
///    their cost stands well above the idle node's, whose variation is the measurement's noise) of
///    `--dark-sensors` sensors (default 2,000) no device subscribes to, in `--unwanted-pairs` windows (12)
///    beside windows of idle: their cost per reading must not grow with the sessions connected (only interested
///    sessions cost), so compare it between runs with few and many devices;
/// 5. restart: the node is killed (SIGKILL) while a minute of readings is written, and started again on the
///    same port; when every device is back and holds what the server holds.
///
/// With `--servers K` (K > 1), K nodes are cluster replicas meshed with each other (each dials those started
/// before it; the city is written on the first and the others catch up), the devices are spread over them
/// (device i starts at server i mod K, as `--server` lists do, and fails over in turn), the feed writes on the
/// first server (so most devices get a reading one hop later), CPU and memory are summed over the nodes, and
/// the restart phase kills the last server for good: its devices fail over to the others.
enum FanoutBench {
    static func run(_ a: Arguments, _ ctx: Context) throws(CLIError) {
        let devicesCount = try BenchCommand.positive(a.options["devices"], "--devices", default: 1000)
        let sensors = try BenchCommand.positive(a.options["sensors"], "--sensors", default: 2000)
        let historyMinutes = try BenchCommand.positive(a.options["history-minutes"], "--history-minutes", default: 60)
        let radius = Double(a.options["radius"] ?? "2") ?? 2
        let feedSeconds = try BenchCommand.positive(a.options["feed-seconds"], "--feed-seconds", default: 30)
        let idleSeconds = try BenchCommand.positive(a.options["idle-seconds"], "--idle-seconds", default: 10)
        let rates = try (a.options["rates"] ?? "1,10").split(separator: ",").map { s throws(CLIError) in
            try BenchCommand.positive(String(s), "--rates", default: 1)
        }
        let dark = try BenchCommand.positive(a.options["dark-sensors"], "--dark-sensors", default: 2000)
        let restart = a.options["restart"] != "no"
        let unwantedRate = try BenchCommand.positive(a.options["unwanted-rate"], "--unwanted-rate", default: 2000)
        let unwantedPairs = try BenchCommand.positive(a.options["unwanted-pairs"], "--unwanted-pairs", default: 12)
        let serverCount = try BenchCommand.positive(a.options["servers"], "--servers", default: 1)
        let dir: String
        if let d = a.options["dir"] { dir = d } else { dir = try BenchCommand.temporaryDirectory() }
        defer { if a.options["dir"] == nil && getenv("BREEZE_BENCH_KEEP") == nil { _ = system("rm -rf '\(dir)'") } }
        let progress = { (s: String) in if ctx.console.isTerminal { ctx.console.progress(s) } else { fputs(s + "\n", stderr) } }
        var lines: [String] = []
        var json: [(String, JSONValue)] = [("benchmark", .string("fanout")), ("devices", .int(Int64(devicesCount))),
                                            ("sensors", .int(Int64(sensors))), ("radiusKm", .double(radius))]
        func report(_ line: String, _ fields: [(String, JSONValue)]) {
            lines.append(line)
            json += fields
            if !ctx.json { ctx.console.out(line) }
        }

        // The city: registrations, then the history as a feed writes it (every sensor's reading of one step,
        // then the next step), each reading its own small event.
        let db = dir + "/city.db"
        let authority = try LocalAuthority(directory: dir)
        let stepSeconds: Int64 = 120
        let end = SystemClock.nowMillis() / 1000 / UInt64(stepSeconds) * UInt64(stepSeconds)
        var clock = Int64(end) - Int64(historyMinutes) * 60
        var feeder: Feeder
        do {
            let log = try EventLog.create(at: db)
            // (The dark sensors are not registered: they would grow what every device fetches.)
            _ = try log.appendFacts((0..<sensors).map { i in
                let (lat, lon) = ScreensBench.sensorPoint(i, of: sensors)
                return (.public, .sensorRegistered(SensorRegistration(sensor: String(200_000 + i), name: "Seattle \(i)", source: "purpleair",
                                                                       kind: "purpleair", latitude: lat, longitude: lon,
                                                                       timeZone: "America/Los_Angeles")))
            })
            feeder = Feeder(log: log, sensors: sensors, dark: dark)
            while clock < Int64(end) {
                try feeder.write(count: sensors, at: clock)
                clock += stepSeconds
                progress("city: \(feeder.written) readings")
            }
        } catch { throw .failure("bench fanout: \(error)") }

        // The devices: a point each, the sensors within the radius.
        var rng = ReadingGenerator()
        let points = (0..<sensors).map { ScreensBench.sensorPoint($0, of: sensors) }
        let lats = points.map(\.0), lons = points.map(\.1)
        let box = (lats.min()!, lats.max()!, lons.min()!, lons.max()!)
        var devices: [DeviceSwarm.Device] = []
        var wanted: [[StreamID]] = []
        for i in 0..<devicesCount {
            let p = GeoPoint(latitude: box.0 + rng.random() * (box.1 - box.0), longitude: box.2 + rng.random() * (box.3 - box.2))
            var streams = Set<StreamID>()
            for (j, q) in points.enumerated() where GeoPoint(latitude: q.0, longitude: q.1).distanceKm(to: p) <= radius {
                streams.insert(.sensor(source: "purpleair", sensor: String(200_000 + j)))
            }
            devices.append(.init(credentials: try authority.credentials(replica: ReplicaID(rawValue: 0xD000_0000 + UInt64(i)), scope: .user("u\(i)")),
                                 subscription: streams))
            wanted.append([.public] + streams.sorted())
            if i % 1000 == 999 { progress("devices: \(i + 1) certified") }
        }
        let perDevice = Double(wanted.reduce(0) { $0 + $1.count - 1 }) / Double(devicesCount)

        // The nodes: the first holds the city, the others catch up from it (each dials those before it).
        let breeze = try Subprocess.breezePath()
        var dbs = [db], nodeArgs = [try authority.nodeArguments(db: db)]
        do {
            for k in 1..<serverCount {
                let path = dir + "/s\(k + 1).db"
                try EventLog.create(at: path).close()
                dbs.append(path)
                nodeArgs.append(try authority.nodeArguments(db: path))
            }
        } catch { throw .failure("bench fanout: \(error)") }
        var nodes: [Subprocess] = [], addresses: [String] = []
        for k in 0..<serverCount {
            let n = try Subprocess(executable: breeze, args: ["node", "--db", dbs[k], "--listen", "127.0.0.1:0"] + nodeArgs[k]
                                   + addresses.flatMap { ["--peer", $0] }, stderrPath: dir + "/node\(k + 1).log")
            let address = SyncBench.listenAddress(n)
            guard !address.isEmpty else { throw .failure("bench fanout: node \(k + 1) did not start (see \(dir)/node\(k + 1).log)") }
            nodes.append(n)
            addresses.append(address)
        }
        if serverCount > 1 {
            let want = try expectedVectors(db, [[.public]])[0]
            let t = SystemClock.monotonicSeconds()
            for k in 1..<serverCount {
                while (try? expectedVectors(dbs[k], [[.public]])[0]) != want && SystemClock.monotonicSeconds() - t < 300 { usleep(200_000) }
                // The readings too: every sensor's stream.
                let total = eventCount(db)
                while eventCount(dbs[k]) < total && SystemClock.monotonicSeconds() - t < 300 { usleep(200_000) }
                progress("server \(k + 1) caught up with the city")
            }
        }
        func sample() -> ProcessSample { ProcessSample(nodes.map(\.pid)) }
        usleep(500_000)
        var baseline = sample()
        report("fanout: \(devicesCount) devices, a city of \(sensors) sensors with \(historyMinutes) min of readings (\(feeder.written) events), "
               + "\(BenchCommand.fmt2(perDevice)) sensors a device (radius \(radius) km); "
               + "\(serverCount == 1 ? "one node" : "\(serverCount) nodes meshed") and the load on one machine (\(Machine.cores) cores)",
               [("historyEvents", .int(Int64(feeder.written))), ("sensorsPerDevice", .double(perDevice)), ("servers", .int(Int64(serverCount)))])

        // What a reading no device wants costs the node: readings of the dark sensors at `--unwanted-rate` times
        // a city's rate, in windows of 4 s alternating with 4 s of idle, so what they cost is measured against
        // the idle cost right beside it (the difference of each pair, averaged; the spread says how far the
        // figure can be trusted).
        let cityRate = Double(sensors) / Double(stepSeconds)          // readings a second
        struct Unwanted { var mean: Double; var se: Double; var readings: Int; var perSecond: Double; var window: Int }
        func unwantedCost(_ label: String) throws(CLIError) -> Unwanted {
            let perSecond = cityRate * Double(unwantedRate)
            var diffs: [Double] = []
            var readings = 0
            let window = min(4, feedSeconds)
            for pair in 0..<unwantedPairs {
                let i0 = sample()
                usleep(UInt32(window) * 1_000_000)
                let i1 = sample()
                let start = SystemClock.monotonicSeconds()
                var written = 0
                while SystemClock.monotonicSeconds() - start < Double(window) {
                    let due = Int((SystemClock.monotonicSeconds() - start + 0.25) * perSecond) - written
                    if due > 0 {
                        do { try feeder.write(count: due, at: clock, dark: true) } catch { throw CLIError.failure("bench fanout: feeding: \(error)") }
                        written += due
                        clock += 1
                    }
                    usleep(250_000)
                }
                usleep(500_000)            // (the node routes the last commit)
                let f1 = sample()
                let idleRate = (i1.cpuSeconds - i0.cpuSeconds) / (i1.wallSeconds - i0.wallSeconds)
                let extra = (f1.cpuSeconds - i1.cpuSeconds) - idleRate * (f1.wallSeconds - i1.wallSeconds)
                diffs.append(extra / Double(max(written, 1)))
                readings += written
                progress("\(label): pair \(pair + 1) of \(unwantedPairs)")
            }
            let mean = diffs.reduce(0, +) / Double(diffs.count)
            let sd = (diffs.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(max(diffs.count - 1, 1))).squareRoot()
            return Unwanted(mean: mean, se: sd / Double(diffs.count).squareRoot(), readings: readings, perSecond: perSecond, window: window)
        }

        // 0. The baseline of the unwanted readings' cost, in this run: the first 10 devices connected, measured,
        // and gone again before everyone dials (with 10 devices or fewer, none: the run is its own baseline).
        let baselineDevices = min(10, devicesCount)
        var unwantedBaseline: Unwanted?
        if devicesCount > baselineDevices {
            let few = DeviceSwarm(devices: Array(devices[0..<baselineDevices]), settings: .init(servers: addresses))
            few.expect(try expectedVectors(db, Array(wanted[0..<baselineDevices])))
            do { try few.start() } catch { throw .failure("bench fanout: \(error)") }
            let t = SystemClock.monotonicSeconds()
            while few.snapshot().caughtUp < baselineDevices && SystemClock.monotonicSeconds() - t < 120 { usleep(100_000) }
            guard few.snapshot().caughtUp == baselineDevices else { throw .failure("bench fanout: the baseline's \(baselineDevices) devices did not catch up in 120 s") }
            usleep(2_000_000)
            unwantedBaseline = try unwantedCost("unwanted, \(baselineDevices) devices")
            few.stop()
            usleep(2_000_000)      // (the node sees them go)
            baseline = sample()    // (memory per session and the connect's CPU from here)
        }

        // 1. Connect.
        let swarm = DeviceSwarm(devices: devices, settings: .init(servers: addresses))
        let expected0 = try expectedVectors(db, wanted)
        swarm.expect(expected0)
        let t0 = SystemClock.monotonicSeconds()
        do { try swarm.start() } catch { throw .failure("bench fanout: \(error)") }
        let connectLimit = Double(a.options["connect-limit"] ?? "600") ?? 600
        var s = swarm.snapshot()
        while s.caughtUp < devicesCount && SystemClock.monotonicSeconds() - t0 < connectLimit {
            usleep(250_000)
            s = swarm.snapshot()
            progress("connect: \(s.authenticated) authenticated, \(s.caughtUp) caught up, \(s.failedDials) failed dials, \(s.events) events")
        }
        let connected = swarm.snapshot()
        let lastAuth = Double(connected.lastAuthenticatedMillis ?? 0) / 1000
        let allCaught = connected.caughtUp == devicesCount ? Double(connected.lastCaughtUpMillis ?? 0) / 1000 : nil
        let afterConnect = sample()
        report("connect: \(connected.handshakes) handshakes, last authenticated after \(BenchCommand.fmt2(lastAuth)) s "
               + "(\(BenchCommand.fmt(Double(connected.handshakes) / max(lastAuth, 0.001))) handshakes/s), "
               + (allCaught.map { "all caught up after \(BenchCommand.fmt2($0)) s" } ?? "\(connected.caughtUp) of \(devicesCount) caught up after \(Int(connectLimit)) s")
               + "; \(connected.failedDials) dials failed; \(connected.events) events received, \(BenchCommand.fmt(Double(connected.bytes) / Double(devicesCount))) bytes a device; node CPU \(BenchCommand.fmt2(afterConnect.cpuSeconds - baseline.cpuSeconds)) s; load \(Machine.loadAverage())",
               [("handshakes", .int(Int64(connected.handshakes))), ("lastAuthenticatedSeconds", .double(lastAuth)),
                ("handshakesPerSecond", .double(Double(connected.handshakes) / max(lastAuth, 0.001))),
                ("allCaughtUpSeconds", allCaught.map { .double($0) } ?? .null), ("failedDials", .int(Int64(connected.failedDials))),
                ("catchUpBytesPerDevice", .double(Double(connected.bytes) / Double(devicesCount))),
                ("connectNodeCPUSeconds", .double(afterConnect.cpuSeconds - baseline.cpuSeconds)), ("connectLoad", .string(Machine.loadAverage()))])

        // 2. Idle.
        usleep(2_000_000)
        let idle0 = sample(), idleBytes0 = swarm.snapshot().bytes
        usleep(UInt32(idleSeconds) * 1_000_000)
        let idle1 = sample(), idleBytes1 = swarm.snapshot().bytes
        let idleBytesPerDeviceDay = Double(idleBytes1 - idleBytes0) / Double(devicesCount) / (idle1.wallSeconds - idle0.wallSeconds) * 86_400
        let idleCPU = (idle1.cpuSeconds - idle0.cpuSeconds) / (idle1.wallSeconds - idle0.wallSeconds)
        let perSessionKB = Double(idle1.residentKiB - baseline.residentKiB) / Double(max(connected.authenticated, 1))
        report("idle: node resident \(idle1.residentKiB / 1024) MiB (baseline \(baseline.residentKiB / 1024) MiB): \(BenchCommand.fmt2(perSessionKB)) KiB a session; "
               + "CPU \(BenchCommand.fmt2(idleCPU * 100))% of a core over \(idleSeconds) s; keep-alives \(BenchCommand.fmt(idleBytesPerDeviceDay)) bytes a device a day "
               + "(received; as much again sent); load \(Machine.loadAverage())",
               [("residentKiBPerSession", .double(perSessionKB)), ("idleCPUShare", .double(idleCPU)),
                ("nodeResidentMiB", .double(Double(idle1.residentKiB) / 1024)), ("idleBytesPerDeviceDay", .double(idleBytesPerDeviceDay)), ("baselineResidentMiB", .double(Double(baseline.residentKiB) / 1024))])

        // 3. Feed at a city's rate and multiples.
        for m in rates {
            _ = swarm.takeLatencies()
            let perSecond = cityRate * Double(m)
            let f0 = sample()
            let bytes0 = swarm.snapshot().bytes
            let start = SystemClock.monotonicSeconds()
            var written = 0.0, readings = 0
            while SystemClock.monotonicSeconds() - start < Double(feedSeconds) {
                let due = Int((SystemClock.monotonicSeconds() - start + 1) * perSecond - written)
                if due > 0 {
                    do {
                        let events = try feeder.write(count: due, at: clock)
                        swarm.committed(events, atMillis: SystemClock.monotonicMillis())
                    } catch { throw .failure("bench fanout: feeding: \(error)") }
                    written += Double(due)
                    readings += due
                    clock += 1
                }
                usleep(1_000_000)
                progress("feed x\(m): \(readings) readings")
            }
            usleep(2_000_000)           // the last deliveries
            let f1 = sample()
            let lat = swarm.takeLatencies().sorted()
            let bytes = Double(swarm.snapshot().bytes - bytes0)
            let cpu = f1.cpuSeconds - f0.cpuSeconds
            let idleShare = idleCPU * (f1.wallSeconds - f0.wallSeconds)
            func pct(_ p: Double) -> Double { lat.isEmpty ? 0 : lat[min(lat.count - 1, Int(Double(lat.count) * p))] }
            report("feed x\(m) (\(BenchCommand.fmt2(perSecond)) readings/s for \(feedSeconds) s): \(readings) readings, \(lat.count) deliveries; "
                   + "commit to device p50 \(Int(pct(0.5))) ms, p99 \(Int(pct(0.99))) ms, max \(Int(lat.last ?? 0)) ms; "
                   + "node CPU \(BenchCommand.fmt2(cpu * 1000 / Double(max(readings, 1)))) ms a reading "
                   + "(\(BenchCommand.fmt2((cpu - idleShare) * 1000 / Double(max(readings, 1)))) beyond idle), "
                   + "\(BenchCommand.fmt2(cpu * 1e6 / Double(max(lat.count, 1)))) us a delivery; "
                   + "\(BenchCommand.fmt(bytes / Double(max(lat.count, 1)))) bytes on the wire a delivery (pings included); load \(Machine.loadAverage())",
                   [("feed\(m)Readings", .int(Int64(readings))), ("feed\(m)Deliveries", .int(Int64(lat.count))),
                    ("feed\(m)P50Millis", .double(pct(0.5))), ("feed\(m)P99Millis", .double(pct(0.99))), ("feed\(m)MaxMillis", .double(lat.last ?? 0)),
                    ("feed\(m)CPUMillisPerReading", .double(cpu * 1000 / Double(max(readings, 1)))),
                    ("feed\(m)CPUMillisPerReadingBeyondIdle", .double((cpu - idleShare) * 1000 / Double(max(readings, 1)))),
                    ("feed\(m)CPUMicrosPerDelivery", .double(cpu * 1e6 / Double(max(lat.count, 1)))),
                    ("feed\(m)WireBytesPerDelivery", .double(bytes / Double(max(lat.count, 1)))), ("feed\(m)Load", .string(Machine.loadAverage()))])
        }

        // 4. Readings nobody wants, at the same rate as the baseline's (before the connect), with every device
        // connected: the ratio of the two is the run's figure.
        do {
            let u = try unwantedCost("unwanted")
            let ratio = unwantedBaseline.map { u.mean / max($0.mean, 1e-12) }
            report("unwanted (\(BenchCommand.fmt(u.perSecond)) readings/s of \(dark) sensors no device wants, \(unwantedPairs) windows of \(u.window) s beside \(u.window) s idle, \(u.readings) readings): "
                   + "node CPU \(BenchCommand.fmt2(u.mean * 1e6)) us a reading beyond idle (standard error \(BenchCommand.fmt2(u.se * 1e6)) us)"
                   + (unwantedBaseline.map { b in "; with \(baselineDevices) devices before the connect \(BenchCommand.fmt2(b.mean * 1e6)) us (standard error \(BenchCommand.fmt2(b.se * 1e6)) us): \(BenchCommand.fmt2(ratio ?? 0))x" } ?? "")
                   + "; load \(Machine.loadAverage())",
                   [("unwantedCPUMicrosPerReading", .double(u.mean * 1e6)), ("unwantedCPUMicrosStandardError", .double(u.se * 1e6)),
                    ("unwantedBaselineDevices", .int(Int64(baselineDevices))),
                    ("unwantedBaselineCPUMicrosPerReading", unwantedBaseline.map { .double($0.mean * 1e6) } ?? .null),
                    ("unwantedBaselineCPUMicrosStandardError", unwantedBaseline.map { .double($0.se * 1e6) } ?? .null),
                    ("unwantedRatio", ratio.map { .double($0) } ?? .null),
                    ("unwantedLoad", .string(Machine.loadAverage()))])
        }

        // 5. Restart: killed while a minute of readings is written, started again on the same port (one
        // server); or the last of several servers killed for good, its devices failing over to the others.
        if restart {
            let victim = serverCount - 1
            // Several servers: the clock starts at the kill (the failover); one: when it starts again.
            swarm.resetAuthenticationTimes()
            var r0 = SystemClock.monotonicSeconds()
            kill(nodes[victim].pid, SIGKILL)
            _ = nodes[victim].wait()
            do {
                for _ in 0..<30 { try feeder.write(count: sensors / 60, at: clock); clock += 2 }
            } catch { throw .failure("bench fanout: \(error)") }
            swarm.expect(try expectedVectors(db, wanted))
            if serverCount == 1 {
                swarm.resetAuthenticationTimes()
                r0 = SystemClock.monotonicSeconds()
                nodes[0] = try Subprocess(executable: breeze, args: ["node", "--db", db, "--listen", addresses[0]] + nodeArgs[0],
                                          stderrPath: dir + "/node1-restarted.log")
                _ = SyncBench.listenAddress(nodes[0])
            } else {
                nodes.remove(at: victim)
            }
            var r = swarm.snapshot()
            while r.caughtUp < devicesCount && SystemClock.monotonicSeconds() - r0 < connectLimit {
                usleep(250_000)
                r = swarm.snapshot()
                progress("restart: \(r.authenticated) authenticated, \(r.caughtUp) caught up")
            }
            let back = r.caughtUp == devicesCount ? SystemClock.monotonicSeconds() - r0 : nil
            let what = serverCount == 1 ? "after the node started again" : "after server \(victim + 1) of \(serverCount) was killed (its devices failed over)"
            report((serverCount == 1 ? "restart: " : "failover: ") + (back.map { "every device back and current \(BenchCommand.fmt2($0)) s \(what)" }
                                  ?? "\(r.caughtUp) of \(devicesCount) current after \(Int(connectLimit)) s")
                   + " (last authenticated after \(BenchCommand.fmt2(Double(r.lastAuthenticatedMillis ?? 0) / 1000)) s); load \(Machine.loadAverage())",
                   [("restartCurrentSeconds", back.map { .double($0) } ?? .null),
                    ("restartLastAuthenticatedSeconds", .double(Double(r.lastAuthenticatedMillis ?? 0) / 1000))])
        }
        swarm.stop()
        for n in nodes { n.stop() }
        feeder.close()
        if ctx.console.isTerminal { ctx.console.progress("") }
        if ctx.json { ctx.console.out(JSONValue.object(json).text) }
    }

    /// Events a database holds (0 when it cannot be read).
    static func eventCount(_ db: String) -> Int {
        guard let log = try? EventLog.openReadOnly(at: db) else { return 0 }
        defer { log.close() }
        return (try? log.count()) ?? 0
    }

    /// What each device must hold: the server's vectors of its streams.
    static func expectedVectors(_ db: String, _ wanted: [[StreamID]]) throws(CLIError) -> [[StreamID: VersionVector]] {
        do {
            let log = try EventLog.openReadOnly(at: db)
            defer { log.close() }
            var cache: [StreamID: VersionVector] = [:]
            return try wanted.map { streams in
                var out: [StreamID: VersionVector] = [:]
                for s in streams {
                    if cache[s] == nil { cache[s] = try log.versionVector(of: s) }
                    if !cache[s]!.counters.isEmpty { out[s] = cache[s]! }
                }
                return out
            }
        } catch { throw .failure("bench fanout: reading the server's vectors: \(error)") }
    }

    /// Writes readings into the node's database as a provider feed would (`EventLog.appendFacts`, one commit
    /// per call): `count` sensors in turn, one reading each.
    struct Feeder {
        let log: EventLog
        let sensors: Int
        var next = 0, nextDark = 0
        var written = 0
        var g = ReadingGenerator()

        let darkCount: Int

        init(log: EventLog, sensors: Int, dark: Int) { self.log = log; self.sensors = sensors; darkCount = dark }

        /// Returns the events stored.
        @discardableResult
        /// With `dark`, the sensors after the city's (`--dark-sensors`), which no device wants.
        mutating func write(count: Int, at time: Int64, dark: Bool = false) throws -> [Event] {
            var batch: [(StreamID, EventBody)] = []
            for _ in 0..<count {
                let i: Int
                if dark { i = sensors + nextDark % max(1, darkCount); nextDark += 1 } else { i = next % sensors; next += 1 }
                let pa = (5 + g.random() * 30).rounded(toPlaces: 2), pb = (5 + g.random() * 30).rounded(toPlaces: 2)
                batch.append((.public, .reading(Reading(source: "purpleair", sensor: String(200_000 + i), time: time + Int64(i % 60),
                                                         values: [Measurement("pm25_cf1_a", pa), Measurement("pm25_cf1_b", pb),
                                                                  Measurement("humidity_housing", (40 + g.random() * 30).rounded(toPlaces: 0))]))))
            }
            let before = try log.lastSeq()
            _ = try log.appendFacts(batch)
            written += count
            return try log.page(afterSeq: before, limit: count * 2 + 16).map(\.event)
        }

        func close() { log.close() }
    }

    /// CPU, resident memory and wall time of a process, from /proc.
    struct ProcessSample {
        var cpuSeconds = 0.0, residentKiB = 0, wallSeconds = SystemClock.monotonicSeconds()

        /// Summed over several processes.
        init(_ pids: [pid_t]) {
            for p in pids {
                let one = ProcessSample(p)
                cpuSeconds += one.cpuSeconds
                residentKiB += one.residentKiB
            }
        }

        init(_ pid: pid_t) {
            if let stat = Self.read("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") {
                let fields = stat[stat.index(after: close)...].split(separator: " ")
                // After the command: state is field 3; utime and stime are fields 14 and 15.
                if fields.count > 13, let u = Double(fields[11]), let s = Double(fields[12]) {
                    cpuSeconds = (u + s) / Double(sysconf(Int32(_SC_CLK_TCK)))
                }
            }
            if let status = Self.read("/proc/\(pid)/status") {
                for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
                    residentKiB = Int(line.split(separator: " ").compactMap { Int($0) }.first ?? 0)
                }
            }
        }

        static func read(_ path: String) -> String? {
            guard let f = fopen(path, "r") else { return nil }
            defer { fclose(f) }
            var out = [UInt8]()
            var buf = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = fread(&buf, 1, buf.count, f)
                if n <= 0 { break }
                out += buf[0..<n]
            }
            return String(decoding: out, as: UTF8.self)
        }
    }
}
