/// The rules of one IANA time zone, read from its TZif file (RFC 8536, as Debian's `tzdata` installs them
/// under `/usr/share/zoneinfo`): the UTC offset, daylight saving and abbreviation in force at any instant.
///
/// Instants covered by the file's transitions take the type of the last transition at or before them (the
/// first type before the first transition, RFC 8536 section 3.2); instants after the last transition follow
/// the file's footer, a POSIX TZ string such as `EST5EDT,M3.2.0,M11.1.0` (section 3.3), so a "slim" file,
/// which stops listing transitions once the rule repeats, gives every later year as well. Pure: parsing
/// takes bytes, so the same file gives the same answers on every platform.
public struct ZoneRules: Sendable, Equatable {
    /// One local time type.
    public struct LocalType: Sendable, Equatable {
        /// Seconds to add to UTC.
        public var utcOffset: Int64
        /// True during daylight saving.
        public var isDST: Bool
        /// E.g. `EST`, `CEST`, `+0330`.
        public var abbreviation: String
    }

    /// Transition instants (Unix seconds), ascending, and the type each one starts.
    let transitions: [Int64]
    let typeIndices: [Int]
    let types: [LocalType]
    /// The footer rule, nil when the file has none (then the last type lasts for ever).
    let footer: PosixRule?

    /// Why a TZif file could not be read.
    public struct FormatError: Error, Sendable, CustomStringConvertible {
        /// What is wrong, for a person.
        public let description: String
        init(_ d: String) { description = d }
    }

    /// Parses a TZif file (version 1, 2, 3 or 4; the 64-bit data of version 2 and later is used).
    public init(tzif bytes: [UInt8]) throws(FormatError) {
        var r = Reader(bytes: bytes)
        var header = try Header(&r)
        var timeSize = 4
        if header.version >= 2 {
            // Skip the version 1 block, read the second header and its 64-bit data.
            try r.skip(header.v1DataSize)
            header = try Header(&r)
            timeSize = 8
        }
        var times: [Int64] = []
        times.reserveCapacity(header.timecnt)
        for _ in 0..<header.timecnt { times.append(timeSize == 8 ? try r.int64() : Int64(try r.int32())) }
        var indices: [Int] = []
        for _ in 0..<header.timecnt {
            let i = Int(try r.byte())
            guard i < header.typecnt else { throw FormatError("transition type \(i) of \(header.typecnt) types") }
            indices.append(i)
        }
        var raw: [(Int64, Bool, Int)] = []
        for _ in 0..<header.typecnt {
            let off = Int64(try r.int32()), dst = try r.byte() != 0, idx = Int(try r.byte())
            raw.append((off, dst, idx))
        }
        let chars = try r.take(header.charcnt)
        try r.skip(header.leapcnt * (timeSize + 4) + header.isstdcnt + header.isutcnt)
        types = raw.map { off, dst, idx in
            var end = idx
            while end < chars.count && chars[end] != 0 { end += 1 }
            let name = idx < chars.count ? String(decoding: chars[idx..<end], as: UTF8.self) : ""
            return LocalType(utcOffset: off, isDST: dst, abbreviation: name)
        }
        guard !types.isEmpty else { throw FormatError("no local time types") }
        for k in times.indices.dropFirst() where times[k] <= times[k - 1] { throw FormatError("transitions out of order") }
        transitions = times
        typeIndices = indices
        if header.version >= 2, r.remaining > 1, try r.byte() == 0x0A {
            var text: [UInt8] = []
            while r.remaining > 0 {
                let b = try r.byte()
                if b == 0x0A { break }
                text.append(b)
            }
            footer = text.isEmpty ? nil : try PosixRule(String(decoding: text, as: UTF8.self))
        } else {
            footer = nil
        }
    }

    /// A zone that is always `offset` seconds from UTC (UTC itself with 0).
    public init(fixed offset: Int64, abbreviation: String) {
        transitions = []
        typeIndices = []
        types = [LocalType(utcOffset: offset, isDST: false, abbreviation: abbreviation)]
        footer = nil
    }

    /// The local time type in force at instant `t` (Unix seconds).
    public func type(at t: Int64) -> LocalType {
        guard let last = transitions.last else { return footer?.type(at: t) ?? types[0] }
        if t >= last, let footer { return footer.type(at: t) }
        if t < transitions[0] { return types[0] }
        // The last transition at or before t.
        var lo = 0, hi = transitions.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if transitions[mid] <= t { lo = mid } else { hi = mid - 1 }
        }
        return types[typeIndices[lo]]
    }

    /// Seconds to add to UTC at instant `t`.
    public func utcOffset(at t: Int64) -> Int64 { type(at: t).utcOffset }

    // MARK: TZif reading

    struct Header {
        var version: Int
        var isutcnt = 0, isstdcnt = 0, leapcnt = 0, timecnt = 0, typecnt = 0, charcnt = 0
        init(_ r: inout Reader) throws(FormatError) {
            guard try r.take(4) == Array("TZif".utf8) else { throw FormatError("not a TZif file (no 'TZif' magic)") }
            let v = try r.byte()
            version = v == 0 ? 1 : Int(v) - 0x30
            guard (1...4).contains(version) else { throw FormatError("unknown TZif version byte \(v)") }
            try r.skip(15)
            isutcnt = Int(try r.int32()); isstdcnt = Int(try r.int32()); leapcnt = Int(try r.int32())
            timecnt = Int(try r.int32()); typecnt = Int(try r.int32()); charcnt = Int(try r.int32())
            for n in [isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt] where n < 0 || n > 1_000_000 {
                throw FormatError("implausible count \(n)")
            }
            guard typecnt > 0 else { throw FormatError("no local time types") }
        }
        /// The size of a version 1 data block.
        var v1DataSize: Int { timecnt * 5 + typecnt * 6 + charcnt + leapcnt * 8 + isstdcnt + isutcnt }
    }

    struct Reader {
        let bytes: [UInt8]
        var at = 0
        var remaining: Int { bytes.count - at }
        mutating func take(_ n: Int) throws(FormatError) -> [UInt8] {
            guard n >= 0, n <= remaining else { throw FormatError("truncated TZif file") }
            defer { at += n }
            return Array(bytes[at..<(at + n)])
        }
        mutating func skip(_ n: Int) throws(FormatError) {
            guard n >= 0, n <= remaining else { throw FormatError("truncated TZif file") }
            at += n
        }
        mutating func byte() throws(FormatError) -> UInt8 {
            guard remaining >= 1 else { throw FormatError("truncated TZif file") }
            defer { at += 1 }
            return bytes[at]
        }
        mutating func int32() throws(FormatError) -> Int32 {
            var v: UInt32 = 0
            for _ in 0..<4 { v = v << 8 | UInt32(try byte()) }
            return Int32(bitPattern: v)
        }
        mutating func int64() throws(FormatError) -> Int64 {
            var v: UInt64 = 0
            for _ in 0..<8 { v = v << 8 | UInt64(try byte()) }
            return Int64(bitPattern: v)
        }
    }
}

/// A POSIX TZ rule string (the TZif footer): `std offset [dst [offset] [,start[/time],end[/time]]]`, with
/// RFC 8536's extensions (quoted names `<+0330>`, times from -167 to 167 hours). Offsets in the string are
/// west-positive (`EST5` is UTC-5); `utcOffset` values here are east-positive, as everywhere else.
struct PosixRule: Sendable, Equatable {
    var standard: ZoneRules.LocalType
    var daylight: ZoneRules.LocalType?
    var start: DateRule = .julianZero(0), startTime: Int64 = 7200
    var end: DateRule = .julianZero(0), endTime: Int64 = 7200

    enum DateRule: Sendable, Equatable {
        /// `Jn`: day 1...365, February 29 never counted.
        case julian(Int)
        /// `n`: day 0...365, February 29 counted in leap years.
        case julianZero(Int)
        /// `Mm.w.d`: weekday d (0 Sunday) of week w (5: the last) of month m.
        case month(Int, Int, Int)
    }

    init(_ text: String) throws(ZoneRules.FormatError) {
        var s = Substring(text).unicodeScalars[...]
        func fail(_ why: String) -> ZoneRules.FormatError { ZoneRules.FormatError("TZ rule '\(text)': \(why)") }
        func name() throws(ZoneRules.FormatError) -> String {
            if s.first == "<" {
                guard let close = s.firstIndex(of: ">") else { throw fail("unclosed '<'") }
                let n = String(String.UnicodeScalarView(s[s.index(after: s.startIndex)..<close]))
                s = s[s.index(after: close)...]
                return n
            }
            let n = s.prefix { ($0 >= "A" && $0 <= "Z") || ($0 >= "a" && $0 <= "z") }
            guard n.count >= 3 else { throw fail("a zone name needs 3 letters") }
            s = s.dropFirst(n.count)
            return String(String.UnicodeScalarView(n))
        }
        func number() throws(ZoneRules.FormatError) -> Int64 {
            let digits = s.prefix { $0 >= "0" && $0 <= "9" }
            guard !digits.isEmpty, digits.count <= 3 else { throw fail("expected a number") }
            s = s.dropFirst(digits.count)
            return digits.reduce(0) { $0 * 10 + Int64($1.value - 0x30) }
        }
        /// `[+-]hh[:mm[:ss]]` in seconds.
        func time() throws(ZoneRules.FormatError) -> Int64 {
            var sign: Int64 = 1
            if s.first == "-" { sign = -1; s = s.dropFirst() } else if s.first == "+" { s = s.dropFirst() }
            var v = try number() * 3600
            guard v <= 167 * 3600 else { throw fail("hours above 167") }
            if s.first == ":" { s = s.dropFirst(); v += try number() * 60 }
            if s.first == ":" { s = s.dropFirst(); v += try number() }
            return sign * v
        }
        func date() throws(ZoneRules.FormatError) -> (DateRule, Int64) {
            let rule: DateRule
            if s.first == "M" {
                s = s.dropFirst()
                let m = try number()
                guard s.first == "." else { throw fail("expected '.' in Mm.w.d") }
                s = s.dropFirst()
                let w = try number()
                guard s.first == "." else { throw fail("expected '.' in Mm.w.d") }
                s = s.dropFirst()
                let d = try number()
                guard (1...12).contains(m), (1...5).contains(w), (0...6).contains(d) else { throw fail("Mm.w.d out of range") }
                rule = .month(Int(m), Int(w), Int(d))
            } else if s.first == "J" {
                s = s.dropFirst()
                let n = try number()
                guard (1...365).contains(n) else { throw fail("Jn out of range") }
                rule = .julian(Int(n))
            } else {
                let n = try number()
                guard (0...365).contains(n) else { throw fail("day out of range") }
                rule = .julianZero(Int(n))
            }
            var t: Int64 = 7200
            if s.first == "/" { s = s.dropFirst(); t = try time() }
            return (rule, t)
        }
        let stdName = try name()
        let stdOffset = -(try time())
        standard = ZoneRules.LocalType(utcOffset: stdOffset, isDST: false, abbreviation: stdName)
        guard !s.isEmpty else { daylight = nil; return }
        let dstName = try name()
        var dstOffset = stdOffset + 3600
        if let c = s.first, c != "," { dstOffset = -(try time()) }
        daylight = ZoneRules.LocalType(utcOffset: dstOffset, isDST: true, abbreviation: dstName)
        guard s.first == "," else {
            // No rule: POSIX leaves it to the implementation; tzcode uses the US rule.
            (start, startTime, end, endTime) = (.month(3, 2, 0), 7200, .month(11, 1, 0), 7200)
            guard s.isEmpty else { throw fail("unexpected text") }
            return
        }
        s = s.dropFirst()
        (start, startTime) = try date()
        guard s.first == "," else { throw fail("expected ',' before the end rule") }
        s = s.dropFirst()
        (end, endTime) = try date()
        guard s.isEmpty else { throw fail("unexpected text after the rules") }
    }

    /// The type in force at `t`.
    func type(at t: Int64) -> ZoneRules.LocalType {
        guard let daylight else { return standard }
        let year = ISOTime.civil(days: Self.floorDiv(t + standard.utcOffset, 86_400)).year
        // Both transitions of that year, in UTC: the start is given in standard time, the end in daylight time.
        let on = Self.day(start, year) * 86_400 + startTime - standard.utcOffset
        let off = Self.day(end, year) * 86_400 + endTime - daylight.utcOffset
        let inDST = on < off ? (t >= on && t < off) : (t < off || t >= on)
        return inDST ? daylight : standard
    }

    /// The day number (days since 1970-01-01) a date rule names in `year`.
    static func day(_ rule: DateRule, _ year: Int64) -> Int64 {
        let jan1 = ISOTime.days(year: year, month: 1, day: 1)
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        switch rule {
        case .julian(let n): return jan1 + Int64(n - 1) + (leap && n >= 60 ? 1 : 0)
        case .julianZero(let n): return jan1 + Int64(n)
        case .month(let m, let w, let d):
            let first = ISOTime.days(year: year, month: Int64(m), day: 1)
            let weekday = Int(floorMod(first + 4, 7))   // 1970-01-01 was a Thursday (4); Sunday is 0
            var dom = 1 + (d - weekday + 7) % 7 + (w - 1) * 7
            let monthDays = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]
            while dom > monthDays { dom -= 7 }
            return first + Int64(dom - 1)
        }
    }

    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 { (a - floorMod(a, b)) / b }
    static func floorMod(_ a: Int64, _ b: Int64) -> Int64 { ((a % b) + b) % b }
}
