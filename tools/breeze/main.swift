// The `breeze` command-line tool: everything lives in BreezeCLI so tests can call it.
import BreezeCLI
@preconcurrency import Glibc

exit(BreezeCLI.run(Array(CommandLine.arguments.dropFirst()), environment: ProcessConsole.environment(), console: ProcessConsole()))
