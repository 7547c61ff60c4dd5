import BreezeCore
import BreezeAirQuality

/// Each sensor's newest hours kept in one row (`proj_recent`), so a screen of a city reads one row per sensor
/// instead of a row per hour: the map of 2,000 sensors right after opening a replica would otherwise step
/// 32,000 rows of `proj_readings` (issue 30's goal of 20 ms; `breeze-bench app`).
///
/// A row is derived from `proj_readings` alone: `hour` is the sensor's newest hour with readings, `hours` the
/// aggregates (`HourAggregate`, as `proj_readings.agg` stores them) of every hour with readings from
/// `hour - recentHours + 1` to `hour`, oldest first: `varint n`, then per hour `varint (hour - its hour)`,
/// `varint length`, the aggregate's bytes. `applyProjection` rewrites the rows of the sensors each page
/// touched; a horizon that deletes hours deletes the rows whose window reaches below it. A sensor without a
/// row (not written since, or a window beyond the row's) is read from `proj_readings`: the row only saves
/// time, never changes an answer (`RecentHoursTests` compares both on every window).
extension EventLog {
    /// Hours a row covers: what the screens of a city ask of every sensor in view (the map's, nearby's, the
    /// sheet's and the widgets' 4 hours, the 11 NowCast needs before them, the hour in progress). The detail's
    /// 24 hours, one sensor's, read `proj_readings`. Longer would cost storage for nothing on a map: about 23
    /// bytes an hour a sensor.
    static let recentHours: Int64 = 16

    /// Rewrites the `proj_recent` rows of `sensors` (sorted, each once) from their newest `proj_readings` rows.
    func refreshRecentHours(_ sensors: [(source: String, sensor: String)], suffix: String) throws {
        let read = try db.cached("SELECT hour, agg FROM proj_readings\(suffix) WHERE source = ? AND sensor = ? ORDER BY hour DESC LIMIT \(EventLog.recentHours)")
        let write = try db.cached("INSERT OR REPLACE INTO proj_recent\(suffix)(source, sensor, hour, hours) VALUES (?, ?, ?, ?)")
        var rows: [(hour: Int64, agg: [UInt8])] = []
        var w = ByteWriter(capacity: 1024)
        for s in sensors {
            rows.removeAll(keepingCapacity: true)
            read.reset()
            try read.bind(1, s.source)
            try read.bind(2, s.sensor)
            while try read.step() { rows.append((read.int(0), read.blob(1))) }
            guard let newest = rows.first?.hour else { continue }       // written by this page: never empty
            w.removeAll()
            let kept = rows.filter { $0.hour > newest - EventLog.recentHours }
            w.varint(UInt64(kept.count))
            for r in kept.reversed() {
                w.varint(UInt64(newest - r.hour))
                w.blob(r.agg)
            }
            write.reset()
            try write.bind(1, s.source)
            try write.bind(2, s.sensor)
            try write.bind(3, newest)
            try write.bind(4, w.bytes)
            try write.run()
        }
    }

    /// Appends to `out` the sensor's hours `firstHour...lastHour` (hour indexes) from its `proj_recent` row, by
    /// hour, and returns true; false, appending nothing, when the row cannot answer (none, or `firstHour`
    /// before its window).
    func recentHourly(source: String, sensor: String, firstHour: Int64, lastHour: Int64, into out: inout [HourAggregate]) throws -> Bool {
        let q = try db.cached("SELECT hour, hours FROM proj_recent WHERE source = ? AND sensor = ?")
        defer { q.reset() }
        try q.bind(1, source)
        try q.bind(2, sensor)
        guard try q.step() else { return false }
        let newest = q.int(0)
        guard firstHour > newest - EventLog.recentHours else { return false }
        var r = StoredBytes(q.blobBytes(1))
        let n = try r.count(limit: Int(EventLog.recentHours))
        for _ in 0..<n {
            let back = try r.varint()
            guard back < UInt64(EventLog.recentHours) else { throw DecodingError.malformed("recent hour \(back) hours back") }
            let bytes = try r.bytes(try r.count(limit: 4096))
            let h = newest - Int64(back)
            if h >= firstHour && h <= lastHour { out.append(try HourAggregate(hour: h * 3600, stored: bytes)) }
        }
        guard r.isAtEnd else { throw DecodingError.malformed("trailing bytes after a sensor's recent hours") }
        return true
    }
}
