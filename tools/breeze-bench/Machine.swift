import BreezeCLI
import BreezeStore
import Foundation

/// What a benchmark report says about the machine it ran on: CPU model, cores, memory, OS, the Swift and
/// SQLite versions, the date and the load average when it started.
struct Machine {
    var cpu = "unknown", cores = 0, memoryGiB = 0.0, os = "unknown", kernel = "", swift = "unknown"
    var sqlite = RawBaseline.sqliteVersion
    var date = ""
    var loadAverage: Double?

    static func describe(loadAverage: Bool) -> Machine {
        var m = Machine()
        let cpuinfo = read("/proc/cpuinfo")
        if let line = cpuinfo.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
           let colon = line.firstIndex(of: ":") {
            m.cpu = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        m.cores = sysconf(Int32(_SC_NPROCESSORS_ONLN))
        if let line = read("/proc/meminfo").split(separator: "\n").first(where: { $0.hasPrefix("MemTotal:") }),
           let kb = line.split(separator: " ").compactMap({ Double($0) }).first {
            m.memoryGiB = kb / 1024 / 1024
        }
        if let line = read("/etc/os-release").split(separator: "\n").first(where: { $0.hasPrefix("PRETTY_NAME=") }) {
            m.os = String(line.dropFirst("PRETTY_NAME=".count)).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
        m.kernel = read("/proc/sys/kernel/osrelease").trimmingCharacters(in: .whitespacesAndNewlines)
        if let swift = BenchAll.findExecutable("swift"),
           let p = try? Subprocess(executable: swift, args: ["--version"], stderrPath: "/dev/null") {
            let (lines, status) = p.wait()
            if status == 0, let first = lines.first(where: { $0.contains("Swift version") }) {
                m.swift = first.trimmingCharacters(in: .whitespaces)
            }
        }
        var t = time(nil)
        var tm = tm()
        gmtime_r(&t, &tm)
        var buf = [UInt8](repeating: 0, count: 64)
        let n = buf.withUnsafeMutableBufferPointer { b in
            b.baseAddress!.withMemoryRebound(to: CChar.self, capacity: 64) { strftime($0, 64, "%Y-%m-%d %H:%M UTC", &tm) }
        }
        m.date = String(decoding: buf[..<n], as: UTF8.self)
        if loadAverage, let first = read("/proc/loadavg").split(separator: " ").first { m.loadAverage = Double(first) }
        return m
    }

    static func read(_ path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }
}

extension Machine {
    /// Online cores.
    static var cores: Int { sysconf(Int32(_SC_NPROCESSORS_ONLN)) }

    /// The load averages of the last 1, 5 and 15 minutes, as /proc/loadavg gives them.
    static func loadAverage() -> String {
        read("/proc/loadavg").split(separator: " ").prefix(3).joined(separator: " ")
    }
}
