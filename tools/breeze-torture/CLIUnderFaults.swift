// `breeze-torture cli [--power-loss yes] [--fault-control FILE] [--fault-stats FILE] -- ARGS...`: runs the
// `breeze` command ARGS (a node, say) with the fault VFS installed, so a test can fill the disk or fail
// writes under a real node and watch it recover without a restart.
import BreezeCLI
import CFaultVFS
@preconcurrency import Glibc

/// Writes to standard output and error, one line at a time.
final class TortureConsole: Console {
    func out(_ line: String) { fputs(line + "\n", stdout); fflush(stdout) }
    func err(_ line: String) { fputs(line + "\n", stderr) }
    var isTerminal: Bool { false }
    func progress(_ text: String) {}
}

func runCLIUnderFaults(_ arguments: [String]) -> Never {
    var args = arguments
    var options: [String: String] = [:]
    while args.count >= 2, args[0].hasPrefix("--"), args[0] != "--" {
        options[String(args[0].dropFirst(2))] = args[1]
        args.removeFirst(2)
    }
    guard args.first == "--" else { fail("usage: breeze-torture cli [--power-loss yes] [--fault-control FILE] [--fault-stats FILE] -- BREEZE-ARGS...") }
    args.removeFirst()
    let rc = breeze_fault_vfs_install(options["fault-control"], options["fault-stats"], options["power-loss"] == "yes" ? 1 : 0)
    guard rc == 0 else { fail("cannot install the fault VFS (SQLite error \(rc))") }
    exit(BreezeCLI.run(args, environment: ProcessConsole.environment(), console: TortureConsole()))
}
