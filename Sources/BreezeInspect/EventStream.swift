@preconcurrency import Glibc

/// Server-sent events (https://html.spec.whatwg.org/multipage/server-sent-events.html) to any number of
/// clients: `publish` hands one event to every open subscription; each subscription is the body of one
/// `text/event-stream` response, read by the connection's own server thread (`read`, which blocks until there
/// is something to send).
///
/// Memory is bounded: a client that does not read keeps at most `maxPendingBytes`; beyond that its backlog is
/// replaced by the newest event (the inspector's events say "the log changed", so the newest one is enough).
/// A subscription with nothing to send for `keepAliveSeconds` sends a comment line, so proxies and the
/// browser keep the connection, and a client that went away is noticed.
///
/// `@unchecked Sendable`: every mutable field (of the stream and of its subscriptions) is guarded by `mutex`
/// and waited on with `condition`.
public final class EventStream: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var open: [ObjectIdentifier: Subscription] = [:]
    private var closed = false
    /// A client's unread bytes at most.
    public let maxPendingBytes: Int
    /// Seconds of silence before a keep-alive comment.
    public let keepAliveSeconds: Int

    /// A stream with no subscriptions yet.
    public init(maxPendingBytes: Int = 64 << 10, keepAliveSeconds: Int = 15) {
        self.maxPendingBytes = maxPendingBytes
        self.keepAliveSeconds = keepAliveSeconds
        pthread_mutex_init(mutex, nil)
        var attr = pthread_condattr_t()
        pthread_condattr_init(&attr)
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attr)
        pthread_condattr_destroy(&attr)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }

    /// How many clients are subscribed.
    public var subscriberCount: Int { locked { open.count } }

    /// A new subscription; its first bytes tell the browser to reconnect after 1 s if the connection drops.
    /// On a closed stream the subscription ends at once.
    public func subscribe() -> Subscription {
        let s = Subscription(stream: self)
        locked {
            s.pending = Array("retry: 1000\n\n".utf8)
            if closed { s.ended = true } else { open[ObjectIdentifier(s)] = s }
        }
        return s
    }

    /// Sends one event, `event: NAME` with `data` (one `data:` line per line of it), to every subscription.
    public func publish(event: String, data: String) {
        var text = "event: \(event)\n"
        for line in data.split(separator: "\n", omittingEmptySubsequences: false) { text += "data: \(line)\n" }
        let bytes = Array((text + "\n").utf8)
        locked {
            for s in open.values {
                if s.pending.count + bytes.count > maxPendingBytes { s.pending = [] }
                s.pending += bytes
            }
            pthread_cond_broadcast(condition)
        }
    }

    /// Ends every subscription (their responses finish) and refuses new ones.
    public func close() {
        locked {
            closed = true
            for s in open.values { s.ended = true }
            open = [:]
            pthread_cond_broadcast(condition)
        }
    }

    /// One client's share of the stream.
    ///
    /// `@unchecked Sendable`: its fields are guarded by its stream's mutex.
    public final class Subscription: @unchecked Sendable {
        private let stream: EventStream
        fileprivate var pending: [UInt8] = []
        fileprivate var ended = false

        fileprivate init(stream: EventStream) { self.stream = stream }

        /// Up to `max` bytes to send, waiting until there are some (a keep-alive comment after
        /// `keepAliveSeconds` of silence); nil once the stream has ended.
        public func read(max: Int) -> [UInt8]? {
            let s = stream
            pthread_mutex_lock(s.mutex)
            defer { pthread_mutex_unlock(s.mutex) }
            if pending.isEmpty && !ended {
                var deadline = timespec()
                clock_gettime(CLOCK_MONOTONIC, &deadline)
                deadline.tv_sec += s.keepAliveSeconds
                while pending.isEmpty && !ended {
                    if pthread_cond_timedwait(s.condition, s.mutex, &deadline) == ETIMEDOUT {
                        if pending.isEmpty && !ended { pending = Array(": keep-alive\n\n".utf8) }
                        break
                    }
                }
            }
            if pending.isEmpty && ended { return nil }
            let n = min(max, pending.count)
            defer { pending.removeFirst(n) }
            return Array(pending[..<n])
        }

        /// The client went away (or the response was never sent): stop collecting events for it.
        public func cancel() {
            stream.locked {
                ended = true
                stream.open.removeValue(forKey: ObjectIdentifier(self))
            }
        }
    }
}
