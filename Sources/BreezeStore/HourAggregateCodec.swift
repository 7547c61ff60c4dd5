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
        let decoded = bytes.withUnsafeBytes { raw in
            Result { () throws(DecodingError) -> HourAggregate in try HourAggregate(hour: hour, stored: raw) }
        }
        self = try decoded.get()
    }

    /// Decodes the stored bytes of the hour `hour` where SQLite holds them (no copy): a map of a city decodes
    /// tens of thousands of these, so this reads with `StoredBytes`, not the checking `ByteReader` events need.
    init(hour: Int64, stored raw: UnsafeRawBufferPointer) throws(DecodingError) {
        var r = StoredBytes(raw)
        let count = try r.count(limit: 3600)
        let first = try r.varint(), span = try r.varint()
        // `span < 3600 - first`, not `first + span < 3600`: a damaged span near 2^64 must fail, not overflow.
        guard first < 3600, span < 3600 - first else { throw DecodingError.malformed("hour aggregate times beyond the hour") }
        let n = try r.count(limit: 3600)
        var steps = StepCounts()
        for _ in 0..<n {
            let s = try r.varint(), c = try r.count(limit: 3600)
            guard s > 0, s < 3600 else { throw DecodingError.malformed("hour aggregate step \(s)") }
            steps.append(Step(seconds: Int64(s), count: c))
        }
        let valid = try r.count(limit: 3600)
        let pairSum = valid > 0 ? try r.decimal() : 0
        // Five sums, read into values rather than an array.
        let humidityHousing = try r.sum(), temperatureHousing = try r.sum(), pm25 = try r.sum(), temperature = try r.sum(), humidity = try r.sum()
        guard r.isAtEnd else { throw DecodingError.malformed("trailing bytes after an hour aggregate") }
        self.init(hour: hour, count: count, firstTime: hour + Int64(first), lastTime: hour + Int64(first + span), steps: steps,
                  validPairs: valid, pairSum: pairSum, humidityHousing: humidityHousing, temperatureHousing: temperatureHousing, pm25: pm25,
                  temperature: temperature, humidity: humidity)
    }
}

/// A reader of bytes this store derived itself (`proj_readings.agg`, `proj_recent.hours`): bounds are checked,
/// but not the canonical forms that events need (`ByteReader`), since a derived row is never relayed; over
/// SQLite's own buffer, so nothing is copied.
struct StoredBytes {
    let raw: UnsafeRawBufferPointer
    var offset = 0

    init(_ raw: UnsafeRawBufferPointer) { self.raw = raw }

    var isAtEnd: Bool { offset == raw.count }

    mutating func varint() throws(DecodingError) -> UInt64 {
        var result: UInt64 = 0, shift: UInt64 = 0
        while offset < raw.count {
            let b = raw[offset]
            offset += 1
            result |= UInt64(b & 0x7f) << shift
            if b & 0x80 == 0 { return result }
            shift += 7
            if shift > 63 { throw DecodingError.malformed("varint longer than 10 bytes") }
        }
        throw DecodingError.truncated("varint")
    }

    mutating func count(limit: Int) throws(DecodingError) -> Int {
        let v = try varint()
        guard v <= UInt64(limit) else { throw DecodingError.malformed("count \(v) exceeds limit \(limit)") }
        return Int(v)
    }

    /// `n` bytes as a buffer over the same memory.
    mutating func bytes(_ n: Int) throws(DecodingError) -> UnsafeRawBufferPointer {
        guard n >= 0, n <= raw.count - offset else { throw DecodingError.truncated("bytes") }
        defer { offset += n }
        return UnsafeRawBufferPointer(rebasing: raw[offset..<offset + n])
    }

    /// A `Decimal64` value (`ByteWriter.decimal`).
    mutating func decimal() throws(DecodingError) -> Double {
        let x = try varint()
        let k = Int(x & 7)
        if k == 7 {
            guard x == 7 else { throw DecodingError.malformed("decimal tag 7 with a mantissa") }
            guard raw.count - offset >= 8 else { throw DecodingError.truncated("f64") }
            defer { offset += 8 }
            return Double(bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
        }
        let z = x >> 3
        let m = Int64(bitPattern: (z >> 1) ^ (0 &- (z & 1)))
        guard abs(m) < 9_007_199_254_740_992 else { throw DecodingError.malformed("decimal mantissa out of range") }
        let scale: Double
        switch k {
        case 0: scale = 1
        case 1: scale = 10
        case 2: scale = 100
        case 3: scale = 1000
        case 4: scale = 10_000
        case 5: scale = 100_000
        default: scale = 1_000_000
        }
        return Double(m) / scale
    }

    /// One of an aggregate's sums: `varint count`, then the total when the count is not 0.
    mutating func sum() throws(DecodingError) -> HourAggregate.Sum {
        let c = try count(limit: 3600)
        return HourAggregate.Sum(total: c > 0 ? try decimal() : 0, count: c)
    }
}
