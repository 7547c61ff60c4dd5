/// The six levels of Google's Universal Pollen Index (UPI), 0-5
/// (https://developers.google.com/maps/documentation/pollen/pollen-index; `shared/docs/domain.md`
/// sections 4 and 9).
///
/// An entry without `indexInfo` is out of season or unsupported: model that as a missing level, not as
/// `.noPollen`. Show the category text and colour that come with the data; Google documents the colours only as
/// swatches.
public enum PollenLevel: Int, CaseIterable, Comparable, Sendable, CustomStringConvertible {
    /// UPI 0, "None". (Not named `none`, which would read as `Optional.none` next to `init?(upi:)`.)
    case noPollen = 0
    case veryLow, low, moderate, high, veryHigh

    /// The level for a UPI `value`; nil outside 0...5.
    public init?(upi: Int) { self.init(rawValue: upi) }

    /// Google's category name: "None", "Very Low", "Low", "Moderate", "High", "Very High".
    public var title: String {
        switch self {
        case .noPollen: return "None"
        case .veryLow: return "Very Low"
        case .low: return "Low"
        case .moderate: return "Moderate"
        case .high: return "High"
        case .veryHigh: return "Very High"
        }
    }

    /// The row of the app design's five-row scale (None 0, Low 1, Moderate 2-3, High 4, Very High 5) this
    /// UPI level falls in, as its value range reads: UPI 0 None -> "None"; 1 Very Low -> "Low"; 2 Low and 3
    /// Moderate -> "Moderate"; 4 High -> "High"; 5 Very High -> "Very High" (domain.md section 4: the model
    /// carries the six UPI levels; this says where each sits on the design's older scale).
    public var designLevel: String {
        switch self {
        case .noPollen: return "None"
        case .veryLow: return "Low"
        case .low, .moderate: return "Moderate"
        case .high: return "High"
        case .veryHigh: return "Very High"
        }
    }

    /// The colour of the level when no stored forecast gives one: Google's Pollen index page shows each level
    /// as a swatch named gray, dark green, light green, yellow, orange and red
    /// (https://developers.google.com/maps/documentation/pollen/pollen-index). Dark and light green are the
    /// colours the real 2025-08-03 forecast gives for UPI 1 and 2 (#009E3A, #84CF33); the others are the
    /// named colours, not Google's exact values, and a forecast's own colour always wins.
    public var swatchColour: String {
        switch self {
        case .noPollen: return "#8E8E93"
        case .veryLow: return "#009E3A"
        case .low: return "#84CF33"
        case .moderate: return "#FFD600"
        case .high: return "#FF8C00"
        case .veryHigh: return "#E53935"
        }
    }

    /// `title`.
    public var description: String { title }

    /// Orders by index value.
    public static func < (a: PollenLevel, b: PollenLevel) -> Bool { a.rawValue < b.rawValue }
}
