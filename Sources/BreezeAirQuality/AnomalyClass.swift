/// How far a day's temperature is from its long-term normal, in four classes for the climate chart
/// (`shared/docs/domain.md` sections 8 and 9). Always classified in °C, whatever unit is shown:
///
/// | class | anomaly Δ (°C) | chart colour | in °F |
/// |---|---|---|---|
/// | `warmingStrong` | Δ > +2 | red | > +3.6 |
/// | `warming` | +0.5 < Δ ≤ +2 | orange | > +0.9 |
/// | `neutral` | −0.5 ≤ Δ ≤ +0.5 | grey | |
/// | `cooling` | Δ < −0.5 | blue | < −0.9 |
///
/// The ±0.5 edges belong to `neutral` and +2 exactly to `warming`, as domain.md writes the inequalities.
public enum AnomalyClass: String, CaseIterable, Sendable, CustomStringConvertible {
    case warmingStrong = "warming-strong"
    case warming = "warming"
    case neutral = "neutral"
    case cooling = "cooling"

    /// Above this (°C) an anomaly is `warmingStrong`.
    public static let strongWarmingAboveC = 2.0
    /// Beyond ± this (°C) an anomaly leaves `neutral`.
    public static let neutralWithinC = 0.5

    /// Classifies an anomaly in °C. NaN gives nil.
    public init?(anomalyCelsius delta: Double) {
        guard !delta.isNaN else { return nil }
        if delta > Self.strongWarmingAboveC {
            self = .warmingStrong
        } else if delta > Self.neutralWithinC {
            self = .warming
        } else if delta >= -Self.neutralWithinC {
            self = .neutral
        } else {
            self = .cooling
        }
    }

    /// The chart colour's name: red, orange, grey, blue.
    public var colourName: String {
        switch self {
        case .warmingStrong: return "red"
        case .warming: return "orange"
        case .neutral: return "grey"
        case .cooling: return "blue"
        }
    }

    /// The identifier, e.g. `warming-strong`.
    public var description: String { rawValue }
}
