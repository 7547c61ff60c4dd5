/// The daily 24-hour average for PM2.5 and PM10: the midnight-to-midnight mean in Local Standard Time, valid
/// with at least 18 of the 24 hours (`shared/docs/domain.md` section 1.3;
/// https://forum.airnowtech.org/t/daily-and-hourly-aqi-pm2-5/171).
public enum DailyAverage {
    /// Hours a day must have for its average to count.
    public static let minimumHours = 18

    /// The mean of the day's valid hours.
    ///
    /// - Parameter hourly: the day's hourly averages in any order, at most 24; nil (or NaN) is missing.
    /// - Returns: nil with fewer than 18 valid hours, or more than 24 values.
    public static func mean(hourly: [Double?]) -> Double? {
        guard hourly.count <= 24 else { return nil }
        let valid = hourly.compactMap { $0 }.filter { $0.isFinite }
        guard valid.count >= minimumHours else { return nil }
        return valid.reduce(0, +) / Double(valid.count)
    }

    /// The daily AQI: the mean truncated to the table's precision, then the AQI equation.
    public static func aqi(hourly: [Double?], table: BreakpointTable = .pm25Daily2024) -> AQIResult? {
        mean(hourly: hourly).flatMap { table.aqi(concentration: $0) }
    }
}
