import Testing
import BreezeCore
import BreezeAirQuality
@testable import BreezeStore

/// Each sensor's newest hours in one row (`proj_recent`, `RecentHours`): it only saves time. Every window
/// answers as the hour table answers, after a live feed of small batches, late and corrected readings, a
/// rebuild and a horizon.
struct RecentHoursTests {
    static let end: Int64 = 1_750_000_000 / 3600 * 3600

    static func reading(_ sensor: String, _ t: Int64, _ a: Double) -> (StreamID, EventBody) {
        (.public, .reading(Reading(source: "purpleair", sensor: sensor, time: t, values: [
            Measurement("pm25_cf1_a", a), Measurement("pm25_cf1_b", a + 0.5), Measurement("humidity_housing", 40 + a.truncatingRemainder(dividingBy: 7)),
        ])))
    }

    /// Three sensors fed as a server is fed: a batch per 10 minutes over 50 hours (one every 2 minutes, one
    /// every 10, one with a 6-hour outage), late readings of older hours, a corrected value.
    static func feed(_ log: EventLog, seed: UInt64) throws {
        var rng = SeededRandom(seed: seed)
        _ = try log.appendFacts(["a", "b", "c"].map { (.public, .sensorRegistered(SensorRegistration(
            sensor: $0, name: $0, source: "purpleair", kind: "purpleair", latitude: 47, longitude: -122, timeZone: "UTC"))) })
        var t = end - 50 * 3600
        while t < end {
            var batch: [(StreamID, EventBody)] = []
            for k in 0..<5 { batch.append(reading("a", t + Int64(k) * 120, Double(Int.random(in: 0...80, using: &rng)))) }
            batch.append(reading("b", t + 37, Double(Int.random(in: 0...80, using: &rng))))
            if t < end - 30 * 3600 || t >= end - 24 * 3600 { batch.append(reading("c", t + 300, Double(Int.random(in: 0...80, using: &rng)))) }
            if Int.random(in: 0..<10, using: &rng) == 0 {
                // A late reading of an hour some hours back, and a corrected value of one already held.
                let back = t - Int64.random(in: 1...40, using: &rng) * 3600
                batch.append(reading("b", back + 1234, 5))
                batch.append(reading("a", back - back % 600, 99))
            }
            _ = try log.appendFacts(batch)
            if Bool.random(using: &rng) { try log.catchUpProjection() }
            t += 600
        }
        try log.catchUpProjection()
    }

    /// Windows a screen asks for (now and the hours before it, cut or whole) and others at random.
    static func windows(seed: UInt64) -> [(Int64, Int64)] {
        var rng = SeededRandom(seed: seed)
        var out: [(Int64, Int64)] = []
        for hours in [1, 4, 12, 16, 24, 35, 36, 48] {
            for now in [end, end + 600, end - 1, end - 3 * 3600 + 1800, end + 5 * 3600] {
                out.append((now - now % 3600 - Int64(hours) * 3600, now + 1))
            }
        }
        for _ in 0..<200 {
            let from = end - Int64.random(in: 0...(52 * 3600), using: &rng)
            out.append((from, from + Int64.random(in: 1...(40 * 3600), using: &rng)))
        }
        return out
    }

    static func hourly(_ log: EventLog, _ windows: [(Int64, Int64)]) throws -> [[HourAggregate]] {
        try ["a", "b", "c"].flatMap { s in try windows.map { try log.projectedHourly(source: "purpleair", sensor: s, from: $0.0, to: $0.1) } }
    }

    /// The rows as stored, in key order.
    static func rows(_ log: EventLog) throws -> [String] {
        let q = try log.db.prepare("SELECT source, sensor, hour, hours FROM proj_recent ORDER BY source, sensor")
        var out: [String] = []
        while try q.step() { out.append("\(q.text(0)):\(q.text(1)) \(q.int(2)) \(q.blob(3))") }
        return out
    }

    @Test(arguments: [UInt64(1), 2])
    func everyWindowAnswersAsTheHourTableDoes(seed: UInt64) throws {
        let dir = TempDir()
        let log = try EventLog.create(at: dir.file("a.db"), options: testOptions())
        try Self.feed(log, seed: seed)
        let windows = Self.windows(seed: seed)
        #expect(try Self.rows(log).count == 3, "a row per sensor")
        // How many windows the rows answer (the others reach before them): most screens' windows.
        var answered = 0
        for s in ["a", "b", "c"] {
            for (from, to) in windows where from < to {
                var scratch: [HourAggregate] = []
                if try log.recentHourly(source: "purpleair", sensor: s, firstHour: ReadingBucket.hour(from), lastHour: ReadingBucket.hour(to - 1), into: &scratch) {
                    answered += 1
                }
            }
        }
        #expect(answered >= 30, "the rows answer many windows: \(answered) of \(3 * windows.count)")
        let withRows = try Self.hourly(log, windows)
        try log.db.execute("DELETE FROM proj_recent")
        let fromTable = try Self.hourly(log, windows)
        #expect(withRows.count == fromTable.count)
        let differ = zip(withRows, fromTable).filter { $0.0 != $0.1 }
        #expect(differ.isEmpty, "\(differ.count) windows differ")
        #expect(withRows.contains { !$0.isEmpty })
        log.close()
    }

    /// The window a city's screens read of every sensor in view (`SensorAirQuality` with 4 hours: the hour of
    /// `now` back to 15 hours before the last complete one) is answered by the row when the sensor reports in the
    /// hour in progress, the usual case: one bucket fewer and every map pin would read `proj_readings` again.
    @Test func theRowAnswersAMapPinsWindowWhileTheSensorReports() throws {
        let dir = TempDir()
        let log = try EventLog.create(at: dir.file("a.db"), options: testOptions())
        try Self.feed(log, seed: 5)
        let now = Self.end - 1                              // sensor "a" reported a minute before, in this hour
        let hourOfNow = ReadingBucket.hour(now), lastComplete = hourOfNow - 1
        let first = lastComplete - (4 + 11)                 // SensorAirQuality(hours: 4): 4 shown, 11 for NowCast
        var out: [HourAggregate] = []
        #expect(try log.recentHourly(source: "purpleair", sensor: "a", firstHour: first, lastHour: hourOfNow, into: &out))
        #expect(out.count == Int(hourOfNow - first + 1), "every hour of the window, the one in progress included")
        #expect(out.last?.hour == hourOfNow * 3600)
        log.close()
    }

    /// A damaged row fails as damage (the projection is rebuilt), never answers with hours out of order or traps:
    /// hours not in order, and an aggregate whose span would overflow.
    @Test func aDamagedRowIsDamageNotAnAnswer() throws {
        let dir = TempDir()
        let log = try EventLog.create(at: dir.file("a.db"), options: testOptions())
        try Self.feed(log, seed: 6)
        var w = ByteWriter()
        let agg = try #require(log.projectedHourly(source: "purpleair", sensor: "a", from: Self.end - 3600, to: Self.end).first).encoded
        w.varint(2)
        w.varint(3); w.blob(agg)
        w.varint(3); w.blob(agg)                            // the same hour twice: not strictly newer
        let q = try log.db.prepare("UPDATE proj_recent SET hours = ? WHERE sensor = 'a'")
        try q.bind(1, w.bytes)
        try q.run()
        expectStoreError(.corrupt) { _ = try log.projectedHourly(source: "purpleair", sensor: "a", from: Self.end - 4 * 3600, to: Self.end) }
        // An aggregate's first time and span, each below an hour, whose sum overflows 64 bits.
        var bad = ByteWriter()
        bad.varint(1); bad.varint(5); bad.varint(UInt64.max - 2)
        #expect(throws: DecodingError.self) { _ = try HourAggregate(hour: 0, decoding: bad.bytes) }
        log.close()
    }

    /// `breeze verify` checks each row against the hours it sums up: clean after a live feed, a problem naming
    /// the sensor when a row says something else (here: one hour left out).
    @Test func verifyFindsARowThatDiffersFromItsHours() throws {
        let dir = TempDir()
        let path = dir.file("a.db")
        let log = try EventLog.create(at: path, options: testOptions())
        try Self.feed(log, seed: 8)
        log.close()
        #expect(try EventLog.verify(at: path).isClean)
        let again = try EventLog.open(at: path, options: testOptions())
        let (newest, _) = try #require(try again.recentRow(source: "purpleair", sensor: "b", suffix: ""))
        var w = ByteWriter()
        let agg = try #require(again.projectedHourly(source: "purpleair", sensor: "b", from: newest * 3600, to: newest * 3600 + 3600).first).encoded
        w.varint(1); w.varint(0); w.blob(agg)               // the newest hour alone: the 16 before it left out
        let q = try again.db.prepare("UPDATE proj_recent SET hours = ? WHERE sensor = 'b'")
        try q.bind(1, w.bytes)
        try q.run()
        again.close()
        let report = try EventLog.verify(at: path)
        #expect(!report.isClean)
        #expect(report.problems.contains { $0.message.contains("purpleair:b") && $0.message.contains("proj_recent") }, "\(report.problems)")
        #expect(!report.problems.contains { $0.message.contains("purpleair:a") })
    }

    /// A database from before the table (schema 9) gets every sensor's row when it is opened: the rows a live
    /// feed would have written, without a rebuild of the projection.
    @Test func anOlderDatabaseIsFilledWhenOpened() throws {
        let dir = TempDir()
        let path = dir.file("a.db")
        let log = try EventLog.create(at: path, options: testOptions())
        try Self.feed(log, seed: 9)
        let live = try Self.rows(log)
        let checkpoint = try log.projectionCheckpoint()
        try log.db.execute("DELETE FROM proj_recent; PRAGMA user_version = 9")
        log.close()
        let again = try EventLog.open(at: path, options: testOptions())
        #expect(try Self.rows(again) == live)
        #expect(try again.projectionCheckpoint() == checkpoint, "no rebuild")
        again.close()
    }

    @Test func theRowsFollowALiveFeedAsARebuildWritesThem() throws {
        let dir = TempDir()
        let log = try EventLog.create(at: dir.file("a.db"), options: testOptions())
        try Self.feed(log, seed: 7)
        let live = try Self.rows(log)
        try log.rebuildProjection()
        #expect(try Self.rows(log) == live)
        log.close()
    }

    @Test func aHorizonDropsTheRowsThatReachBelowItAndAnswersStayTheSame() throws {
        let dir = TempDir()
        let log = try EventLog.create(at: dir.file("a.db"), options: testOptions())
        let day: Int64 = 86_400
        _ = try log.appendFacts([(.public, .sensorRegistered(SensorRegistration(
            sensor: "old", name: "old", source: "purpleair", kind: "purpleair", latitude: 47, longitude: -122, timeZone: "UTC")))])
        // "old" stopped reporting 15 days ago; a, b, c report until now.
        _ = try log.appendFacts((0..<48).map { Self.reading("old", Self.end - 15 * day - Int64($0) * 3600, 10) })
        try Self.feed(log, seed: 3)
        #expect(try Self.rows(log).count == 4)
        let windows = Self.windows(seed: 3) + [(Self.end - 16 * day, Self.end - 14 * day)]
        func all() throws -> [[HourAggregate]] {
            try Self.hourly(log, windows) + windows.map { try log.projectedHourly(source: "purpleair", sensor: "old", from: $0.0, to: $0.1) }
        }
        #expect(try log.addInterest(.sensor(source: "purpleair", id: "a")))
        let r = try log.applyHorizon(nowSeconds: Self.end)
        #expect((r.cutoff ?? 0) > Self.end - 15 * day)
        // The row of "old" reached below the cutoff and went; the others stay.
        #expect(try Self.rows(log).map { String($0.prefix(while: { $0 != " " })) } == ["purpleair:a", "purpleair:b", "purpleair:c"])
        let after = try all()
        try log.db.execute("DELETE FROM proj_recent")
        let fromTable = try all()
        #expect(zip(after, fromTable).allSatisfy { $0 == $1 } && after.count == fromTable.count)
        #expect(try log.projectedHourly(source: "purpleair", sensor: "old", from: 0, to: Self.end).isEmpty)
        log.close()
    }
}
