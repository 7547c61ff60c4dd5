/// What the air-quality pipeline needs of one clock hour of one sensor's readings, summed up once: how many
/// readings and when (for the completeness rule and freshness), the A/B-checked PurpleAir channel mean, and the
/// means of the other quantities. The pipeline (`SensorAirQuality` in BreezeProjections) computes exactly what
/// it computed from the raw readings: every sum is taken in time order, as the pipeline took it, so the
/// results are the same to the bit; the steps between readings are kept as a histogram, from which the median
/// step over a window of hours is exact.
///
/// The facts projection stores one per sensor and hour (`BreezeStore`), so a screen reads an hour as one small
/// record instead of 30 readings, and an hour is summed again only when one of its readings changes.
public struct HourAggregate: Equatable, Sendable {
    /// Start of the hour, Unix seconds (UTC).
    public var hour: Int64
    /// Readings (distinct times) in the hour.
    public var count: Int
    /// The first and last reading time in the hour.
    public var firstTime: Int64, lastTime: Int64
    /// The positive steps between consecutive readings of the hour, as (step seconds, how many), by step.
    public var steps: StepCounts
    /// PurpleAir: readings whose A/B channels passed the EPA check (`PurpleAirChannels.verdict`), and the sum of
    /// their channel means in time order.
    public var validPairs: Int, pairSum: Double
    /// Sums in time order, with their counts, of the quantities the pipeline averages.
    public var humidityHousing: Sum, temperatureHousing: Sum, pm25: Sum, temperature: Sum, humidity: Sum

    /// A step between readings and how often it occurs.
    public struct Step: Equatable, Sendable {
        public var seconds: Int64
        public var count: Int
        public init(seconds: Int64, count: Int) {
            self.seconds = seconds
            self.count = count
        }
    }

    /// A running sum and how many values it holds.
    public struct Sum: Equatable, Sendable {
        public var total: Double = 0
        public var count: Int = 0
        public init(total: Double = 0, count: Int = 0) {
            self.total = total
            self.count = count
        }
        /// The mean, nil when there is no value.
        public var mean: Double? { count == 0 ? nil : total / Double(count) }
        mutating func add(_ v: Double?) {
            guard let v else { return }
            total += v
            count += 1
        }
    }

    /// The quantities a PurpleAir reading carries for its channels, and those the pipeline averages
    /// (`Protocol/encoding.md`: units µg/m³, °C housing temperature, % housing humidity).
    public static let channelA = "pm25_cf1_a", channelB = "pm25_cf1_b"

    /// The plausible ranges of domain.md section 3.3 ("drop ... temperature > 65 °C, and RH > 100 %"): a
    /// humidity above 100 % or a temperature above 65 °C, housing or ambient, is a faulty sensor, not weather,
    /// and is left out of the hour's means (and so of the EPA correction, which reads the humidity mean). The
    /// reading itself stays in the log; only the aggregate ignores the value.
    public static let maximumHumidity = 100.0, maximumTemperatureC = 65.0

    /// A humidity the means may use (domain.md 3.3).
    @inline(__always) static func plausibleHumidity(_ v: Double?) -> Double? {
        guard let v, v <= maximumHumidity else { return nil }
        return v
    }

    /// A temperature (°C) the means may use (domain.md 3.3).
    @inline(__always) static func plausibleTemperature(_ v: Double?) -> Double? {
        guard let v, v <= maximumTemperatureC else { return nil }
        return v
    }

    /// Sums up the readings of one hour, given in time order (distinct times, all in `[hour, hour + 3600)`).
    public init(hour: Int64, readings: [(time: Int64, values: [String: Double])]) {
        var b = Builder(hour: hour)
        for r in readings {
            var row = Row(time: r.time)
            for (q, v) in r.values { row.set(q, v) }
            b.add(row)
        }
        self = b.aggregate
    }

    /// The values of one reading time that the aggregate reads (the rest are ignored).
    public struct Row: Sendable {
        public var time: Int64
        var a: Double?, b: Double?, humidityHousing: Double?, temperatureHousing: Double?, pm25: Double?,
            temperature: Double?, humidity: Double?
        public init(time: Int64) { self.time = time }
        /// The quantities it reads.
        public enum Field: Sendable {
            case a, b, humidityHousing, temperatureHousing, pm25, temperature, humidity
            /// The field of `quantity`, nil for a quantity the aggregate does not read.
            public init?(quantity: String) {
                switch quantity {
                case HourAggregate.channelA: self = .a
                case HourAggregate.channelB: self = .b
                case "humidity_housing": self = .humidityHousing
                case "temperature_housing": self = .temperatureHousing
                case "pm25": self = .pm25
                case "temperature": self = .temperature
                case "humidity": self = .humidity
                default: return nil
                }
            }
        }

        /// Sets the value of `quantity` (a later value of a quantity replaces an earlier one).
        public mutating func set(_ quantity: String, _ value: Double) {
            if let f = Field(quantity: quantity) { set(f, value) }
        }

        /// Sets the value of a field.
        public mutating func set(_ field: Field, _ value: Double) {
            switch field {
            case .a: a = value
            case .b: b = value
            case .humidityHousing: humidityHousing = value
            case .temperatureHousing: temperatureHousing = value
            case .pm25: pm25 = value
            case .temperature: temperature = value
            case .humidity: humidity = value
            }
        }
    }

    /// Sums up an hour's rows one at a time, in time order (distinct times in the hour), without holding
    /// them: what the projection uses to sum a bucket straight from its values.
    public struct Builder: Sendable {
        var value: HourAggregate
        var previous: Int64?
        public init(hour: Int64) {
            value = HourAggregate(hour: hour, count: 0, firstTime: hour, lastTime: hour, steps: [], validPairs: 0, pairSum: 0,
                                  humidityHousing: Sum(), temperatureHousing: Sum(), pm25: Sum(), temperature: Sum(), humidity: Sum())
        }
        /// Adds the next row.
        public mutating func add(_ r: Row) {
            if value.count == 0 { value.firstTime = r.time }
            value.lastTime = r.time
            value.count += 1
            if let p = previous, r.time > p {
                value.steps.add(seconds: r.time - p)
            }
            previous = r.time
            if let mean = PurpleAirChannels(a: r.a, b: r.b).average {
                value.validPairs += 1
                value.pairSum += mean
            }
            value.humidityHousing.add(HourAggregate.plausibleHumidity(r.humidityHousing))
            value.temperatureHousing.add(HourAggregate.plausibleTemperature(r.temperatureHousing))
            value.pm25.add(r.pm25)
            value.temperature.add(HourAggregate.plausibleTemperature(r.temperature))
            value.humidity.add(HourAggregate.plausibleHumidity(r.humidity))
        }
        /// The aggregate of the rows added so far.
        public var aggregate: HourAggregate { value }
    }

    /// The readings of a time series (in time order) summed up per clock hour, by hour.
    public static func group(_ rows: [(time: Int64, values: [String: Double])]) -> [HourAggregate] {
        var out: [HourAggregate] = []
        var i = 0
        while i < rows.count {
            let hour = rows[i].time - ((rows[i].time % 3600) + 3600) % 3600
            var j = i + 1
            while j < rows.count, rows[j].time < hour + 3600 { j += 1 }
            out.append(HourAggregate(hour: hour, readings: Array(rows[i..<j])))
            i = j
        }
        return out
    }

    /// An aggregate as stored (every field given).
    public init(hour: Int64, count: Int, firstTime: Int64, lastTime: Int64, steps: StepCounts, validPairs: Int, pairSum: Double,
                humidityHousing: Sum, temperatureHousing: Sum, pm25: Sum, temperature: Sum, humidity: Sum) {
        self.hour = hour; self.count = count; self.firstTime = firstTime; self.lastTime = lastTime; self.steps = steps
        self.validPairs = validPairs; self.pairSum = pairSum; self.humidityHousing = humidityHousing
        self.temperatureHousing = temperatureHousing; self.pm25 = pm25; self.temperature = temperature; self.humidity = humidity
    }

    /// The median positive step between consecutive readings over consecutive hours (`aggregates` by hour, one
    /// sensor): the steps inside each hour and those from one hour's last reading to the next hour's first, as
    /// if every reading of those hours were listed in time order. Nil without any step.
    public static func medianStep(_ aggregates: [HourAggregate]) -> Int64? {
        // In a buffer on the stack, sorted by insertion (a window holds a few distinct steps): every pin of a
        // city's map asks for one.
        let capacity = aggregates.reduce(0) { $0 + $1.steps.count + 1 }
        return withUnsafeTemporaryAllocation(of: (seconds: Int64, count: Int).self, capacity: max(1, capacity)) { all -> Int64? in
            var n = 0, total = 0
            func add(_ seconds: Int64, _ count: Int) {
                var j = n
                while j > 0, all[j - 1].seconds > seconds {
                    all[j] = all[j - 1]
                    j -= 1
                }
                all[j] = (seconds, count)
                n += 1
                total += count
            }
            for i in aggregates.indices {
                for s in aggregates[i].steps { add(s.seconds, s.count) }
                if i > 0, aggregates[i].count > 0, aggregates[i - 1].count > 0, aggregates[i].firstTime > aggregates[i - 1].lastTime {
                    add(aggregates[i].firstTime - aggregates[i - 1].lastTime, 1)
                }
            }
            guard total > 0 else { return nil }
            var seen = 0
            for k in 0..<n {
                seen += all[k].count
                if seen > total / 2 { return all[k].seconds }
            }
            return all[n - 1].seconds
        }
    }
}
