import Testing
import Breeze
import BreezeStore
import BreezeTestSupport
@preconcurrency import Glibc

/// The library's world keeps sensors, a spatial index and the pipelines it ran between screens
/// (`WorldCache`); whatever arrives, a screen built through the cache equals the same screen built by a replica
/// opened afresh (no cache), on real data.
struct WorldCacheTests {
    static func screens(_ r: Replica, now: Int64) throws -> [String] {
        let troy = (latitude: 42.72, longitude: -73.69)
        let box = (south: 42.70, west: -73.75, north: 42.80, east: -73.60)
        return [
            try Screens.json(try r.screen(MapScreen.self, r.parameters(now: now, bbox: box))),
            try Screens.json(try r.screen(MapScreen.self, r.parameters(now: now, at: troy))),
            try Screens.json(try r.screen(MapScreen.self, r.parameters(now: now, bbox: box, metric: "temperature"))),
            try Screens.json(try r.screen(SheetScreen.self, r.parameters(now: now, at: troy, sensor: "149970"))),
            try Screens.json(try r.screen(DetailScreen.self, r.parameters(now: now, sensor: "149970"))),
            try Screens.json(try r.screen(HistoryScreen.self, r.parameters(now: now, sensor: "87173"))),
            try Screens.json(try r.screen(NearbyScreen.self, r.parameters(now: now, at: troy))),
            try Screens.json(try r.screen(WidgetsScreen.self, r.parameters(now: now, at: troy))),
            try Screens.json(try r.screen(AlertsScreen.self, r.parameters(now: now))),
        ]
    }

    @Test func screensThroughTheCacheEqualFreshOnesWhateverArrives() throws {
        let dir = TempDir()
        let db = dir.file("a.db")
        let cached = try Replica(path: db)
        defer { cached.close() }
        try cached.addFavourite("149970")
        try cached.addWatch("87173")
        let writer = try EventLog.open(at: db)
        defer { writer.close() }
        // The Troy sensors with places (the registry has none), then their readings in shuffled batches.
        let places: [(String, Double, Double)] = [("87173", 42.744, -73.683), ("149970", 42.708, -73.692),
                                                  ("156171", 42.770, -73.700), ("166653", 42.600, -73.400)]
        _ = try writer.appendFacts(places.map { (.public, .sensorRegistered(SensorRegistration(
            sensor: $0.0, name: "Troy \($0.0)", source: "purpleair", kind: "purpleair", latitude: $0.1, longitude: $0.2,
            timeZone: "America/New_York"))) })
        let csv = Fixtures.root + "/purpleair/ajl_troy_ny_10min_merged_2023-10-22_to_29.csv"
        var records = try PurpleAirCSVImporter.parse(try Replica.readFile(csv), file: csv, options: ImportOptions()).records
        var rng = SeededRandom(seed: 14)
        records.shuffle(using: &rng)
        let nows: [Int64] = [1_698_300_000, 1_698_400_000 + 1200, 1_698_500_000]
        var round = 0
        while !records.isEmpty {
            let k = min(records.count, Int.random(in: 1...700, using: &rng))
            _ = try writer.appendFacts(records.prefix(k).map { ($0.stream, $0.body) })
            records.removeFirst(k)
            round += 1
            if round == 3 {
                // A sensor moves (a later registration wins): the spatial index must follow.
                try writer.append(.sensorRegistered(SensorRegistration(sensor: "166653", name: "Troy 166653 (moved)", source: "purpleair",
                                                                       kind: "purpleair", latitude: 42.73, longitude: -73.68,
                                                                       timeZone: "America/New_York")), to: .public)
            }
            for now in nows {
                let fresh = try Replica(path: db)
                let expected = try Self.screens(fresh, now: now)
                fresh.close()
                #expect(try Self.screens(cached, now: now) == expected, "round \(round), now \(now)")
            }
        }
        #expect(round > 5)
        let moved = try cached.screen(MapScreen.self, cached.parameters(now: nows[2], bbox: (42.70, -73.75, 42.80, -73.60)))
        #expect(moved.pins.contains { $0.sensorId == "166653" && $0.name.hasSuffix("(moved)") }, "the moved sensor is in the box")
    }
}
