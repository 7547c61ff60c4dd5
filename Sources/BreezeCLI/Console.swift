@preconcurrency import Glibc

/// Where a command writes: standard output and standard error in the tool, buffers in tests.
public protocol Console: AnyObject {
    /// Writes a line to standard output.
    func out(_ line: String)
    /// Writes a line to standard error.
    func err(_ line: String)
    /// True when standard error is a terminal (progress is shown only then).
    var isTerminal: Bool { get }
    /// Rewrites the current progress line on standard error (terminals only).
    func progress(_ text: String)
}

extension Console {
    /// `line` with every control character but tab and line feed (C0, DEL, C1) shown as U+FFFD: text from
    /// files and peers (a sensor's name) can carry terminal escape codes, which must never reach a terminal
    /// raw. JSON output has none to replace (JSON escapes them).
    static func printable(_ line: String) -> String {
        guard line.unicodeScalars.contains(where: isControl) else { return line }
        var out = String.UnicodeScalarView()
        for u in line.unicodeScalars { out.append(isControl(u) ? "\u{FFFD}" : u) }
        return String(out)
    }

    private static func isControl(_ u: Unicode.Scalar) -> Bool {
        (u.value < 0x20 && u.value != 0x09 && u.value != 0x0A) || (u.value >= 0x7F && u.value <= 0x9F)
    }
}

/// Collects output in memory (for tests).
public final class BufferConsole: Console {
    public private(set) var stdout: [String] = []
    public private(set) var stderr: [String] = []
    public init() {}
    public func out(_ line: String) { stdout.append(Self.printable(line)) }
    public func err(_ line: String) { stderr.append(Self.printable(line)) }
    public var isTerminal: Bool { false }
    public func progress(_ text: String) {}
}

// Used from one thread: the command being run.
@available(*, unavailable)
extension BufferConsole: Sendable {}

/// Writes to the process's standard output and error, unbuffered per line (the tools' console).
public final class ProcessConsole: Console {
    public init() {}
    public func out(_ line: String) { fputs(Self.printable(line) + "\n", stdout); fflush(stdout) }
    public func err(_ line: String) { fputs(Self.printable(line) + "\n", stderr) }
    public var isTerminal: Bool { isatty(2) != 0 }
    public func progress(_ text: String) { fputs("\r\u{1B}[K" + text, stderr) }

    /// The process's environment as a dictionary.
    public static func environment() -> [String: String] {
        var environment: [String: String] = [:]
        var e = environ
        while let p = e.pointee {
            let s = String(cString: p)
            if let eq = s.firstIndex(of: "=") { environment[String(s[..<eq])] = String(s[s.index(after: eq)...]) }
            e += 1
        }
        return environment
    }
}

// Stateless: it writes straight to the process's streams.
extension ProcessConsole: @unchecked Sendable {}
