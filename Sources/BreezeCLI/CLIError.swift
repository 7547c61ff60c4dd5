/// How a command failed: a usage error (exit 2, with the usage line) or any other failure (exit 1, one line
/// naming the input and the problem).
public struct CLIError: Error, Sendable {
    /// 2 for usage errors, 1 otherwise.
    public let exitCode: Int32
    /// The one-line message.
    public let message: String
    /// The usage line to print after a usage error.
    public let usage: String?

    /// A usage error.
    public static func usage(_ message: String, _ usage: String) -> CLIError {
        CLIError(exitCode: 2, message: message, usage: usage)
    }

    /// Any other failure.
    public static func failure(_ message: String) -> CLIError {
        CLIError(exitCode: 1, message: message, usage: nil)
    }
}
