public import BreezeCore
public import BreezeAirQuality

/// One hour of a sensor's data after the source's pipeline, hour-beginning.
public struct HourlyValues: Equatable, Sendable {
    /// Start of the hour, Unix seconds (UTC).
    public var hour: Int64
    /// PM2.5 in ug/m3 for the AQI: for PurpleAir the hourly mean of A/B-checked CF=1 channels with the user's
    /// correction applied; for monitors the reported hourly value. Nil when the hour is missing.
    public var pm25: Double?
    /// Ambient temperature in degrees C (PurpleAir housing temperature less 8 F).
    public var temperatureC: Double?
    /// Ambient relative humidity in % (PurpleAir housing humidity plus 4).
    public var humidity: Double?
}

/// The air-quality pipeline for one sensor, as `shared/docs/domain.md` section 9 orders it for PurpleAir:
/// A/B channel check, hourly mean (with the 90 % completeness rule), the user's correction, NowCast, AQI.
/// Monitors (AirNow, AQS, OpenAQ) report hourly PM2.5 already and go straight to NowCast and AQI.
public struct SensorAirQuality: Sendable {
    public let sensor: SensorRegistration
    /// The correction applied (PurpleAir only; `none` for monitors).
    public let correction: PurpleAirCorrection
    /// Complete hours, oldest first, ending with the last hour that ended at or before `now` (an hour still in
    /// progress is not averaged: AirNow reports an hour after it ends); missing hours have nil values.
    public let hours: [HourlyValues]
    /// Time of the newest raw reading at or before `now`, if any.
    public let lastReading: Int64?
    /// The moment the pipeline was computed for.
    public let now: Int64

    /// True for PurpleAir sensors (stale after 60 min) rather than monitors (stale after 3 h).
    public var isPurpleAir: Bool { sensor.source == "purpleair" }

    /// Runs the pipeline for the `hours` complete hours before `now` (plus the 11 before them that NowCast
    /// needs).
    public init(world: WorldReader, sensor: SensorRegistration, user: UserState, now: Int64, hours: Int = 24) throws {
        self.sensor = sensor
        self.now = now
        let isPA = sensor.source == "purpleair"
        correction = isPA ? (PurpleAirCorrection(id: user.correction(for: "purpleair")) ?? .epa2021) : .uncorrected
        let lastHour = now - ((now % 3600) + 3600) % 3600 - 3600
        let first = lastHour - Int64(hours + 11) * 3600
        // Each hour summed up once (`HourAggregate`, stored by the projection): the readings from `first` up to
        // `now` included.
        let aggregates = try world.hourly(source: sensor.source, sensor: sensor.sensor, from: first, to: now + 1)
        // The newest reading at or before `now`: the last hour's last reading when that hour holds nothing
        // later than `now` (and no later hour up to `now` holds any, or it would be last); else asked for.
        if let a = aggregates.last, a.lastTime <= now {
            lastReading = a.lastTime
        } else {
            lastReading = try world.latestReadingTime(source: sensor.source, sensor: sensor.sensor, atOrBefore: now)
        }
        // The hours in order from `first`, walking the aggregates (they come by hour) beside them.
        let cadence = SensorAirQuality.cadence(aggregates)
        let n = Int((lastHour - first) / 3600) + 1
        var out: [HourlyValues] = []
        out.reserveCapacity(n)
        var k = 0
        while k < aggregates.count, aggregates[k].hour < first { k += 1 }
        for i in 0..<n {
            let h = first + Int64(i) * 3600
            // The aggregate is passed where it lies in the array (no copy of it: a city's map runs this 32,000 times).
            if k < aggregates.count, aggregates[k].hour == h {
                out.append(isPA ? SensorAirQuality.purpleAirHour(h, aggregates[k], cadence: cadence, correction: correction)
                                : SensorAirQuality.monitorHour(h, aggregates[k]))
                k += 1
            } else {
                out.append(HourlyValues(hour: h, pm25: nil, temperatureC: nil, humidity: nil))
            }
        }
        self.hours = out
        current = SensorAirQuality.nowCast(out, at: out.count - 1)
    }

    /// The same pipeline seen at another moment `now`: valid when `now` falls in the same clock hour as
    /// `self.now` and the sensor's newest reading at or before it is `lastReading` (then every input the
    /// pipeline read is the same; only freshness moves with `now`). How a world that keeps results reuses one.
    public func at(now: Int64) -> SensorAirQuality { SensorAirQuality(copying: self, now: now) }

    private init(copying q: SensorAirQuality, now: Int64) {
        sensor = q.sensor
        correction = q.correction
        hours = q.hours
        lastReading = q.lastReading
        current = q.current
        self.now = now
    }

    /// The seconds between readings (the median positive step between consecutive readings of the window,
    /// between 2 minutes and an hour), for the completeness rule; 120 s (PurpleAir's 2-minute averages) when
    /// there are too few readings to tell. The median, not the minimum: one stray extra reading must not make
    /// every hour look incomplete.
    static func cadence(_ aggregates: [HourAggregate]) -> Int64 {
        guard let step = HourAggregate.medianStep(aggregates) else { return 120 }
        return min(3600, max(120, step))
    }

    static func purpleAirHour(_ h: Int64, _ a: HourAggregate, cadence: Int64, correction: PurpleAirCorrection) -> HourlyValues {
        // The EPA completeness rule (PurpleAirChannels.mean): at least 90 % of the expected readings valid.
        let expected = Int(max(1, 3600 / cadence))
        let rawHumidity = a.humidityHousing.mean
        let pa: Double? = a.validPairs > 0 && 10 * a.validPairs >= 9 * expected ? a.pairSum / Double(a.validPairs) : nil
        let pm25 = pa.flatMap { correction.apply(pa: $0, humidity: rawHumidity) }
        return HourlyValues(hour: h, pm25: pm25,
                            temperatureC: a.temperatureHousing.mean.map { $0 - 8 / 1.8 },
                            humidity: rawHumidity.map { min(100, $0 + 4) })
    }

    static func monitorHour(_ h: Int64, _ a: HourAggregate) -> HourlyValues {
        // Hourly values only: a daily mean (`pm25_24h`) is not an hour's concentration.
        HourlyValues(hour: h, pm25: a.pm25.mean, temperatureC: a.temperature.mean, humidity: a.humidity.mean)
    }

    /// The NowCast AQI for the hour at `index` of `hours` (the 12 hours ending there), nil when the NowCast
    /// is not valid (fewer than 2 of the 3 latest hours).
    public func nowCast(at index: Int) -> AQIResult? { SensorAirQuality.nowCast(hours, at: index) }

    static func nowCast(_ hours: [HourlyValues], at index: Int) -> AQIResult? {
        guard index >= 0 && index < hours.count else { return nil }
        let window = (0..<12).map { k in index - k >= 0 ? hours[index - k].pm25 : nil }
        return NowCast.aqi(hourlyNewestFirst: window)
    }

    /// The NowCast AQI of the hour at `index` only when that hour has a value of its own: what an hourly bar
    /// or a daily high shows (an hour without readings is missing, even when NowCast could fill it).
    public func hourAQI(at index: Int) -> AQIResult? {
        guard index >= 0 && index < hours.count, hours[index].pm25 != nil else { return nil }
        return nowCast(at: index)
    }

    /// The NowCast AQI now (for the last complete hour), computed once (every screen of a city asks for it).
    public let current: AQIResult?

    /// The last `n` hours (NowCast AQI per hour; nil where missing), oldest first.
    public func lastHours(_ n: Int) -> [(hour: Int64, aqi: AQIResult?)] {
        let start = max(0, hours.count - n)
        return (start..<hours.count).map { (hours[$0].hour, nowCast(at: $0)) }
    }

    /// Fresh, stale or hidden, from the age of the newest reading (domain.md section 7): for PurpleAir from
    /// the reading's time, for monitors from the end of the observation hour (hour-beginning time + 1 h).
    public var freshness: Freshness {
        guard let t = lastReading else { return .hidden }
        return Freshness(ageSeconds: now - (isPurpleAir ? t : t + 3600), kind: isPurpleAir ? .purpleAir : .monitor)
    }

    /// The newest hour with a value of `key` (pm25, temperatureC, humidity), and the value three hours
    /// before it, for a trend.
    public func latestAndThreeHoursBefore(_ key: KeyPath<HourlyValues, Double?>) -> (now: Double?, before: Double?) {
        guard let i = hours.lastIndex(where: { $0[keyPath: key] != nil }) else { return (nil, nil) }
        return (hours[i][keyPath: key], i >= 3 ? hours[i - 3][keyPath: key] : nil)
    }
}

/// Rising, falling or steady, comparing a value with the one three hours earlier: steady within 5 % (and
/// within 0.5 units), as a trend arrow should not flicker on noise.
public enum Trend: String, Codable, Sendable {
    case rising, falling, steady

    public init?(now: Double?, before: Double?) {
        guard let now, let before else { return nil }
        let d = now - before
        if abs(d) <= max(0.5, abs(before) * 0.05) { self = .steady } else { self = d > 0 ? .rising : .falling }
    }
}
