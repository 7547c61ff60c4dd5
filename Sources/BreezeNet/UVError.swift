internal import CLibUV

/// A libuv error (negative status) turned into a typed error with libuv's name and message, the one
/// place where status codes become Swift errors (as swift-nio's `IOError`).
public struct UVError: Error, CustomStringConvertible, Sendable {
    /// The libuv status code (negative errno on Unix).
    public let code: Int32
    /// What was being done.
    public let operation: String

    public var description: String {
        "\(operation): \(String(cString: uv_strerror(code))) (\(String(cString: uv_err_name(code))))"
    }

    /// Throws when `status` is negative.
    static func check(_ status: Int32, _ operation: @autoclosure () -> String) throws(UVError) {
        if status < 0 { throw UVError(code: status, operation: operation()) }
    }
}
