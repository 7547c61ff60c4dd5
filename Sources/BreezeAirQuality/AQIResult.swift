/// One AQI sub-index: the number, its category and colour, and the concentration that produced it.
public struct AQIResult: Hashable, Sendable {
    /// The pollutant of the table that produced the index.
    public let pollutant: Pollutant
    /// The index, rounded to an integer; 500 when `beyondIndex`.
    public let aqi: Int
    /// The category of the row the concentration fell in (Hazardous when `beyondIndex`).
    public let category: AQILevel
    /// True above the table's top breakpoint: show "Beyond the AQI; follow Hazardous recommendations"
    /// (`shared/docs/domain.md` sections 1.2 and 9).
    public let beyondIndex: Bool
    /// The concentration used in the equation, after truncation to the table's precision.
    public let truncatedConcentration: Double

    /// Makes a result.
    public init(pollutant: Pollutant, aqi: Int, category: AQILevel, beyondIndex: Bool,
                truncatedConcentration: Double) {
        self.pollutant = pollutant
        self.aqi = aqi
        self.category = category
        self.beyondIndex = beyondIndex
        self.truncatedConcentration = truncatedConcentration
    }

    /// The category's official colour, `#RRGGBB` (e.g. `#8F3F97` for Very Unhealthy).
    public var colour: String { category.colourHex }

    /// The overall AQI: the highest sub-index, whose pollutant is the "critical pollutant" (TAD; domain.md
    /// section 1.1). On a tie the earlier result wins. Nil for an empty list.
    public static func overall(_ results: [AQIResult]) -> AQIResult? {
        var best: AQIResult?
        for r in results where best.map({ r.aqi > $0.aqi }) ?? true { best = r }
        return best
    }
}
