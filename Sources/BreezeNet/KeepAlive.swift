/// The timeouts and keep-alives of one session, with no I/O (`Protocol/sync.md` section 7): the node's sweep
/// asks `decide` for each peer about once a second and carries the answer out.
struct KeepAlive {
    /// The limits, in milliseconds (`NodeConfig`).
    struct Limits {
        var handshake: UInt64
        var idle: UInt64
        var ack: UInt64
        var ping: UInt64
    }

    /// What one peer's clocks say, in loop (monotonic) milliseconds.
    struct Clocks {
        var opened: UInt64
        var lastReceived: UInt64
        var lastSent: UInt64
        /// When the session became ready (nil: still in its handshake).
        var ready: UInt64?
        var awaitingVectors: Bool
        /// Batches sent and not yet acknowledged.
        var unacknowledged: Int
        /// When an acknowledgement last arrived, or when batches started to wait for one.
        var ackProgress: UInt64
    }

    enum Decision: Equatable {
        case none
        case ping
        case timeout(String)
    }

    static func decide(_ c: Clocks, now t: UInt64, limits: Limits) -> Decision {
        // (A clock read after `t`, by work done during the same tick, counts as no time at all.)
        func since(_ x: UInt64) -> UInt64 { t > x ? t - x : 0 }
        guard let ready = c.ready else {
            return since(c.opened) > limits.handshake ? .timeout("no handshake within \(limits.handshake) ms") : .none
        }
        if since(c.lastReceived) > limits.idle { return .timeout("nothing received for \(limits.idle) ms") }
        if c.awaitingVectors && since(ready) > limits.handshake { return .timeout("no vectors within \(limits.handshake) ms of ready") }
        if c.unacknowledged > 0 && since(c.ackProgress) > limits.ack { return .timeout("no acknowledgement for \(limits.ack) ms") }
        return since(c.lastSent) >= limits.ping ? .ping : .none
    }

    /// Milliseconds from `x` to `t`, zero when `x` is later (read after `t` in the same tick).
    static func elapsed(from x: UInt64, to t: UInt64) -> UInt64 { t > x ? t - x : 0 }
}
