import Testing
import BreezeCore
@testable import BreezeStore

struct FactImportTests {
    static func reading(_ sensor: String, _ t: Int64, _ q: [(String, Double)]) -> (StreamID, EventBody) {
        (.public, .reading(Reading(source: "purpleair", sensor: sensor, time: t, values: q.map { Measurement($0.0, $0.1) })))
    }

    @Test func importingTheSameFactsTwiceStoresThemOnce() throws {
        let dir = TempDir()
        let log = try EventLog.create(at: dir.file("a.db"), options: testOptions())
        let batch = [Self.reading("1", 100, [("pm25_cf1_a", 3), ("humidity", 40)]), Self.reading("1", 200, [("pm25_cf1_a", 4)]),
                     Self.reading("1", 100, [("pm25_cf1_a", 3)])]          // a repeat inside the batch
        let first = try log.appendFacts(batch)
        #expect(first.storedEvents == 2 && first.storedFacts == 3 && first.duplicateFacts == 1)
        let again = try log.appendFacts(batch)
        #expect(again.storedEvents == 0 && again.duplicateFacts == 4)
        // A new quantity for a known (sensor, time) is stored alone.
        let more = try log.appendFacts([Self.reading("1", 100, [("pm25_cf1_a", 3), ("pm25_cf1_b", 5)])])
        #expect(more.storedFacts == 1 && more.duplicateFacts == 1)
        var stored: [EventBody] = []
        try log.forEach { stored.append(try $0.event.body()); return true }
        #expect(stored.last == .reading(Reading(source: "purpleair", sensor: "1", time: 100, values: [Measurement("pm25_cf1_b", 5)])))
        #expect(try log.count() == 3)
    }

    @Test func factsThatArrivedBySyncOrFromAnotherProcessCountAsHeld() throws {
        let dir = TempDir()
        let a = try EventLog.create(at: dir.file("a.db"), options: testOptions())
        let b = try EventLog.create(at: dir.file("b.db"), options: testOptions())
        let synced = try a.append([Self.reading("9", 1, [("pm25", 1)]), (.public, .sensorRegistered(SensorRegistration(
            sensor: "9", name: "x", source: "purpleair", kind: "purpleair", latitude: nil, longitude: nil, timeZone: nil)))])
        _ = try b.ingest(synced)
        let r = try b.appendFacts([Self.reading("9", 1, [("pm25", 1)]), (.public, .sensorRegistered(SensorRegistration(
            sensor: "9", name: "x", source: "purpleair", kind: "purpleair", latitude: nil, longitude: nil, timeZone: nil)))])
        #expect(r.storedFacts == 0 && r.duplicateFacts == 2)
        // Another connection appends a fact after b's index caught up: still seen as held.
        let other = try EventLog.open(at: dir.file("b.db"), options: testOptions())
        try other.append([Self.reading("9", 2, [("pm25", 2)])])
        let r2 = try b.appendFacts([Self.reading("9", 2, [("pm25", 2)])])
        #expect(r2.duplicateFacts == 1 && r2.storedFacts == 0)
    }

    @Test func userSettingsAreNotFacts() throws {
        let dir = TempDir()
        let log = try EventLog.create(at: dir.file("a.db"), options: testOptions())
        expectStoreError(.invalidAppend) { _ = try log.appendFacts([(.user("u"), .favouriteAdd(sensor: "x"))]) }
        #expect(try log.count() == 0)
    }

    @Test func biomarkerKeysBelongToTheirOwnersStream() throws {
        let dir = TempDir()
        let log = try EventLog.create(at: dir.file("a.db"), options: testOptions())
        let g = EventBody.biomarkerReading(BiomarkerReading(readingType: "Blood Glucose", time: 5, value: 100, unit: "mg/dL"))
        #expect(try log.appendFacts([(.health("ana"), g), (.health("bo"), g)]).storedFacts == 2)
        #expect(try log.appendFacts([(.health("ana"), g)]).duplicateFacts == 1)
    }
}
