/// One EPA AQI breakpoint table, as data: a pollutant and averaging time, the precision concentrations are
/// truncated to, and the rows that map a concentration range onto an index range.
///
/// The sub-index follows the 2024 Technical Assistance Document (EPA-454/B-24-002, May 2024) and
/// `shared/docs/domain.md` section 1.1:
/// 1. truncate the concentration to the table's precision (`truncate(_:)`);
/// 2. find the row with `cLo <= C <= cHi` and compute
///    `I = (iHi - iLo) / (cHi - cLo) * (C - cLo) + iLo`
///    (https://forum.airnowtech.org/t/the-aqi-equation-2024-valid-beginning-may-6th-2024/453);
/// 3. round `I` to the nearest integer, halves up.
///
/// Tables are values, not code paths (domain.md section 9): the 2024 tables are the defaults, and
/// `pm25DailyPre2012` exists so that real AQI values published before 2012 can be reproduced.
///
/// ```swift
/// let result = BreakpointTable.pm25Daily2024.aqi(concentration: 35.5)
/// // result?.aqi == 101, result?.category == .usg
/// ```
public struct BreakpointTable: Hashable, Sendable {
    /// One row: concentrations `cLo...cHi` map linearly onto `iLo...iHi`.
    public struct Row: Hashable, Sendable {
        /// Lowest concentration of the row, at the table's precision.
        public let cLo: Double
        /// Highest concentration of the row, at the table's precision.
        public let cHi: Double
        /// Index at `cLo`.
        public let iLo: Int
        /// Index at `cHi`.
        public let iHi: Int
        /// The category the row belongs to.
        public let category: AQILevel

        /// Makes a row. Requires `cLo <= cHi` and `iLo <= iHi`.
        public init(cLo: Double, cHi: Double, iLo: Int, iHi: Int, category: AQILevel) {
            precondition(cLo <= cHi && iLo <= iHi, "breakpoint row out of order")
            self.cLo = cLo
            self.cHi = cHi
            self.iLo = iLo
            self.iHi = iHi
            self.category = category
        }
    }

    /// What a concentration above the top row means.
    public enum AboveTop: Hashable, Sendable {
        /// "Beyond the AQI; follow Hazardous recommendations" (AirNow forum /169, /453): reported as 500,
        /// Hazardous, with `AQIResult.beyondIndex` set (domain.md section 9).
        case beyondIndex
        /// The table defines no index there (8-hour ozone above 0.200 ppm: the TAD computes AQI 301 and above
        /// from 1-hour ozone only).
        case undefined
    }

    /// Short identifier, e.g. `pm2.5-24h-2024`.
    public let id: String
    /// The pollutant, which also fixes the unit (`Pollutant.unit`).
    public let pollutant: Pollutant
    /// The averaging time the breakpoints apply to.
    public let averaging: AveragingPeriod
    /// Decimal places concentrations are truncated to: 1 for 0.1 µg/m³, 0 for 1 ppb, 3 for 0.001 ppm.
    public let decimalPlaces: Int
    /// The rows, in increasing order of concentration.
    public let rows: [Row]
    /// What a concentration above `rows.last!.cHi` gives.
    public let aboveTop: AboveTop

    /// Makes a table. Requires at least one row, rows in increasing order without overlap, and
    /// `decimalPlaces` in 0...6.
    public init(id: String, pollutant: Pollutant, averaging: AveragingPeriod, decimalPlaces: Int,
                rows: [Row], aboveTop: AboveTop = .beyondIndex) {
        precondition(!rows.isEmpty, "a breakpoint table needs rows")
        precondition((0...6).contains(decimalPlaces), "decimalPlaces out of range")
        precondition(zip(rows, rows.dropFirst()).allSatisfy { $0.cHi < $1.cLo && $0.iHi < $1.iLo },
                     "breakpoint rows must increase")
        self.id = id
        self.pollutant = pollutant
        self.averaging = averaging
        self.decimalPlaces = decimalPlaces
        self.rows = rows
        self.aboveTop = aboveTop
    }

    /// The truncation step, e.g. 0.1 for PM2.5 (10^-decimalPlaces).
    public var truncationStep: Double { 1 / scale }

    private var scale: Double {
        var s = 1.0
        for _ in 0..<decimalPlaces { s *= 10 }
        return s
    }

    /// Truncates (towards zero) to the table's precision, after adding 1e-9 of a step so that a computed
    /// average that should be exactly at a step (30.399999999999995 for the mean of 30.0, 30.3 and 30.9) is
    /// not pushed down one step (domain.md section 1.1). Dividing by an integer power of ten, rather than
    /// multiplying by the step, returns the literal value (35.4, not 35.400000000000006), so it compares
    /// exactly with the breakpoints.
    public func truncate(_ concentration: Double) -> Double {
        let s = scale
        if concentration < 0 { return -((-concentration * s + 1e-9).rounded(.down) / s) }
        return (concentration * s + 1e-9).rounded(.down) / s
    }

    /// The sub-index for an averaged concentration in the table's unit and averaging time.
    ///
    /// - Truncates first (`truncate(_:)`), then interpolates in the row that holds the value and rounds half up.
    /// - Above the top row: `aboveTop` decides (500 and `beyondIndex`, or nil).
    /// - Below the first row: nil when the table starts above zero (1-hour ozone is undefined below
    ///   0.125 ppm); when it starts at zero, a negative value (instrument noise around zero) is taken as 0.
    /// - Nil for NaN and infinities.
    public func aqi(concentration: Double) -> AQIResult? {
        guard concentration.isFinite else { return nil }
        var c = truncate(concentration)
        let first = rows[0], top = rows[rows.count - 1]
        if c < first.cLo {
            guard first.cLo == 0 else { return nil }
            c = 0
        }
        if c > top.cHi {
            switch aboveTop {
            case .undefined: return nil
            case .beyondIndex:
                return AQIResult(pollutant: pollutant, aqi: 500, category: .hazardous, beyondIndex: true,
                                 truncatedConcentration: c)
            }
        }
        // After truncation a value cannot fall between two rows (each row starts one step above the previous
        // one's end); taking the last row that starts at or below it keeps the lookup total anyway.
        let row = rows.last { $0.cLo <= c } ?? first
        let index = Double(row.iHi - row.iLo) / (row.cHi - row.cLo) * (c - row.cLo) + Double(row.iLo)
        // Half up. The 1e-9 keeps an exact half that Double computes as x.4999999999 from rounding down; the
        // 2024 PM tables never produce an exact half at reporting precision (domain.md section 1.1).
        let rounded = Int((index + 0.5 + 1e-9).rounded(.down))
        return AQIResult(pollutant: pollutant, aqi: rounded, category: row.category, beyondIndex: false,
                         truncatedConcentration: c)
    }
}
