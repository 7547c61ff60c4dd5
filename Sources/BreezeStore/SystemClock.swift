import Glibc

/// Wall-clock time and boot identity from the operating system. The log takes both as parameters
/// (`EventLog.Options`) so tests and fault injection can replace them.
public enum SystemClock {
    /// Milliseconds since the Unix epoch (CLOCK_REALTIME).
    public static func nowMillis() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(ts.tv_sec) * 1000 + UInt64(ts.tv_nsec) / 1_000_000
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
