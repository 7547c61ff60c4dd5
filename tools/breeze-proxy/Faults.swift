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

/// The one attack a connection gets: which, in which direction (true: client to target), on which frame of
/// that direction (counted from 0; a later frame when that one cannot carry it, e.g. nothing to splice yet).
struct AttackPlan: Sendable {
    let kind: AttackKind
    let up: Bool
    let frame: Int
}

/// The attacks of `--attack` (one per connection, the kind taken in turn from the list): what an attacker on
/// the path, holding no key, can do to a sealed session. Each is counted when it fired, and as detected when
/// the connection was closed within the attack window after it.
enum AttackKind: String, Sendable, CaseIterable {
    /// Flip one bit of the payload of a frame (and recompute the CRC-32C of a plain one).
    case flip
    /// Leave a frame out.
    case drop
    /// Send a frame twice.
    case duplicate
    /// Let the next frame overtake this one.
    case reorder
    /// Send again, after this frame, one sent earlier on this connection and direction.
    case replay
    /// Insert, before this frame, a sealed frame recorded from an earlier connection (a spliced recording).
    case splice
    /// Insert, before this frame, a plain `events` frame forging a favourite (999999) and a PurpleAir reading
    /// of 250 µg/m³, as a version-2 peer would have taken them.
    case inject
    /// Insert, before this frame, a `sealed` frame of random bytes.
    case injectSealed = "inject-sealed"
    /// Rewrite the versions the client offers in its first frame (to 1 ... 3), checksum fixed.
    case downgrade
    /// Replace the client's first frame by a version-1/2 `hello`.
    case downgradeHello = "downgrade-hello"

    /// Whether the attack is on the client's first frame (whatever `--attack-after` says).
    var onFirstFrame: Bool { self == .downgrade || self == .downgradeHello }
}

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
    /// Sealed frames (type 0x30) forwarded, in either direction.
    var sealed = 0
    /// Per attack kind: fired, and of those, connections closed within the attack window after it.
    var attacks: [AttackKind: Int] = [:], detected: [AttackKind: Int] = [:]
    /// Downgraded connections on which a sealed frame passed afterwards (a downgrade that was not refused).
    var downgradedSealed = 0

    var line: String {
        var out = "connections=\(connections) frames=\(frames) bytes=\(bytes) delayed=\(delayed) reordered=\(reordered) "
            + "duplicated=\(duplicated) dropped=\(dropped) resets=\(resets) cuts=\(cuts) heals=\(heals) "
            + "cut_resets=\(cutResets) refused=\(refused) bad_crc=\(badCRC) unframed=\(unframed) sealed=\(sealed)"
        for k in AttackKind.allCases where attacks[k] != nil {
            out += " attacks_\(k.rawValue)=\(attacks[k]!) detected_\(k.rawValue)=\(detected[k] ?? 0)"
        }
        if attacks[.downgrade] != nil || attacks[.downgradeHello] != nil { out += " downgraded_sealed=\(downgradedSealed)" }
        return out
    }
}
