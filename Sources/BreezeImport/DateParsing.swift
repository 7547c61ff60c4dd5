import BreezeCore

/// Dates and times as the data files write them, to Unix seconds (UTC) or `YYYY-MM-DD`, without Foundation.
public enum DateParsing {
    /// Days since 1970-01-01 of a proleptic Gregorian date (`ISOTime.days`).
    public static func days(year: Int, month: Int, day: Int) -> Int64 {
        ISOTime.days(year: Int64(year), month: Int64(month), day: Int64(day))
    }

    /// The decimal number in `b[from ..< from + count]`, nil unless every byte is an ASCII digit (no sign, no
    /// space): the fixed-width fields of dates and times.
    static func digits(_ b: UnsafeBufferPointer<UInt8>, _ from: Int, _ count: Int) -> Int? {
        var v = 0
        for i in from..<(from + count) {
            let d = Int(b[i]) - 0x30
            guard d >= 0 && d <= 9 else { return nil }
            v = v * 10 + d
        }
        return v
    }

    static func isValid(year: Int, month: Int, day: Int) -> Bool {
        guard year >= 1 && year <= 9999, month >= 1 && month <= 12 && day >= 1 else { return false }
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        let lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        return day <= lengths[month - 1]
    }

    /// Parses a date: `YYYY-MM-DD`, `YYYY/MM/DD` or `M/D/YYYY`. Returns (year, month, day).
    public static func date(_ s: String) -> (year: Int, month: Int, day: Int)? {
        let t = s.trimmingSpaces
        let sep: Character = t.utf8.contains(0x2D) ? "-" : "/"   // (bytes: Foundation's String.contains is slow)
        let texts = t.split(separator: sep, omittingEmptySubsequences: false)
        let parts = texts.map { $0.count <= 9 ? Int($0) : nil }
        guard parts.count == 3, let a = parts[0], let b = parts[1], let c = parts[2] else { return nil }
        // Year first (YYYY-MM-DD, YYYY/MM/DD) or last (M/D/YYYY); a two-digit year is ambiguous and refused.
        let yearFirst = texts[0].count == 4
        guard yearFirst || texts[2].count == 4 else { return nil }
        let (y, m, d) = yearFirst ? (a, b, c) : (c, a, b)
        return isValid(year: y, month: m, day: d) ? (y, m, d) : nil
    }

    /// `YYYY-MM-DD` text of a date.
    public static func isoDate(_ d: (year: Int, month: Int, day: Int)) -> String {
        func p(_ v: Int, _ w: Int) -> String { let s = String(v); return String(repeating: "0", count: max(0, w - s.count)) + s }
        return "\(p(d.year, 4))-\(p(d.month, 2))-\(p(d.day, 2))"
    }

    /// Parses a time of day `H:MM` or `HH:MM:SS` into seconds.
    public static func timeOfDay(_ s: String) -> Int64? {
        let parts = s.trimmingSpaces.split(separator: ":").map { Int($0) }
        guard parts.count == 2 || parts.count == 3, parts.allSatisfy({ $0 != nil }) else { return nil }
        let h = parts[0]!, m = parts[1]!, sec = parts.count == 3 ? parts[2]! : 0
        guard h >= 0 && h < 24 && m >= 0 && m < 60 && sec >= 0 && sec < 61 else { return nil }
        return Int64(h * 3600 + m * 60 + sec)
    }

    /// Parses an ISO 8601 date-time: `YYYY-MM-DDTHH:MM[:SS[.fff]][Z|±HH:MM]` (a space may replace `T`), or a
    /// date alone (midnight). Without an offset the time is taken as UTC plus `defaultOffsetSeconds`
    /// (local time = UTC + offset). Returns Unix seconds.
    public static func isoDateTime(_ s: String, defaultOffsetSeconds: Int = 0) -> Int64? {
        var t = s.trimmingSpaces
        guard t.count >= 10 else { return nil }
        let datePart = String(t.prefix(10))
        guard let d = date(datePart), datePart.utf8.contains(0x2D) else { return nil }
        t = String(t.dropFirst(10))
        var offset = Int64(defaultOffsetSeconds)
        var seconds: Int64 = 0
        if !t.isEmpty {
            guard t.first == "T" || t.first == " " else { return nil }
            t = String(t.dropFirst())
            if t.hasSuffix("Z") { t = String(t.dropLast()); offset = 0 }
            else if let sign = t.lastIndex(where: { $0 == "+" || $0 == "-" }) {
                let text = String(t[t.index(after: sign)...])
                // ±HH:MM, ±HHMM or ±HH, at most 18 hours (ISO 8601 and RFC 3339 forms).
                let digits = text.filter { $0 != ":" }
                guard digits.count == 2 || digits.count == 4, digits.allSatisfy({ $0.isASCII && $0.isNumber }),   // "١٢" is a number but not Int's
                      text.count == digits.count || (text.count == 5 && text.dropFirst(2).first == ":") else { return nil }
                let hh = Int(digits.prefix(2))!, mm = digits.count == 4 ? Int(digits.suffix(2))! : 0
                guard hh <= 18, mm < 60 else { return nil }
                offset = Int64((hh * 3600 + mm * 60) * (t[sign] == "-" ? -1 : 1))
                t = String(t[..<sign])
            }
            if let dot = t.firstIndex(of: ".") { t = String(t[..<dot]) }
            guard let tod = timeOfDay(t) else { return nil }
            seconds = tod
        }
        return days(year: d.year, month: d.month, day: d.day) * 86400 + seconds - offset
    }
}
