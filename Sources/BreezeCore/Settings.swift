/// EPA AQI categories, in order of increasing concern (US EPA TAD EPA-454/B-24-002, Table 2; see
/// `shared/docs/domain.md` section 1.4). Used here as the alert threshold.
public enum AQICategory: UInt8, CaseIterable, Comparable, Sendable, CustomStringConvertible {
    case good = 1, moderate, usg, unhealthy, veryUnhealthy, hazardous

    /// The command-line and JSON name: `good`, `moderate`, `usg`, `unhealthy`, `very-unhealthy`, `hazardous`.
    public var name: String {
        switch self {
        case .good: return "good"
        case .moderate: return "moderate"
        case .usg: return "usg"
        case .unhealthy: return "unhealthy"
        case .veryUnhealthy: return "very-unhealthy"
        case .hazardous: return "hazardous"
        }
    }

    /// The EPA's wording, e.g. "Unhealthy for Sensitive Groups".
    public var title: String {
        switch self {
        case .good: return "Good"
        case .moderate: return "Moderate"
        case .usg: return "Unhealthy for Sensitive Groups"
        case .unhealthy: return "Unhealthy"
        case .veryUnhealthy: return "Very Unhealthy"
        case .hazardous: return "Hazardous"
        }
    }

    /// Parses `name`.
    public init?(name: String) {
        guard let c = AQICategory.allCases.first(where: { $0.name == name }) else { return nil }
        self = c
    }

    public var description: String { name }
    public static func < (a: AQICategory, b: AQICategory) -> Bool { a.rawValue < b.rawValue }
}

/// What the app does when a sensor falls back below the alert threshold.
public enum OnClear: UInt8, CaseIterable, Sendable, CustomStringConvertible {
    case notify = 1, silent
    /// `notify` or `silent`.
    public var name: String { self == .notify ? "notify" : "silent" }
    /// Parses `name`.
    public init?(name: String) {
        switch name {
        case "notify": self = .notify
        case "silent": self = .silent
        default: return nil
        }
    }
    public var description: String { name }
}

/// The temperature unit a user reads values in.
public enum TemperatureUnit: UInt8, CaseIterable, Sendable, CustomStringConvertible {
    case celsius = 1, fahrenheit
    /// `celsius` or `fahrenheit`.
    public var name: String { self == .celsius ? "celsius" : "fahrenheit" }
    /// Parses `name` (also `c`/`f`).
    public init?(name: String) {
        switch name.lowercased() {
        case "celsius", "c": self = .celsius
        case "fahrenheit", "f": self = .fahrenheit
        default: return nil
        }
    }
    public var description: String { name }
}

/// A daily target for one biomarker, as the app's `BiomarkerView` shows it: how many readings a day, from
/// `minReading` to `maxReading` (the target), with an SF Symbol name for the icon.
public struct BiomarkerTarget: Hashable, Sendable {
    /// E.g. "Blood Glucose".
    public var readingType: String
    /// Lower end of the gauge (usually 0).
    public var minReading: Double
    /// Readings wanted per day.
    public var maxReading: Double
    /// SF Symbol name, e.g. `drop`.
    public var icon: String

    /// Makes a target.
    public init(readingType: String, minReading: Double, maxReading: Double, icon: String) {
        self.readingType = readingType
        self.minReading = minReading
        self.maxReading = maxReading
        self.icon = icon
    }
}

/// A data source the app can read from, with the corrections a user may choose for it.
public struct DataSource: Hashable, Sendable {
    /// Identifier used in events and on the command line, e.g. `purpleair`.
    public let id: String
    /// Display name.
    public let name: String
    /// Correction identifiers available for this source; the first is the default.
    public let corrections: [String]

    /// The correction used when the user has not chosen one.
    public var defaultCorrection: String { corrections[0] }

    /// Every source Breeze knows. PurpleAir corrections follow `shared/docs/domain.md` section 3.2:
    /// EPA US-wide 2021 (Barkjohn et al.) by default, the 2021 smoke extension, LRAPA, AQandU, or none.
    public static let catalog: [DataSource] = [
        DataSource(id: "purpleair", name: "PurpleAir",
                   corrections: ["epa-2021", "epa-2021-smoke", "lrapa", "aqandu", "none"]),
        DataSource(id: "airnow", name: "AirNow", corrections: ["none"]),
        DataSource(id: "aqs", name: "EPA AQS", corrections: ["none"]),
        DataSource(id: "openaq", name: "OpenAQ", corrections: ["none"]),
        DataSource(id: "google-pollen", name: "Google Pollen", corrections: ["none"]),
        DataSource(id: "open-meteo", name: "Open-Meteo", corrections: ["none"]),
        DataSource(id: "noaa", name: "NOAA daily temperatures", corrections: ["none"]),
        DataSource(id: "cgm", name: "Glucose monitor", corrections: ["none"]),
    ]

    /// The source with this id, if known.
    public static func named(_ id: String) -> DataSource? { catalog.first { $0.id == id } }
}

// Codable: the raw values, as stored in events.
extension AQICategory: Codable {}
extension OnClear: Codable {}
extension TemperatureUnit: Codable {}
extension BiomarkerTarget: Codable {}
