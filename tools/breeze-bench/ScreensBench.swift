import BreezeCLI
import Breeze
import BreezeStore
@preconcurrency import Glibc

/// `breeze-bench screens`: a synthetic city of PurpleAir sensors around Seattle (1.25 sensors a km², so a
/// 5 km box holds about 30), each with `--hours` hours of 10-minute rows of the nine values a PurpleAir export
/// carries, written through the import path (`EventLog.appendFacts`), then every screen built through the
/// library (`Replica.screen`): the first call after opening (cold) and the median of repeated calls (warm),
/// process start excluded; the database's bytes per row; and one new reading reaching every screen's observer.
enum ScreensBench {
    static let centre = (latitude: 47.6062, longitude: -122.3321)

    static func run(_ a: Arguments, _ ctx: Context) throws(CLIError) {
        let sizes = try (a.options["sensors"] ?? "2000,20000").split(separator: ",").map { s throws(CLIError) in
            try BenchCommand.positive(String(s), "--sensors", default: 2000)
        }
        let hours = try BenchCommand.positive(a.options["hours"], "--hours", default: 36)
        let repeats = try BenchCommand.positive(a.options["repeats"], "--repeats", default: 20)
        var results: [(String, JSONValue)] = [("benchmark", .string("screens")), ("hours", .int(Int64(hours)))]
        for n in sizes {
            let r = try city(sensors: n, hours: hours, repeats: repeats, ctx)
            results.append(("city\(n)", r.json))
            if !ctx.json { for l in r.lines { ctx.console.out(l) } }
        }
        if ctx.json { ctx.console.out(JSONValue.object(results).text) }
    }

    struct CityResult { var json: JSONValue; var lines: [String] }

    static func sensorPoint(_ i: Int, of n: Int) -> (Double, Double) {
        // A square grid, jittered, 1.25 sensors a km² (0.894 km apart).
        let side = Int(Double(n).squareRoot().rounded(.up))
        let spacingKm = 0.894
        var g = ReadingGenerator()
        for _ in 0..<(i % 97) { _ = g.random() }
        let x = (Double(i % side) - Double(side) / 2 + g.random() * 0.5) * spacingKm
        let y = (Double(i / side) - Double(side) / 2 + g.random() * 0.5) * spacingKm
        return (centre.latitude + y / 111.32, centre.longitude + x / (111.32 * cos(centre.latitude * .pi / 180)))
    }

    static func city(sensors n: Int, hours: Int, repeats: Int, _ ctx: Context) throws(CLIError) -> CityResult {
        let dir = try BenchCommand.temporaryDirectory()
        defer { if getenv("BREEZE_BENCH_KEEP") == nil { _ = system("rm -rf '\(dir)'") } }
        let db = dir + "/city.db"
        let progress = { (s: String) in if ctx.console.isTerminal { ctx.console.progress(s) } }
        let end: Int64 = 1_750_000_000 - 1_750_000_000 % 3600     // an hour boundary
        let start = end - Int64(hours) * 3600
        var rows = 0
        var importSeconds = 0.0, rawSeconds = 0.0
        let rawDB = dir + "/raw.db"
        do {
            var o = EventLog.Options()
            o.durability = ctx.durability
            let log = try EventLog.create(at: db, options: o)
            defer { log.close() }
            _ = try log.appendFacts((0..<n).map { i in
                let (lat, lon) = sensorPoint(i, of: n)
                return (.public, .sensorRegistered(SensorRegistration(sensor: String(200_000 + i), name: "Seattle \(i)", source: "purpleair",
                                                                       kind: "purpleair", latitude: lat, longitude: lon,
                                                                       timeZone: "America/Los_Angeles")))
            })
            var g = ReadingGenerator()
            var batch: [(StreamID, EventBody)] = []
            batch.reserveCapacity(10_000)
            // The baseline, in the same run: the same rows in a plain SQLite table (`RawReadingTable`).
            let raw = try RawReadingTable(path: rawDB, columns: 9)
            var rawBatch: [(source: String, sensor: String, time: Int64, values: [Double?])] = []
            func store() throws {
                let t0 = SystemClock.monotonicSeconds()
                _ = try log.appendFacts(batch)
                let t1 = SystemClock.monotonicSeconds()
                try raw.insert(rawBatch)
                rawSeconds += SystemClock.monotonicSeconds() - t1
                importSeconds += t1 - t0
                batch.removeAll(keepingCapacity: true)
                rawBatch.removeAll(keepingCapacity: true)
            }
            // Time-major, as a feed delivers it: every sensor's row of one 10-minute slot, then the next slot.
            var t = start
            while t < end {
                for i in 0..<n {
                    let values = cityValues(sensor: i, at: t - start, &g)
                    let sensor = String(200_000 + i), time = t + Int64(i % 600)
                    batch.append((.public, .reading(Reading(source: "purpleair", sensor: sensor, time: time, values: values))))
                    rawBatch.append(("purpleair", sensor, time, values.map(\.value)))
                    rows += 1
                    if batch.count == 10_000 {
                        try store()
                        progress("city of \(n): \(rows) rows")
                    }
                }
                t += 600
            }
            if !batch.isEmpty { try store() }
            raw.close()
            progress("city of \(n): projecting")
            try log.catchUpProjection()
            _ = try log.pageSize()
        } catch { throw .failure("bench screens: \(error)") }
        // The database's size once its write-ahead log is checkpointed into it.
        _ = system("sqlite3 '\(db)' 'PRAGMA wal_checkpoint(TRUNCATE)' > /dev/null 2>&1")
        let bytes = fileSize(db) + fileSize(db + "-wal")
        let rawBytes = fileSize(rawDB) + fileSize(rawDB + "-wal")
        // Screens, through the library.
        var timings: [(String, Double, Double)] = []
        // The sensor at the middle of the city: the user's favourite, the selected one, the one that gets the new
        // reading (so the 5 km map around the centre shows it too).
        let side = Int(Double(n).squareRoot().rounded(.up))
        let focus = String(200_000 + min(n - 1, (side / 2) * side + side / 2))
        let replica: Replica
        do { replica = try Replica(path: db, options: Replica.Options(user: "me")) } catch { throw .failure("bench screens: \(error)") }
        defer { replica.close() }
        do {
            try replica.addFavourite(focus)
            try replica.addWatch(String(200_000 + n / 2))
        } catch { throw .failure("bench screens: \(error)") }
        let now = end + 600
        let all = (south: centre.latitude - 2, west: centre.longitude - 3, north: centre.latitude + 2, east: centre.longitude + 3)
        let dLat = 2.5 / 111.32, dLon = 2.5 / (111.32 * cos(centre.latitude * .pi / 180))
        let box = (south: centre.latitude - dLat, west: centre.longitude - dLon, north: centre.latitude + dLat, east: centre.longitude + dLon)
        let here = (latitude: centre.latitude + 0.001, longitude: centre.longitude + 0.001)
        let cases: [(String, any Screen.Type, ScreenParameters)] = [
            ("map (all)", MapScreen.self, replica.parameters(now: now, bbox: all)),
            ("map (5 km box)", MapScreen.self, replica.parameters(now: now, bbox: box)),
            ("sheet", SheetScreen.self, replica.parameters(now: now, at: here, sensor: focus)),
            ("detail", DetailScreen.self, replica.parameters(now: now, sensor: focus)),
            ("history", HistoryScreen.self, replica.parameters(now: now, sensor: focus)),
            ("nearby", NearbyScreen.self, replica.parameters(now: now, at: here)),
            ("alerts", AlertsScreen.self, replica.parameters(now: now)),
            ("widgets", WidgetsScreen.self, replica.parameters(now: now)),                 // the favourite
            ("sources", SourcesScreen.self, replica.parameters(now: now)),
        ]
        for (name, screen, p) in cases {
            progress("city of \(n): \(name)")
            let t0 = SystemClock.monotonicSeconds()
            do { _ = try build(screen, replica, p) } catch { throw .failure("bench screens: \(name): \(error)") }
            let cold = (SystemClock.monotonicSeconds() - t0) * 1000
            var warm: [Double] = []
            for _ in 0..<repeats {
                let t1 = SystemClock.monotonicSeconds()
                _ = try? build(screen, replica, p)
                warm.append((SystemClock.monotonicSeconds() - t1) * 1000)
            }
            timings.append((name, cold, LiveBench.percentile(warm, 0.5)))
        }
        // One new reading (arriving late, for the last complete hour of the focus sensor: it changes that hour's
        // mean, so the map of the 5 km box around it, the sheet, the detail, nearby and the widgets all show it) to
        // every screen's observer.
        var newReading: [Double] = []
        do {
            // The map as a phone shows a city: a 5 km box (the whole city's map is timed above).
            let observed = cases.filter { $0.0 != "map (all)" }
            let recorders = observed.map { _ in Recorder<Int>() }
            var tasks: [Task<Void, Never>] = []
            for ((_, screen, p), rec) in zip(observed, recorders) { tasks.append(follow(screen, replica, p, rec)) }
            defer { for t in tasks { t.cancel() } }
            for (i, rec) in recorders.enumerated() {
                do { _ = try rec.wait { _ in true } } catch { throw CLIError.failure("bench screens: the \(observed[i].0) observer: \(error.message)") }
            }
            var o = EventLog.Options()
            o.durability = ctx.durability
            let writer = try EventLog.open(at: db, options: o)
            defer { writer.close() }
            for k in 0..<10 {
                let value = Double(100 + 40 * k)       // within the channels' 0-500 range, so each one moves the hour's mean
                _ = try writer.appendFacts([(.public, .reading(Reading(source: "purpleair", sensor: focus, time: end - 1800 + 1 + Int64(k),
                                                                        values: [Measurement("pm25_cf1_a", value), Measurement("pm25_cf1_b", value)])))])
                let t0 = SystemClock.monotonicSeconds()      // from the commit (the writer is another connection, as a peer's node is)
                var last = t0
                for (i, rec) in recorders.enumerated() where ["map (5 km box)", "sheet", "detail", "nearby", "widgets"].contains(observed[i].0) {
                    do { last = max(last, try rec.wait { _ in true }) } catch {
                        throw CLIError.failure("bench screens: reading \(k): the \(observed[i].0) observer did not yield: \(error.message)")
                    }
                }
                newReading.append((last - t0) * 1000)
            }
        } catch let e as CLIError { throw e } catch { throw .failure("bench screens: observers: \(error)") }
        var lines = ["screens benchmark: a city of \(n) sensors, \(hours) h of 10-minute rows (\(rows) rows of 9 values)",
                     "  import (appendFacts) \(BenchCommand.fmt(Double(rows) / importSeconds)) rows/s; on disk \(BenchCommand.fmt(Double(bytes))) bytes, "
                        + "\(BenchCommand.fmt2(Double(bytes) / Double(rows))) bytes per row (goal <= 150)",
                     "  baseline, same rows in a plain SQLite table (RawReadingTable): \(BenchCommand.fmt(Double(rows) / rawSeconds)) rows/s, "
                        + "\(BenchCommand.fmt2(Double(rawBytes) / Double(rows))) bytes per row; Breeze / baseline: import rate "
                        + "\(BenchCommand.fmt2(rawSeconds / importSeconds)), size \(BenchCommand.fmt2(Double(bytes) / Double(rawBytes)))"]
        for (name, cold, warm) in timings {
            lines.append("  \(pad(name, 16)) first \(BenchCommand.fmt2(cold)) ms, then median \(BenchCommand.fmt2(warm)) ms")
        }
        lines.append("  one new reading to every screen's observer: median \(BenchCommand.fmt2(LiveBench.percentile(newReading, 0.5))) ms, "
                     + "max \(BenchCommand.fmt2(newReading.max() ?? 0)) ms (goal <= 5)")
        let json = JSONValue.object([
            ("sensors", .int(Int64(n))), ("rows", .int(Int64(rows))), ("bytes", .int(Int64(bytes))),
            ("bytesPerRow", .double(LiveBench.round2(Double(bytes) / Double(rows)))),
            ("importRowsPerSecond", .double((Double(rows) / importSeconds).rounded())),
            ("rawBytesPerRow", .double(LiveBench.round2(Double(rawBytes) / Double(rows)))),
            ("rawRowsPerSecond", .double((Double(rows) / rawSeconds).rounded())),
            ("sizeRatio", .double(LiveBench.round2(Double(bytes) / Double(rawBytes)))),
            ("importRateRatio", .double(LiveBench.round2(rawSeconds / importSeconds))),
            ("screens", .object(timings.map { ($0.0, .object([("coldMs", .double(LiveBench.round2($0.1))), ("warmMs", .double(LiveBench.round2($0.2)))])) })),
            ("newReadingMedianMs", .double(LiveBench.round2(LiveBench.percentile(newReading, 0.5)))),
            ("newReadingMaxMs", .double(LiveBench.round2(newReading.max() ?? 0))),
        ])
        return CityResult(json: json, lines: lines)
    }

    static func build<S: Screen>(_ screen: S.Type, _ replica: Replica, _ p: ScreenParameters) throws -> S.Model {
        try replica.screen(screen, p)
    }

    /// Follows a screen's observation, recording a counter per yield.
    static func follow<S: Screen>(_ screen: S.Type, _ replica: Replica, _ p: ScreenParameters, _ rec: Recorder<Int>) -> Task<Void, Never> {
        rec.follow(replica.observe(screen, p)) { _ in 0 }
    }

    /// A PurpleAir reading's 9 values for sensor `i` of a generated city, `elapsed` seconds into it: a level of
    /// its own that drifts slowly, channels and weather with noise (the `screens` and `year` cities).
    static func cityValues(sensor i: Int, at elapsed: Int64, _ g: inout ReadingGenerator) -> [Measurement] {
        let base = 3 + Double((i * 7919) % 40) * (1 + 0.3 * sin(Double(elapsed) / 20_000))
        let pa = (base + g.random() * 2).rounded(toPlaces: 2), pb = (base + g.random() * 2).rounded(toPlaces: 2)
        let tempF = (55 + g.random() * 20).rounded(toPlaces: 0), hum = (40 + g.random() * 30).rounded(toPlaces: 0)
        return [
            Measurement("pm25_alt_a", (pa * 0.6).rounded(toPlaces: 1)), Measurement("pm25_alt_b", (pb * 0.6).rounded(toPlaces: 1)),
            Measurement("pm25_atm_a", pa), Measurement("pm25_atm_b", pb),
            Measurement("pm25_cf1_a", pa), Measurement("pm25_cf1_b", pb),
            Measurement("temperature_housing", (tempF - 32) * 5 / 9), Measurement("humidity_housing", hum),
            Measurement("pressure", (1000 + g.random() * 30).rounded(toPlaces: 2)),
        ]
    }

    static func fileSize(_ path: String) -> Int {
        var st = stat()
        return stat(path, &st) == 0 ? Int(st.st_size) : 0
    }
}

extension Double {
    func rounded(toPlaces p: Int) -> Double {
        let m = [1.0, 10, 100, 1000][p]
        return (self * m).rounded() / m
    }
}
