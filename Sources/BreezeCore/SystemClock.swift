import Glibc

/// The operating system's clocks and boot identity, in one place for every module: the wall clock (stamps,
/// certificates), the monotonic clock (timeouts, rates, measurements) and the boot id. Nothing reads them
/// directly where a test must replace them: the log takes them as parameters (`EventLog.Options`), the sync
/// session as closures (`SyncSession.Config.wallClock`, `monotonicClock`).
public enum SystemClock {
    /// Milliseconds since the Unix epoch (CLOCK_REALTIME).
    @Sendable public static func nowMillis() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(ts.tv_sec) * 1000 + UInt64(ts.tv_nsec) / 1_000_000
    }

    /// Nanoseconds of CLOCK_MONOTONIC: never goes back, stops nowhere, unrelated to the date.
    @Sendable public static func monotonicNanos() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// CLOCK_MONOTONIC in milliseconds.
    @Sendable public static func monotonicMillis() -> UInt64 { monotonicNanos() / 1_000_000 }

    /// CLOCK_MONOTONIC in seconds, for measuring how long something took.
    public static func monotonicSeconds() -> Double { Double(monotonicNanos()) / 1e9 }

    /// The wall clock shifted by `offsetMillis` (negative: behind), never below the epoch. A testing aid for
    /// clock-skew tests (`BREEZE_CLOCK_OFFSET_MS`); production uses offset 0.
    public static func nowMillis(offsetMillis: Int64) -> UInt64 {
        let now = Int64(nowMillis())
        return UInt64(max(0, now + offsetMillis))
    }

    /// Parses a clock offset in milliseconds (`BREEZE_CLOCK_OFFSET_MS`): an integer, at most 10 years either
    /// way. Returns nil for anything else.
    public static func parseOffset(_ text: String) -> Int64? {
        guard let v = Int64(text), abs(v) <= 10 * 366 * 86_400_000 else { return nil }
        return v
    }

    /// This boot of the kernel (`/proc/sys/kernel/random/boot_id`), or nil if unreadable. A change of boot
    /// id tells the log that writes not yet synced to disk before the reboot may be gone.
    public static func bootID() -> String? {
        guard let f = fopen("/proc/sys/kernel/random/boot_id", "r") else { return nil }
        defer { fclose(f) }
        var buf = [CChar](repeating: 0, count: 64)
        guard fgets(&buf, 64, f) != nil else { return nil }
        let s = String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            .trimmingCharacters(in: "\n")
        return s.isEmpty ? nil : s
    }
}

extension String {
    func trimmingCharacters(in set: Character) -> String {
        var s = Substring(self)
        while s.last == set { s = s.dropLast() }
        return String(s)
    }
}
