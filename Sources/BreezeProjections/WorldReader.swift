public import BreezeCore
public import BreezeAirQuality

/// What screens read: the projected facts and a user's state. The `Breeze` library provides it from the SQLite
/// projection (`LogWorld`); tests and `breeze replay` provide an in-memory `FactWorld`. Every method returns data in a fixed order,
/// so a screen built twice from the same facts is byte-identical.
public protocol WorldReader {
    /// Every registered sensor, sorted by source and id.
    func sensors() throws -> [SensorRegistration]
    /// A sensor's values with `from <= time < to`, in time order.
    func readings(source: String, sensor: String, from: Int64, to: Int64) throws -> [(time: Int64, values: [String: Double])]
    /// A sensor's readings with `from <= time < to` summed up per clock hour (`HourAggregate`), by hour; hours
    /// without readings are left out. The default sums up `readings(...)`; the SQLite projection stores them.
    func hourly(source: String, sensor: String, from: Int64, to: Int64) throws -> [HourAggregate]
    /// The time of a sensor's newest reading at or before `at`, if any (for freshness).
    func latestReadingTime(source: String, sensor: String, atOrBefore at: Int64) throws -> Int64?
    /// Facts of a kind (`pollen`, `temperature`, `biomarker`) whose key starts with `keyPrefix`, in key order.
    /// Keys: pollen `"<lat>,<lon>|<YYYY-MM-DD>"`, temperature `"<station>|<YYYY-MM-DD>"`, biomarker
    /// `"<user>|<readingType>|<sortable time>"`.
    func facts(kind: String, keyPrefix: String) throws -> [EventBody]
    /// Facts of a kind with `keyFrom <= key < keyTo`, in key order (greatest first when `descending`), at most
    /// `limit` (all when nil): a window of one station's days or one user's readings, read without the rest.
    func facts(kind: String, keyFrom: String, keyTo: String, limit: Int?, descending: Bool) throws -> [EventBody]
    /// The distinct first key components under `keyPrefix` (up to the next `|`, escaped as keys hold them,
    /// `EventBody.factKeyComponent`), sorted: the stations of `temperature`, a user's reading types of
    /// `biomarker` (prefix `"<user>|"`).
    func factGroups(kind: String, keyPrefix: String) throws -> [String]
    /// A user's settings.
    func userState(user: String) throws -> UserState
    /// The located sensors inside `box`, in `sensors()` order (default: every sensor filtered).
    func sensors(in box: GeoBox) throws -> [SensorRegistration]
    /// The located sensors within `km` of `point`, nearest first (ties in `sensors()` order), with their
    /// distances (default: every sensor measured).
    func sensors(near point: (latitude: Double, longitude: Double), withinKm km: Double) throws -> [(sensor: SensorRegistration, km: Double)]
    /// The pipeline for one sensor (default: run it).
    func airQuality(_ sensor: SensorRegistration, user: UserState, now: Int64, hours: Int) throws -> SensorAirQuality
}

/// The inputs of every screen. `now` is always given: no screen reads the wall clock.
public struct ScreenParameters: Sendable {
    /// Whose settings apply (favourites, unit, corrections, alert threshold).
    public var user: String
    /// The moment the screen is computed for, Unix seconds.
    public var now: Int64
    /// Where the user is.
    public var at: (latitude: Double, longitude: Double)?
    /// The selected sensor (`source:id`, or an id that is unique across sources).
    public var sensor: String?
    /// The map's bounding box: south, west, north, east.
    public var bbox: (south: Double, west: Double, north: Double, east: Double)?
    /// A calendar date `YYYY-MM-DD` (pollen, climate, biomarker); defaults to the local date of `now` in
    /// `timeZone`.
    public var date: String?
    /// The device's IANA time zone (e.g. `America/New_York`, what `TimeZone.current.identifier` gives on the
    /// phone): the user's "today" on the pollen, climate and biomarker screens. Nil is UTC. The sensor screens
    /// (history) use the sensor's own zone.
    public var timeZone: String?
    /// The map metric: `aqi`, `temperature`, `humidity` or `pm25`.
    public var metric: String = "aqi"

    public init(user: String, now: Int64) {
        self.user = user
        self.now = now
    }
}

/// Parameters are compared and hashed field by field (the tuples included), so they can key a SwiftUI
/// `.task(id:)` or a cache.
extension ScreenParameters: Hashable {
    public static func == (a: ScreenParameters, b: ScreenParameters) -> Bool {
        a.user == b.user && a.now == b.now && a.sensor == b.sensor && a.date == b.date && a.timeZone == b.timeZone
            && a.metric == b.metric
            && a.at?.latitude == b.at?.latitude && a.at?.longitude == b.at?.longitude
            && a.bbox?.south == b.bbox?.south && a.bbox?.west == b.bbox?.west
            && a.bbox?.north == b.bbox?.north && a.bbox?.east == b.bbox?.east
    }

    public func hash(into h: inout Hasher) {
        h.combine(user)
        h.combine(now)
        h.combine(sensor)
        h.combine(date)
        h.combine(timeZone)
        h.combine(metric)
        h.combine(at?.latitude)
        h.combine(at?.longitude)
        h.combine(bbox?.south)
        h.combine(bbox?.west)
        h.combine(bbox?.north)
        h.combine(bbox?.east)
    }
}

/// Why a screen could not be built: a missing or unknown parameter, or no data; one line for a person.
public struct ScreenError: Error, Sendable, CustomStringConvertible {
    public let description: String
    /// True when what is missing may still arrive (a sensor this replica does not hold yet: a deep link or a
    /// widget tap before the first sync): an observation waits for it rather than end.
    public let awaitsData: Bool
    public init(_ description: String, awaitsData: Bool = false) {
        self.description = description
        self.awaitsData = awaitsData
    }
}

/// One screen of the app: a read model built from the world and parameters, and a human rendering.
public protocol Screen: Sendable {
    associatedtype Model: Codable & Equatable & Sendable
    /// The name on the command line (`breeze screen NAME`).
    static var name: String { get }
    /// One line for `breeze screen --help`.
    static var summary: String { get }
    /// The parts of the user's state the model reads (default: all). An observed screen is recomputed after
    /// an edit of the user only when the edit changes one of them: a star recomputes the sheet, not the
    /// climate chart. `ScreenAspectTests` checks each screen's declaration against edits of every other part.
    static var userAspects: UserState.Aspects { get }
    /// Builds the read model.
    static func build(_ world: WorldReader, _ p: ScreenParameters) throws -> Model
    /// Readable text (aligned columns, bars drawn with characters).
    static func render(_ model: Model) -> [String]
}

extension Screen {
    /// Every part of the user's state (a screen that declares none reads them all).
    public static var userAspects: UserState.Aspects { .all }
}

/// A box on the map: south, west, north and east edges in degrees (west > east crosses the antimeridian).
public typealias GeoBox = (south: Double, west: Double, north: Double, east: Double)

extension WorldReader {
    /// `hourly` from `readings`: each hour's readings, in time order, summed up by `HourAggregate`.
    public func hourly(source: String, sensor: String, from: Int64, to: Int64) throws -> [HourAggregate] {
        HourAggregate.group(try readings(source: source, sensor: sensor, from: from, to: to))
    }

    /// The located sensors inside `box`, in `sensors()` order. The default filters every sensor; a world with a
    /// spatial index (the library's) looks only at what is in view.
    public func sensors(in box: GeoBox) throws -> [SensorRegistration] {
        try sensors().filter { WorldGeometry.contains(box, $0) }
    }

    /// The located sensors within `km` of `point`, nearest first (ties in `sensors()` order), with their
    /// distances (haversine, `GeoPoint.distanceKm`).
    public func sensors(near point: (latitude: Double, longitude: Double), withinKm km: Double) throws
        -> [(sensor: SensorRegistration, km: Double)] {
        WorldGeometry.nearest(try sensors(), point, km)
    }

    /// The pipeline for one sensor (`SensorAirQuality`): a world may keep what it computed until the
    /// sensor's data changes, since the result depends only on the sensor's hours, the user's correction for
    /// its source, `now` and `hours`.
    public func airQuality(_ sensor: SensorRegistration, user: UserState, now: Int64, hours: Int) throws -> SensorAirQuality {
        try SensorAirQuality(world: self, sensor: sensor, user: user, now: now, hours: hours)
    }
}

/// Boxes and distances for `WorldReader`'s spatial queries, shared by every implementation.
public enum WorldGeometry {
    /// True when `s` has a location inside `box` (edges included).
    public static func contains(_ box: GeoBox, _ s: SensorRegistration) -> Bool {
        guard let lat = s.latitude, let lon = s.longitude else { return false }
        let lonIn = box.west <= box.east ? (lon >= box.west && lon <= box.east) : (lon >= box.west || lon <= box.east)
        return lat >= box.south && lat <= box.north && lonIn
    }

    /// The sensors of `candidates` (in `sensors()` order) within `km` of `point`, nearest first, ties kept in
    /// that order.
    public static func nearest(_ candidates: [SensorRegistration], _ point: (latitude: Double, longitude: Double),
                               _ km: Double) -> [(sensor: SensorRegistration, km: Double)] {
        let here = GeoPoint(latitude: point.latitude, longitude: point.longitude)
        return candidates.enumerated().compactMap { i, s -> (Int, SensorRegistration, Double)? in
            guard let lat = s.latitude, let lon = s.longitude else { return nil }
            let d = here.distanceKm(to: GeoPoint(latitude: lat, longitude: lon))
            return d <= km ? (i, s, d) : nil
        }.sorted { ($0.2, $0.0) < ($1.2, $1.0) }.map { ($0.1, $0.2) }
    }
}
