/// The bytes of one fuzz input, read front to back as the choices a harness makes (which role, where to
/// cut, which message comes next). Reading past the end gives zeros, so every input is a valid script.
public struct FuzzInput {
    public let bytes: [UInt8]
    public private(set) var offset = 0

    public init(_ data: UnsafePointer<UInt8>?, _ size: Int) {
        bytes = size > 0 && data != nil ? Array(UnsafeBufferPointer(start: data, count: size)) : []
    }

    public init(bytes: [UInt8]) { self.bytes = bytes }

    /// True when every byte was consumed.
    public var isAtEnd: Bool { offset >= bytes.count }
    /// Bytes not yet consumed.
    public var remaining: Int { max(0, bytes.count - offset) }

    /// The next byte, or 0 at the end.
    public mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// A little-endian 16-bit value.
    public mutating func u16() -> UInt16 { UInt16(byte()) | UInt16(byte()) << 8 }

    /// Up to `n` bytes (fewer at the end).
    public mutating func take(_ n: Int) -> [UInt8] {
        let k = min(max(0, n), remaining)
        defer { offset += k }
        return Array(bytes[offset..<(offset + k)])
    }

    /// Everything left.
    public mutating func rest() -> [UInt8] { take(remaining) }
}

/// Stops the fuzzer with a message when an invariant fails (libFuzzer records the input as a crash).
public func require(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
                    file: StaticString = #fileID, line: UInt = #line) {
    if !condition() { fatalError("fuzz invariant failed: \(message())", file: file, line: line) }
}
