import BreezeCore
import BreezeImport
import BreezeStore

/// A point of the log named on the command line: a local sequence number (`120`), an HLC timestamp
/// (`1700000000123.4`, as `breeze log` prints it) or an ISO 8601 time (`2023-10-26T18:00:00Z`, `2023-10-26`).
enum LogPoint: Equatable {
    case seq(Int64)
    case hlc(HLC)
    /// Milliseconds since the epoch, compared with the physical part of each event's HLC.
    case time(Int64)

    static let expected = "expected a sequence number (e.g. 120), an HLC timestamp (e.g. 1700000000123.4) "
        + "or an ISO 8601 time (e.g. 2023-10-26T18:00:00Z)"

    /// Parses `text` given to `--option`; the error names both.
    init(_ text: String, option: String) throws(CLIError) {
        let t = text.trimmingSpaces
        if !t.isEmpty, t.allSatisfy(\.isASCIIDigit) {
            guard let n = Int64(t) else { throw .failure("--\(option) '\(text)': sequence number out of range") }
            self = .seq(n)
            return
        }
        let parts = t.split(separator: ".", omittingEmptySubsequences: false)
        if parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCIIDigit) }) {
            guard let ms = UInt64(parts[0]), ms < 1 << 48, let logical = UInt16(parts[1]) else {
                throw .failure("--\(option) '\(text)': HLC out of range (milliseconds below 2^48, logical part 0-65535)")
            }
            self = .hlc(HLC(physicalMillis: ms, logical: logical))
            return
        }
        if t.contains("-"), let seconds = DateParsing.isoDateTime(t) {
            self = .time(seconds * 1000 + LogPoint.fractionMillis(t))
            return
        }
        throw .failure("--\(option) '\(text)': \(LogPoint.expected)")
    }

    /// The milliseconds of a time's fractional seconds (`...:00.250Z` is 250), which `isoDateTime` drops.
    private static func fractionMillis(_ t: String) -> Int64 {
        guard let colon = t.lastIndex(of: ":"), let dot = t[colon...].firstIndex(of: ".") else { return 0 }
        let digits = t[t.index(after: dot)...].prefix { $0.isASCIIDigit }
        let ms = (digits + "000").prefix(3)
        return Int64(ms) ?? 0
    }

    /// True when `entry` is at or after this point.
    func notAfter(_ entry: EventLog.Entry) -> Bool {
        switch self {
        case .seq(let n): return n <= entry.seq
        case .hlc(let h): return h <= entry.event.hlc
        case .time(let ms): return ms <= Int64(entry.event.hlc.physicalMillis)
        }
    }

    /// True when `entry` is at or before this point.
    func notBefore(_ entry: EventLog.Entry) -> Bool {
        switch self {
        case .seq(let n): return n >= entry.seq
        case .hlc(let h): return h >= entry.event.hlc
        case .time(let ms): return ms >= Int64(entry.event.hlc.physicalMillis)
        }
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}

/// The event filters shared by `breeze log` and `breeze export`: stream, types, origin replica and a range
/// (`--since` and `--until`, both inclusive).
struct LogFilter {
    var stream: StreamID?
    var types: Set<String> = []
    /// Replicas (every epoch) and origins (one epoch).
    var replicas: Set<ReplicaID> = []
    var origins: Set<Origin> = []
    var since: LogPoint?
    var until: LogPoint?

    /// The options each command accepts for filtering.
    static let valued: Set<String> = ["stream", "origin", "since", "until"]
    static let multi: Set<String> = ["type"]

    /// Reads the filter options of `a`; bad values fail with the option, the value and what was expected.
    init(_ a: Arguments) throws(CLIError) {
        if let s = a.options["stream"] {
            do { stream = try StreamID(parsing: s) } catch { throw .failure("--stream '\(s)': \(error.description)") }
        }
        for t in (a.repeated["type"] ?? []).flatMap({ $0.split(separator: ",", omittingEmptySubsequences: false) }) {
            let name = String(t).trimmingSpaces
            guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "_" || $0 == "-") }) else {
                throw .failure("--type '\(t)': expected an event type name such as favourite.add or reading")
            }
            types.insert(name)
        }
        if let o = a.options["origin"] {
            for part in o.split(separator: ",", omittingEmptySubsequences: false).map({ String($0).trimmingSpaces }) {
                if let r = ReplicaID(hex: part.lowercased()) { replicas.insert(r) }
                else if let origin = Origin(part.lowercased()) { origins.insert(origin) }
                else {
                    throw .failure("--origin '\(part)': expected a replica id of 16 hex digits (as `breeze log` prints before the '.'), "
                                   + "optionally with its epoch (REPLICA.EPOCH)")
                }
            }
        }
        if let s = a.options["since"] { since = try LogPoint(s, option: "since") }
        if let u = a.options["until"] { until = try LogPoint(u, option: "until") }
        if case .seq(let s)? = since, case .seq(let u)? = until, s > u {
            throw .failure("--since \(s) is after --until \(u): no event can match")
        }
    }

    /// Types given that this build does not know (they may still be in the log, written by a newer build).
    var unknownTypes: [String] { types.filter { EventBody.knownTypes[$0] == nil }.sorted() }

    /// Where to start reading: just before `--since SEQ`, else the beginning.
    var startAfterSeq: Int64 {
        if case .seq(let n)? = since { return max(0, n - 1) }
        return 0
    }

    /// True once no later row can match (`--until SEQ` passed); time bounds cannot stop a scan, because
    /// events from peers arrive with older timestamps.
    func isPastEnd(_ seq: Int64) -> Bool {
        if case .seq(let n)? = until { return seq > n }
        return false
    }

    func matches(_ entry: EventLog.Entry) -> Bool {
        let e = entry.event
        if let stream, e.stream != stream { return false }
        if !types.isEmpty && !types.contains(e.type) { return false }
        if !replicas.isEmpty || !origins.isEmpty {
            guard replicas.contains(e.id.origin.replica) || origins.contains(e.id.origin) else { return false }
        }
        if let since, !since.notAfter(entry) { return false }
        if let until, !until.notBefore(entry) { return false }
        return true
    }
}
