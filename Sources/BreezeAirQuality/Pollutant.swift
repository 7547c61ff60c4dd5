/// A pollutant with an EPA AQI sub-index (`shared/docs/domain.md` section 1.2).
public enum Pollutant: String, CaseIterable, Sendable, CustomStringConvertible {
    /// Fine particles, µg/m³.
    case pm25 = "pm2.5"
    /// Coarse particles, µg/m³.
    case pm10 = "pm10"
    /// Ozone, ppm (AirNow reports ppb: divide by 1000 first).
    case o3 = "o3"
    /// Carbon monoxide, ppm.
    case co = "co"
    /// Sulphur dioxide, ppb.
    case so2 = "so2"
    /// Nitrogen dioxide, ppb.
    case no2 = "no2"

    /// The unit the breakpoints are written in: `ug/m3`, `ppm` or `ppb`.
    public var unit: String {
        switch self {
        case .pm25, .pm10: return "ug/m3"
        case .o3, .co: return "ppm"
        case .so2, .no2: return "ppb"
        }
    }

    /// The identifier, e.g. `pm2.5`.
    public var description: String { rawValue }
}

/// The averaging time a breakpoint table applies to.
public enum AveragingPeriod: Int, CaseIterable, Sendable {
    case oneHour = 1
    case eightHour = 8
    case twentyFourHour = 24

    /// Length in hours.
    public var hours: Int { rawValue }
}
