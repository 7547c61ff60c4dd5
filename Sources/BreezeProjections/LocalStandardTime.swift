import BreezeCore

/// A sensor's local standard time: its time zone's standard offset from UTC, without daylight saving.
///
/// Daily air-quality values are computed midnight to midnight in local standard time (LST), all year round
/// (`shared/docs/domain.md` sections 1.3, 8 "Days" and 9): in New York a day runs 05:00 UTC to 05:00 UTC
/// also in summer, so the hour 04:00-05:00 UTC belongs to the previous day even while clocks show 00:00 EDT.
///
/// Breeze has no time-zone database (no Foundation `TimeZone` in the projections, which must be pure and
/// give the same answer on every platform), so the standard offsets of the zones that occur in the project's
/// data are kept in a small table. A zone that is not in the table, or a sensor with no zone, falls back to
/// UTC (offset 0); `isKnown` says so, and the screens show the zone they used.
public struct LocalStandardTime: Hashable, Sendable {
    /// The zone the offset came from: the sensor's IANA name, or `UTC` when it has none.
    public let zone: String
    /// Seconds to add to UTC to get local standard time (e.g. -18000 for America/New_York).
    public let offsetSeconds: Int64
    /// False when the zone was missing or not in `standardOffsetHours`, so UTC was used.
    public let isKnown: Bool

    /// Standard (winter) offsets in hours of the zones in the project's data; `Etc/UTC` is an alias of UTC.
    public static let standardOffsetHours: [String: Int64] = [
        "America/New_York": -5, "America/Chicago": -6, "America/Denver": -7, "America/Los_Angeles": -8,
        "Europe/Berlin": 1, "UTC": 0, "Etc/UTC": 0,
    ]

    /// The local standard time of a zone name; nil or unknown names fall back to UTC.
    public init(timeZone: String?) {
        if let name = timeZone, let hours = Self.standardOffsetHours[name] {
            zone = name
            offsetSeconds = hours * 3600
            isKnown = true
        } else {
            zone = timeZone ?? "UTC"
            offsetSeconds = 0
            isKnown = false
        }
    }

    /// The offset as text, e.g. `-05:00` or `+01:00`.
    public var offsetText: String {
        let m = abs(offsetSeconds) / 60
        return (offsetSeconds < 0 ? "-" : "+") + Self.pad(m / 60, 2) + ":" + Self.pad(m % 60, 2)
    }

    /// The LST day number (days since 1970-01-01 in local standard time) that the instant `t` falls in.
    public func day(of t: Int64) -> Int64 { Self.floorDiv(t + offsetSeconds, 86_400) }

    /// The UTC instant (Unix seconds) at which LST day `day` begins (local midnight).
    public func start(ofDay day: Int64) -> Int64 { day * 86_400 - offsetSeconds }

    /// The hour of the LST day (0-23) the instant `t` falls in.
    public func localHour(of t: Int64) -> Int { Int(Self.floorDiv(Self.floorMod(t + offsetSeconds, 86_400), 3600)) }

    /// `YYYY-MM-DD` of a day number.
    public static func date(ofDay day: Int64) -> String {
        let (y, m, d) = ISOTime.civil(days: day)
        return pad(y, 4) + "-" + pad(Int64(m), 2) + "-" + pad(Int64(d), 2)
    }

    /// The English three-letter weekday of a day number (`Mon` ... `Sun`); 1970-01-01 was a Thursday.
    public static func weekday(ofDay day: Int64) -> String {
        ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][Int(floorMod(day, 7))]
    }

    /// An instant as ISO 8601 UTC to the second, e.g. `2023-10-27T04:00:00Z` (the form `--now` accepts).
    public static func iso(_ t: Int64) -> String {
        let day = floorDiv(t, 86_400), rem = floorMod(t, 86_400)
        return date(ofDay: day) + "T" + pad(rem / 3600, 2) + ":" + pad(rem % 3600 / 60, 2) + ":" + pad(rem % 60, 2) + "Z"
    }

    /// The start of the UTC hour containing `t`.
    public static func hourStart(_ t: Int64) -> Int64 { t - floorMod(t, 3600) }

    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 { (a - floorMod(a, b)) / b }
    static func floorMod(_ a: Int64, _ b: Int64) -> Int64 { ((a % b) + b) % b }
    static func pad(_ v: Int64, _ width: Int) -> String {
        let s = String(v)
        return String(repeating: "0", count: max(0, width - s.count)) + s
    }
}
