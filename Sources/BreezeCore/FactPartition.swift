import BreezeCrypto

/// Which fact stream a fact is written to (`Protocol/encoding.md` 3.1): the partition a device's interests
/// name, so a device can hold exactly the facts it wants and still catch up by version vector
/// (`Protocol/sync.md` 6.7). A pure function of the fact's natural key, so every replica, the importer and
/// the device resolving its interests agree.
extension StreamID {
    /// The stream of one sensor's readings: `sensor:<source>.<sensor>` when that is a valid stream id
    /// (`A-Z a-z 0-9 . _ -`, at most 64 bytes), else `sensor:x<32 hex digits>`, the BLAKE2b-128 of
    /// `source`, a zero byte and `sensor`.
    public static func sensor(source: String, sensor: String) -> StreamID {
        .sensor(partitionKey(source, sensor))
    }

    /// The stream of one daily-temperature station: `climate:<station>`, or `climate:x<hash>` as for sensors
    /// (the hash of the station alone).
    public static func climate(station: String) -> StreamID {
        .climate(partitionKey(station))
    }

    /// The pollen cell holding a point: `pollen:<floor(lat*10)>_<floor(lon*10)>`, e.g. `pollen:427_-738`
    /// for Troy, NY (42.73, -73.69). Cells are 0.1 degree squares.
    public static func pollen(latitude: Double, longitude: Double) -> StreamID {
        .pollen(pollenCellKey(latIndex: cellIndex(latitude), lonIndex: cellIndex(longitude)))
    }

    /// The index of the 0.1-degree band a coordinate falls in (finite coordinates; others in band 0).
    public static func cellIndex(_ degrees: Double) -> Int {
        guard degrees.isFinite else { return 0 }
        return Int((degrees * 10).rounded(.down))
    }

    /// The key of the pollen cell with these band indexes.
    public static func pollenCellKey(latIndex: Int, lonIndex: Int) -> String { "\(latIndex)_\(lonIndex)" }

    private static func partitionKey(_ parts: String...) -> String {
        let plain = parts.joined(separator: ".")
        if !plain.isEmpty, plain.utf8.count <= 64, plain.utf8.allSatisfy(isUserIDByte) { return plain }
        var bytes: [UInt8] = []
        for (i, p) in parts.enumerated() {
            if i > 0 { bytes.append(0) }
            bytes += Array(p.utf8)
        }
        return "x" + Digest.hex(Digest.blake2b(bytes, length: 16))
    }
}

extension EventBody {
    /// The fact stream this fact is written to, nil for bodies that are not facts with a partition
    /// (registrations and revocations stay in `public`; user and health events in their user's streams).
    public var partition: StreamID? {
        switch self {
        case .reading(let r): return .sensor(source: r.source, sensor: r.sensor)
        case .readingBlock(let b): return .sensor(source: b.source, sensor: b.sensor)
        case .readingCompaction(let c): return .sensor(source: c.source, sensor: c.sensor)
        case .readingRollup(let r): return .sensor(source: r.source, sensor: r.sensor)
        case .pollenForecast(let f): return .pollen(latitude: f.latitude, longitude: f.longitude)
        case .dailyTemperature(let t): return .climate(station: t.station)
        default: return nil
        }
    }
}
