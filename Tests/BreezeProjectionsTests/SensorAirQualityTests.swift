import Testing
import BreezeCore
import BreezeAirQuality
@testable import BreezeProjections

struct SensorAirQualityTests {
    @Test func purpleAirHoursFollowTheEPAPipelineOnRealTroyData() throws {
        let world = FactWorld(events: try WorldSupport.troy())
        let sensor = try #require(try world.sensors().first { $0.sensor == "149970" })
        let now: Int64 = 1_698_235_200 + 3600 + 1200   // 2023-10-25T13:20Z: the last complete hour is 12:00-13:00
        let q = try SensorAirQuality(world: world, sensor: sensor, user: UserState(), now: now)
        #expect(q.hours.count == 36 && q.hours.last!.hour == 1_698_235_200)
        // Hand-computed with python3 from the CSV: 6 readings an hour, all pass the A/B check;
        // EPA 2021: 0.524 PA - 0.0862 RH + 5.75 with PA and RH the hourly means.
        let h11 = q.hours[q.hours.count - 2], h12 = q.hours[q.hours.count - 1]
        #expect(abs(h11.pm25! - 5.129223333) < 1e-6)
        #expect(abs(h12.pm25! - 5.95498) < 1e-6)
        #expect(abs(h12.humidity! - (56.8 + 4)) < 1e-9)
        #expect(q.correction == .epa2021)
        // The NowCast AQI now is computed from these hours (at least 2 of the 3 latest hours are present).
        let now12 = try #require(q.current)
        #expect(now12.category == .good)
        #expect(q.freshness == .fresh)
    }

    @Test func aUsersCorrectionChangesTheAQIOfTheSameSensor() throws {
        var events = try WorldSupport.troy()
        let user = Event(stream: .user("bo"), id: EventID(origin: Origin(replica: ReplicaID(rawValue: 0xB0), epoch: 1), counter: 1),
                         hlc: HLC(physicalMillis: 9, logical: 0), body: .sourceCorrect(source: "purpleair", correction: "none"))
        events.append(user)
        let world = FactWorld(events: events)
        let sensor = try #require(try world.sensors().first { $0.sensor == "149970" })
        let now: Int64 = 1_698_235_200 + 3600
        let epa = try SensorAirQuality(world: world, sensor: sensor, user: try world.userState(user: "ana"), now: now)
        let raw = try SensorAirQuality(world: world, sensor: sensor, user: try world.userState(user: "bo"), now: now)
        #expect(raw.correction == .uncorrected && epa.correction == .epa2021)
        #expect(abs(raw.hours.last!.pm25! - 9.735) < 1e-9)
        #expect(raw.current!.aqi > epa.current!.aqi)
    }

    @Test func missingHoursStayMissingAndOldDataIsStale() throws {
        let world = FactWorld(events: try WorldSupport.troy())
        let sensor = try #require(try world.sensors().first { $0.sensor == "149970" })
        // Two days after the archive ends: every hour missing, no NowCast, hidden after 7 days.
        let later: Int64 = 1_698_624_000 + 2 * 86_400
        let q = try SensorAirQuality(world: world, sensor: sensor, user: UserState(), now: later)
        #expect(q.hours.allSatisfy { $0.pm25 == nil } && q.current == nil)
        #expect(q.freshness == .stale)
        let muchLater = try SensorAirQuality(world: world, sensor: sensor, user: UserState(), now: later + 8 * 86_400)
        #expect(muchLater.freshness == .hidden)
    }

    @Test func trendsNeedAChangeBeyondNoise() {
        #expect(Trend(now: 10, before: 10.2) == .steady)
        #expect(Trend(now: 12, before: 10) == .rising)
        #expect(Trend(now: 8, before: 10) == .falling)
        #expect(Trend(now: nil, before: 10) == nil)
    }
}

struct SensorAirQualityRegressionTests {
    @Test func oneStrayExtraReadingDoesNotMakeEveryHourIncomplete() throws {
        var events = try WorldSupport.troy()
        let extra = Event(stream: .public, id: EventID(origin: Origin(replica: ReplicaID(rawValue: 0xE1), epoch: 1), counter: 1),
                          hlc: HLC(physicalMillis: 5, logical: 0),
                          body: .reading(Reading(source: "purpleair", sensor: "149970", time: 1_698_235_200 + 120,
                                                 values: [Measurement("pm25_cf1_a", 8), Measurement("pm25_cf1_b", 8)])))
        events.append(extra)
        let world = FactWorld(events: events)
        let sensor = try #require(try world.sensors().first { $0.sensor == "149970" })
        let q = try SensorAirQuality(world: world, sensor: sensor, user: UserState(), now: 1_698_235_200 + 3600 + 1200)
        // The 11:00 hour (no stray reading) keeps its value; cadence stays 10 minutes (the median step).
        #expect(abs(q.hours[q.hours.count - 2].pm25! - 5.129223333) < 1e-6)
        #expect(q.hours.filter { $0.pm25 != nil }.count > 20)
    }

    @Test func aDailyMeanIsNotAnHourlyValue() throws {
        let o = Origin(replica: ReplicaID(rawValue: 0xD1), epoch: 1)
        let reg = Event(stream: .public, id: EventID(origin: o, counter: 1), hlc: HLC(physicalMillis: 1, logical: 0),
                        body: .sensorRegistered(SensorRegistration(sensor: "370630015-1", name: "Durham", source: "aqs",
                                                                   kind: "monitor", latitude: 36, longitude: -78.9, timeZone: nil)))
        let daily = Event(stream: .public, id: EventID(origin: o, counter: 2), hlc: HLC(physicalMillis: 2, logical: 0),
                          body: .reading(Reading(source: "aqs", sensor: "370630015-1", time: 1_294_012_800,
                                                 values: [Measurement("pm25_24h", 5.9), Measurement("aqi_daily", 19)])))
        let world = FactWorld(events: [reg, daily])
        let q = try SensorAirQuality(world: world, sensor: try world.sensors()[0], user: UserState(), now: 1_294_012_800 + 7200)
        #expect(q.hours.allSatisfy { $0.pm25 == nil })
    }
}
