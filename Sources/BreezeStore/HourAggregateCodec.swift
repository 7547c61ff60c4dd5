import BreezeCore
import BreezeAirQuality

/// How `proj_readings.agg` stores an `HourAggregate` (projection version 5 and later): `varint count`, `varint first
/// offset`, `varint last - first` (offsets from the hour's start), `list<(varint step, varint count)>`,
/// `varint validPairs`, the pair sum and each of the five sums as `varint count` then, when the count is not
/// 0, `decimal total`. About 20 bytes for an hour of a PurpleAir sensor.
extension HourAggregate {
    /// The stored bytes.
    var encoded: [UInt8] {
        var w = ByteWriter(capacity: 48)
        w.varint(UInt64(count))
        w.varint(UInt64(firstTime - hour))
        w.varint(UInt64(lastTime - firstTime))
        w.varint(UInt64(steps.count))
        for s in steps {
            w.varint(UInt64(s.seconds))
            w.varint(UInt64(s.count))
        }
        w.varint(UInt64(validPairs))
        if validPairs > 0 { w.decimal(pairSum) }
        for s in [humidityHousing, temperatureHousing, pm25, temperature, humidity] {
            w.varint(UInt64(s.count))
            if s.count > 0 { w.decimal(s.total) }
        }
        return w.bytes
    }

    /// Decodes the stored bytes of the hour `hour`.
    init(hour: Int64, decoding bytes: [UInt8]) throws(DecodingError) {
        var r = ByteReader(bytes)
        let count = try r.count(limit: 3600)
        let first = try r.varint(), span = try r.varint()
        guard first < 3600, first + span < 3600 else { throw DecodingError.malformed("hour aggregate times beyond the hour") }
        let n = try r.count(limit: 3600)
        var steps: [Step] = []
        steps.reserveCapacity(n)
        for _ in 0..<n {
            let s = try r.varint(), c = try r.count(limit: 3600)
            guard s > 0, s < 3600 else { throw DecodingError.malformed("hour aggregate step \(s)") }
            steps.append(Step(seconds: Int64(s), count: c))
        }
        let valid = try r.count(limit: 3600)
        let pairSum = valid > 0 ? try r.storedDecimal() : 0
        // Five sums, read into values rather than an array: a map decodes tens of thousands of these.
        func sum() throws(DecodingError) -> Sum {
            let c = try r.count(limit: 3600)
            return Sum(total: c > 0 ? try r.storedDecimal() : 0, count: c)
        }
        let humidityHousing = try sum(), temperatureHousing = try sum(), pm25 = try sum(), temperature = try sum(), humidity = try sum()
        guard r.isAtEnd else { throw DecodingError.malformed("trailing bytes after an hour aggregate") }
        self.init(hour: hour, count: count, firstTime: hour + Int64(first), lastTime: hour + Int64(first + span), steps: steps,
                  validPairs: valid, pairSum: pairSum, humidityHousing: humidityHousing, temperatureHousing: temperatureHousing, pm25: pm25,
                  temperature: temperature, humidity: humidity)
    }
}
