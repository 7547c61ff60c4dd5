import BreezeStore
@preconcurrency import Glibc

/// What the library's world (`LogWorld`) keeps between screens on one connection, so a screen costs what is in
/// view and a new reading costs what it touches: the registered sensors with a spatial index (`SensorGrid`),
/// and per sensor its newest reading time and the pipelines already run (`SensorAirQuality`, by the inputs
/// that decide them: the clock hour of `now`, the newest reading at or before `now`, the hours asked for and
/// the user's correction).
///
/// Kept up to date from the log: `refresh` reads the events after the last ones it has seen (only as far as
/// the projection covers them) and forgets what each touches: a reading, its sensor; a registration, the
/// sensor list. A large gap (an import, a catch-up after days offline) forgets everything instead.
///
/// Used with one `EventLog` by one thread at a time, as `ReadCache` is.
final class WorldCache {
    private var seq: Int64 = -1
    /// `EventLog.dropGeneration` when this was filled: dropped fact streams forget everything.
    private var dropGeneration: Int64 = 0
    private var sensorList: [SensorRegistration]?
    private var grid: SensorGrid?
    private var perSensor: [SensorKey: SensorEntry] = [:]

    /// What is kept of one sensor.
    final class SensorEntry {
        /// The time of its newest reading (`.some(nil)`: it has none), once read.
        var newest: Int64??
        /// `latestReadingTime(atOrBefore:)` for times before `newest`.
        var latestAt: [Int64: Int64?] = [:]
        /// Pipelines by their inputs; a few per sensor (most recent kept).
        var quality: [QualityKey: SensorAirQuality] = [:]
        var order: [QualityKey] = []
    }

    struct QualityKey: Hashable {
        let hour: Int64, lastReading: Int64?, hours: Int, correction: String
    }

    /// Bound on what a sensor keeps: distinct pipelines (screens at different `now`s or hour counts).
    static let qualitiesPerSensor = 8
    /// A gap of more events than this since the last refresh forgets everything rather than read them.
    static let scanLimit: Int64 = 20_000

    /// A sensor's key: its source and id (hashed as they are, no string built per look-up).
    struct SensorKey: Hashable {
        let source: String, sensor: String
    }

    static func key(_ source: String, _ sensor: String) -> SensorKey { SensorKey(source: source, sensor: sensor) }

    /// Forgets what the events after the last refresh touched, up to what the projection covers (`covered`:
    /// its checkpoint, or further when the events after it hold no fact).
    func refresh(_ log: EventLog, covered: Int64) throws {
        let generation = try log.dropGeneration()
        if seq < 0 || covered < seq || covered - seq > WorldCache.scanLimit || generation != dropGeneration {
            dropGeneration = generation
            sensorList = nil
            grid = nil
            perSensor.removeAll()
            seq = covered
            return
        }
        guard covered > seq else { return }
        try log.forEach(afterSeq: seq) { entry in
            guard entry.seq <= covered else { return false }
            let e = entry.event
            if let r = EventBody.readingRows(of: e) {
                perSensor[WorldCache.key(r.source, r.sensor)] = nil
            } else if e.type == "sensor.register", case .sensorRegistered(let s)? = try? e.body() {
                sensorList = nil
                grid = nil
                perSensor[WorldCache.key(s.source, s.sensor)] = nil
            }
            return true
        }
        seq = covered
    }

    func sensors(_ log: EventLog) throws -> [SensorRegistration] {
        if let s = sensorList { return s }
        let s = try log.projectedSensors()
        sensorList = s
        return s
    }

    func grid(_ log: EventLog) throws -> SensorGrid {
        if let g = grid { return g }
        let g = SensorGrid(try sensors(log))
        grid = g
        return g
    }

    func entry(_ source: String, _ sensor: String) -> SensorEntry {
        let k = WorldCache.key(source, sensor)
        if let e = perSensor[k] { return e }
        let e = SensorEntry()
        perSensor[k] = e
        return e
    }

    func latestReadingTime(_ log: EventLog, source: String, sensor: String, atOrBefore at: Int64) throws -> Int64? {
        let e = entry(source, sensor)
        if e.newest == nil { e.newest = .some(try log.latestReadingTime(source: source, sensor: sensor, at: .max)) }
        if let newest = e.newest!, at < newest {
            if let t = e.latestAt[at] { return t }
            let t = try log.latestReadingTime(source: source, sensor: sensor, at: at)
            if e.latestAt.count >= 16 { e.latestAt.removeAll() }
            e.latestAt[at] = t
            return t
        }
        return e.newest!
    }
}

// Confined to the connection (and thread) it serves.
@available(*, unavailable)
extension WorldCache: Sendable {}

/// The located sensors in cells of 0.05° of latitude by 0.05° of longitude (about 5.5 by 3.5 km in
/// Seattle), so a box or a radius looks at the cells it covers, not at every sensor of the city.
struct SensorGrid {
    static let cell = 0.05
    private var cells: [Cell: [Int]] = [:]
    private let sensors: [SensorRegistration]

    struct Cell: Hashable { let lat: Int, lon: Int }

    init(_ sensors: [SensorRegistration]) {
        self.sensors = sensors
        for (i, s) in sensors.enumerated() {
            guard let lat = s.latitude, let lon = s.longitude else { continue }
            cells[SensorGrid.cell(lat, lon), default: []].append(i)
        }
    }

    static func cell(_ lat: Double, _ lon: Double) -> Cell {
        Cell(lat: Int((lat / cell).rounded(.down)), lon: Int((lon / cell).rounded(.down)))
    }

    /// The sensors in the cells that `south...north` by `west...east` touches (a superset of those inside), in
    /// the order of the sensor list. A box wider than half the cells falls back to every sensor.
    func candidates(south: Double, west: Double, north: Double, east: Double) -> [SensorRegistration] {
        let lo = SensorGrid.cell(south, west), hi = SensorGrid.cell(north, east)
        let rows = hi.lat - lo.lat + 1
        let columns = west <= east ? hi.lon - lo.lon + 1 : Int(360 / SensorGrid.cell)
        guard rows > 0, columns > 0, rows * columns <= max(64, cells.count / 2) else { return sensors }
        var found: [Int] = []
        for la in lo.lat...hi.lat {
            if west <= east {
                for lo2 in lo.lon...hi.lon { found += cells[Cell(lat: la, lon: lo2)] ?? [] }
            } else {
                for (c, list) in cells where c.lat == la && (c.lon >= lo.lon || c.lon <= hi.lon) { found += list }
            }
        }
        return found.sorted().map { sensors[$0] }
    }

    /// The sensors in the cells within `km` of a point (a superset of those within `km`), in list order.
    func candidates(near lat: Double, _ lon: Double, km: Double) -> [SensorRegistration] {
        guard km.isFinite, abs(lat) < 85 else { return sensors }
        let dLat = km / 111.0 + SensorGrid.cell, dLon = km / (111.0 * cos(lat * .pi / 180)) + SensorGrid.cell
        guard dLon < 180 else { return sensors }
        var west = lon - dLon, east = lon + dLon
        if west < -180 { west += 360 }
        if east > 180 { east -= 360 }
        return candidates(south: max(-90, lat - dLat), west: west, north: min(90, lat + dLat), east: east)
    }
}
