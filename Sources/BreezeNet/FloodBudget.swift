/// One peer's budget of control messages (`ping`, `pong`, `vectors`, `vectorsPart`, `reset`, `subscribe`;
/// `Protocol/sync.md` section 7), with no I/O: a token bucket of `perSecond` tokens, refilled at that rate.
/// A message takes a token; a peer with none is throttled (the node stops reading its socket), and a stretch
/// of throttling with no break (the bucket never full again) longer than the node's flood limit closes it.
struct FloodBudget {
    let perSecond: Int
    private(set) var tokens: Double
    private var refilledMillis: UInt64
    /// When the peer first ran out in the current stretch of flooding; nil once its bucket is full again.
    private(set) var throttledSince: UInt64?

    init(perSecond: Int, now: UInt64) {
        self.perSecond = perSecond
        tokens = Double(perSecond)
        refilledMillis = now
    }

    /// Refills for the time since the last refill.
    mutating func refill(now t: UInt64) {
        let rate = Double(perSecond)
        tokens = min(rate, tokens + Double(t > refilledMillis ? t - refilledMillis : 0) * rate / 1000)
        refilledMillis = t
    }

    /// Takes a token for one control message: false (and the stretch of throttling starts) when none is left.
    mutating func take(now t: UInt64) -> Bool {
        refill(now: t)
        guard tokens >= 1 else {
            if throttledSince == nil { throttledSince = t }
            return false
        }
        tokens -= 1
        return true
    }

    /// Ends the stretch of throttling once the bucket is full again; true when it ended.
    mutating func recover(now t: UInt64) -> Bool {
        refill(now: t)
        guard throttledSince != nil, tokens >= Double(perSecond) else { return false }
        throttledSince = nil
        return true
    }

    /// True when the stretch of throttling has lasted longer than `limit` milliseconds.
    func flooding(now t: UInt64, limit: UInt64) -> Bool {
        guard let since = throttledSince else { return false }
        return t > since && t - since > limit
    }
}
