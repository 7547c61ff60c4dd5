/// Natural keys of facts: what makes two fact events "the same fact" for de-duplication on import
/// (issue: readings are facts keyed by (source, sensor, time, quantity)).
extension EventBody {
    /// The natural keys of a fact body, one per value for readings (aligned with `Reading.values`), one for
    /// other facts; empty for user settings and unknown types. Keys are text with NUL separators.
    public var naturalKeys: [String] {
        let sep = "\u{0}"
        switch self {
        case .reading(let r):
            return r.values.map { ["r", r.source, r.sensor, String(r.time), $0.quantity].joined(separator: sep) }
        case .sensorRegistered(let s): return [["s", s.source, s.sensor].joined(separator: sep)]
        case .pollenForecast(let p): return [["p", "\(p.latitude)", "\(p.longitude)", p.date].joined(separator: sep)]
        case .dailyTemperature(let t): return [["t", t.station, t.date].joined(separator: sep)]
        case .biomarkerReading(let b): return [["b", b.readingType, String(b.time)].joined(separator: sep)]
        default: return []
        }
    }

    /// The type names that carry facts.
    public static let factTypes: Set<String> = ["reading", "sensor.register", "pollen.forecast", "temperature.daily", "biomarker.reading"]
}
