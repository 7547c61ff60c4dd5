/// The published EPA breakpoint tables, written out row by row so they can be checked against the sources.
///
/// 2024 values: TAD EPA-454/B-24-002 (May 2024), Table 6, effective 2024-05-06 (rule 89 FR 16202), as
/// transcribed in `shared/docs/domain.md` section 1.2. The 2024 TAD merges 301-500 into one row for every
/// pollutant (domain.md marks this [C]; the pre-2024 tables split it at 400).
extension BreakpointTable {
    /// PM2.5, 24-hour, µg/m³ truncated to 0.1 (2024). Also the table for PM2.5 NowCast concentrations.
    public static let pm25Daily2024 = BreakpointTable(
        id: "pm2.5-24h-2024", pollutant: .pm25, averaging: .twentyFourHour, decimalPlaces: 1, rows: [
            Row(cLo: 0.0, cHi: 9.0, iLo: 0, iHi: 50, category: .good),
            Row(cLo: 9.1, cHi: 35.4, iLo: 51, iHi: 100, category: .moderate),
            Row(cLo: 35.5, cHi: 55.4, iLo: 101, iHi: 150, category: .usg),
            Row(cLo: 55.5, cHi: 125.4, iLo: 151, iHi: 200, category: .unhealthy),
            Row(cLo: 125.5, cHi: 225.4, iLo: 201, iHi: 300, category: .veryUnhealthy),
            Row(cLo: 225.5, cHi: 325.4, iLo: 301, iHi: 500, category: .hazardous),
        ])

    /// PM10, 24-hour, µg/m³ truncated to 1 (2024). Also the table for PM10 NowCast concentrations.
    public static let pm10Daily2024 = BreakpointTable(
        id: "pm10-24h-2024", pollutant: .pm10, averaging: .twentyFourHour, decimalPlaces: 0, rows: [
            Row(cLo: 0, cHi: 54, iLo: 0, iHi: 50, category: .good),
            Row(cLo: 55, cHi: 154, iLo: 51, iHi: 100, category: .moderate),
            Row(cLo: 155, cHi: 254, iLo: 101, iHi: 150, category: .usg),
            Row(cLo: 255, cHi: 354, iLo: 151, iHi: 200, category: .unhealthy),
            Row(cLo: 355, cHi: 424, iLo: 201, iHi: 300, category: .veryUnhealthy),
            Row(cLo: 425, cHi: 604, iLo: 301, iHi: 500, category: .hazardous),
        ])

    /// Ozone, 8-hour, ppm truncated to 0.001 (2024); the TAD's usual ozone index. It stops at 0.200 ppm
    /// (AQI 300): 8-hour ozone never defines AQI 301 and above, so higher values give nil (use 1-hour ozone).
    public static let ozone8Hour2024 = BreakpointTable(
        id: "o3-8h-2024", pollutant: .o3, averaging: .eightHour, decimalPlaces: 3, rows: [
            Row(cLo: 0.000, cHi: 0.054, iLo: 0, iHi: 50, category: .good),
            Row(cLo: 0.055, cHi: 0.070, iLo: 51, iHi: 100, category: .moderate),
            Row(cLo: 0.071, cHi: 0.085, iLo: 101, iHi: 150, category: .usg),
            Row(cLo: 0.086, cHi: 0.105, iLo: 151, iHi: 200, category: .unhealthy),
            Row(cLo: 0.106, cHi: 0.200, iLo: 201, iHi: 300, category: .veryUnhealthy),
        ], aboveTop: .undefined)

    /// Ozone, 1-hour, ppm truncated to 0.001 (2024). Undefined below 0.125 ppm (nil); where both are
    /// defined, report the higher of this and the 8-hour index (`AQIResult.overall`).
    public static let ozone1Hour2024 = BreakpointTable(
        id: "o3-1h-2024", pollutant: .o3, averaging: .oneHour, decimalPlaces: 3, rows: [
            Row(cLo: 0.125, cHi: 0.164, iLo: 101, iHi: 150, category: .usg),
            Row(cLo: 0.165, cHi: 0.204, iLo: 151, iHi: 200, category: .unhealthy),
            Row(cLo: 0.205, cHi: 0.404, iLo: 201, iHi: 300, category: .veryUnhealthy),
            Row(cLo: 0.405, cHi: 0.604, iLo: 301, iHi: 500, category: .hazardous),
        ])

    /// Carbon monoxide, 8-hour, ppm truncated to 0.1 (2024).
    public static let co8Hour2024 = BreakpointTable(
        id: "co-8h-2024", pollutant: .co, averaging: .eightHour, decimalPlaces: 1, rows: [
            Row(cLo: 0.0, cHi: 4.4, iLo: 0, iHi: 50, category: .good),
            Row(cLo: 4.5, cHi: 9.4, iLo: 51, iHi: 100, category: .moderate),
            Row(cLo: 9.5, cHi: 12.4, iLo: 101, iHi: 150, category: .usg),
            Row(cLo: 12.5, cHi: 15.4, iLo: 151, iHi: 200, category: .unhealthy),
            Row(cLo: 15.5, cHi: 30.4, iLo: 201, iHi: 300, category: .veryUnhealthy),
            Row(cLo: 30.5, cHi: 50.4, iLo: 301, iHi: 500, category: .hazardous),
        ])

    /// Sulphur dioxide, 1-hour, ppb truncated to 1 (2024). The TAD takes AQI 200 and above from the 24-hour
    /// average, which this module does not carry; the upper 1-hour rows are kept as domain.md lists them.
    public static let so2OneHour2024 = BreakpointTable(
        id: "so2-1h-2024", pollutant: .so2, averaging: .oneHour, decimalPlaces: 0, rows: [
            Row(cLo: 0, cHi: 35, iLo: 0, iHi: 50, category: .good),
            Row(cLo: 36, cHi: 75, iLo: 51, iHi: 100, category: .moderate),
            Row(cLo: 76, cHi: 185, iLo: 101, iHi: 150, category: .usg),
            Row(cLo: 186, cHi: 304, iLo: 151, iHi: 200, category: .unhealthy),
            Row(cLo: 305, cHi: 604, iLo: 201, iHi: 300, category: .veryUnhealthy),
            Row(cLo: 605, cHi: 1004, iLo: 301, iHi: 500, category: .hazardous),
        ])

    /// Nitrogen dioxide, 1-hour, ppb truncated to 1 (2024).
    public static let no2OneHour2024 = BreakpointTable(
        id: "no2-1h-2024", pollutant: .no2, averaging: .oneHour, decimalPlaces: 0, rows: [
            Row(cLo: 0, cHi: 53, iLo: 0, iHi: 50, category: .good),
            Row(cLo: 54, cHi: 100, iLo: 51, iHi: 100, category: .moderate),
            Row(cLo: 101, cHi: 360, iLo: 101, iHi: 150, category: .usg),
            Row(cLo: 361, cHi: 649, iLo: 151, iHi: 200, category: .unhealthy),
            Row(cLo: 650, cHi: 1249, iLo: 201, iHi: 300, category: .veryUnhealthy),
            Row(cLo: 1250, cHi: 2049, iLo: 301, iHi: 500, category: .hazardous),
        ])

    /// PM2.5, 24-hour, µg/m³ truncated to 0.1, as used before the 2012 revision, with the split Hazardous
    /// rows. Kept so that real daily AQI values of that period (EPA AirData, Durham NC, 2011) reproduce
    /// exactly (domain.md section 9); not for current data.
    public static let pm25DailyPre2012 = BreakpointTable(
        id: "pm2.5-24h-pre2012", pollutant: .pm25, averaging: .twentyFourHour, decimalPlaces: 1, rows: [
            Row(cLo: 0.0, cHi: 15.4, iLo: 0, iHi: 50, category: .good),
            Row(cLo: 15.5, cHi: 40.4, iLo: 51, iHi: 100, category: .moderate),
            Row(cLo: 40.5, cHi: 65.4, iLo: 101, iHi: 150, category: .usg),
            Row(cLo: 65.5, cHi: 150.4, iLo: 151, iHi: 200, category: .unhealthy),
            Row(cLo: 150.5, cHi: 250.4, iLo: 201, iHi: 300, category: .veryUnhealthy),
            Row(cLo: 250.5, cHi: 350.4, iLo: 301, iHi: 400, category: .hazardous),
            Row(cLo: 350.5, cHi: 500.4, iLo: 401, iHi: 500, category: .hazardous),
        ])

    /// Every 2024 table.
    public static let all2024: [BreakpointTable] = [
        .pm25Daily2024, .pm10Daily2024, .ozone8Hour2024, .ozone1Hour2024, .co8Hour2024, .so2OneHour2024,
        .no2OneHour2024,
    ]

    /// The default 2024 table for a pollutant: the 24-hour table for PM, the 8-hour one for ozone and CO,
    /// the 1-hour one for SO₂ and NO₂.
    public static func current(for pollutant: Pollutant) -> BreakpointTable {
        switch pollutant {
        case .pm25: return .pm25Daily2024
        case .pm10: return .pm10Daily2024
        case .o3: return .ozone8Hour2024
        case .co: return .co8Hour2024
        case .so2: return .so2OneHour2024
        case .no2: return .no2OneHour2024
        }
    }
}
