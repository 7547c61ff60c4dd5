/// What a feed does after each poll (sans-IO: no clock, no network; `FeedRunner` applies it), as a client of
/// a rate-limited API should: the interval after a success; exponential backoff with full jitter after a
/// timeout, a 5xx, a malformed or truncated answer (a random wait up to `base * 2^(n-1)`, at most `cap`, so
/// servers that failed together do not retry together); at least `Retry-After` after a 429; and no retry at
/// all after 401 or 403 (a refused key does not become valid by asking again: the operator must act).
public struct FeedPolicy: Sendable {
    /// The first backoff's upper bound and the largest, seconds (defaults 2 s and 10 minutes).
    public var baseBackoff: Double = 2, maxBackoff: Double = 600

    public init() {}

    /// How a poll ended.
    public enum Outcome: Sendable, Equatable {
        /// The answer was imported (rows stored or already held).
        case imported
        /// 401 or 403: the key was refused.
        case refused(status: Int)
        /// 429, with the seconds of its `Retry-After` when it had one.
        case throttled(retryAfter: Double?)
        /// A timeout, a connection failure, a 5xx or another status, a malformed or truncated answer.
        case failed
    }

    /// What to do next.
    public enum Next: Sendable, Equatable {
        /// Poll again after this many seconds.
        case wait(Double)
        /// Stop this feed (its key was refused).
        case stop
    }

    /// The next step after `outcome`, the `failures` in a row so far (this one included), for a feed polled
    /// every `interval` seconds; `random` is uniform in [0, 1) (the jitter).
    public func next(after outcome: Outcome, failures: Int, interval: Double, random: Double) -> Next {
        switch outcome {
        case .imported: return .wait(interval)
        case .refused: return .stop
        case .throttled(let retryAfter):
            let backoff = jittered(failures, random)
            return .wait(max(retryAfter ?? 0, backoff))
        case .failed: return .wait(jittered(failures, random))
        }
    }

    /// Full jitter: uniform in [0, min(cap, base * 2^(n-1))), and never under a tenth of `base`.
    func jittered(_ failures: Int, _ random: Double) -> Double {
        let exponent = Double(max(0, min(failures - 1, 30)))
        let bound = min(maxBackoff, baseBackoff * pow2(exponent))
        return max(baseBackoff / 10, bound * random)
    }

    private func pow2(_ e: Double) -> Double {
        var v = 1.0
        for _ in 0..<Int(e) { v *= 2 }
        return v
    }

    /// Seconds from a `Retry-After` header: a number of seconds (an HTTP date is not followed: nil).
    public static func retryAfter(_ header: String?) -> Double? {
        guard let h = header, let s = Double(h.trimmingCharacters(in: " \t")), s >= 0, s.isFinite else { return nil }
        return min(s, 3600)
    }
}
