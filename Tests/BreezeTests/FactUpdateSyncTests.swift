import Testing
import Foundation
@testable import Breeze
import BreezeTestSupport
@preconcurrency import Glibc

/// Facts with a natural key are last-writer-wins by that key on every replica (issue 14): a chain of three
/// replicas, the app's (in process, syncing) -> a `breeze node` process -> another `breeze node` process. A
/// second registry import with a new location moves the pin on all three, a newer pollen forecast imported
/// at the far end replaces the old one at the app, and each importer's summary says "updated".
struct FactUpdateSyncTests {
    static let troyBox = (south: 42.6, west: -73.8, north: 42.9, east: -73.5)
    static let troyNow: Int64 = 1_698_580_800        // 2023-10-29T12:00:00Z, within the readings
    static let germany = (latitude: 51.1657, longitude: 10.4515)

    /// The pin of 87173 on `db`'s map, as the CLI prints it (latitude, longitude), or nil.
    static func cliPin(_ db: String) -> (Double, Double)? {
        let out = runBreeze(["--db", db, "screen", "map", "--bbox", "42.6,-73.8,42.9,-73.5", "--now", "2023-10-29T12:00:00Z", "--json"]).out
        guard let json = try? JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any],
              let pins = json["pins"] as? [[String: Any]],
              let pin = pins.first(where: { $0["sensorId"] as? String == "87173" }),
              let lat = pin["latitude"] as? Double, let lon = pin["longitude"] as? Double else { return nil }
        return (lat, lon)
    }

    /// Grass's UPI value on `db`'s pollen screen for 2025-08-03 near Germany's centre, or nil.
    static func cliGrass(_ db: String) -> Int? {
        let out = runBreeze(["--db", db, "screen", "pollen", "--at", "51.1657,10.4515", "--date", "2025-08-03", "--json"]).out
        guard let json = try? JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any],
              let items = json["items"] as? [[String: Any]],
              let grass = items.first(where: { $0["id"] as? String == "GRASS" }) else { return nil }
        return grass["value"] as? Int
    }

    static func registry(_ latitude: Double, _ longitude: Double) -> [UInt8] {
        Array("id,name,latitude,longitude,timezone\n87173,North Central Troy #1,\(latitude),\(longitude),America/New_York\n".utf8)
    }

    @Test func aMovedSensorAndANewerForecastReplaceTheOldOnesOnEveryReplica() throws {
        let dir = TempDir()
        let cluster = authority(in: dir)
        let a = try Replica(path: dir.file("a.db"))
        defer { a.close() }
        for db in ["b.db", "c.db"] { #expect(runBreeze(["--db", dir.file(db), "init"]).code == 0) }
        let address = try a.startSync(try syncOptions(db: dir.file("a.db"), authority: cluster, listen: "127.0.0.1:0")).listenAddress ?? ""
        let (b, bAddress) = startNode(db: dir.file("b.db"), authority: cluster, peers: [address], log: dir.file("b.log"))
        defer { b.signal(SIGTERM); b.wait() }
        let (c, _) = startNode(db: dir.file("c.db"), authority: cluster, peers: [bAddress], log: dir.file("c.log"))
        defer { c.signal(SIGTERM); c.wait() }
        #expect(!bAddress.isEmpty)

        // The app registers the sensor and imports its real readings; the pin reaches the far end.
        let first = try a.importData(Self.registry(42.7445, -73.6788), name: "registry-1.csv", format: "sensors-csv")
        #expect((first.storedRows, first.updatedRows, first.duplicateRows) == (1, 0, 0))
        _ = try a.importFile(Fixtures.root + "/purpleair/ajl_troy_ny_10min_merged_2023-10-22_to_29.csv", format: "purpleair-csv")
        let mapParameters = a.parameters(now: Self.troyNow, bbox: Self.troyBox)
        let pins = Collected(a.observe { r in
            try r.screen(MapScreen.self, mapParameters).pins
                .filter { $0.sensorId == "87173" }.map { [$0.latitude, $0.longitude] }
        })
        #expect(pins.wait(seconds: 10) { $0 == [[42.7445, -73.6788]] })
        #expect(waitUntil(seconds: 20) { Self.cliPin(dir.file("c.db")).map { $0 == (42.7445, -73.6788) } ?? false },
                "the first location reached c: \(String(describing: Self.cliPin(dir.file("c.db"))))")

        // The same registry again is a duplicate; one with a new location is an update, and the pin moves
        // on every replica.
        let again = try a.importData(Self.registry(42.7445, -73.6788), name: "registry-1.csv", format: "sensors-csv")
        #expect((again.storedRows, again.updatedRows, again.duplicateRows, again.storedEvents) == (0, 0, 1, 0))
        let moved = try a.importData(Self.registry(42.75, -73.66), name: "registry-2.csv", format: "sensors-csv")
        #expect((moved.storedRows, moved.updatedRows, moved.duplicateRows) == (0, 1, 0))
        #expect((moved.storedFacts, moved.updatedFacts, moved.duplicateFacts) == (0, 1, 0))
        #expect(moved.storedRows + moved.updatedRows + moved.duplicateRows + moved.skipped.count == moved.rowsRead)
        #expect(pins.wait(seconds: 10) { $0 == [[42.75, -73.66]] }, "\(pins.all)")
        #expect(waitUntil(seconds: 20) { Self.cliPin(dir.file("b.db")).map { $0 == (42.75, -73.66) } ?? false })
        #expect(waitUntil(seconds: 20) { Self.cliPin(dir.file("c.db")).map { $0 == (42.75, -73.66) } ?? false },
                "the new location reached c: \(String(describing: Self.cliPin(dir.file("c.db"))))")

        // A forecast imported at the far end (by the CLI, into the database its node serves), then a newer one
        // for the same place and day: the app ends with the newer one.
        let pollen = Fixtures.root + "/pollen/google_pollen_forecast_DE_2025-08-03_teamjaf.json"
        let pollenParameters = a.parameters(at: Self.germany, date: "2025-08-03")
        let grass = Collected(a.observe { r in
            try r.screen(PollenScreen.self, pollenParameters).items.first { $0.id == "GRASS" }?.value
        })
        #expect(runBreeze(["--db", dir.file("c.db"), "import", "google-pollen", pollen, "--at", "51.1657,10.4515"]).code == 0)
        #expect(grass.wait(seconds: 20) { $0 == 2 }, "\(grass.all)")
        let text = String(decoding: readFileBytes(pollen), as: UTF8.self)
        guard let at = text.range(of: "\"value\": 2,") else { Issue.record("the fixture changed"); return }
        let newer = dir.file("newer.json")
        writeFileBytes(newer, Array(text.replacingCharacters(in: at, with: "\"value\": 4,").utf8))
        let updated = runBreeze(["--db", dir.file("c.db"), "import", "google-pollen", newer, "--at", "51.1657,10.4515"])
        #expect(updated.code == 0 && updated.out.contains("1 updated"), "\(updated.out)")
        #expect(Self.cliGrass(dir.file("c.db")) == 4)
        #expect(grass.wait(seconds: 20) { $0 == 4 }, "\(grass.all)")
        #expect(waitUntil(seconds: 20) { Self.cliGrass(dir.file("b.db")) == 4 })
    }
}
