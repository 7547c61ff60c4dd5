/// UTC date-time text for display, without Foundation: `2026-11-29T13:25:39.123Z`.
public enum ISOTime {
    /// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar
    /// (Howard Hinnant's `civil_from_days`).
    public static func civil(days: Int64) -> (year: Int64, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? y + 1 : y, Int(m), Int(d))
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`), the inverse
    /// of `civil(days:)`. The caller validates the date.
    public static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        return era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468
    }

    /// Formats milliseconds since the epoch as ISO 8601 UTC with milliseconds.
    public static func format(millis: Int64) -> String {
        let secs = millis >= 0 ? millis / 1000 : (millis - 999) / 1000
        let ms = millis - secs * 1000
        let days = secs >= 0 ? secs / 86400 : (secs - 86399) / 86400
        let rem = secs - days * 86400
        let (y, m, d) = civil(days: days)
        func p(_ v: Int64, _ w: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, w - s.count)) + s
        }
        return "\(p(y, 4))-\(p(Int64(m), 2))-\(p(Int64(d), 2))T\(p(rem / 3600, 2)):\(p(rem % 3600 / 60, 2)):\(p(rem % 60, 2)).\(p(ms, 3))Z"
    }
}
