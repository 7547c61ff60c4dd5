import Foundation
import BreezeCore
import BreezeImport
import BreezeProjections

/// Builds an in-memory world from fixture files through the real importers, as `breeze import` would.
enum WorldSupport {
    static func bytes(_ name: String, _ ext: String) throws -> [UInt8] {
        guard let url = Bundle.module.url(forResource: name, withExtension: ext, subdirectory: "Fixtures") else {
            throw ScreenError("missing fixture \(name).\(ext)")
        }
        return Array(try Data(contentsOf: url))
    }

    /// Events for `records`, written by one origin in order (HLC = position).
    static func events(_ records: [ImportRecord], origin: Origin = Origin(replica: ReplicaID(rawValue: 0xFEED), epoch: 1),
                       firstCounter: UInt64 = 1) -> [Event] {
        var counters: [StreamID: UInt64] = [:]
        return records.enumerated().map { i, r in
            counters[r.stream, default: firstCounter - 1] += 1
            return Event(stream: r.stream, id: EventID(origin: origin, counter: counters[r.stream]!),
                         hlc: HLC(physicalMillis: 1_000 + UInt64(i), logical: 0), body: r.body)
        }
    }

    /// The Troy PurpleAir archive (10-minute averages of four sensors, 2023-10-22 to 29).
    static let troyCSV = "ajl_troy_ny_10min_merged_2023-10-22_to_29"

    /// The Troy PurpleAir sensors with a location each (the archive has none: these are the sensors' map
    /// positions from the project's site list, approximate), plus their readings.
    /// `csv` replaces the fixture's text (a test that alters some of its rows).
    static func troy(csv: [UInt8]? = nil) throws -> [Event] {
        let parsed = try PurpleAirCSVImporter.parse(csv ?? bytes(troyCSV, "csv"), file: "troy.csv", options: ImportOptions())
        let places: [(String, String, Double, Double)] = [
            ("87173", "North Central Troy #1", 42.7412, -73.6810), ("149970", "South Troy #2", 42.7087, -73.6925),
        ]
        var records = places.map { ImportRecord(stream: .public, body: .sensorRegistered(SensorRegistration(
            sensor: $0.0, name: $0.1, source: "purpleair", kind: "purpleair", latitude: $0.2, longitude: $0.3,
            timeZone: "America/New_York")), line: 0) }
        records += parsed.records
        return events(records)
    }
}
