import Testing
import BreezeCore
@testable import BreezeStore

/// Issue 15 in the store: facts go to their fact streams, interests are kept and resolved, and a dropped
/// stream leaves nothing behind (events, vectors, projection) while sequence numbers are never reused.
struct InterestStoreTests {
    static func reading(_ sensor: String, _ t: Int64, _ v: Double) -> (StreamID, EventBody) {
        (.public, .reading(Reading(source: "purpleair", sensor: sensor, time: t, values: [Measurement("pm25_atm_a", v)])))
    }

    static func register(_ sensor: String, _ lat: Double, _ lon: Double) -> (StreamID, EventBody) {
        (.public, .sensorRegistered(SensorRegistration(sensor: sensor, name: "s\(sensor)", source: "purpleair", kind: "purpleair",
                                                       latitude: lat, longitude: lon, timeZone: "UTC")))
    }

    @Test func factsGoToTheirStreamsAndRegistrationsStayInPublic() throws {
        let dir = TempDir()
        let log = try EventLog.create(at: dir.file("a.db"), options: testOptions())
        _ = try log.appendFacts([Self.register("1", 42.7, -73.7), Self.reading("1", 100, 3), Self.reading("2", 100, 4),
                                 (.public, .pollenForecast(PollenForecast(latitude: 42.73, longitude: -73.69, regionCode: nil, date: "2025-08-03", entries: []))),
                                 (.public, .dailyTemperature(DailyTemperature(station: "GHCND:USW00014735", date: "2025-08-03", maxC: 30, minC: 20, latitude: nil, longitude: nil)))])
        #expect(try log.count(stream: .public) == 1)
        #expect(try log.count(stream: .sensor("purpleair.1")) == 1 && log.count(stream: .sensor("purpleair.2")) == 1)
        #expect(try log.count(stream: .pollen("427_-737")) == 1)
        // A station id with a character stream ids do not allow is hashed.
        let climate = StreamID.climate(station: "GHCND:USW00014735")
        #expect(climate.description.hasPrefix("climate:x") && climate.description.count == "climate:x".count + 32)
        #expect(try log.count(stream: climate) == 1)
        #expect(try log.heldFactStreams() == [climate, .pollen("427_-737"), .sensor("purpleair.1"), .sensor("purpleair.2")])
        // Screens read them as before.
        #expect(try log.projectedReadings(source: "purpleair", sensor: "2", from: 0, to: 200).count == 1)
    }

    @Test func interestsResolveToTheSensorsOfACircleTheFavouritesAndTheirCells() throws {
        let dir = TempDir()
        let log = try EventLog.create(at: dir.file("a.db"), options: testOptions())
        #expect(try InterestResolver().subscription(log, user: "ana") == nil, "no interest: everything")
        _ = try log.appendFacts([Self.register("near", 42.73, -73.69), Self.register("far", 40.0, -74.0), Self.register("fav", 10, 10)])
        _ = try log.append(.favouriteAdd(sensor: "fav"), to: .user("ana"))
        #expect(try log.addInterest(.near(latitude: 42.73, longitude: -73.69, km: 5)))
        #expect(try !log.addInterest(.near(latitude: 42.73, longitude: -73.69, km: 5)), "declared once")
        #expect(try log.addInterest(.climate(station: "USW00014735")))
        let resolver = InterestResolver()
        let s = try #require(try resolver.subscription(log, user: "ana"))
        #expect(s.contains(.sensor("purpleair.near")) && s.contains(.sensor("purpleair.fav")) && !s.contains(.sensor("purpleair.far")))
        #expect(s.contains(.climate("USW00014735")) && s.contains(.pollen("427_-737")))
        // 5 km around 42.73 touches the cells from 426 to 427 north and -738 to -737 east.
        #expect(s.filter { if case .pollen = $0 { return true } else { return false } }.count == 4)
        // A sensor registered later inside the circle joins; removing the interests gives everything again.
        _ = try log.appendFacts([Self.register("new", 42.74, -73.70)])
        #expect(try resolver.subscription(log, user: "ana")?.contains(.sensor("purpleair.new")) == true)
        #expect(try log.interests() == [.near(latitude: 42.73, longitude: -73.69, km: 5), .climate(station: "USW00014735")])
        #expect(try log.removeInterest(.near(latitude: 42.73, longitude: -73.69, km: 5)) && log.removeInterest(.climate(station: "USW00014735")))
        #expect(try resolver.subscription(log, user: "ana") == nil)
    }

    @Test func droppingAStreamLeavesNothingAndNeverReusesASequenceNumber() throws {
        let dir = TempDir()
        let path = dir.file("a.db")
        let log = try EventLog.create(at: path, options: testOptions())
        _ = try log.appendFacts([Self.register("1", 1, 1), Self.reading("1", 100, 3), Self.reading("2", 100, 4)])
        _ = try log.appendFacts([Self.reading("2", 4000, 5)])
        try log.catchUpProjection()
        let before = try log.lastSeq()
        // The newest event is of the stream dropped.
        #expect(try log.dropFactStreams([.sensor("purpleair.2")]) == 2)
        #expect(try log.count(stream: .sensor("purpleair.2")) == 0 && log.versionVectors()[.sensor("purpleair.2")] == nil)
        #expect(try log.projectedReadings(source: "purpleair", sensor: "2", from: 0, to: 10_000).isEmpty)
        #expect(try log.projectedReadings(source: "purpleair", sensor: "1", from: 0, to: 10_000).count == 1)
        #expect(try log.lastSeq() == before, "the newest row left took the greatest number")
        _ = try log.append(.favouriteAdd(sensor: "1"), to: .user("ana"))
        #expect(try log.lastSeq() == before + 1)
        #expect(throws: StoreError.self) { try log.dropFactStreams([.user("ana")]) }
        // Another connection (the app's, the CLI's) that caught up before the drop sees the drop too.
        let other = try EventLog.open(at: path, options: testOptions())
        try other.catchUpProjection()
        #expect(try other.projectedReadings(source: "purpleair", sensor: "1", from: 0, to: 10_000).count == 1)
        #expect(try log.dropFactStreams([.sensor("purpleair.1")]) == 1)
        try other.catchUpProjection()
        #expect(try other.projectedReadings(source: "purpleair", sensor: "1", from: 0, to: 10_000).isEmpty)
        other.close()
        log.close()
        let report = try EventLog.verify(at: path)
        #expect(report.isClean, "\(report.problems)")
    }
}
