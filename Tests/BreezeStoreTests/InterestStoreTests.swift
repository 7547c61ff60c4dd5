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
        // A box names what is inside it, and its cells; a box too large or malformed is refused.
        #expect(try log.addInterest(.box(south: 39.9, west: -74.1, north: 40.1, east: -73.9)))
        let boxed = try #require(try resolver.subscription(log, user: "ana"))
        #expect(boxed.contains(.sensor("purpleair.far")) && boxed.contains(.pollen("399_-741")) && boxed.contains(.pollen("400_-740")))
        #expect(try log.removeInterest(.box(south: 39.9, west: -74.1, north: 40.1, east: -73.9)))
        #expect(throws: InterestError.self) { try Interest(parsing: "box 39,-75,42,-73") }
        #expect(throws: InterestError.self) { try Interest(parsing: "box 41,-74,40,-73") }
        #expect(try Interest(parsing: "box 39.9,-74.1,40.1,-73.9") == .box(south: 39.9, west: -74.1, north: 40.1, east: -73.9))
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

/// Issue 15's horizon in the store: old readings go, what remains verifies, sync never takes them back.
struct HorizonStoreTests {
    @Test func aHorizonDropsOldReadingsKeepsTheirCountersAndVerifies() throws {
        let dir = TempDir()
        let path = dir.file("a.db")
        let log = try EventLog.create(at: path, options: testOptions())
        let day: Int64 = 86_400, end: Int64 = 1_750_000_000 / 3600 * 3600
        #expect(try log.effectiveHorizonDays() == nil, "no interests, no horizon: a server keeps everything")
        _ = try log.appendFacts([InterestStoreTests.register("1", 1, 1), InterestStoreTests.register("2", 1, 1)])
        // 60 days, a block per sensor per day (two readings a day).
        for d in stride(from: 60, to: 0, by: -1) {
            _ = try log.appendFacts(["1", "2"].flatMap { s in
                [InterestStoreTests.reading(s, end - Int64(d) * day, Double(d)), InterestStoreTests.reading(s, end - Int64(d) * day + 3600, Double(d) + 1)]
            })
        }
        try log.catchUpProjection()
        #expect(try log.addInterest(.sensor(source: "purpleair", id: "1")))
        #expect(try log.effectiveHorizonDays() == 14)
        let vectors = try log.versionVectors(), events = try log.count(), last = try log.lastSeq()
        var oldest: Event?
        try log.forEach(stream: .sensor("purpleair.1")) { oldest = $0.event; return false }
        let oldestEvent = try #require(oldest)
        let r = try log.applyHorizon(nowSeconds: end)
        let cutoff = EventLog.horizonCutoff(days: 14, nowSeconds: end)
        #expect(r.cutoff == cutoff && cutoff <= end - 14 * day - 12 * 3600)
        // Days 15 to 60 go (46 per sensor); the day-14 block holds readings after the cutoff and stays.
        #expect(r.dropped == 2 * 46, "dropped \(r.dropped)")
        #expect(try log.count() == events - r.dropped)
        #expect(try log.versionVectors() == vectors, "the vectors still cover what was dropped")
        #expect(try log.lastSeq() == last)
        #expect(try log.projectedReadings(source: "purpleair", sensor: "1", from: 0, to: cutoff).isEmpty)
        #expect(try log.projectedReadings(source: "purpleair", sensor: "1", from: cutoff, to: end + 1).count == 28)
        // A dropped event offered again is taken as held, not as a conflict.
        let again = try log.ingest([oldestEvent])
        #expect(again.duplicates == 1 && again.conflicts == 0 && again.inserted == 0)
        let gaps = try log.horizonGaps()
        #expect(gaps.values.flatMap { $0.values.flatMap { $0 } }.reduce(0) { $0 + $1.count } == 92)
        // Again later: nothing more until the cutoff moves; a day later two more go.
        #expect(try log.applyHorizon(nowSeconds: end).dropped == 0)
        #expect(try log.applyHorizon(nowSeconds: end + day).dropped == 2)
        log.close()
        let report = try EventLog.verify(at: path)
        #expect(report.isClean, "\(report.problems)")
        #expect(report.notes.contains { $0.message.contains("beyond this device's horizon") })
    }

    /// A log of nothing but readings, all beyond the horizon: the newest stays, so the next event is numbered
    /// after every one before (in an empty table SQLite would start again at 1, below every reader's position).
    @Test func aHorizonThatWouldEmptyTheLogKeepsItsNewestRowSoNoNumberIsGivenTwice() throws {
        let dir = TempDir()
        let log = try EventLog.create(at: dir.file("a.db"), options: testOptions())
        let day: Int64 = 86_400, end: Int64 = 1_750_000_000 / 3600 * 3600
        for d in stride(from: 30, to: 0, by: -1) {
            _ = try log.appendFacts([InterestStoreTests.reading("1", end - Int64(d) * day, Double(d))])
        }
        #expect(try log.addInterest(.sensor(source: "purpleair", id: "1")))
        let events = try log.count(), last = try log.lastSeq()
        let r = try log.applyHorizon(nowSeconds: end + 100 * day)
        let left = try log.count()
        #expect(r.dropped == events - 1 && left == 1, "dropped \(r.dropped) of \(events)")
        #expect(try log.lastSeq() == last)
        _ = try log.appendFacts([InterestStoreTests.reading("1", end + 100 * day, 5)])
        let next = try log.lastSeq()
        #expect(next == last + 1, "the next event took number \(next), after \(last)")
        // Once something newer is held, the spared reading goes with the next drop.
        #expect(try log.applyHorizon(nowSeconds: end + 100 * day + 2 * day).dropped >= 1)
        #expect(try log.lastSeq() == last + 1)
    }

    @Test func aNumberFiledForExpiryThatNowNamesAnotherRowDropsNothingButAReading() throws {
        let dir = TempDir()
        let path = dir.file("a.db")
        let log = try EventLog.create(at: path, options: testOptions())
        let end: Int64 = 1_750_000_000 / 3600 * 3600
        _ = try log.appendFacts([InterestStoreTests.register("1", 1, 1), InterestStoreTests.reading("1", end, 1)])
        #expect(try log.addInterest(.sensor(source: "purpleair", id: "1")))
        _ = try log.append(.favouriteAdd(sensor: "1"), to: .user("ana"))
        // The newest row: a reading of sensor 2, filed to expire 14 days on; then its stream is dropped,
        // and the favourite takes its number.
        _ = try log.appendFacts([InterestStoreTests.reading("2", end, 2)])
        let filed = try log.lastSeq()
        try log.applyHorizon(nowSeconds: end)
        #expect(try log.dropFactStreams([.sensor("purpleair.2")]) == 1)
        #expect(try log.lastSeq() == filed)
        // Long after: sensor 1's reading goes; the favourite, now at the filed number, stays.
        let r = try log.applyHorizon(nowSeconds: end + 30 * 86_400)
        #expect(r.dropped == 1)
        #expect(try log.userState(user: "ana").favourites.contains("1"))
        log.close()
        let report = try EventLog.verify(at: path)
        #expect(report.isClean, "\(report.problems)")
    }

    @Test func removingTheHorizonShowsAgainWhatIsStillHeldBeforeTheOldCutoff() throws {
        let dir = TempDir()
        let log = try EventLog.create(at: dir.file("a.db"), options: testOptions())
        let end: Int64 = 1_750_000_000 / 3600 * 3600
        let cutoff = EventLog.horizonCutoff(days: 14, nowSeconds: end)
        // One block straddles the cutoff: kept, its older reading hidden by the projection's cutoff.
        _ = try log.appendFacts([InterestStoreTests.register("1", 1, 1), InterestStoreTests.reading("1", cutoff - 1800, 1),
                                 InterestStoreTests.reading("1", cutoff + 1800, 2)])
        #expect(try log.addInterest(.sensor(source: "purpleair", id: "1")))
        #expect(try log.applyHorizon(nowSeconds: end).dropped == 0)
        try log.catchUpProjection()
        #expect(try log.projectedReadings(source: "purpleair", sensor: "1", from: 0, to: end).count == 1)
        try log.setHorizon(days: nil)
        try log.applyHorizon(nowSeconds: end)
        try log.catchUpProjection()
        #expect(try log.projectedReadings(source: "purpleair", sensor: "1", from: 0, to: end).count == 2)
        #expect(throws: StoreError.self) { try log.setHorizon(days: 0) }
    }
}
