/// The EPA NowCast for PM2.5 and PM10: a weighted average of the last 12 hours that leans on recent hours
/// more when concentrations change fast (`shared/docs/domain.md` section 2).
///
/// Sources: EPA NowCast fact sheet (https://nepis.epa.gov/Exe/ZyPURL.cgi?Dockey=P100X0J6.txt) and
/// https://forum.airnowtech.org/t/the-nowcast-for-pm2-5-and-pm10/172.
///
/// 1. Take the last 12 hourly values, newest first, raw (neither truncated nor rounded).
/// 2. `w* = cmin / cmax` over the valid hours; `w = max(w*, 0.5)`; `w = 1` when `cmax` is 0.
/// 3. `NowCast = Σ w^(i-1)·cᵢ / Σ w^(i-1)` over the valid hours, the newest hour having `w⁰`.
/// 4. Valid only when at least 2 of the 3 newest hours have values.
///
/// Ozone's NowCast is a different, regression-based method and is not provided here.
public enum NowCast {
    /// Hours the NowCast looks back over.
    public static let hours = 12
    /// The floor of the weight factor; 0.5 approximates a 3-hour average.
    public static let minimumWeight = 0.5

    /// The NowCast concentration, not truncated, in the unit of the input.
    ///
    /// - Parameter hourlyNewestFirst: hourly averages, the current hour first; nil (or NaN) is a missing
    ///   hour. Only the first 12 are used; fewer than 12 count the absent older hours as missing.
    /// - Returns: nil when fewer than 2 of the 3 newest hours have values.
    public static func concentration(hourlyNewestFirst: [Double?]) -> Double? {
        // One pass for the checks and one for the weights, with nothing allocated: every pin of a city's map
        // computes one. Non-finite values count as missing.
        let n = min(hours, hourlyNewestFirst.count)
        var recent = 0, cmax = -Double.infinity, cmin = Double.infinity, valid = 0
        for i in 0..<n {
            guard let v = hourlyNewestFirst[i], v.isFinite else { continue }
            if i < 3 { recent += 1 }
            valid += 1
            if v > cmax { cmax = v }
            if v < cmin { cmin = v }
        }
        guard recent >= 2, valid > 0 else { return nil }
        // cmax <= 0 only for all-zero (or noise-negative) hours: no change to weigh, so w = 1.
        let w = cmax > 0 ? max(cmin / cmax, minimumWeight) : 1
        var weighted = 0.0, total = 0.0, factor = 1.0
        for i in 0..<n {
            if let c = hourlyNewestFirst[i], c.isFinite {
                weighted += factor * c
                total += factor
            }
            factor *= w
        }
        return weighted / total
    }

    /// The NowCast AQI: the concentration truncated to the table's precision, then the AQI equation.
    ///
    /// - Parameters:
    ///   - hourlyNewestFirst: as for `concentration(hourlyNewestFirst:)`.
    ///   - table: `pm25Daily2024` (the default) or `pm10Daily2024`; EPA applies the NowCast to the 24-hour
    ///     breakpoints.
    public static func aqi(hourlyNewestFirst: [Double?],
                           table: BreakpointTable = .pm25Daily2024) -> AQIResult? {
        concentration(hourlyNewestFirst: hourlyNewestFirst).flatMap { table.aqi(concentration: $0) }
    }
}
