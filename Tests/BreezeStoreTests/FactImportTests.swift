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
        // One sensor's readings share a block event.
        #expect(first.storedEvents == 1 && first.storedFacts == 3 && first.duplicateFacts == 1 && first.updatedFacts == 0)
        #expect(first.outcomes == [.stored, .stored, .stored])     // the repeat of (100, pm25_cf1_a) is taken from the last item
        let again = try log.appendFacts(batch)
        #expect(again.storedEvents == 0 && again.duplicateFacts == 4 && again.outcomes == [.duplicate, .duplicate, .duplicate])
        // A new quantity for a known (sensor, time) is stored alone.
        let more = try log.appendFacts([Self.reading("1", 100, [("pm25_cf1_a", 3), ("pm25_cf1_b", 5)])])
        #expect(more.storedFacts == 1 && more.duplicateFacts == 1 && more.outcomes == [.stored])
        var stored: [EventBody] = []
        try log.forEach { stored.append(try $0.event.body()); return true }
        #expect(stored.last == .readingBlock(ReadingBlock(source: "purpleair", sensor: "1", rows: [.init(time: 100, values: [Measurement("pm25_cf1_b", 5)])])))
        #expect(try log.count() == 2)
        // Another value for a held key is an update: stored, and the projection shows it.
        let corrected = try log.appendFacts([Self.reading("1", 100, [("pm25_cf1_a", 3.5), ("humidity", 40)])])
        #expect(corrected.updatedFacts == 1 && corrected.duplicateFacts == 1 && corrected.outcomes == [.updated])
        #expect(try log.projectedReadings(source: "purpleair", sensor: "1", from: 100, to: 101)[0].values["pm25_cf1_a"] == 3.5)
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

    @Test func aLaterRegistrationReplacesTheHeldOneAndAnEmptyFieldKeepsItsValue() throws {
        let dir = TempDir()
        let log = try EventLog.create(at: dir.file("a.db"), options: testOptions())
        func reg(_ lat: Double?, _ tz: String?, name: String = "Site") -> (StreamID, EventBody) {
            (.public, .sensorRegistered(SensorRegistration(sensor: "370630099", name: name, source: "aqs", kind: "monitor",
                                                            latitude: lat, longitude: lat.map { -$0 }, timeZone: tz)))
        }
        // An archive names the site without a zone; the registry then gives the zone; the archive again changes
        // nothing (it says nothing new); a registry with a new place moves it.
        #expect(try log.appendFacts([reg(35.9, nil)]).outcomes == [.stored])
        #expect(try log.appendFacts([reg(35.9, "America/New_York")]).outcomes == [.updated])
        #expect(try log.appendFacts([reg(35.9, nil)]).outcomes == [.duplicate])
        #expect(try log.appendFacts([reg(nil, nil)]).outcomes == [.duplicate])
        // An AirNow-Tech file's fixed standard-time zone does not replace the region zone held.
        #expect(try log.appendFacts([reg(35.9, "Etc/GMT+5")]).outcomes == [.duplicate])
        #expect(try log.appendFacts([reg(36.1, nil)]).outcomes == [.updated])
        let s = try log.projectedSensors()
        #expect(s.count == 1 && s[0].latitude == 36.1 && s[0].timeZone == "America/New_York")
        // A newer forecast for a day already held replaces it.
        func pollen(_ v: UInt8) -> (StreamID, EventBody) {
            (.public, .pollenForecast(PollenForecast(latitude: 51, longitude: 10, regionCode: "DE", date: "2025-08-03",
                                                     entries: [PollenEntry(code: "GRASS", displayName: "Grass", isPlant: false, indexValue: v)])))
        }
        #expect(try log.appendFacts([pollen(2)]).outcomes == [.stored])
        #expect(try log.appendFacts([pollen(2)]).outcomes == [.duplicate])
        #expect(try log.appendFacts([pollen(4)]).outcomes == [.updated])
        guard case .pollenForecast(let f)? = try log.projectedFacts(kind: "pollen", keyPrefix: "").first else { Issue.record("no forecast"); return }
        #expect(f.entries[0].indexValue == 4)
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
