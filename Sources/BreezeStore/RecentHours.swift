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
/// touched (a database from before the table is filled once when it is opened, `fillRecentHours`); a horizon that deletes hours deletes the rows whose window reaches below it. A sensor without a
/// row (not written since, or a window beyond the row's) is read from `proj_readings`: the row only saves
/// time, never changes an answer (`RecentHoursTests` compares both on every window).
extension EventLog {
    /// Hours a row covers: what the screens of a city ask of every sensor in view. Their pipeline
    /// (`SensorAirQuality`, 4 hours for the map, nearby, the sheet and the widgets) reads the hour of `now`, in
    /// progress, back to 15 hours before the last complete one (4 shown, 11 more for NowCast): 17 hour buckets,
    /// the newest being the hour in progress for a sensor reporting now. The detail's 24 hours, one sensor's,
    /// read `proj_readings`. Longer would cost storage for nothing on a map: about 23 bytes an hour a sensor.
    static let recentHours: Int64 = 17

    /// Rewrites the `proj_recent` rows of `sensors` (sorted, each once) from their newest `proj_readings` rows.
    func refreshRecentHours(_ sensors: [(source: String, sensor: String)], suffix: String) throws {
        let write = try db.cached("INSERT OR REPLACE INTO proj_recent\(suffix)(source, sensor, hour, hours) VALUES (?, ?, ?, ?)")
        for s in sensors {
            guard let (newest, bytes) = try recentRow(source: s.source, sensor: s.sensor, suffix: suffix) else { continue }   // written by this page: never empty
            write.reset()
            try write.bind(1, s.source)
            try write.bind(2, s.sensor)
            try write.bind(3, newest)
            try write.bind(4, bytes)
            try write.run()
        }
    }

    /// Writes every sensor's row from `proj_readings` (a database from before schema 10): the sensors are found
    /// by skipping from one to the next along the table's key, one seek each, not by reading every hour.
    func fillRecentHours() throws {
        try db.writeTransaction {
            let next = try db.prepare("SELECT source, sensor FROM proj_readings WHERE (source, sensor) > (?, ?) ORDER BY source, sensor LIMIT 1")
            var last = ("", "")
            var sensors: [(source: String, sensor: String)] = []
            while true {
                next.reset()
                try next.bind(1, last.0)
                try next.bind(2, last.1)
                guard try next.step() else { break }
                last = (next.text(0), next.text(1))
                sensors.append(last)
            }
            try refreshRecentHours(sensors, suffix: "")
        }
    }

    /// What the sensor's `proj_recent` row must hold, from its newest `proj_readings` rows: its newest hour and
    /// the encoded hours; nil when it has none.
    func recentRow(source: String, sensor: String, suffix: String) throws -> (hour: Int64, bytes: [UInt8])? {
        let read = try db.cached("SELECT hour, agg FROM proj_readings\(suffix) WHERE source = ? AND sensor = ? ORDER BY hour DESC LIMIT \(EventLog.recentHours)")
        defer { read.reset() }
        try read.bind(1, source)
        try read.bind(2, sensor)
        var rows: [(hour: Int64, agg: [UInt8])] = []
        while try read.step() { rows.append((read.int(0), read.blob(1))) }
        guard let newest = rows.first?.hour else { return nil }
        let kept = rows.filter { $0.hour > newest - EventLog.recentHours }
        var w = ByteWriter(capacity: 32 * kept.count + 4)
        w.varint(UInt64(kept.count))
        for r in kept.reversed() {
            w.varint(UInt64(newest - r.hour))
            w.blob(r.agg)
        }
        return (newest, w.bytes)
    }

    /// The sensors (up to `limit`) whose `proj_recent` row is not what their `proj_readings` rows make
    /// (`breeze verify`): a row that would answer differently from the table.
    func staleRecentRows(limit: Int = 20) throws -> [String] {
        let q = try db.prepare("SELECT source, sensor, hour, hours FROM proj_recent ORDER BY source, sensor")
        var out: [String] = []
        while try q.step(), out.count < limit {
            let source = q.text(0), sensor = q.text(1)
            let expected = try recentRow(source: source, sensor: sensor, suffix: "")
            if expected?.hour != q.int(2) || expected?.bytes != q.blob(3) { out.append("\(source):\(sensor)") }
        }
        return out
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
        var previous = UInt64(EventLog.recentHours)
        for _ in 0..<n {
            // Oldest first: each hour fewer hours back than the one before it (a damaged row fails, never reorders).
            let back = try r.varint()
            guard back < previous else { throw DecodingError.malformed("recent hour \(back) hours back after \(previous)") }
            previous = back
            let bytes = try r.bytes(try r.count(limit: 4096))
            let h = newest - Int64(back)
            if h >= firstHour && h <= lastHour { out.append(try HourAggregate(hour: h * 3600, stored: bytes)) }
        }
        guard r.isAtEnd else { throw DecodingError.malformed("trailing bytes after a sensor's recent hours") }
        return true
    }
}
