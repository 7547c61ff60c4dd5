public import BreezeCore

/// The six US EPA AQI categories, in increasing order of concern: the same type as `BreezeCore.AQICategory`
/// (names, titles, raw values 1...6), extended here with the maths: AQI ranges, official colours and advice.
/// Colours are the standard ones of the 2024 Technical Assistance Document (EPA-454/B-24-002, Table 2) and the
/// AirNow API fact sheets (`shared/docs/domain.md` section 1.4). AirNow's "aq101" page gives Very Unhealthy as
/// #99004C; the TAD value #8F3F97 is used here.
public typealias AQILevel = AQICategory

extension AQICategory {
    /// The category an integer AQI falls in: 0-50 good, ..., 301 and above hazardous (values above 500 are
    /// "beyond the AQI" and still hazardous). Nil for negative values.
    public init?(aqi: Int) {
        guard aqi >= 0 else { return nil }
        guard let level = AQILevel.allCases.first(where: { aqi <= $0.aqiRange.upperBound }) else {
            self = .hazardous
            return
        }
        self = level
    }

    /// The AQI values of the category (TAD Table 6). Hazardous also covers values shown as "beyond the AQI".
    public var aqiRange: ClosedRange<Int> {
        switch self {
        case .good: return 0...50
        case .moderate: return 51...100
        case .usg: return 101...150
        case .unhealthy: return 151...200
        case .veryUnhealthy: return 201...300
        case .hazardous: return 301...500
        }
    }

    /// The official colour as `#RRGGBB` (upper-case hex), e.g. `#00E400` for Good.
    public var colourHex: String {
        // Written out (a map of a city asks for one per pin); `AQITests` checks each against `rgb`.
        switch self {
        case .good: return "#00E400"
        case .moderate: return "#FFFF00"
        case .usg: return "#FF7E00"
        case .unhealthy: return "#FF0000"
        case .veryUnhealthy: return "#8F3F97"
        case .hazardous: return "#7E0023"
        }
    }

    /// The official colour as 8-bit red, green and blue (TAD Table 2).
    public var rgb: (red: UInt8, green: UInt8, blue: UInt8) {
        switch self {
        case .good: return (0, 228, 0)
        case .moderate: return (255, 255, 0)
        case .usg: return (255, 126, 0)
        case .unhealthy: return (255, 0, 0)
        case .veryUnhealthy: return (143, 63, 151)
        case .hazardous: return (126, 0, 35)
        }
    }

    /// The colour's name in the TAD: Green, Yellow, Orange, Red, Purple, Maroon.
    public var colourName: String {
        switch self {
        case .good: return "Green"
        case .moderate: return "Yellow"
        case .usg: return "Orange"
        case .unhealthy: return "Red"
        case .veryUnhealthy: return "Purple"
        case .hazardous: return "Maroon"
        }
    }

    /// The AirNow "levels of health concern" sentence for the category (`shared/docs/domain.md` section 1.5,
    /// AirNow text as copied on springfieldmo.gov). The Moderate sentence is quoted there from its middle
    /// ("…acceptable; however, …"); it is completed here with AirNow's opening words "Air quality is".
    public var levelOfConcern: String {
        switch self {
        case .good:
            return "Air quality is considered satisfactory, and air pollution poses little or no risk."
        case .moderate:
            return "Air quality is acceptable; however, for some pollutants there may be a moderate health concern "
                + "for a very small number of people who are unusually sensitive to air pollution."
        case .usg:
            return "Members of sensitive groups may experience health effects. "
                + "The general public is not likely to be affected."
        case .unhealthy:
            return "Everyone may begin to experience health effects; "
                + "members of sensitive groups may experience more serious health effects."
        case .veryUnhealthy:
            return "Health alert: everyone may experience more serious health effects."
        case .hazardous:
            return "Health warnings of emergency conditions. The entire population is more likely to be affected."
        }
    }
}
