/// The natural key of one fact: what makes two fact events "the same fact" for de-duplication on import
/// (readings are facts keyed by (source, sensor, time, quantity)).
///
/// Split into a `group` (for readings: source and sensor), a `time` and an `item` (the quantity), so a store
/// can lay keys out group by group in time order: imports of time series then insert keys close to each
/// other instead of at random places.
public struct NaturalKey: Hashable, Sendable {
    public var group: String
    public var time: Int64
    public var item: String

    public init(group: String, time: Int64, item: String) {
        self.group = group
        self.time = time
        self.item = item
    }
}

extension NaturalKey {
    /// Days since 1970-01-01 of a `YYYY-MM-DD` date (0 when it does not parse), so date-keyed facts are laid
    /// out and compared by their date rather than by a hash of it.
    public static func dayNumber(_ date: String) -> Int64 {
        let p = date.split(separator: "-").map { Int64($0) }
        guard p.count == 3, let y = p[0], let m = p[1], let d = p[2], (1...12).contains(m), (1...31).contains(d) else { return 0 }
        return ISOTime.days(year: y, month: m, day: d)
    }
}

extension EventBody {
    /// The natural keys of a fact body: one per value for readings (aligned with `Reading.values`), one for
    /// other facts; empty for user settings and unknown types.
    public var naturalKeys: [NaturalKey] {
        let sep = "\u{0}"
        switch self {
        case .reading(let r):
            let group = ["r", r.source, r.sensor].joined(separator: sep)
            return r.values.map { NaturalKey(group: group, time: r.time, item: $0.quantity) }
        case .readingBlock(let b):
            let group = ["r", b.source, b.sensor].joined(separator: sep)
            return b.rows.flatMap { row in row.values.map { NaturalKey(group: group, time: row.time, item: $0.quantity) } }
        case .readingCompaction(let c):
            let group = ["r", c.source, c.sensor].joined(separator: sep)
            return c.rows.flatMap { row in row.values.map { NaturalKey(group: group, time: row.time, item: $0.quantity) } }
        case .sensorRegistered(let s): return [NaturalKey(group: ["s", s.source, s.sensor].joined(separator: sep), time: 0, item: "")]
        case .pollenForecast(let p):
            return [NaturalKey(group: ["p", "\(p.latitude)", "\(p.longitude)"].joined(separator: sep),
                               time: NaturalKey.dayNumber(p.date), item: p.date)]
        case .dailyTemperature(let t):
            return [NaturalKey(group: ["t", t.station].joined(separator: sep), time: NaturalKey.dayNumber(t.date), item: t.date)]
        case .biomarkerReading(let b): return [NaturalKey(group: ["b", b.readingType].joined(separator: sep), time: b.time, item: "")]
        default: return []
        }
    }

    /// The type names that carry facts.
    public static let factTypes: Set<String> = ["reading", "reading.block", "reading.compact", "sensor.register", "pollen.forecast", "temperature.daily", "biomarker.reading"]
}

extension EventBody {
    /// Where a projection keeps this fact, other than readings and sensors: kind and a key whose text order is
    /// the screens' reading order. Pollen by place and date (`"<lat>,<lon>|<YYYY-MM-DD>"`), daily
    /// temperatures by station and date (`"<station>|<YYYY-MM-DD>"`), biomarker readings by user, type and
    /// time (`"<user>|<type>|<sortable time>"`). The SQLite projection and the in-memory one both use this,
    /// so they cannot disagree. Names that come from events (station, reading type) are escaped
    /// (`factKeyComponent`), so `|` always separates components: a screen can list a kind's stations or a
    /// user's reading types by skipping from one group of keys to the next, without reading every fact.
    public func projectionFactKey(stream: StreamID) -> (kind: String, key: String)? {
        switch self {
        case .pollenForecast(let p): return ("pollen", "\(p.latitude),\(p.longitude)|\(p.date)")
        case .dailyTemperature(let t): return ("temperature", "\(EventBody.factKeyComponent(t.station))|\(EventBody.factKeyComponent(t.date))")
        case .biomarkerReading(let b):
            guard let user = stream.userID else { return nil }
            return ("biomarker", "\(user)|\(EventBody.factKeyComponent(b.readingType))|\(EventBody.sortableTime(b.time))")
        default: return nil
        }
    }

    /// A name as one component of a fact key: `%` and `|` escaped (`%25`, `%7C`), so it never holds the
    /// separator. Names without them (every real station id and reading type) are unchanged.
    public static func factKeyComponent(_ name: String) -> String {
        guard name.utf8.contains(where: { $0 == UInt8(ascii: "|") || $0 == UInt8(ascii: "%") }) else { return name }
        // By Unicode scalars, not characters: a `|` followed by a combining mark is one character that is not `|`.
        var out = String.UnicodeScalarView()
        for c in name.unicodeScalars {
            switch c {
            case "%": out.append(contentsOf: "%25".unicodeScalars)
            case "|": out.append(contentsOf: "%7C".unicodeScalars)
            default: out.append(c)
            }
        }
        return String(out)
    }

    /// A time as 16 hex digits that sort in time order (sign bit flipped), for key-prefix range scans.
    public static func sortableTime(_ t: Int64) -> String {
        let s = String(UInt64(bitPattern: t) ^ (1 << 63), radix: 16)
        return String(repeating: "0", count: 16 - s.count) + s
    }
}
