public import BreezeCore
import Foundation

/// Wall-clock time in an IANA time zone, daylight saving included: what the phone's clock and calendar say
/// where a sensor (or the user) is. Every screen that shows a local day or hour goes through it.
///
/// The rules come from the system's time-zone database (`TimeZones`, the TZif files of Debian's `tzdata`,
/// read by `ZoneRules`). A missing or unknown zone falls back to UTC, and `isKnown` says so; the models show
/// the zone they used.
public struct LocalTime: Sendable {
    /// The zone: the IANA name given, or `UTC` when none was given.
    public let zone: String
    /// False when the zone was missing or not in the database, so UTC was used.
    public let isKnown: Bool
    let rules: ZoneRules

    /// The local time of a zone name; nil or unknown names fall back to UTC.
    public init(timeZone: String?) {
        if let name = timeZone, let rules = TimeZones.rules(named: name) {
            zone = name
            self.rules = rules
            isKnown = true
        } else {
            zone = timeZone ?? "UTC"
            rules = ZoneRules(fixed: 0, abbreviation: "UTC")
            isKnown = false
        }
    }

    /// UTC itself.
    public static let utc = LocalTime(timeZone: "UTC")

    /// Seconds to add to UTC at instant `t`.
    public func offset(at t: Int64) -> Int64 { rules.utcOffset(at: t) }

    /// The offset at `t` as text, e.g. `-04:00` (EDT) or `+01:00`.
    public func offsetText(at t: Int64) -> String {
        let o = offset(at: t), m = abs(o) / 60
        return (o < 0 ? "-" : "+") + Self.pad(m / 60, 2) + ":" + Self.pad(m % 60, 2)
    }

    /// The zone's abbreviation at `t`, e.g. `EDT`.
    public func abbreviation(at t: Int64) -> String { rules.type(at: t).abbreviation }

    /// The local day number (days since 1970-01-01 on the local calendar) the instant `t` falls in.
    public func day(of t: Int64) -> Int64 { Self.floorDiv(t + offset(at: t), 86_400) }

    /// The first instant (Unix seconds) of local day `day`: local midnight, or the end of a daylight-saving
    /// gap when midnight itself does not exist that day.
    public func start(ofDay day: Int64) -> Int64 {
        // The offsets of any zone lie within +-26 h; find the first second whose local day is `day`.
        var lo = day * 86_400 - 26 * 3600, hi = day * 86_400 + 26 * 3600
        while lo < hi {
            let mid = Self.floorDiv(lo + hi, 2)
            if self.day(of: mid) >= day { hi = mid } else { lo = mid + 1 }
        }
        return lo
    }

    /// The hour of the local day (0-23) the instant `t` falls in, as the clock shows it.
    public func localHour(of t: Int64) -> Int { Int(Self.floorDiv(Self.floorMod(t + offset(at: t), 86_400), 3600)) }

    /// The local calendar day of `t`, `YYYY-MM-DD`.
    public func date(of t: Int64) -> String { Self.date(ofDay: day(of: t)) }

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

    /// An instant as ISO 8601 local time with its offset, e.g. `2023-10-27T00:00:00-04:00`.
    public func localISO(_ t: Int64) -> String {
        let local = t + offset(at: t)
        let day = Self.floorDiv(local, 86_400), rem = Self.floorMod(local, 86_400)
        return Self.date(ofDay: day) + "T" + Self.pad(rem / 3600, 2) + ":" + Self.pad(rem % 3600 / 60, 2) + ":"
            + Self.pad(rem % 60, 2) + offsetText(at: t)
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

/// The system's time-zone database: each zone's TZif file read once (from `$TZDIR`, else
/// `/usr/share/zoneinfo`, Debian's `tzdata`) and kept for the life of the process.
public enum TimeZones {
    /// Where the TZif files are.
    public static var directory: String { ProcessInfo.processInfo.environment["TZDIR"] ?? "/usr/share/zoneinfo" }

    /// The rules of an IANA zone name, nil when the name is malformed or the database has no such zone.
    /// `UTC` and `Etc/UTC` are always known.
    public static func rules(named name: String) -> ZoneRules? {
        if name == "UTC" || name == "Etc/UTC" { return ZoneRules(fixed: 0, abbreviation: "UTC") }
        // IANA names: letters, digits, '/', '_', '-', '+', each part starting with a capital (`America/New_York`,
        // `Etc/GMT+5`): that leaves out `localtime` (the host's own zone), `posixrules`, the `right/` and `posix/`
        // trees, and a lower-case spelling that only a case-insensitive file system would find.
        guard !name.isEmpty, name.utf8.count <= 64,
              name.unicodeScalars.allSatisfy({ ($0 >= "A" && $0 <= "Z") || ($0 >= "a" && $0 <= "z")
                  || ($0 >= "0" && $0 <= "9") || "/_-+".unicodeScalars.contains($0) }),
              !name.split(separator: "/", omittingEmptySubsequences: false).contains(where: { part in
                  guard let first = part.unicodeScalars.first else { return true }
                  return !(first >= "A" && first <= "Z")
              })
        else { return nil }
        cache.lock()
        defer { cache.unlock() }
        if let known = loaded[name] { return known }
        let rules = FileManager.default.contents(atPath: directory + "/" + name).flatMap { try? ZoneRules(tzif: Array($0)) }
        loaded[name] = .some(rules)
        return rules
    }

    private static let cache = NSLock()
    /// Zones read so far (nil: looked up and not found). Guarded by `cache`.
    nonisolated(unsafe) private static var loaded: [String: ZoneRules?] = [:]
}
