// Fault rates, counters and the seeded generator of breeze-proxy.
@preconcurrency import Glibc

/// Per-frame fault probabilities (0 ... 1), decided in this order for each frame: reset, drop, duplicate,
/// reorder, delay (at most one fault per frame).
struct FaultRates: Sendable {
    var reset = 0.0
    var drop = 0.0
    var duplicate = 0.0
    var reorder = 0.0
    var delay = 0.0
    /// Longest delay, in milliseconds (each delay is uniform in 1 ... delayMaxMillis).
    var delayMaxMillis = 50

    var any: Bool { reset + drop + duplicate + reorder + delay > 0 }
}

/// What to do with one frame.
enum FaultAction: Sendable { case forward, reset, drop, duplicate, reorder, delay(millis: Int) }

/// SplitMix64, so a seed reproduces every decision of one direction of one connection.
struct SplitMix: Sendable {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }

    mutating func decide(_ r: FaultRates) -> FaultAction {
        let x = unit()
        var edge = r.reset
        if x < edge { return .reset }
        edge += r.drop
        if x < edge { return .drop }
        edge += r.duplicate
        if x < edge { return .duplicate }
        edge += r.reorder
        if x < edge { return .reorder }
        edge += r.delay
        if x < edge { return .delay(millis: 1 + Int(next() % UInt64(max(1, r.delayMaxMillis)))) }
        return .forward
    }
}

/// Counters of what the proxy did; each fault is counted when it actually fired (a reorder only when a
/// second frame came to swap with, a delay only when slept).
struct FaultStats: Sendable {
    var connections = 0
    var frames = 0
    var bytes = 0
    var delayed = 0
    var reordered = 0
    var duplicated = 0
    var dropped = 0
    var resets = 0
    /// Connections reset by `cut`, and connections refused while cut.
    var cutResets = 0
    var refused = 0
    var cuts = 0
    var heals = 0
    /// Frames whose CRC-32C did not match (the nodes never send one; the proxy forwards them untouched).
    var badCRC = 0
    /// Bytes that could not be framed (a length outside 1 ... 4 MiB): forwarded as they are.
    var unframed = 0

    var line: String {
        "connections=\(connections) frames=\(frames) bytes=\(bytes) delayed=\(delayed) reordered=\(reordered) "
            + "duplicated=\(duplicated) dropped=\(dropped) resets=\(resets) cuts=\(cuts) heals=\(heals) "
            + "cut_resets=\(cutResets) refused=\(refused) bad_crc=\(badCRC) unframed=\(unframed)"
    }
}
