// `breeze-bench`: Breeze's benchmarks, beside the shipped `breeze` tool rather than inside it. Global options
// (`--json`, `--durability`, `--help`) are parsed as `breeze` parses them.
import BreezeCLI
@preconcurrency import Glibc

let benchmarks = ["append", "sync", "live", "app", "screens", "import", "projections", "settings", "events", "fanout", "hostile", "year", "all"]
let commands = benchmarks.map { name in
    BreezeCLI.Command(name: name, help: BenchCommand.usage) { a, c throws(CLIError) in try BenchCommand.run([name] + a, c) }
}
exit(BreezeCLI.run(Array(CommandLine.arguments.dropFirst()), environment: ProcessConsole.environment(),
                   console: ProcessConsole(), commands: commands, usage: BenchCommand.usage, tool: "breeze-bench"))
