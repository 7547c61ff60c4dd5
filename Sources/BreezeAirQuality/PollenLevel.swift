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

    /// `title`.
    public var description: String { title }

    /// Orders by index value.
    public static func < (a: PollenLevel, b: PollenLevel) -> Bool { a.rawValue < b.rawValue }
}
