// The `breeze` command-line tool: everything lives in BreezeCLI so tests can call it.
import BreezeCLI
@preconcurrency import Glibc

/// Writes to the process's standard output and error, unbuffered per line.
final class ProcessConsole: Console {
    func out(_ line: String) { fputs(line + "\n", stdout); fflush(stdout) }
    func err(_ line: String) { fputs(line + "\n", stderr) }
    var isTerminal: Bool { isatty(2) != 0 }
    func progress(_ text: String) { fputs("\r\u{1B}[K" + text, stderr) }
}

var environment: [String: String] = [:]
var e = environ
while let p = e.pointee {
    let s = String(cString: p)
    if let eq = s.firstIndex(of: "=") { environment[String(s[..<eq])] = String(s[s.index(after: eq)...]) }
    e += 1
}
exit(BreezeCLI.run(Array(CommandLine.arguments.dropFirst()), environment: environment, console: ProcessConsole()))
